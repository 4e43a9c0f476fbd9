import { GatewayError } from "../errors";
import type { RedisLink } from "../redis/link";
import type { IdempotencyBegin, IdempotencyStore, StoredResponse } from "./interface";

/**
 * Claims a key, or reports what holds it. An in-flight record lives for the lease only, so the
 * record of a node killed mid-call stops blocking a retry once the lease has passed.
 */
const BEGIN = `
local h = redis.call('HMGET', KEYS[1], 'hash', 'status', 'status_code', 'body', 'headers')
if h[1] == false then
  redis.call('HSET', KEYS[1], 'hash', ARGV[1], 'status', 'in_flight')
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return { 'new' }
end
if h[1] ~= ARGV[1] then return { 'mismatch' } end
if h[2] == 'in_flight' then return { 'in_flight' } end
if h[2] == 'gone' then return { 'gone' } end
return { 'replay', h[3], h[4], h[5] }
`;

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

const ABANDON = `
if redis.call('HGET', KEYS[1], 'status') == 'in_flight' then return redis.call('DEL', KEYS[1]) end
return 0
`;

const unavailable = () =>
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

  private key(accountId: string, key: string): string {
    return `textai:idem:${accountId}:${new Bun.CryptoHasher("sha256").update(key).digest("hex")}`;
  }

  async begin(accountId: string, key: string, bodyHash: string): Promise<IdempotencyBegin> {
    let r: string[];
    try {
      r = await this.link.eval<string[]>(BEGIN, [this.key(accountId, key)], [bodyHash, String(this.opts.leaseMs)]);
    } catch {
      throw unavailable();
    }
    const state = r[0];
    if (state === "replay")
      return {
        state,
        response: { status: Number(r[1]), body: r[2], headers: JSON.parse(r[3] || "{}") as Record<string, string> },
      };
    return { state: state as "new" | "mismatch" | "in_flight" | "gone" };
  }

  async complete(accountId: string, key: string, response: StoredResponse): Promise<void> {
    const gone = response.body.length > this.opts.maxAnswerBytes;
    await this.link
      .eval(
        COMPLETE,
        [this.key(accountId, key)],
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
    await this.link.eval(ABANDON, [this.key(accountId, key)], []).catch(() => {});
  }

  size(): number {
    return 0;
  }
}
