import type { CachedAnswer } from "../cache/interface";
import type { RedisResponseCache } from "../cache/redis";
import { BEGIN_LUA, beginResult, idempotencyUnavailable, type RedisIdempotencyStore } from "../idempotency/redis";
import { BUCKET_LUA, bucketDecision, type RedisRateLimiter, unreadable } from "../ratelimit/redis";
import { isRedisOutage, type RedisLink } from "../redis/link";
import type { CallStart, CallStarter, CallStartRequest } from "./interface";

/**
 * KEYS: the account's bucket, the key's own bucket, the Idempotency-Key's record, the cache entry
 * (a part not asked for repeats the account's bucket, so every key is in the account's slot).
 * ARGV: the account's limit, the key's ('' for none), the body hash ('' for no Idempotency-Key),
 * lease ms, ttl ms, request id, and '1' to look the cache up.
 * Answers { own, account, idempotency, cached answer }, false for what was not done.
 */
const START = `${BUCKET_LUA}${BEGIN_LUA}
local own = false
if ARGV[2] ~= '' then
  own = take(KEYS[2], tonumber(ARGV[2]))
  if own[1] == 0 then return { own, false, false, false } end
end
local account = take(KEYS[1], tonumber(ARGV[1]))
if account[1] == 0 then return { own, account, false, false } end
local idem = false
if ARGV[3] ~= '' then
  idem = idem_begin(KEYS[3], ARGV[3], ARGV[4], ARGV[5], ARGV[6])
  if idem[1] ~= 'new' then return { own, account, idem, false } end
end
local hit = false
if ARGV[7] == '1' then hit = redis.call('GET', KEYS[4]) end
return { own, account, idem, hit }
`;

/** A stored answer as the cache keeps it (an entry that does not parse is a miss, as in RedisResponseCache). */
function parseHit(raw: string | null): CachedAnswer | null {
  if (!raw) return null;
  try {
    return JSON.parse(raw) as CachedAnswer;
  } catch {
    return null;
  }
}

type StartReply = [[number, string] | null, [number, string] | null, string[] | null, string | null];

/**
 * The call's first trip on Redis: one script (START) for its limits, Idempotency-Key claim and cache
 * lookup, built from the same Lua the limiter and the record store run alone. While Redis is down
 * (or the trip fails) each part falls back as its service does: the node's share of each limit,
 * 503 for an Idempotency-Key, a cache miss. What the node admitted during an outage is paid into
 * Redis's buckets before the first trip after it.
 */
export class RedisCallStarter implements CallStarter {
  constructor(
    private link: RedisLink,
    private limiter: RedisRateLimiter,
    private idempotency: RedisIdempotencyStore,
    private cache: RedisResponseCache,
  ) {}

  async start(req: CallStartRequest): Promise<CallStart> {
    const accountBucket = this.limiter.accountBucket(req.accountId, req.fn);
    const keyBucket = req.keyLimit !== undefined ? this.limiter.keyBucket(req.accountId, req.keyId, req.fn) : accountBucket;
    const idem = req.idempotency;
    // in a node's first moments Redis is not down but not reached yet: wait for the first attempt
    if (!this.link.up) await this.link.whenStarted();
    let reply: StartReply;
    try {
      if (!this.link.up) throw new Error("redis is down");
      const settling = this.limiter.ready();
      if (settling) await settling;
      reply = await this.link.eval<StartReply>(
        START,
        [
          accountBucket,
          keyBucket,
          idem ? this.idempotency.recordKey(req.accountId, idem.key) : accountBucket,
          req.cacheKey !== null ? this.cache.entryKey(req.accountId, req.cacheKey) : accountBucket,
        ],
        [
          String(req.limit),
          req.keyLimit !== undefined ? String(req.keyLimit) : "",
          idem ? idem.bodyHash : "",
          ...(idem ? this.idempotency.beginArgs(idem.requestId) : ["", "", ""]),
          req.cacheKey !== null ? "1" : "",
        ],
      );
    } catch (err) {
      // Redis answered with an error (out of memory, busy...): not an outage, refused as unavailable
      if (this.link.up && !isRedisOutage(err)) return { own: null, account: unreadable(req.limit) };
      // unreachable (or lost mid-call): each part as its service does without Redis
      return this.without(req, accountBucket, keyBucket);
    }
    const [own, account, begun, hit] = reply;
    const out: CallStart = {
      own: own && req.keyLimit !== undefined ? bucketDecision(req.keyLimit, own) : null,
      account: account ? bucketDecision(req.limit, account) : null,
    };
    if (begun) out.idempotency = beginResult(begun);
    if (req.cacheKey !== null && out.account?.allowed && (!begun || out.idempotency?.state === "new"))
      out.hit = this.cache.counted(parseHit(hit));
    return out;
  }

  private without(req: CallStartRequest, accountBucket: string, keyBucket: string): CallStart {
    const own = req.keyLimit !== undefined ? this.limiter.fallback(keyBucket, req.keyLimit) : null;
    if (own && !own.allowed) return { own, account: null };
    const account = this.limiter.fallback(accountBucket, req.limit);
    if (!account.allowed) return { own, account };
    if (req.idempotency) throw idempotencyUnavailable();
    return { own, account, ...(req.cacheKey !== null ? { hit: this.cache.counted(null) } : {}) };
  }
}
