import { Type } from "@sinclair/typebox";
import { extractKeywords } from "../offline-engine/keywords";
import { moderate } from "../offline-engine/moderation";
import { analyzeSentiment } from "../offline-engine/sentiment";
import { detectSpam } from "../offline-engine/spam";
import { defineFunction } from "./define";
import { builtinIntent, gist, languageOf, offlineReadable } from "./offline/signals";
import { noteLowConfidence } from "./offline-reach";
import { option, writtenIn } from "./prompt";
import {
  Context,
  Enum,
  InputLanguage,
  LanguageCode,
  Platform,
  type PRIORITIES,
  Priority as PriorityField,
  Result,
  Sentiment,
  Strings,
  Text,
} from "./schemas";

const request = Type.Object({
  comment: Text("the comment text"),
  language: InputLanguage("comment"),
  platform: Platform("instagram, facebook, youtube, x, tiktok..."),
  post_context: Context("the post the comment answers"),
  business_context: Context("who the business is and what it sells"),
  author_context: Context("what is known about the commenter: customer, follower, first comment..."),
});

export const COMMENT_INTENTS = [
  "question",
  "complaint",
  "praise",
  "feedback",
  "purchase_interest",
  "support_request",
  "spam",
  "other",
] as const;

type CommentIntent = (typeof COMMENT_INTENTS)[number];

/** Built-in intent -> what a commenter is doing. */
const COMMENT_INTENT_OF: Record<string, CommentIntent> = {
  question: "question",
  information: "question",
  complaint: "complaint",
  praise: "praise",
  feedback: "feedback",
  purchase: "purchase_interest",
  booking: "purchase_interest",
  support_request: "support_request",
  technical_issue: "support_request",
  account: "support_request",
  order_status: "support_request",
  billing: "support_request",
  refund: "support_request",
  cancel: "support_request",
  return_exchange: "support_request",
};

type Priority = (typeof PRIORITIES)[number];

/** Moderation categories that make a comment toxic (spam and plain profanity do not). */
const TOXIC = new Set(["toxicity", "harassment", "hate", "threat", "insult"]);

const result = Result(
  {
    sentiment: Sentiment(),
    intent: Enum(COMMENT_INTENTS, "what the commenter is doing"),
    language: LanguageCode(),
    is_spam: Type.Boolean({ description: "advertising, scams, link farming or bot text" }),
    is_toxic: Type.Boolean({ description: "insults, harassment, hate or threats" }),
    topics: Strings("what the comment is about", 10),
    needs_response: Type.Boolean({
      description: "true when the business should answer (questions, complaints, purchase interest)",
    }),
    priority: PriorityField("how soon to respond"),
    summary: Type.String({ description: "the comment in one sentence" }),
  },
  "analysis of one social media comment",
);

export default defineFunction({
  name: "comment-analyze",
  summary: "Analyze a social media comment: sentiment, intent, spam and toxicity, and whether to respond",
  tags: ["comments"],
  request,
  result,
  role: "You analyze comments left on a business's social media posts.",
  brief: (req) => ({
    rules: [
      option("Platform", req.platform),
      writtenIn("comment", req.language),
      "Read the comment in the light of the post, the business and the author when they are given.",
      "priority is high for complaints, support requests and purchase interest that wait for an answer, and for toxic comments to hide.",
    ],
    inputs: [
      ["business_context", req.business_context],
      ["post", req.post_context],
      ["author", req.author_context],
      ["comment", req.comment],
    ],
  }),
  local: (req) => {
    // other languages: no English intent cues (a question mark still asks), moderation's word lists
    // are English-centric; the fields that are guesses are named in meta.low_confidence
    const english = offlineReadable(req.comment);
    if (!english) noteLowConfidence(req, ["intent", "is_toxic", "topics"]);
    const spam = detectSpam(req.comment, { contentType: "comment" }).isSpam;
    const moderation = moderate(req.comment, { platform: req.platform, context: req.post_context });
    const is_toxic = moderation.flaggedCategories.some((c) => TOXIC.has(c));
    const read = english ? (COMMENT_INTENT_OF[builtinIntent(req.comment).intent] ?? "other") : "other";
    // "Love it! Do you ship to Canada?": under a post, a question waits for an answer whatever else it says.
    const asks = req.comment.includes("?") && (read === "praise" || read === "feedback" || read === "other");
    const intent: CommentIntent = spam ? "spam" : asks ? "question" : read;
    const needs_response = !spam && ["question", "complaint", "support_request", "purchase_interest"].includes(intent);
    const priority: Priority =
      is_toxic || (needs_response && intent !== "question") ? "high" : needs_response || intent === "feedback" ? "medium" : "low";
    const language = languageOf(req.comment, req.language);
    return {
      sentiment: analyzeSentiment(req.comment).label,
      intent,
      language,
      is_spam: spam,
      is_toxic,
      topics: extractKeywords(req.comment, 5, language).map((k) => k.keyword),
      needs_response,
      priority,
      summary: gist(req.comment, 1),
    };
  },
  example: {
    request: {
      comment: "Do you ship these to Canada? Love the colours!",
      platform: "instagram",
      post_context: "New spring sneakers",
    },
    result: {
      sentiment: "positive",
      intent: "purchase_interest",
      language: "en",
      is_spam: false,
      is_toxic: false,
      topics: ["shipping", "Canada", "colours"],
      needs_response: true,
      priority: "high",
      summary: "The commenter likes the colours and asks whether the sneakers ship to Canada.",
    },
  },
});
