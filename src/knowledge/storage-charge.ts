/**
 * The price of storing a FAQ collection or a chatbot (docs/quotas.md), like an upload's indexing:
 * held before the write (402 insufficient_credits and nothing stored when the balance, or the
 * key's monthly_credit_limit, does not cover it), charged once stored, released when the write
 * fails (a quota refusal included). `costs."faq-storage"` is per started 10,000 characters of the
 * collection's questions and answers; `costs."chatbot-storage"` is per chatbot.
 */
import type { Config } from "../config";
import type { CreditLedger, KeyBudget } from "../credits/interface";
import { GatewayError } from "../errors";
import type { MaybePromise } from "../maybe";
import { CHARGE_UNIT_CHARS } from "./upload";

export const FAQ_STORAGE_FN = "faq-storage";
export const CHATBOT_STORAGE_FN = "chatbot-storage";
/** Credits when `costs` sets none: per started 10,000 characters of FAQs; per chatbot. */
export const DEFAULT_STORAGE_COSTS = { [FAQ_STORAGE_FN]: 1, [CHATBOT_STORAGE_FN]: 1 } as const;

export interface StorageCall {
  ledger: CreditLedger;
  config: Pick<Config, "costs">;
  accountId: string;
  keyId: string;
  budget?: KeyBudget;
  requestId: string;
}

export const storageCostOf = (config: Pick<Config, "costs">, fn: keyof typeof DEFAULT_STORAGE_COSTS): number =>
  config.costs[fn] ?? DEFAULT_STORAGE_COSTS[fn];

/** The price of a FAQ collection: per started 10,000 characters of its questions and answers. */
export function faqStoragePrice(config: Pick<Config, "costs">, faqs: { question: string; answer: string }[]): number {
  const chars = faqs.reduce((s, f) => s + f.question.length + f.answer.length, 0);
  return Math.ceil(chars / CHARGE_UNIT_CHARS) * storageCostOf(config, FAQ_STORAGE_FN);
}

/** Runs `store` under a hold of `amount` credits, charged as `fn` once it has stored. */
export async function chargedStore<V>(
  c: StorageCall,
  fn: string,
  amount: number,
  what: string,
  store: () => MaybePromise<V>,
): Promise<{ view: V; charged: number; remaining: number }> {
  const { ledger } = c;
  if (amount <= 0) return { view: await store(), charged: 0, remaining: await ledger.balance(c.accountId) };
  const hold = await ledger.reserve(c.accountId, amount, c.budget);
  if (!hold)
    throw new GatewayError(
      "insufficient_credits",
      `insufficient credits: ${what} costs ${amount} credits (${fn}), balance is ${await ledger.balance(c.accountId)}`,
    );
  let view: V;
  try {
    view = await store();
  } catch (err) {
    ledger.release(hold);
    throw err;
  }
  await ledger.settle(hold, { keyId: c.keyId, fn, requestId: c.requestId, provider: "local", cached: false });
  return { view, charged: amount, remaining: hold.remaining };
}
