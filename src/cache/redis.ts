import type { RedisLink } from "../redis/link";
import type { CachedAnswer, CacheStats, ResponseCache } from "./interface";

/**
 * Stores an answer and indexes it by time in its account's index (KEYS[2], which shares the
 * answer's hash tag on a cluster), trimmed to the entry bound (oldest first). The index expires
 * with the account's last answer. In the same trip, frees the producer's single-flight lock
 * (KEYS[3]) if it still holds it (ARGV[5], its owner token; empty: it holds none).
 */
const STORE = `
if ARGV[5] ~= '' and redis.call('GET', KEYS[3]) == ARGV[5] then redis.call('DEL', KEYS[3]) end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], KEYS[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', tonumber(ARGV[3]) - tonumber(ARGV[2]))
local n = redis.call('ZCARD', KEYS[2])
local over = n - tonumber(ARGV[4])
if over > 0 then
  local old = redis.call('ZPOPMIN', KEYS[2], over)
  for i = 1, #old, 2 do redis.call('DEL', old[i]) end
  n = n - over
end
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return n
`;

/** frees a single-flight lock if the caller still holds it */
const UNLOCK = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

const POLL_MS = 20;

/**
 * The answer cache shared by every node through Redis: an answer computed on one node is a HIT on
 * all (same account, same request). Entries are namespaced by account, expire after the TTL, and
 * are bounded in number per account (each account's index: the oldest are dropped first; no
 * index spans accounts, so a Redis Cluster can place each account's on its own node) and each in
 * size; Redis's own maxmemory bounds the total. Single-flight spans nodes: the first node to claim a request's lock calls the
 * provider, the others wait for its answer (never longer than the lock, which the producer holds
 * for at most the request timeout) and produce themselves if it fails. While Redis is down every
 * lookup is a miss and single-flight is per node.
 */
export class RedisResponseCache implements ResponseCache {
  private inflight = new Map<string, Promise<CachedAnswer>>();
  readonly stats = { hits: 0, misses: 0, evictions: 0 };

  constructor(
    private link: RedisLink,
    private opts: { ttlMs: number; maxEntries: number; maxEntryBytes: number; lockMs: number },
  ) {}

  /** The Redis key of an account's answer to a request (`key`: the request's digest). */
  entryKey(scope: string, key: string): string {
    return this.link.accountKey(scope, "cache", key);
  }

  async get(scope: string, key: string): Promise<CachedAnswer | null> {
    return this.counted(await this.read(this.entryKey(scope, key)));
  }

  /** A lookup's answer, counted as a hit or a miss (a GET made elsewhere: the call's first trip). */
  counted(hit: CachedAnswer | null): CachedAnswer | null {
    if (hit) this.stats.hits++;
    else this.stats.misses++;
    return hit;
  }

  private async read(k: string): Promise<CachedAnswer | null> {
    if (!this.link.up) return null;
    try {
      const raw = await this.link.send<string | null>("GET", [k]);
      return raw ? (JSON.parse(raw) as CachedAnswer) : null;
    } catch {
      return null;
    }
  }

  /** Keeps an answer; true when its store also freed the lock `owner` held (one trip for both). */
  private async store(scope: string, k: string, answer: CachedAnswer, owner: string | null): Promise<boolean> {
    const value = JSON.stringify({ json: answer.json, provider: answer.provider, model: answer.model, notes: answer.notes });
    if (value.length > this.opts.maxEntryBytes || !this.link.up) return false;
    try {
      await this.link.eval<number>(
        STORE,
        [k, this.link.accountKey(scope, "cacheidx"), `${k}:lock`],
        [value, String(this.opts.ttlMs), String(Date.now()), String(this.opts.maxEntries), owner ?? ""],
      );
      return owner !== null;
    } catch {
      // not kept: the next identical request calls the provider again
      return false;
    }
  }

  async produceOnce<T extends CachedAnswer>(
    scope: string,
    cacheKey: string,
    produce: () => Promise<T>,
    adopt: (hit: CachedAnswer) => T,
  ): Promise<{ answer: T; shared: boolean }> {
    const k = this.entryKey(scope, cacheKey);
    const local = this.inflight.get(k) as Promise<T> | undefined;
    if (local) return { answer: await local, shared: true };
    let resolveShared!: (v: { answer: T; shared: boolean }) => void;
    let rejectShared!: (e: unknown) => void;
    const mine = new Promise<{ answer: T; shared: boolean }>((res, rej) => {
      resolveShared = res;
      rejectShared = rej;
    });
    const answerOnly = mine.then((r) => r.answer);
    answerOnly.catch(() => {});
    this.inflight.set(k, answerOnly);
    try {
      resolveShared(await this.produceAcrossNodes(scope, k, produce, adopt));
    } catch (err) {
      rejectShared(err);
    } finally {
      this.inflight.delete(k);
    }
    return mine;
  }

  private async produceAcrossNodes<T extends CachedAnswer>(
    scope: string,
    k: string,
    produce: () => Promise<T>,
    adopt: (hit: CachedAnswer) => T,
  ): Promise<{ answer: T; shared: boolean }> {
    const lock = `${k}:lock`;
    const owner = crypto.randomUUID();
    let claimed = true;
    const deadline = Date.now() + this.opts.lockMs;
    if (this.link.up) {
      try {
        claimed = (await this.link.send("SET", [lock, owner, "NX", "PX", String(this.opts.lockMs)])) !== null;
        // another node is producing this answer: wait for it while its lock lives
        while (!claimed && Date.now() < deadline) {
          await Bun.sleep(POLL_MS);
          const hit = await this.read(k);
          if (hit) return { answer: adopt(hit), shared: true };
          claimed = (await this.link.send("SET", [lock, owner, "NX", "PX", String(this.opts.lockMs)])) !== null;
        }
      } catch {
        claimed = true;
      }
    }
    let unlocked = false;
    try {
      const answer = await produce();
      unlocked = await this.store(scope, k, answer, claimed ? owner : null);
      return { answer, shared: false };
    } finally {
      if (claimed && !unlocked && this.link.up) void this.link.eval(UNLOCK, [lock], [owner]).catch(() => {});
    }
  }

  snapshot(): CacheStats {
    // the entries are counted per account, in Redis: no node knows the total
    return { entries: 0, bytes: 0, ...this.stats };
  }

  async clear(): Promise<void> {
    // entries expire on their own; clearing a shared cache is an operator's FLUSHDB
  }
}
