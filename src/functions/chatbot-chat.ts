/**
 * Talk to a chatbot: answers grounded in its knowledge bases, with sources (chatbot-answer.ts). It
 * reads stored resources, so it is built with the knowledge services (registry.ts knowledgeFunctions).
 */
import { type Static, Type } from "@sinclair/typebox";
import { embedderFor, type KnowledgeServices, vectorHits } from "../knowledge/embeddings";
import type { Snippet } from "../knowledge/schemas";
import {
  ChatbotResult,
  chatbotPrompt,
  groundSources,
  localChatAnswer,
  PASSAGES_PER_ANSWER,
  Passage,
  retrievalQuery,
} from "./chatbot-answer";
import type { LocalContext } from "./define";
import { defineFunction } from "./define";
import { ChatTurn, Internal, Model } from "./schemas";

const request = Type.Object({
  id: Type.String({ minLength: 1, description: "chatbot id (path parameter)" }),
  message: Type.String({ minLength: 1, maxLength: 4000, description: "the user's message" }),
  conversation: Type.Optional(Type.Array(ChatTurn, { maxItems: 50, description: "previous turns, oldest first" })),
  model: Model(),
  chatbot: Internal(
    Type.Object({ name: Type.String(), mode: Type.Union([Type.Literal("support"), Type.Literal("assistant")]) }),
    "the chatbot",
  ),
  passages: Internal(Type.Array(Passage), "passages retrieved from the knowledge bases"),
  lexical_passages: Internal(Type.Array(Passage), "with vectors, the same search without them (the offline engine's fallback)"),
});
type Req = Static<typeof request>;

// The bot decides itself whether a passage answers (chatbot-answer.ts), so no floor here.
const asPassages = (hits: Snippet[]) =>
  hits.map((h) => ({
    document_id: h.document_id ?? "",
    knowledge_base_id: h.knowledge_base_id ?? "",
    title: h.title,
    content: h.content,
    score: h.score,
  }));

/** The chatbot and the passages its knowledge bases hold for the message, set on the request. */
async function retrieve(s: KnowledgeServices, req: Req, ctx: LocalContext): Promise<Req> {
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
  const opts = { kbIds, query, topK: PASSAGES_PER_ANSWER, minScore: 0 };
  const passages = asPassages(await s.index.search(opts, vectors));
  // vectors may lift a rival passage and so narrow the best one's lead: the lexical passages
  // keep the offline answer at least as good as with no embedding provider (issue 24.16)
  // (always set here, so a client's own lexical_passages never reach the engine)
  const lexical_passages = vectors ? asPassages(await s.index.search(opts)) : undefined;
  return { ...req, chatbot: { name: bot.name, mode: bot.mode }, passages, lexical_passages };
}

export default function chatbotChat(s: KnowledgeServices) {
  return defineFunction({
    name: "chatbot-chat",
    path: "/api/v1/chatbots/:id/chat",
    summary: "Talk to a chatbot: answers grounded in its knowledge bases, with sources",
    description:
      "support bots answer only from their knowledge bases and decline politely otherwise; assistant bots answer generally, grounded in their knowledge bases when they have any. Without a generative provider the offline engine answers extractively with the best passage.",
    tags: ["Knowledge"],
    request,
    result: ChatbotResult,
    cost: 2,
    prepare: (req, ctx) => retrieve(s, req, ctx),
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
}
