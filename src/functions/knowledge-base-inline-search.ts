/** Search of documents sent with the request: indexed in memory for this request only, no stored resource. */
import { Type } from "@sinclair/typebox";
import { searchInline } from "../knowledge/inline";
import { DocumentInput, FilterMetadata, LIMITS, MinScore, Query, TopK } from "../knowledge/schemas";
import { defineFunction } from "./define";
import { SearchResult, searchPrompt } from "./knowledge-base-search";

const docsText = (docs: DocumentInput[]) =>
  docs.map((d, i) => (typeof d === "string" ? `[${i}] ${d}` : `[${i}] ${d.title ?? ""}\n${d.content}`)).join("\n\n");

export default defineFunction({
  name: "knowledge-base-search",
  path: "/api/v1/ai/knowledge-bases",
  summary: "Search documents sent with the request",
  description:
    "The documents (texts, or {title, content, metadata}) are chunked and indexed in memory for this request only, then searched like a stored knowledge base (same 0-1 score and min_score).",
  tags: ["Knowledge"],
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
