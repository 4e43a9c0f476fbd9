import { isRedisOutage, type RedisLink } from "../redis/link";
import type { RateClass, RateDecision, RateLimiter } from "./interface";
import { planLimit } from "./limiter";
import { OutageShares } from "./outage";

/**
 * One token bucket per account and function, refilled continuously (limit per minute), read and
 * updated in one server-side script so that concurrent calls on any node never both take the
 * last token. The clock is Redis's own (TIME), so nodes' clocks need not agree. `take` is a Lua
 * function other scripts include (the call's first trip, callstart/redis.ts): `{ allowed, tokens }`
 * for one request from the bucket `key` of `cap` per minute; `pay` takes `n` calls a node admitted
 * on its own while Redis was down (never below empty), so they count against the limit here too.
 * A bucket is written back expiring once it would be full again.
 */
export const BUCKET_LUA = `
local function bucket(key, cap)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local b = redis.call('HMGET', key, 'tokens', 'ts')
  local tokens = tonumber(b[1])
  local ts = tonumber(b[2])
  if tokens == nil then
    tokens = cap
    ts = now
  end
  return math.min(cap, tokens + math.max(0, now - ts) * cap / 60000), now
end
local function store(key, cap, tokens, now)
  redis.call('HSET', key, 'tokens', tostring(tokens), 'ts', tostring(now))
  redis.call('PEXPIRE', key, math.ceil((cap - tokens) / (cap / 60000)) + 1000)
end
local function take(key, cap)
  local tokens, now = bucket(key, cap)
  local allowed = 0
  if tokens >= 1 then
    tokens = tokens - 1
    allowed = 1
  end
  store(key, cap, tokens, now)
  return { allowed, tostring(tokens) }
end
local function pay(key, cap, n)
  local tokens, now = bucket(key, cap)
  store(key, cap, math.max(0, tokens - n), now)
  return 1
end
`;

const TAKE = `${BUCKET_LUA}
return take(KEYS[1], tonumber(ARGV[1]))
`;

const PAY = `${BUCKET_LUA}
return pay(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]))
`;

/** A bucket's state as the Lua `take` answers it, as the decision the edge applies. */
export function bucketDecision(limit: number, [allowed, left]: [number, string]): RateDecision {
  const tokens = Number(left);
  const perMs = limit / 60_000;
  return {
    allowed: allowed === 1,
    limit,
    remaining: Math.floor(tokens),
    resetSeconds: Math.ceil((limit - tokens) / perMs / 1000),
    retryAfterSeconds: allowed === 1 ? 0 : Math.max(1, Math.ceil((1 - tokens) / perMs / 1000)),
  };
}

/** The decision when Redis answered the bucket's script with an error: refused as unavailable (503), for a second. */
export function unreadable(limit: number): RateDecision {
  return { allowed: false, limit, remaining: 0, resetSeconds: 1, retryAfterSeconds: 1, unavailable: true };
}

/**
 * Rate limits shared by every node through Redis. While Redis is unreachable each node falls back
 * to its own share of each limit (see OutageShares): limit/N (N: the nodes alive when Redis was
 * last seen), empty when the outage begins, so all nodes together never admit more than the
 * limit; the answer's RateLimit-Limit says which applied. When Redis is back, what the node
 * admitted on its own is taken from Redis's buckets before its next call is counted there.
 */
export class RedisRateLimiter implements RateLimiter {
  private outage: OutageShares;
  private settling: Promise<void> | null = null;
  private sweepTimer: ReturnType<typeof setInterval> | null = null;
  readonly stats = { fallbacks: 0 };

  constructor(
    private link: RedisLink,
    private plans: Record<string, Record<string, number>>,
    now: () => number = Date.now,
  ) {
    this.outage = new OutageShares(now);
  }

  limitFor(plan: string, fn: string, rateClass: RateClass): number {
    return planLimit(this.plans, plan, fn, rateClass);
  }

  check(accountId: string, plan: string, fn: string, rateClass: RateClass): Promise<RateDecision> {
    return this.take(this.accountBucket(accountId, fn), this.limitFor(plan, fn, rateClass));
  }

  checkKey(accountId: string, keyId: string, fn: string, limit: number): Promise<RateDecision> {
    return this.take(this.keyBucket(accountId, keyId, fn), limit);
  }

  /** The Redis key of an account's bucket for `fn`. */
  accountBucket(accountId: string, fn: string): string {
    return this.link.accountKey(accountId, "rl", fn);
  }

  /**
   * The Redis key of a key's own bucket for `fn`: in its account's hash tag on a Redis Cluster (so
   * the call's first trip touches one slot); on one Redis the name every version has used.
   */
  keyBucket(accountId: string, keyId: string, fn: string): string {
    return this.link.cluster ? this.link.accountKey(accountId, "rlk", `${keyId}:${fn}`) : this.link.key(`rlk:${keyId}:${fn}`);
  }

  /** Before a bucket is read in Redis: what this node admitted on its own in an outage is paid first. */
  ready(): Promise<void> | null {
    return this.outage.active ? this.settle() : null;
  }

  private async take(id: string, limit: number): Promise<RateDecision> {
    // in a node's first moments Redis is not down but not reached yet: wait for the first attempt
    if (!this.link.up) await this.link.whenStarted();
    if (this.link.up) {
      try {
        if (this.outage.active) await this.settle();
        return bucketDecision(limit, await this.link.eval<[number, string]>(TAKE, [id], [String(limit)]));
      } catch (err) {
        // Redis answered with an error (out of memory, busy, read-only...): no outage, so no
        // share of the limit either; the call is refused as unavailable. Unreachable mid-call:
        // this node's share of the limit instead.
        if (!isRedisOutage(err)) return unreadable(limit);
      }
    }
    return this.fallback(id, limit);
  }

  /** This node's share of the limit of bucket `id`, while Redis is unreachable. */
  fallback(id: string, limit: number): RateDecision {
    this.stats.fallbacks++;
    return this.outage.take(id, limit, limit / this.link.nodes(), this.link.downSince());
  }

  /** Pays what this node admitted during the outage into Redis's buckets, once (concurrent calls wait for it). */
  private settle(): Promise<void> {
    this.settling ??= this.outage
      .settle(async (id, calls, limit) => {
        await this.link.eval(PAY, [id], [String(limit), String(calls)]);
      })
      .finally(() => {
        this.settling = null;
      });
    return this.settling;
  }

  size(): number {
    return this.outage.size();
  }

  startSweeping(intervalMs = 30_000): void {
    this.sweepTimer ??= setInterval(() => this.outage.sweep(), intervalMs);
    this.sweepTimer.unref?.();
  }

  stop(): void {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = null;
  }
}
