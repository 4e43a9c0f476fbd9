/**
 * Match a question against a stored FAQ collection. It reads stored resources, so it is built with
 * the knowledge services (registry.ts knowledgeFunctions); the matcher is knowledge/faq-match.ts.
 */
import { Type } from "@sinclair/typebox";
import type { KnowledgeServices } from "../knowledge/embeddings";
import { DEFAULT_MIN_CONFIDENCE, DEFAULT_TOP_N, type FaqMatch, FaqMatcher } from "../knowledge/faq-match";
import { Query } from "../knowledge/schemas";
import { defineFunction } from "./define";
import { Internal } from "./schemas";

const FaqEntry = Type.Object({ id: Type.String(), question: Type.String(), answer: Type.String() });

const Match = Type.Object(
  {
    id: Type.String({ description: "the FAQ entry's id (random, as listed by GET /api/v1/ai/faq-collections/:id)" }),
    question: Type.String(),
    answer: Type.String(),
    confidence: Type.Number({ minimum: 0, maximum: 1 }),
  },
  { additionalProperties: false },
);

const result = Type.Object(
  {
    matches: Type.Array(Match, { description: "best first; empty when nothing reaches min_confidence" }),
    best_match: Type.Union([Match, Type.Null()]),
    matched: Type.Boolean(),
  },
  { additionalProperties: false, description: "FAQs matching the query" },
);

const request = Type.Object({
  collection_id: Type.String({ minLength: 1, maxLength: 64 }),
  query: Query,
  min_confidence: Type.Optional(
    Type.Number({
      minimum: 0,
      maximum: 1,
      default: DEFAULT_MIN_CONFIDENCE,
      description: `matches below this confidence are left out; default ${DEFAULT_MIN_CONFIDENCE}`,
    }),
  ),
  top_n: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 20,
      default: DEFAULT_TOP_N,
      description: `at most this many matches; default ${DEFAULT_TOP_N}`,
    }),
  ),
  faqs: Internal(Type.Array(FaqEntry), "the collection's FAQs"),
});

const answer = (matches: FaqMatch[]) => ({ matches, best_match: matches[0] ?? null, matched: matches.length > 0 });

export default function faqMatch(s: KnowledgeServices) {
  return defineFunction({
    name: "faq-match",
    summary: "Match a question against a stored FAQ collection",
    description: `FAQs asking what the query asks (paraphrases and misspellings included) with a calibrated confidence from 0 to 1, best first. min_confidence defaults to ${DEFAULT_MIN_CONFIDENCE}, top_n to ${DEFAULT_TOP_N}.`,
    tags: ["Knowledge"],
    request,
    result,
    preferLocal: true,
    prepare: async (req, ctx) => ({ ...req, faqs: await s.index.faqs.faqs(ctx.accountId, req.collection_id) }),
    role: "You match a user's question to the FAQ entries that answer it.",
    brief: (req) => ({
      rules: [
        "Return the FAQs (with their id, question and answer as given) that answer the query, best first, with a confidence from 0 to 1.",
        "Leave out FAQs that do not answer it.",
      ],
      inputs: [
        ["query", req.query],
        ["faqs", (req.faqs ?? []).map((f) => `[${f.id}] Q: ${f.question}\nA: ${f.answer}`).join("\n\n")],
      ],
    }),
    postprocess: (req, res) => {
      const min = req.min_confidence ?? DEFAULT_MIN_CONFIDENCE;
      return answer((res.matches ?? []).filter((m) => m.confidence >= min).slice(0, req.top_n ?? DEFAULT_TOP_N));
    },
    local: (req) =>
      answer(new FaqMatcher(req.faqs ?? []).match(req.query, { minConfidence: req.min_confidence, topN: req.top_n })),
    example: {
      request: { collection_id: "faq_7Hq2xLm9Pz4Rt6Vw1Ks3", query: "how can i get my mony back?", min_confidence: 0.5, top_n: 3 },
      result: {
        matches: [
          {
            id: "faqe_5b1e9c0d7a2f4e83b6c4d9a0e1f27c3b",
            question: "What is your refund policy?",
            answer: "Refunds within 30 days of purchase.",
            confidence: 0.93,
          },
        ],
        best_match: {
          id: "faqe_5b1e9c0d7a2f4e83b6c4d9a0e1f27c3b",
          question: "What is your refund policy?",
          answer: "Refunds within 30 days of purchase.",
          confidence: 0.93,
        },
        matched: true,
      },
    },
  });
}
