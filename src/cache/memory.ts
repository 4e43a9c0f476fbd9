import type { CachedAnswer, ResponseCache } from "./interface";

interface Entry extends CachedAnswer {
  expiresAt: number;
  bytes: number;
}

/**
 * Exact-match answer cache, in memory only. LRU by Map insertion order, bounded in entries and
 * bytes, with a TTL. `flight` shares one upstream call between concurrent identical requests.
 */
export class MemoryResponseCache implements ResponseCache {
  private entries = new Map<string, Entry>();
  private inflight = new Map<string, Promise<CachedAnswer>>();
  private bytes = 0;
  readonly stats = { hits: 0, misses: 0, evictions: 0 };

  constructor(
    private opts: { ttlMs: number; maxEntries: number; maxBytes: number },
    private now: () => number = Date.now,
  ) {}

  get(scope: string, key: string): CachedAnswer | null {
    return this.lookup(`${scope}\u0000${key}`);
  }

  private lookup(key: string): CachedAnswer | null {
    const e = this.entries.get(key);
    if (!e) {
      this.stats.misses++;
      return null;
    }
    if (e.expiresAt <= this.now()) {
      this.delete(key);
      this.stats.misses++;
      return null;
    }
    this.entries.delete(key);
    this.entries.set(key, e);
    this.stats.hits++;
    return e;
  }

  set(key: string, answer: CachedAnswer): void {
    const bytes = answer.json.length * 2 + key.length * 2 + 64;
    if (bytes > this.opts.maxBytes) return;
    this.delete(key);
    this.entries.set(key, { ...answer, expiresAt: this.now() + this.opts.ttlMs, bytes });
    this.bytes += bytes;
    while (this.entries.size > this.opts.maxEntries || this.bytes > this.opts.maxBytes) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.delete(oldest);
      this.stats.evictions++;
    }
  }

  private delete(key: string): void {
    const e = this.entries.get(key);
    if (e) {
      this.bytes -= e.bytes;
      this.entries.delete(key);
    }
  }

  /**
   * Runs `produce` once per key at a time and stores its answer; concurrent callers share that call
   * (`shared` is true for them: their answer came from another request, like a cache hit).
   */
  async produceOnce<T extends CachedAnswer>(
    scope: string,
    cacheKey: string,
    produce: () => Promise<T>,
  ): Promise<{ answer: T; shared: boolean }> {
    const key = `${scope}\u0000${cacheKey}`;
    const existing = this.inflight.get(key) as Promise<T> | undefined;
    if (existing) return { answer: await existing, shared: true };
    const promise = produce().finally(() => this.inflight.delete(key));
    this.inflight.set(key, promise);
    const answer = await promise;
    this.set(key, { json: answer.json, provider: answer.provider, model: answer.model, notes: answer.notes });
    return { answer, shared: false };
  }

  snapshot() {
    return { entries: this.entries.size, bytes: this.bytes, ...this.stats };
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }
}
