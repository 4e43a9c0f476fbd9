import type { RedisLink } from "../redis/link";
import type { RateClass, RateDecision, RateLimiter } from "./interface";
import { planLimit } from "./limiter";
import { OutageShares } from "./outage";

/** The bucket at Redis's clock (TIME): refilled by the time since it was last written, full when new. */
const REFILL = `
local cap = tonumber(ARGV[1])
local rate = cap / 60000
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local b = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(b[1])
local ts = tonumber(b[2])
if tokens == nil then
  tokens = cap
  ts = now
end
tokens = math.min(cap, tokens + math.max(0, now - ts) * rate)
`;

/** Writes the bucket back, expiring once it would be full again. */
const STORE = `
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil((cap - tokens) / rate) + 1000)
`;

/**
 * One token bucket per account and function, refilled continuously (limit per minute), read and
 * updated in one server-side script so that concurrent calls on any node never both take the
 * last token. The clock is Redis's own (TIME), so nodes' clocks need not agree.
 */
const TAKE = `${REFILL}
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
${STORE}
return { allowed, tostring(tokens) }
`;

/**
 * Calls a node admitted on its own while Redis was down, taken from the bucket now that it is
 * back (never below empty), so they count against the limit here too.
 */
const PAY = `${REFILL}
tokens = math.max(0, tokens - tonumber(ARGV[2]))
${STORE}
return 1
`;

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
    return this.take(this.link.accountKey(accountId, "rl", fn), this.limitFor(plan, fn, rateClass));
  }

  checkKey(keyId: string, fn: string, limit: number): Promise<RateDecision> {
    // one key per script, placed by its whole name on a cluster: the same name in both modes
    return this.take(`textai:rlk:${keyId}:${fn}`, limit);
  }

  private async take(id: string, limit: number): Promise<RateDecision> {
    // in a node's first moments Redis is not down but not reached yet: wait for the first attempt
    if (!this.link.up) await this.link.whenStarted();
    if (this.link.up) {
      try {
        if (this.outage.active) await this.settle();
        const [allowed, left] = await this.link.eval<[number, string]>(TAKE, [id], [String(limit)]);
        const tokens = Number(left);
        const perMs = limit / 60_000;
        return {
          allowed: allowed === 1,
          limit,
          remaining: Math.floor(tokens),
          resetSeconds: Math.ceil((limit - tokens) / perMs / 1000),
          retryAfterSeconds: allowed === 1 ? 0 : Math.max(1, Math.ceil((1 - tokens) / perMs / 1000)),
        };
      } catch {
        // unreachable mid-call: this node's share of the limit instead
      }
    }
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
