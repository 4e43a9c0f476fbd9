import type { RateClass } from "../functions/define";
import type { MaybePromise } from "../maybe";

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** seconds until the bucket is full */
  resetSeconds: number;
  /** seconds until the next request may pass (429 only) */
  retryAfterSeconds: number;
}

/**
 * Requests per minute per account and function: every key of an account draws on the same
 * bucket, so more keys never mean more limit. Implementations: token buckets in memory (one
 * process) and in Redis (one bucket for all nodes, updated by one server-side script).
 */
export interface RateLimiter {
  check(accountId: string, plan: string, fn: string, rateClass: RateClass): MaybePromise<RateDecision>;
  /**
   * One request from a key's own bucket of `limit` per minute for `fn` (its policy's
   * rate_limit_per_minute), separate from the account's buckets.
   */
  checkKey(keyId: string, fn: string, limit: number): MaybePromise<RateDecision>;
  /** requests per minute for this plan and function (or rate class) */
  limitFor(plan: string, fn: string, rateClass: RateClass): number;
  /** buckets held, for metrics and the soak */
  size(): number;
  /** background reclamation of idle state; stop() ends it */
  startSweeping(): void;
  stop(): void;
}
