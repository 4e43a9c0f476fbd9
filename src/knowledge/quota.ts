/**
 * The account's knowledge storage quota (plans.NAME.knowledge_*; docs/quotas.md): bases,
 * documents, FAQ collections, chatbots, and the bytes of documents and FAQs together. Past it is
 * 403 forbidden naming the quota, like a key past max_keys; both stores check it in the
 * transaction that writes.
 */
import type { KnowledgeQuota } from "../config";
import { GatewayError } from "../errors";
import type { KnowledgeUsage, PreparedDocument } from "./interface";
import { LIMITS } from "./schemas";

const n = (x: number) => x.toLocaleString("en-US");

export function basesQuotaError(max: number): GatewayError {
  return new GatewayError(
    "forbidden",
    `this account's plan holds at most ${n(max)} knowledge bases (knowledge_bases quota); delete one first`,
    { param: "name" },
  );
}

/** The UTF-8 bytes a FAQ collection stores against the bytes quota: its questions and answers, as stored (trimmed). */
export function faqBytes(faqs: { question: string; answer: string }[]): number {
  return faqs.reduce((s, f) => s + Buffer.byteLength(f.question.trim()) + Buffer.byteLength(f.answer.trim()), 0);
}

/** The FAQ quota a store checks when it is given none: the built-in limit of collections, bytes unbounded. */
export const DEFAULT_FAQ_QUOTA: Pick<KnowledgeQuota, "faqCollections" | "bytes"> = {
  faqCollections: LIMITS.faqCollectionsPerAccount,
  bytes: Infinity,
};

/** Throws 403 when one more collection of `adding` bytes takes the account past its FAQ collections or bytes quota. */
export function checkFaqQuota(
  usage: Pick<KnowledgeUsage, "faqCollections" | "bytes">,
  adding: number,
  quota: Pick<KnowledgeQuota, "faqCollections" | "bytes">,
): void {
  if (usage.faqCollections + 1 > quota.faqCollections)
    throw new GatewayError(
      "forbidden",
      `this account's plan holds at most ${n(quota.faqCollections)} FAQ collections (knowledge_faq_collections quota); delete one first`,
      { param: "name" },
    );
  if (usage.bytes + adding > quota.bytes)
    throw new GatewayError(
      "forbidden",
      `this account's plan stores at most ${n(quota.bytes)} bytes of documents and FAQs (knowledge_bytes quota); it has ${n(usage.bytes)}, this collection adds ${n(adding)}`,
      { param: "faqs" },
    );
}

/** Throws 403 when one more chatbot takes the account past its chatbots quota. */
export function checkChatbotsQuota(usage: Pick<KnowledgeUsage, "chatbots">, quota: Pick<KnowledgeQuota, "chatbots">): void {
  if (usage.chatbots + 1 > quota.chatbots)
    throw new GatewayError(
      "forbidden",
      `this account's plan holds at most ${n(quota.chatbots)} chatbots (knowledge_chatbots quota); delete one first`,
      { param: "name" },
    );
}

/** Throws 403 when adding `docs` takes the account past its documents or bytes quota. */
export function checkDocumentsQuota(
  usage: Pick<KnowledgeUsage, "documents" | "bytes">,
  docs: Pick<PreparedDocument, "bytes">[],
  quota: Pick<KnowledgeQuota, "documents" | "bytes">,
): void {
  if (usage.documents + docs.length > quota.documents) {
    throw new GatewayError(
      "forbidden",
      `this account's plan holds at most ${n(quota.documents)} documents over all its knowledge bases (knowledge_documents quota); it has ${n(usage.documents)}, this upload adds ${n(docs.length)}`,
      { param: "documents" },
    );
  }
  const adding = docs.reduce((s, d) => s + d.bytes, 0);
  if (usage.bytes + adding > quota.bytes) {
    throw new GatewayError(
      "forbidden",
      `this account's plan stores at most ${n(quota.bytes)} bytes of documents and FAQs (knowledge_bytes quota); it has ${n(usage.bytes)}, this upload adds ${n(adding)}`,
      { param: "documents" },
    );
  }
}
