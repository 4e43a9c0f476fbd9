import { Type } from "@sinclair/typebox";
import { detectIntent } from "../offline-engine/intent";
import { extractKeywords } from "../offline-engine/keywords";
import { analyzeSentiment } from "../offline-engine/sentiment";
import { defineFunction } from "./define";
import { reviewAspects } from "./offline/reviews";
import { CUE_LANGUAGES, gist, languageOf, offlineReadable } from "./offline/signals";
import { noteLowConfidence } from "./offline-reach";
import { option, writtenIn } from "./prompt";
import { Context, InputLanguage, LanguageCode, Rating, Result, Sentiment, Strings, Text } from "./schemas";

const request = Type.Object({
  review: Text("the review text"),
  rating: Rating(),
  language: InputLanguage("review"),
  context: Context("what was reviewed: the business, product or stay"),
});

export const AspectSentiment = Type.Object(
  {
    aspect: Type.String({ description: "what is talked about: delivery, price, staff..." }),
    sentiment: Sentiment("sentiment towards this aspect"),
  },
  { additionalProperties: false },
);

const result = Result(
  {
    sentiment: Sentiment(),
    score: Type.Number({ minimum: -1, maximum: 1, description: "sentiment from -1 (very negative) to 1 (very positive)" }),
    language: LanguageCode(),
    summary: Type.String({ description: "the review in one sentence" }),
    aspects: Type.Array(AspectSentiment, { maxItems: 20, description: "sentiment per aspect the review mentions" }),
    keywords: Strings("the words that carry the review's content", 15),
    needs_response: Type.Boolean({
      description: "true when the reviewer reports a problem or asks something the business should answer",
    }),
  },
  "analysis of one review",
);

export default defineFunction({
  name: "review-analyze",
  summary: "Analyze a customer review: sentiment, aspects, keywords and whether it needs a response",
  tags: ["reviews"],
  request,
  result,
  role: "You analyze customer reviews for a business.",
  brief: (req) => ({
    rules: [
      option("The reviewer's star rating", req.rating),
      req.rating !== undefined && "When the text and the rating disagree, the text decides the sentiment.",
      writtenIn("review", req.language),
      "mixed: clear praise and clear criticism in the same review.",
      "aspects and keywords are taken from the review, never invented.",
    ],
    inputs: [
      ["context", req.context],
      ["review", req.review],
    ],
  }),
  local: (req) => {
    // other languages: sentiment from the review lexicon of seven languages (at most 0.6 confident),
    // no English intent cues, and the fields that are guesses named in meta.low_confidence
    const english = offlineReadable(req.review);
    const language = languageOf(req.review, req.language);
    if (!english)
      noteLowConfidence(
        req,
        CUE_LANGUAGES.has(language.slice(0, 2))
          ? ["aspects", "keywords"]
          : ["sentiment", "score", "aspects", "keywords", "needs_response"],
      );
    const s = analyzeSentiment(req.review);
    const stars = starsOf(req.rating);
    // A text with no clear sentiment ("Arrived on Tuesday.") takes the stars' word for it.
    const sentiment =
      s.label === "neutral" && stars !== undefined ? (stars <= 2 ? "negative" : stars >= 4 ? "positive" : "neutral") : s.label;
    const intent = english ? detectIntent(req.review).intent : "unknown";
    const aspects = reviewAspects(req.review).slice(0, 20);
    return {
      sentiment,
      score: s.score,
      language,
      summary: gist(req.review, 1),
      aspects,
      keywords: extractKeywords(req.review, 8, language).map((k) => k.keyword),
      // a problem with any aspect needs an answer, even inside an otherwise happy review
      needs_response:
        sentiment === "negative" ||
        sentiment === "mixed" ||
        req.review.includes("?") ||
        intent === "complaint" ||
        aspects.some((a) => a.sentiment === "negative"),
    };
  },
  example: {
    request: {
      review: "Great food and friendly staff, but we waited 40 minutes for a table.",
      rating: 4,
      context: "Italian restaurant",
    },
    result: {
      sentiment: "mixed",
      score: 0.3,
      language: "en",
      summary: "Loved the food and staff, disliked the long wait for a table.",
      aspects: [
        { aspect: "food", sentiment: "positive" },
        { aspect: "staff", sentiment: "positive" },
        { aspect: "waiting time", sentiment: "negative" },
      ],
      keywords: ["food", "staff", "wait", "table"],
      needs_response: true,
    },
  },
});

/** Stars out of 5 from a number or a text such as "4/5" or "8/10"; undefined when unreadable. */
function starsOf(rating: number | string | undefined): number | undefined {
  if (rating === undefined) return undefined;
  if (typeof rating === "number") return rating;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(?:\/\s*(\d+))?/.exec(rating);
  if (!m) return undefined;
  const value = Number(m[1]);
  return m[2] ? (value / Number(m[2])) * 5 : value;
}
