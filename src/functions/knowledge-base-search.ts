/**
 * Search of a stored knowledge base (BM25 over its chunks, hybrid with an embedding provider). It
 * reads stored resources, so it is built with the knowledge services (registry.ts knowledgeFunctions).
 */
import { Type } from "@sinclair/typebox";
import { embedderFor, type KnowledgeServices, vectorHits } from "../knowledge/embeddings";
import { FilterMetadata, MinScore, Query, Snippet, TopK } from "../knowledge/schemas";
import { awaitOutsideCpuBudget } from "../offline-engine/budget";
import { defineFunction } from "./define";
import { buildPrompt } from "./prompt";
import { Internal } from "./schemas";

export const SearchResult = Type.Object(
  { results: Type.Array(Snippet, { description: "best first" }) },
  { additionalProperties: false, description: "the most relevant snippets, best first" },
);

/** A search's prompt, for a provider asked to rank the documents (stored ones stay in the gateway). */
export const searchPrompt = (query: string, documents: string) =>
  buildPrompt({
    role: "You rank documents by how well they answer a search query.",
    rules: ["Return the passages that answer the query, best first, each with a relevance score from 0 to 1."],
    inputs: [
      ["query", query],
      ["documents", documents],
    ],
    result: SearchResult,
  });

export default function knowledgeBaseSearch(s: KnowledgeServices) {
  return defineFunction({
    name: "knowledge-base-search",
    path: "/api/v1/knowledge-bases/:id/search",
    summary: "Search a stored knowledge base (BM25 over its chunks)",
    description: `Snippets of the knowledge base's documents that best match the query, with a 0-1 relevance score (see min_score); recall-first: the top_k best snippets sharing a meaningful word with the query (or close to it in meaning, with an embedding provider), an empty list when none does; min_score raises the floor. filter_metadata keeps only documents whose metadata has the given values.`,
    tags: ["Knowledge"],
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
    preferLocal: true,
    prepare: async (req, ctx) => ({ ...req, revision: (await s.index.bases.row(ctx.accountId, req.id)).revision }),
    prompt: (req) => searchPrompt(req.query, "(stored knowledge base: searched by the gateway)"),
    // an asynchronous offline implementation: its waits are taken off its CPU budget (awaitOutsideCpuBudget)
    local: async (req, ctx) => {
      const base = await awaitOutsideCpuBudget(s.index.bases.row(ctx.accountId, req.id));
      const query = ctx.outbound ? ctx.outbound(req.query) : req.query;
      const hits = await vectorHits(s.index, embedderFor(s.embedder, ctx.allowModel), s.vectors, [base], query, ctx.signal);
      return {
        // on PostgreSQL the search waits for its queries off the budget itself (search-postgres.ts)
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
}
