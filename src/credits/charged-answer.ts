import type { CachedAnswer, ResponseCache } from "../cache/interface";
import type { ChargeDetails, CreditLedger, KeyBudget, Reservation } from "./interface";
import type { TokenUsage } from "./pricing";

export interface ChargedAnswerCall<A extends CachedAnswer> {
  ledger: CreditLedger;
  cache: ResponseCache;
  /** records a stage's time since `since` (Server-Timing) and answers the time now */
  mark: (stage: "cache" | "credits" | "provider" | "settle", since: number) => number;
  accountId: string;
  cost: number;
  /** the key's monthly_credit_limit: the hold, and a cache hit's charge, are within it too */
  budget?: KeyBudget;
  /**
   * a call priced on its usage (/v1): what the answer costs, charged instead of `cost` (which is
   * then the hold, and the most it is charged), and its tokens for the ledger row
   */
  priced?: (answer: A) => { credits: number; tokens: TokenUsage };
  /** null when the cache is bypassed */
  cacheKey: string | null;
  /** the cache's answer when the call already looked it up (in its first trip to Redis) */
  lookedUp?: { hit: CachedAnswer | null };
  details: (provider: string, cached: boolean) => ChargeDetails;
  insufficient: () => Error | Promise<Error>;
  /** calls the provider(s); shared by concurrent identical requests when the cache is on */
  produce: () => Promise<A>;
  fromCache: (hit: CachedAnswer) => A;
  /**
   * already charged under an earlier request (a retry of an Idempotency-Key whose first call died
   * after its charge committed): answered without holding or charging anything
   */
  paid?: boolean;
}

/**
 * The one credits-and-cache flow of every charged answer (function endpoints, chat completions):
 * a cache hit is held and charged in one step; otherwise the cost is held, the answer produced
 * (single-flight when cached), then charged, and the hold released if anything fails. Marks the
 * cache, credits, provider and settle stages for Server-Timing.
 */
export async function chargedAnswer<A extends CachedAnswer>(
  c: ChargedAnswerCall<A>,
): Promise<{ answer: A; reservation: Reservation; cached: boolean }> {
  const { ledger, cache, mark } = c;
  let t = performance.now();
  const hit = c.lookedUp ? c.lookedUp.hit : c.cacheKey !== null ? await cache.get(c.accountId, c.cacheKey) : null;
  t = mark("cache", t);
  if (c.paid) {
    const answer = hit ? c.fromCache(hit) : await c.produce();
    mark("provider", t);
    const free = { accountId: c.accountId, amount: 0, remaining: await ledger.balance(c.accountId), done: true };
    return { answer, reservation: free, cached: hit !== null };
  }
  if (hit) {
    const answer = c.fromCache(hit);
    const p = c.priced?.(answer);
    const cost = p ? Math.min(c.cost, p.credits) : c.cost;
    const charged = await ledger.charge(c.accountId, cost, {
      ...c.details(hit.provider, true),
      tokens: p?.tokens,
      keyLimit: c.budget?.limit,
    });
    mark("credits", t);
    if (!charged) throw await c.insufficient();
    return { answer, reservation: charged, cached: true };
  }

  const reservation = await ledger.reserve(c.accountId, c.cost, c.budget);
  t = mark("credits", t);
  if (!reservation) throw await c.insufficient();
  try {
    let answer: A;
    let cached = false;
    if (c.cacheKey !== null) {
      const once = await cache.produceOnce(c.accountId, c.cacheKey, c.produce, c.fromCache);
      answer = once.answer;
      cached = once.shared;
    } else answer = await c.produce();
    t = mark("provider", t);
    const p = c.priced?.(answer);
    await ledger.settle(reservation, { ...c.details(answer.provider, cached), tokens: p?.tokens }, p?.credits);
    mark("settle", t);
    return { answer, reservation, cached };
  } catch (err) {
    ledger.release(reservation);
    throw err;
  }
}
