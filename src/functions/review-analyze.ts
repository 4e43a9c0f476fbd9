import { Type } from "@sinclair/typebox";
import { defineFunction } from "./define";
import { buildPrompt, option } from "./prompt";
import { Context, Language, LanguageCode, Rating, Result, Sentiment, Strings, Text } from "./schemas";

const request = Type.Object({
  review: Text("the review text"),
  rating: Rating(),
  language: Language("language of the review; detected when absent"),
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
  path: "/api/v1/ai/review-analyze",
  summary: "Analyze a customer review: sentiment, aspects, keywords and whether it needs a response",
  tags: ["reviews"],
  request,
  result,
  cost: 1,
  rateClass: "standard",
  promptVersion: 1,
  prompt: (req) =>
    buildPrompt({
      role: "You analyze customer reviews for a business.",
      rules: [
        option("The reviewer's star rating", req.rating),
        req.rating !== undefined && "When the text and the rating disagree, the text decides the sentiment.",
        option("The review is written in", req.language),
        "mixed: clear praise and clear criticism in the same review.",
        "aspects and keywords are taken from the review, never invented.",
      ],
      inputs: [
        ["context", req.context],
        ["review", req.review],
      ],
      result,
    }),
  preferLocal: false,
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
