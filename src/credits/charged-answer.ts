import type { CachedAnswer, ResponseCache } from "../cache/interface";
import type { ChargeDetails, CreditLedger, KeyBudget, Reservation } from "./interface";
import type { TokenUsage } from "./pricing";
import { StreamedCharge, type StreamedChargeCall } from "./streamed-charge";

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
 * The one credits-and-cache flow of every charged plain answer (function endpoints, /v1):
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

export interface ChargedStreamCall<S> {
  ledger: CreditLedger;
  mark: (stage: "credits", since: number) => number;
  accountId: string;
  /** the hold: the most the stream can be charged */
  cost: number;
  budget?: KeyBudget;
  insufficient: () => Error | Promise<Error>;
  /** opens the stream (the provider's first event); the hold goes back if it fails */
  produce: () => Promise<S>;
  /** how the opened stream is charged (its price, fees, prompt estimate, ledger row) */
  pricing: (stream: S) => Omit<StreamedChargeCall, "ledger" | "reservation">;
}

/**
 * The same lifecycle for a streamed answer (/v1 with `stream: true`): the cost is held, the
 * stream opened (the hold released if that fails), and its charge handed back as a
 * `StreamedCharge`, which charges what was delivered once the stream ends or its client leaves,
 * or releases the hold when the provider cuts it. Never cached.
 */
export async function chargedStream<S>(
  c: ChargedStreamCall<S>,
): Promise<{ stream: S; reservation: Reservation; charge: StreamedCharge }> {
  const { ledger } = c;
  const held = performance.now();
  const reservation = await ledger.reserve(c.accountId, c.cost, c.budget);
  c.mark("credits", held);
  if (!reservation) throw await c.insufficient();
  let stream: S;
  try {
    stream = await c.produce();
  } catch (err) {
    ledger.release(reservation);
    throw err;
  }
  return { stream, reservation, charge: new StreamedCharge({ ledger, reservation, ...c.pricing(stream) }) };
}
