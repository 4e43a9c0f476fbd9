/**
 * The charged knowledge functions, as FunctionDefs run by the one pipeline (credits, rate limits,
 * cache, routing): stored and inline search, FAQ match and chatbot chat. They read stored
 * resources, so they are built per app from its knowledge index rather than listed in the static registry.
 */
import { type TSchema, Type } from "@sinclair/typebox";
import { type AnyFunctionDef, defineFunction } from "../functions/define";
import { buildPrompt } from "../functions/prompt";
import { ChatTurn, Model } from "../functions/schemas";
import {
  ChatbotResult,
  chatbotPrompt,
  groundSources,
  localChatAnswer,
  PASSAGES_PER_ANSWER,
  Passage,
  retrievalQuery,
} from "./chatbot-answer";
import { type Embedder, embedderFor, type VectorCache, vectorHits } from "./embeddings";
import { DEFAULT_MIN_CONFIDENCE, DEFAULT_TOP_N, FaqMatcher } from "./faq-match";
import { searchInline } from "./inline";
import type { KnowledgeIndex } from "./interface";
import { DocumentInput, FilterMetadata, LIMITS, MinScore, Query, Snippet, TopK } from "./schemas";

export interface KnowledgeServices {
  index: KnowledgeIndex;
  /** hybrid search: null when no provider embeds */
  embedder: Embedder | null;
  vectors: VectorCache;
}

const TAGS = ["Knowledge"];

/** Set by `prepare`; a client sending it is overwritten, so it can never steer the answer. */
function Internal<S extends TSchema>(schema: S, what: string) {
  const described: S = { ...schema, description: `set by the gateway (${what}); ignored when sent` };
  return Type.Optional(described);
}

const SearchResult = Type.Object(
  { results: Type.Array(Snippet, { description: "best first" }) },
  { additionalProperties: false, description: "the most relevant snippets, best first" },
);

const searchPrompt = (query: string, documents: string) =>
  buildPrompt({
    role: "You rank documents by how well they answer a search query.",
    rules: ["Return the passages that answer the query, best first, each with a relevance score from 0 to 1."],
    inputs: [
      ["query", query],
      ["documents", documents],
    ],
    result: SearchResult,
  });

const docsText = (docs: DocumentInput[]) =>
  docs.map((d, i) => (typeof d === "string" ? `[${i}] ${d}` : `[${i}] ${d.title ?? ""}\n${d.content}`)).join("\n\n");

