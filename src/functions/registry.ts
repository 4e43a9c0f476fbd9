/**
 * Every function the gateway serves; adding a function is one file plus one line here (in
 * knowledgeFunctions for one that reads stored resources).
 */
import type { KnowledgeServices } from "../knowledge/embeddings";
import chat from "./chat";
import chatbotChat from "./chatbot-chat";
import commentAnalyze from "./comment-analyze";
import commentModerate from "./comment-moderate";
import commentReply from "./comment-reply";
import contentGeneration from "./content-generation";
import type { AnyFunctionDef } from "./define";
import emailAnalyze from "./email-analyze";
import emailClassification from "./email-classification";
import emailReply from "./email-reply";
import emailWorkflow from "./email-workflow";
import faqMatch from "./faq-match";
import grammarFix from "./grammar-fix";
import imageGeneration from "./image-generation";
import intentDetection from "./intent-detection";
import jsonExtractor from "./json-extractor";
import knowledgeBaseInlineSearch from "./knowledge-base-inline-search";
import knowledgeBaseSearch from "./knowledge-base-search";
import piiRedaction from "./pii-redaction";
import reviewAnalyze from "./review-analyze";
import reviewInsights from "./review-insights";
import reviewReply from "./review-reply";
import reviewSummary from "./review-summary";
import searchQueryParse from "./search-query-parse";
import sentimentAnalysis from "./sentiment-analysis";
import spamDetection from "./spam-detection";
import textSummarize from "./text-summarize";
import ticketAnalyze from "./ticket-analyze";
import ticketReply from "./ticket-reply";
import ticketWorkflow from "./ticket-workflow";
import translation from "./translation";

/** In the order of the spec's endpoint table, so the README and OpenAPI read like the spec. */
export const FUNCTIONS: AnyFunctionDef[] = [
  intentDetection,
  translation,
  sentimentAnalysis,
  textSummarize,
  grammarFix,
  emailReply,
  emailAnalyze,
  emailWorkflow,
  emailClassification,
  reviewAnalyze,
  reviewSummary,
  reviewReply,
  reviewInsights,
  commentAnalyze,
  commentReply,
  commentModerate,
  ticketAnalyze,
  ticketReply,
  ticketWorkflow,
  jsonExtractor,
  searchQueryParse,
  spamDetection,
  piiRedaction,
  chat,
  contentGeneration,
  imageGeneration,
];

const BY_NAME = new Map(FUNCTIONS.map((def) => [def.name, def]));

/** The definition serving `name` (the last segment of its endpoint path), or undefined. */
export function getFunction(name: string): AnyFunctionDef | undefined {
  return BY_NAME.get(name);
}

/**
 * The functions that read stored resources (knowledge bases, FAQ collections, chatbots), built per
 * app with its knowledge services and mounted by the knowledge routes (http/routes/knowledge.ts).
 */
export function knowledgeFunctions(s: KnowledgeServices) {
  return {
    search: knowledgeBaseSearch(s),
    inlineSearch: knowledgeBaseInlineSearch,
    faqMatch: faqMatch(s),
    chat: chatbotChat(s),
  } satisfies Record<string, AnyFunctionDef>;
}

/**
 * The knowledge functions as definitions only (names, schemas, costs: for the docs table and the
 * usage names), built around stores that refuse every use; the app builds its own with its services.
 */
export const KNOWLEDGE_FUNCTIONS: AnyFunctionDef[] = Object.values(
  knowledgeFunctions(
    new Proxy({} as KnowledgeServices, {
      get() {
        throw new Error("knowledge services are not available to a definition read outside the app");
      },
    }),
  ),
);
