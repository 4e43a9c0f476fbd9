import { Type } from "@sinclair/typebox";
import { defineFunction } from "./define";
import { andList, countLine, countSentiments, overallSentiment, splitReviews, themesOf } from "./offline/reviews";
import { declineLanguage, offlineReadable } from "./offline/signals";
import { reviewsRule, reviewsText } from "./prompt";
import { Context, Result, Reviews, Sentiment, Strings } from "./schemas";

const request = Type.Object({
  reviews: Reviews(),
  context: Context("what was reviewed and what the business wants to learn"),
});

const Theme = Type.Object(
  {
    theme: Type.String({ description: "a topic reviewers bring up: delivery, sizing, support..." }),
    sentiment: Sentiment("how reviewers feel about it"),
    mentions: Type.Integer({ minimum: 1, description: "how many reviews mention it" }),
    example: Type.Optional(Type.String({ description: "a short quote from one review" })),
  },
  { additionalProperties: false },
);

const result = Result(
  {
    summary: Type.String({ description: "the main insight in two or three sentences" }),
    overall_sentiment: Sentiment(),
    review_count: Type.Integer({ minimum: 0, description: "how many reviews were read" }),
    themes: Type.Array(Theme, { maxItems: 15, description: "recurring topics, most mentioned first" }),
    strengths: Strings("what the business does well", 10),
    weaknesses: Strings("what customers are unhappy with", 10),
    recommendations: Strings("concrete actions for the business, most impactful first", 10),
  },
  "actionable insights from a set of reviews",
);

export default defineFunction({
  name: "review-insights",
  summary: "Find themes, strengths, weaknesses and recommended actions in a set of reviews",
  tags: ["reviews"],
  request,
  result,
  cost: 2,
  role: "You are a customer-experience analyst who turns reviews into actions for a business.",
  brief: (req) => ({
    rules: [
      reviewsRule(req.reviews),
      "themes come from what reviewers actually say; mentions counts reviews, not words.",
      "recommendations are concrete steps the business can take, each tied to a weakness or theme.",
      req.context && "Use the context to make the recommendations specific to this business.",
    ],
    inputs: [
      ["context", req.context],
      ["reviews", reviewsText(req.reviews)],
    ],
  }),
  local: (req) => {
    const reviews = splitReviews(req.reviews);
    if (reviews.length === 0) return null;
    if (!offlineReadable(reviews.join("\n"))) return declineLanguage(req, reviews.join("\n"));
    const n = reviews.length;
    const counts = countSentiments(reviews);
    const themes = themesOf(reviews, 8);
    const share = (mentions: number) => `${mentions} of ${n} review${n === 1 ? "" : "s"}`;
    const good = themes.filter((t) => t.sentiment === "positive");
    const bad = themes.filter((t) => t.sentiment === "negative" || t.sentiment === "mixed");
    const recommendations = bad.map(
      (t) =>
        `Look into ${t.theme}: ${share(t.mentions)} mention it${t.sentiment === "mixed" ? " with mixed feelings" : " negatively"}.`,
    );
    if (good.length)
      recommendations.push(
        `Keep ${good[0].theme} as it is and mention it in your marketing: ${share(good[0].mentions)} praise it.`,
      );
    const summary = [
      countLine(n, counts),
      good.length ? `Strengths: ${andList(good.slice(0, 3).map((t) => t.theme))}.` : "",
      bad.length ? `Weak points: ${andList(bad.slice(0, 3).map((t) => t.theme))}.` : "",
    ]
      .filter(Boolean)
      .join(" ");
    return {
      summary,
      overall_sentiment: overallSentiment(counts),
      review_count: n,
      themes: themes.map(({ theme, sentiment, mentions, example }) =>
        example ? { theme, sentiment, mentions, example } : { theme, sentiment, mentions },
      ),
      strengths: good.map((t) => `${t.theme} (${share(t.mentions)})`).slice(0, 10),
      weaknesses: bad.map((t) => `${t.theme} (${share(t.mentions)})`).slice(0, 10),
      recommendations: recommendations.slice(0, 10),
    };
  },
  example: {
    request: {
      reviews:
        "Room was spotless, staff lovely.\nBreakfast was cold both days.\nGreat location, but breakfast was disappointing.",
      context: "A 40-room city hotel",
    },
    result: {
      summary: "Guests like the cleanliness, staff and location; breakfast quality is the recurring complaint.",
      overall_sentiment: "mixed",
      review_count: 3,
      themes: [
        { theme: "breakfast", sentiment: "negative", mentions: 2, example: "Breakfast was cold both days." },
        { theme: "cleanliness", sentiment: "positive", mentions: 1 },
      ],
      strengths: ["clean rooms", "friendly staff", "location"],
      weaknesses: ["breakfast served cold"],
      recommendations: ["Keep breakfast dishes on heated stations and check their temperature every 30 minutes."],
    },
  },
});
