import type { RateClass } from "../functions/define";
import type { RedisLink } from "../redis/link";
import type { RateDecision, RateLimiter } from "./interface";
import { MemoryRateLimiter, planLimit } from "./limiter";

/**
 * One token bucket per account and function, refilled continuously (limit per minute), read and
 * updated in one server-side script so that concurrent calls on any node never both take the
 * last token. The clock is Redis's own (TIME), so nodes' clocks need not agree.
 */
const TAKE = `
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
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil((cap - tokens) / rate) + 1000)
return { allowed, tostring(tokens) }
`;

/**
 * Rate limits shared by every node through Redis. While Redis is unreachable each node falls back
 * to its own buckets of limit/N (N: the nodes alive when Redis was last seen), so all nodes
 * together still admit about the limit; the answer's RateLimit-Limit says which applied.
 */
export class RedisRateLimiter implements RateLimiter {
  private fallback: MemoryRateLimiter;
  readonly stats = { fallbacks: 0 };

  constructor(
    private link: RedisLink,
    private plans: Record<string, Record<string, number>>,
    now?: () => number,
  ) {
    this.fallback = new MemoryRateLimiter(plans, now);
  }

  limitFor(plan: string, fn: string, rateClass: RateClass): number {
    return planLimit(this.plans, plan, fn, rateClass);
  }

  async check(accountId: string, plan: string, fn: string, rateClass: RateClass): Promise<RateDecision> {
    const limit = this.limitFor(plan, fn, rateClass);
    if (this.link.up) {
      try {
        const [allowed, left] = await this.link.eval<[number, string]>(TAKE, [`textai:rl:${accountId}:${fn}`], [String(limit)]);
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
    return this.fallback.checkLimit(accountId, fn, Math.max(1, Math.floor(limit / this.link.nodes())));
  }

  size(): number {
    return this.fallback.size();
  }

  startSweeping(): void {
    this.fallback.startSweeping();
  }

  stop(): void {
    this.fallback.stop();
  }
}