export function knowledgeFunctions(s: KnowledgeServices) {
  const search = defineFunction({
    name: "knowledge-base-search",
    path: "/api/v1/knowledge-bases/:id/search",
    summary: "Search a stored knowledge base (BM25 over its chunks)",
    description: `Snippets of the knowledge base's documents that best match the query, with a 0-1 relevance score (see min_score); recall-first: the top_k best snippets sharing a meaningful word with the query (or close to it in meaning, with an embedding provider), an empty list when none does; min_score raises the floor. filter_metadata keeps only documents whose metadata has the given values.`,
    tags: TAGS,
    request: Type.Object({
      id: Type.String({ minLength: 1, description: "knowledge base id (path parameter)" }),
      query: Query,
      top_k: Type.Optional(TopK),
      filter_metadata: Type.Optional(FilterMetadata),
      min_score: Type.Optional(MinScore),
      revision: Internal(Type.Integer(), "the knowledge base's revision, so cached answers follow document changes"),
    }),
    result: SearchResult,
    cost: 3,
    rateClass: "heavy",
    promptVersion: 1,
    preferLocal: true,
    prepare: async (req, ctx) => ({ ...req, revision: (await s.index.bases.row(ctx.accountId, req.id)).revision }),
    prompt: (req) => searchPrompt(req.query, "(stored knowledge base: searched by the gateway)"),
    local: async (req, ctx) => {
      const base = await s.index.bases.row(ctx.accountId, req.id);
      const query = ctx.outbound ? ctx.outbound(req.query) : req.query;
      const hits = await vectorHits(s.index, embedderFor(s.embedder, ctx.allowModel), s.vectors, [base], query, ctx.signal);
      return {
        results: await s.index.search(
          { kbIds: [req.id], query: req.query, topK: req.top_k ?? 5, filter: req.filter_metadata, minScore: req.min_score },
          hits,
        ),
      };
    },
    example: {
      request: { id: "kb_4f9c2a7d1e8b3c6a5d0f", query: "how long does delivery take?", top_k: 3 },
      result: {
        results: [
          {
            title: "Shipping policy",
            content: "Orders ship within 24 hours; delivery takes 3-5 business days.",
            score: 0.92,
            document_id: "doc_8a1b2c3d4e5f6a7b8c9d",
            knowledge_base_id: "kb_4f9c2a7d1e8b3c6a5d0f",
            metadata: { category: "shipping" },
          },
        ],
      },
    },
  });

  const inlineSearch = defineFunction({
    name: "knowledge-base-search",
    path: "/api/v1/ai/knowledge-bases",
    summary: "Search documents sent with the request",
    description:
      "The documents (texts, or {title, content, metadata}) are chunked and indexed in memory for this request only, then searched like a stored knowledge base (same 0-1 score and min_score).",
    tags: TAGS,
    request: Type.Object({
      query: Query,
      documents: Type.Array(DocumentInput, {
        minItems: 1,
        maxItems: LIMITS.inlineDocuments,
        description: "document objects or text chunks to search",
      }),
      top_k: Type.Optional(TopK),
      filter_metadata: Type.Optional(FilterMetadata),
      min_score: Type.Optional(MinScore),
    }),
    result: SearchResult,
    cost: 3,
    rateClass: "heavy",
    promptVersion: 1,
    preferLocal: true,
    prompt: (req) => searchPrompt(req.query, docsText(req.documents)),
    local: (req) => ({ results: searchInline(req.documents, req.query, req.top_k ?? 5, req.filter_metadata, req.min_score) }),
    example: {
      request: {
        query: "can I get my money back?",
        documents: [
          "Refunds are issued within 30 days of purchase.",
          { title: "Shipping", content: "We ship worldwide.", metadata: { category: "shipping" } },
        ],
        top_k: 5,
      },
      result: {
        results: [
          {
            title: null,
            content: "Refunds are issued within 30 days of purchase.",
            score: 0.75,
            document_id: null,
            document_index: 0,
            metadata: {},
          },
        ],
      },
    },
  });

  const faqEntry = Type.Object({ id: Type.String(), question: Type.String(), answer: Type.String() });
  const faqMatch = Type.Object(
    {
      id: Type.String({ description: "the FAQ entry's id (random, as listed by GET /api/v1/ai/faq-collections/:id)" }),
      question: Type.String(),
      answer: Type.String(),
      confidence: Type.Number({ minimum: 0, maximum: 1 }),
    },
    { additionalProperties: false },
  );
  const faqResult = Type.Object(
    {
      matches: Type.Array(faqMatch, { description: "best first; empty when nothing reaches min_confidence" }),
      best_match: Type.Union([faqMatch, Type.Null()]),
      matched: Type.Boolean(),
    },
    { additionalProperties: false, description: "FAQs matching the query" },
  );
  const faqMatchFn = defineFunction({
    name: "faq-match",
    path: "/api/v1/ai/faq-match",
    summary: "Match a question against a stored FAQ collection",
    description: `FAQs asking what the query asks (paraphrases and misspellings included) with a calibrated confidence from 0 to 1, best first. min_confidence defaults to ${DEFAULT_MIN_CONFIDENCE}, top_n to ${DEFAULT_TOP_N}.`,
    tags: TAGS,
    request: Type.Object({
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
      faqs: Internal(Type.Array(faqEntry), "the collection's FAQs"),
    }),
    result: faqResult,
    cost: 1,
    rateClass: "standard",
    promptVersion: 1,
    preferLocal: true,
    prepare: async (req, ctx) => ({ ...req, faqs: await s.index.faqs.faqs(ctx.accountId, req.collection_id) }),
    prompt: (req) =>
      buildPrompt({
        role: "You match a user's question to the FAQ entries that answer it.",
        rules: [
          "Return the FAQs (with their id, question and answer as given) that answer the query, best first, with a confidence from 0 to 1.",
          "Leave out FAQs that do not answer it.",
        ],
        inputs: [
          ["query", req.query],
          ["faqs", (req.faqs ?? []).map((f) => `[${f.id}] Q: ${f.question}\nA: ${f.answer}`).join("\n\n")],
        ],
        result: faqResult,
      }),
    postprocess: (req, result) => {
      const min = req.min_confidence ?? DEFAULT_MIN_CONFIDENCE;
      const matches = (result.matches ?? []).filter((m) => m.confidence >= min).slice(0, req.top_n ?? DEFAULT_TOP_N);
      return { matches, best_match: matches[0] ?? null, matched: matches.length > 0 };
    },
    local: (req) => {
      const matches = new FaqMatcher(req.faqs ?? []).match(req.query, { minConfidence: req.min_confidence, topN: req.top_n });
      return { matches, best_match: matches[0] ?? null, matched: matches.length > 0 };
    },
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

  const chat = defineFunction({
    name: "chatbot-chat",
    path: "/api/v1/chatbots/:id/chat",
    summary: "Talk to a chatbot: answers grounded in its knowledge bases, with sources",
    description:
      "support bots answer only from their knowledge bases and decline politely otherwise; assistant bots answer generally, grounded in their knowledge bases when they have any. Without a generative provider the offline engine answers extractively with the best passage.",
    tags: TAGS,
    request: Type.Object({
      id: Type.String({ minLength: 1, description: "chatbot id (path parameter)" }),
      message: Type.String({ minLength: 1, maxLength: 4000, description: "the user's message" }),
      conversation: Type.Optional(Type.Array(ChatTurn, { maxItems: 50, description: "previous turns, oldest first" })),
      model: Model(),
      chatbot: Internal(
        Type.Object({ name: Type.String(), mode: Type.Union([Type.Literal("support"), Type.Literal("assistant")]) }),
        "the chatbot",
      ),
      passages: Internal(Type.Array(Passage), "passages retrieved from the knowledge bases"),
      lexical_passages: Internal(
        Type.Array(Passage),
        "with vectors, the same search without them (the offline engine's fallback)",
      ),
    }),
    result: ChatbotResult,
    cost: 2,
    rateClass: "standard",
    promptVersion: 1,
    prepare: async (req, ctx) => {
      const bot = await s.index.chatbots.get(ctx.accountId, req.id);
      const bases = await s.index.chatbots.activeKnowledgeBases(ctx.accountId, bot.knowledge_base_ids);
      const query = retrievalQuery(req);
      const vectors = await vectorHits(
        s.index,
        embedderFor(s.embedder, ctx.allowModel),
        s.vectors,
        bases,
        ctx.outbound ? ctx.outbound(query) : query,
        ctx.signal,
      );
      const kbIds = bases.map((b) => b.id);
      // The bot decides itself whether a passage answers (chatbot-answer.ts), so no floor here.
      const asPassages = (hits: Snippet[]) =>
        hits.map((h) => ({
          document_id: h.document_id ?? "",
          knowledge_base_id: h.knowledge_base_id ?? "",
          title: h.title,
          content: h.content,
          score: h.score,
        }));
      const opts = { kbIds, query, topK: PASSAGES_PER_ANSWER, minScore: 0 };
      const passages = asPassages(await s.index.search(opts, vectors));
      // vectors may lift a rival passage and so narrow the best one's lead: the lexical passages
      // keep the offline answer at least as good as with no embedding provider (issue 24.16)
      // (always set here, so a client's own lexical_passages never reach the engine)
      const lexical_passages = vectors ? asPassages(await s.index.search(opts)) : undefined;
      return { ...req, chatbot: { name: bot.name, mode: bot.mode }, passages, lexical_passages };
    },
    prompt: chatbotPrompt,
    postprocess: groundSources,
    local: localChatAnswer,
    example: {
      request: { id: "bot_2Xy8Kq4Lm7Np1Rs5Tv9W", message: "How long does delivery take?", conversation: [] },
      result: {
        answer: "Delivery takes 3-5 business days.",
        answered: true,
        sources: [
          {
            document_id: "doc_8a1b2c3d4e5f6a7b8c9d",
            knowledge_base_id: "kb_4f9c2a7d1e8b3c6a5d0f",
            title: "Shipping policy",
            snippet: "Delivery takes 3-5 business days.",
            score: 0.92,
          },
        ],
      },
    },
  });

  return { search, inlineSearch, faqMatch: faqMatchFn, chat } satisfies Record<string, AnyFunctionDef>;
}
