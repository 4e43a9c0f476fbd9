import { GatewayError } from "../errors";
import type { RedisLink } from "../redis/link";
import type { IdempotencyBegin, IdempotencyStore, StoredResponse } from "./interface";

/**
 * Claims a key, or reports what holds it. An in-flight record keeps its claim for the lease only
 * (Redis's clock, the same for every node), so the record of a node killed mid-call stops
 * blocking a retry once the lease has passed. The record itself lives for the TTL and keeps the
 * request id of every claim (`rids`, a JSON array): a retry that takes it over gets the ids of the
 * claims that died, to ask the ledger whether one of them was charged. A Lua function other
 * scripts include (the call's first trip, callstart/redis.ts).
 * Arguments: the record's key, body hash, lease ms, ttl ms, this request's id.
 */
export const BEGIN_LUA = `
local function idem_begin(key, hash, lease, ttl, rid)
  local h = redis.call('HMGET', key, 'hash', 'status', 'status_code', 'body', 'headers', 'lease', 'rids')
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local rids = {}
  if h[1] ~= false then
    if h[1] ~= hash then return { 'mismatch' } end
    if h[2] == 'gone' then return { 'gone' } end
    if h[2] == 'done' then return { 'replay', h[3], h[4], h[5] } end
    -- no lease field: claimed by an older version, whose record expires with its lease
    if h[6] == false or tonumber(h[6]) > now then return { 'in_flight' } end
    if h[7] then rids = cjson.decode(h[7]) end
  end
  local earlier = cjson.encode(rids)
  table.insert(rids, rid)
  redis.call('DEL', key)
  redis.call('HSET', key, 'hash', hash, 'status', 'in_flight', 'lease', tostring(now + tonumber(lease)), 'rids', cjson.encode(rids))
  redis.call('PEXPIRE', key, ttl)
  return { 'new', earlier }
end
`;

const BEGIN = `${BEGIN_LUA}
return idem_begin(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4])
`;

/** What BEGIN_LUA's `idem_begin` answers, as `begin` returns it. */
export function beginResult(r: string[]): IdempotencyBegin {
  const state = r[0];
  if (state === "replay")
    return {
      state,
      response: { status: Number(r[1]), body: r[2] as string, headers: JSON.parse(r[3] || "{}") as Record<string, string> },
    };
  if (state === "new") {
    // cjson encodes an empty table as {}
    const earlier = r[1]?.startsWith("[") ? (JSON.parse(r[1]) as string[]) : [];
    return earlier.length > 0 ? { state, earlier } : { state };
  }
  return { state: state as "mismatch" | "in_flight" | "gone" };
}

const COMPLETE = `
if redis.call('HGET', KEYS[1], 'status') ~= 'in_flight' then return 0 end
if ARGV[1] == 'gone' then
  redis.call('HSET', KEYS[1], 'status', 'gone')
else
  redis.call('HSET', KEYS[1], 'status', 'done', 'status_code', ARGV[2], 'body', ARGV[3], 'headers', ARGV[4])
end
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
`;

/** frees a failed call's key; a record that names an earlier, crashed claim only ends its lease */
const ABANDON = `
local h = redis.call('HMGET', KEYS[1], 'status', 'rids')
if h[1] ~= 'in_flight' then return 0 end
if h[2] and #cjson.decode(h[2]) > 1 then return redis.call('HSET', KEYS[1], 'lease', '0') end
return redis.call('DEL', KEYS[1])
`;

export const idempotencyUnavailable = () =>
  new GatewayError(
    "service_unavailable",
    "Idempotency-Key records are kept in Redis, which is unreachable: retry shortly (a call without the header is served)",
    { headers: { "Retry-After": "1" } },
  );

/**
 * Idempotency-Key records shared by every node through Redis (24 h), so a retry on another node
 * replays the stored answer, charged once. While Redis is down a call carrying the header is
 * refused with 503 rather than run without the guarantee it asks for.
 */
export class RedisIdempotencyStore implements IdempotencyStore {
  constructor(
    private link: RedisLink,
    private opts: { ttlMs: number; maxAnswerBytes: number; leaseMs: number },
  ) {}

  /** The Redis key of an account's record of an Idempotency-Key (hashed: a key may be any text). */
  recordKey(accountId: string, key: string): string {
    return this.link.accountKey(accountId, "idem", new Bun.CryptoHasher("sha256").update(key).digest("hex"));
  }

  async begin(accountId: string, key: string, bodyHash: string, requestId: string): Promise<IdempotencyBegin> {
    let r: string[];
    try {
      r = await this.link.eval<string[]>(BEGIN, [this.recordKey(accountId, key)], [bodyHash, ...this.beginArgs(requestId)]);
    } catch {
      throw idempotencyUnavailable();
    }
    return beginResult(r);
  }

  /** BEGIN_LUA's lease, ttl and request id arguments, as strings. */
  beginArgs(requestId: string): [string, string, string] {
    return [String(this.opts.leaseMs), String(this.opts.ttlMs), requestId];
  }

  async complete(accountId: string, key: string, response: StoredResponse): Promise<void> {
    const gone = response.body.length > this.opts.maxAnswerBytes;
    await this.link
      .eval(
        COMPLETE,
        [this.recordKey(accountId, key)],
        [
          gone ? "gone" : "done",
          String(response.status),
          gone ? "" : response.body,
          JSON.stringify(response.headers),
          String(this.opts.ttlMs),
        ],
      )
      .catch(() => {
        // not kept: the in-flight record expires with its lease, and a retry then runs again
      });
  }

  async abandon(accountId: string, key: string): Promise<void> {
    await this.link.eval(ABANDON, [this.recordKey(accountId, key)], []).catch(() => {});
  }

  size(): number {
    return 0;
  }
}
