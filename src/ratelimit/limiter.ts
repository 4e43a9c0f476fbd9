import { GatewayError } from "../errors";
import type { RateClass, RateDecision, RateLimiter } from "./interface";
import { TokenBucket } from "./token-bucket";

/** Requests per minute by plan and rate class (CONTRACT section 7). */
export const DEFAULT_PLAN_LIMITS: Record<string, Record<RateClass, number>> = {
  free: { heavy: 10, bulk: 600, standard: 60 },
  pro: { heavy: 120, bulk: 600, standard: 300 },
};

/** Every plan an account may have: the built-in ones and the config file's `[plans.NAME]`. */
export function planNames(plans: Record<string, unknown>): string[] {
  return [...new Set([...Object.keys(DEFAULT_PLAN_LIMITS), ...Object.keys(plans)])];
}

/** Requests per minute for a plan and function (or its rate class): the plan's own figure, else the defaults. */
export function planLimit(plans: Record<string, Record<string, number>>, plan: string, fn: string, rateClass: RateClass): number {
  const custom = plans[plan];
  return custom?.[fn] ?? custom?.[rateClass] ?? DEFAULT_PLAN_LIMITS[plan]?.[rateClass] ?? DEFAULT_PLAN_LIMITS.free[rateClass];
}

/**
 * In-memory token buckets per account and function. A bucket that has refilled completely is
 * indistinguishable from a new one, so the sweep drops it: idle keys cost no memory.
 */
export class MemoryRateLimiter implements RateLimiter {
  private buckets = new Map<string, TokenBucket>();
  private sweepTimer: ReturnType<typeof setInterval> | null = null;

  constructor(
    private plans: Record<string, Record<string, number>>,
    private now: () => number = Date.now,
  ) {}

  limitFor(plan: string, fn: string, rateClass: RateClass): number {
    return planLimit(this.plans, plan, fn, rateClass);
  }

  check(accountId: string, plan: string, fn: string, rateClass: RateClass): RateDecision {
    return this.checkLimit(accountId, fn, this.limitFor(plan, fn, rateClass));
  }

  checkKey(_accountId: string, keyId: string, fn: string, limit: number): RateDecision {
    return this.checkLimit(`key:${keyId}`, fn, limit);
  }

  /**
   * One request from the bucket of `limit` per minute for the account and function. When the
   * limit changes (keys of one account on different plans, a new config), the bucket keeps what
   * it had left, never more than the new limit: switching keys never refills it.
   */
  checkLimit(accountId: string, fn: string, limit: number): RateDecision {
    const now = this.now();
    const id = `${accountId}\u0000${fn}`;
    let bucket = this.buckets.get(id);
    if (!bucket || bucket.capacity !== limit) {
      const left = bucket ? bucket.tokensAt(now) : limit;
      bucket = new TokenBucket(limit, limit / 60_000, now);
      bucket.tokens = Math.min(limit, left);
      this.buckets.set(id, bucket);
    }
    const allowed = bucket.take(now);
    return {
      allowed,
      limit,
      remaining: Math.floor(bucket.tokens),
      resetSeconds: Math.ceil(bucket.msUntilFull(now) / 1000),
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil(bucket.msUntilToken(now) / 1000)),
    };
  }

  sweep(): number {
    const now = this.now();
    let dropped = 0;
    for (const [id, b] of this.buckets) {
      if (b.msUntilFull(now) <= 0) {
        this.buckets.delete(id);
        dropped++;
      }
    }
    return dropped;
  }

  startSweeping(intervalMs = 30_000): void {
    this.sweepTimer ??= setInterval(() => this.sweep(), intervalMs);
    this.sweepTimer.unref?.();
  }

  stop(): void {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = null;
  }

  size(): number {
    return this.buckets.size;
  }
}

export function rateLimitHeaders(d: RateDecision): Record<string, string> {
  const h: Record<string, string> = {
    "RateLimit-Limit": String(d.limit),
    "RateLimit-Remaining": String(d.remaining),
    "RateLimit-Reset": String(d.resetSeconds),
    "X-RateLimit-Limit": String(d.limit),
    "X-RateLimit-Remaining": String(d.remaining),
    "X-RateLimit-Reset": String(d.resetSeconds),
  };
  if (!d.allowed) h["Retry-After"] = String(Math.max(1, d.retryAfterSeconds));
  return h;
}

/**
 * The error of a refused decision: 429 `rate_limited` with `exceeded` when the client exceeded the
 * limit; 503 `service_unavailable` when the limit could not be read (`d.unavailable`: Redis
 * unreachable or failing), which never blames the client. Both carry Retry-After.
 */
export function limitRefusal(d: RateDecision, what: string, exceeded: string): GatewayError {
  const retry = String(Math.max(1, d.retryAfterSeconds));
  if (d.unavailable)
    return new GatewayError(
      "service_unavailable",
      `the shared rate limit of ${what} cannot be read (Redis is unreachable or failing); nothing was charged, retry in ${retry}s`,
      { headers: { "Retry-After": retry } },
    );
  return new GatewayError("rate_limited", exceeded, { headers: { "Retry-After": retry } });
}
