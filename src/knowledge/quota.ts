/**
 * The account's knowledge storage quota (plans.NAME.knowledge_*; docs/quotas.md): bases,
 * documents and bytes over all its bases. Past it is 403 forbidden naming the quota, like a key
 * past max_keys; both stores check it in the transaction that writes.
 */
import type { KnowledgeQuota } from "../config";
import { GatewayError } from "../errors";
import type { KnowledgeUsage, PreparedDocument } from "./interface";

const n = (x: number) => x.toLocaleString("en-US");

export function basesQuotaError(max: number): GatewayError {
  return new GatewayError(
    "forbidden",
    `this account's plan holds at most ${n(max)} knowledge bases (knowledge_bases quota); delete one first`,
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
      `this account's plan holds at most ${n(quota.bytes)} bytes of documents over all its knowledge bases (knowledge_bytes quota); it has ${n(usage.bytes)}, this upload adds ${n(adding)}`,
      { param: "documents" },
    );
  }
}
