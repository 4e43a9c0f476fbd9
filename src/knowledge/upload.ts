/**
 * Adding documents to a knowledge base: chunked and keyed in slices (the event loop stays free),
 * checked against the account's plan quota, charged in credits for indexing and for the
 * embeddings the operator pays for. The credits are held before any work or embedding call
 * (402 and nothing done when the balance does not cover them), charged once the documents are
 * stored, and released when anything fails. Costs are per started 10,000 characters
 * (docs/quotas.md): `costs."knowledge-indexing"` of the documents' content, and
 * `costs."knowledge-embedding"` of the text sent to the embedding provider.
 */
import { type Config, knowledgeQuotaFor } from "../config";
import type { ChargeDetails, CreditLedger, KeyBudget, Reservation } from "../credits/interface";
import { GatewayError } from "../errors";
import { prepareDocumentsInSlices } from "./chunking";
import { attachVectors, type Embedder, embeddingTexts } from "./embeddings";
import type { DocumentView, KnowledgeBases } from "./interface";
import { checkDocumentsQuota } from "./quota";
import type { DocumentInput } from "./schemas";

/** Characters per unit of the indexing and embedding costs. */
export const CHARGE_UNIT_CHARS = 10_000;
export const INDEXING_FN = "knowledge-indexing";
export const EMBEDDING_FN = "knowledge-embedding";
/** Credits per unit when `costs` sets none. */
export const DEFAULT_UPLOAD_COSTS = { [INDEXING_FN]: 1, [EMBEDDING_FN]: 1 } as const;

const units = (chars: number) => Math.ceil(chars / CHARGE_UNIT_CHARS);

export interface UploadCall {
  bases: KnowledgeBases;
  ledger: CreditLedger;
  embedder: Embedder | null;
  config: Pick<Config, "costs" | "knowledgeQuotas">;
  accountId: string;
  /** the account's plan: its quota */
  plan: string;
  keyId: string;
  /** the key's monthly_credit_limit, which the holds count against too */
  budget?: KeyBudget;
  requestId: string;
  signal?: AbortSignal;
}

export interface Upload {
  added: DocumentView[];
  /** credits charged, indexing and embedding together */
  charged: number;
  /** each charge by its function name (knowledge-indexing, knowledge-embedding) */
  charges: { fn: string; amount: number }[];
  /** the balance after the charges */
  remaining: number;
}

export async function uploadDocuments(c: UploadCall, kbId: string, input: DocumentInput[]): Promise<Upload> {
  const { bases, ledger } = c;
  await bases.row(c.accountId, kbId); // 404 before any work
  const prepared = await prepareDocumentsInSlices(input);
  const quota = knowledgeQuotaFor(c.config, c.plan);
  // early, so an upload past the quota reaches no provider; the store checks again as it writes
  checkDocumentsQuota(await bases.usage(c.accountId), prepared, quota);

  const indexingCost = units(prepared.reduce((s, d) => s + d.content.length, 0)) * costOf(c.config, INDEXING_FN);
  const embeddingChars = c.embedder ? embeddingTexts(prepared).reduce((s, t) => s + t.length, 0) : 0;
  const embeddingCost = units(embeddingChars) * costOf(c.config, EMBEDDING_FN);
  const held: Reservation[] = [];
  const release = () => {
    for (const r of held.splice(0)) ledger.release(r);
  };
  const hold = async (amount: number): Promise<Reservation | null> => {
    if (amount === 0) return null;
    let r: Reservation | null;
    try {
      r = await ledger.reserve(c.accountId, amount, c.budget);
    } catch (err) {
      release();
      throw err;
    }
    if (!r) {
      release();
      const what = embeddingCost > 0 ? `indexing ${indexingCost} and embedding ${embeddingCost}` : `indexing ${indexingCost}`;
      throw new GatewayError(
        "insufficient_credits",
        `insufficient credits: these documents cost ${indexingCost + embeddingCost} credits (${what}), balance is ${await ledger.balance(c.accountId)}`,
      );
    }
    held.push(r);
    return r;
  };
  const indexing = await hold(indexingCost);
  let embedding = await hold(embeddingCost);

  let added: DocumentView[];
  try {
    if (c.embedder) {
      await attachVectors(c.embedder, prepared, c.signal);
      // the provider failed: the documents are indexed for BM25 only, and their embedding is not charged
      if (embedding && !prepared.every((d) => d.vectors)) {
        ledger.release(embedding);
        held.splice(held.indexOf(embedding), 1);
        embedding = null;
      }
    }
    added = await bases.addDocuments(c.accountId, kbId, prepared, quota);
  } catch (err) {
    release();
    throw err;
  }
  const details = (fn: string, provider: string): ChargeDetails => ({
    keyId: c.keyId,
    fn,
    requestId: c.requestId,
    provider,
    cached: false,
  });
  // the documents are stored: the charges follow even if the client has gone meanwhile
  if (indexing) await ledger.settle(indexing, details(INDEXING_FN, "local"));
  if (embedding && c.embedder) await ledger.settle(embedding, details(EMBEDDING_FN, c.embedder.name));
  const charges = [
    { fn: INDEXING_FN, amount: indexing?.amount ?? 0 },
    { fn: EMBEDDING_FN, amount: embedding?.amount ?? 0 },
  ].filter((x) => x.amount > 0);
  const charged = charges.reduce((n, x) => n + x.amount, 0);
  const last = embedding ?? indexing;
  return { added, charged, charges, remaining: last ? last.remaining : await ledger.balance(c.accountId) };
}

const costOf = (config: Pick<Config, "costs">, fn: keyof typeof DEFAULT_UPLOAD_COSTS): number =>
  config.costs[fn] ?? DEFAULT_UPLOAD_COSTS[fn];
