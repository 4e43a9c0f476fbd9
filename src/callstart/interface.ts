import type { CachedAnswer } from "../cache/interface";
import type { IdempotencyBegin } from "../idempotency/interface";
import type { RateDecision } from "../ratelimit/interface";

/** What a function call asks of the shared services before it holds credits. */
export interface CallStartRequest {
  accountId: string;
  keyId: string;
  fn: string;
  /** the account's limit per minute for `fn` (its plan) */
  limit: number;
  /** the key's own limit per minute for `fn` (its policy's rate_limit_per_minute), if it has one */
  keyLimit?: number;
  /** the call's Idempotency-Key: claimed for it, or what holds it reported */
  idempotency?: { key: string; bodyHash: string; requestId: string };
  /** the call's answer-cache key (null: the cache is bypassed) */
  cacheKey: string | null;
}

export interface CallStart {
  /** the key's own bucket (null: it has no limit of its own), then the account's, as the edge applies them */
  own: RateDecision | null;
  /** the account's bucket; absent when the key's own refused (nothing more was taken or done) */
  account: RateDecision | null;
  /** the Idempotency-Key's state (absent: no key asked, or a limit refused) */
  idempotency?: IdempotencyBegin;
  /** the cache's answer: a hit, or null for a miss (absent: not looked up) */
  hit?: CachedAnswer | null;
}

/**
 * A function call's first trip to the shared services: its limits (the key's own bucket, then the
 * account's), its Idempotency-Key claim and its cache lookup, in the order the gateway applies
 * them, with nothing after a refusal. On Redis it is one server-side script, one round trip,
 * touching only the account's keys (one slot on a Redis Cluster). Single nodes have none: their
 * limits, records and cache are in process, and the pipeline asks each in turn.
 */
export interface CallStarter {
  start(req: CallStartRequest): Promise<CallStart>;
}
