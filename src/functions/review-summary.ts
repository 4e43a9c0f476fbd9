import { Type } from "@sinclair/typebox";
import { defineFunction } from "./define";
import { andList, countLine, countSentiments, overallSentiment, splitReviews, themesOf } from "./offline/reviews";
import { declineLanguage, offlineReadable } from "./offline/signals";
import { reviewsRule, reviewsText } from "./prompt";
import { Result, Reviews, Sentiment, Strings } from "./schemas";

const request = Type.Object({ reviews: Reviews() });

const Count = (description: string) => Type.Integer({ minimum: 0, description });

const result = Result(
  {
    summary: Type.String({ description: "what the reviewers say overall, in two to four sentences" }),
    overall_sentiment: Sentiment(),
    review_count: Count("how many reviews were read"),
    sentiment_counts: Type.Object(
      {
        positive: Count("positive reviews"),
        neutral: Count("neutral reviews"),
        negative: Count("negative reviews"),
        mixed: Count("reviews with clear praise and clear criticism"),
      },
      { additionalProperties: false, description: "reviews per sentiment" },
    ),
    highlights: Strings("what reviewers praise, most mentioned first", 10),
    complaints: Strings("what reviewers criticise, most mentioned first", 10),
  },
  "summary of a set of reviews",
);

export default defineFunction({
  name: "review-summary",
  summary: "Summarize a set of reviews: overall sentiment, counts, highlights and complaints",
  tags: ["reviews"],
  request,
  result,
  cost: 2,
  role: "You summarize customer reviews for the business that received them.",
  brief: (req) => ({
    rules: [
      reviewsRule(req.reviews),
      "Every review counts once in sentiment_counts, and the counts add up to review_count.",
      "highlights and complaints are points several reviewers make; say nothing the reviews do not.",
    ],
    inputs: [["reviews", reviewsText(req.reviews)]],
  }),
  local: (req) => {
    const reviews = splitReviews(req.reviews);
    if (reviews.length === 0) return null;
    if (!offlineReadable(reviews.join("\n"))) return declineLanguage(req, reviews.join("\n"));
    const counts = countSentiments(reviews);
    const themes = themesOf(reviews, 12);
    const highlights = themes
      .filter((t) => t.sentiment === "positive")
      .map((t) => t.theme)
      .slice(0, 5);
    const complaints = themes
      .filter((t) => t.sentiment === "negative" || t.sentiment === "mixed")
      .map((t) => t.theme)
      .slice(0, 5);
    const summary = [
      countLine(reviews.length, counts),
      highlights.length ? `Reviewers praise ${andList(highlights)}.` : "",
      complaints.length ? `Criticism concerns ${andList(complaints)}.` : "",
    ]
      .filter(Boolean)
      .join(" ");
    return {
      summary,
      overall_sentiment: overallSentiment(counts),
      review_count: reviews.length,
      sentiment_counts: counts,
      highlights,
      complaints,
    };
  },
  example: {
    request: {
      reviews: ["Fast delivery and great quality.", "The shoes fell apart after a month.", "Good value, delivery was quick."],
    },
    result: {
      summary: "Most reviewers are happy with fast delivery and value for money; one reports the shoes wore out quickly.",
      overall_sentiment: "positive",
      review_count: 3,
      sentiment_counts: { positive: 2, neutral: 0, negative: 1, mixed: 0 },
      highlights: ["fast delivery", "good value"],
      complaints: ["durability"],
    },
  },
});
