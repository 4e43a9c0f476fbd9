import type { MaybePromise } from "../maybe";

/**
 * Rate-limit class of a function; the plan table maps each class to requests per minute.
 * - "heavy": email-analyze and knowledge base search (free 10, pro 120)
 * - "bulk": ticket-reply and pii-redaction (600 on every plan)
 * - "standard": everything else (free 60, pro 300)
 */
export type RateClass = "standard" | "heavy" | "bulk";

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** seconds until the bucket is full */
  resetSeconds: number;
  /** seconds until the next request may pass (429 only) */
  retryAfterSeconds: number;
  /**
   * Refused not because the client exceeded the limit but because the shared limit could not be
   * read (Redis unreachable, or answering with an error): the edge answers 503
   * service_unavailable with Retry-After, never a 429 that blames the client (CONTRACT section 11).
   */
  unavailable?: true;
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
  checkKey(accountId: string, keyId: string, fn: string, limit: number): MaybePromise<RateDecision>;
  /** requests per minute for this plan and function (or rate class) */
  limitFor(plan: string, fn: string, rateClass: RateClass): number;
  /** buckets held, for metrics and the soak */
  size(): number;
  /** background reclamation of idle state; stop() ends it */
  startSweeping(): void;
  stop(): void;
}
