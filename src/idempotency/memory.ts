import type { IdempotencyBegin, IdempotencyStore, StoredResponse } from "./interface";

type Entry = { bodyHash: string; expiresAt: number; response: StoredResponse | null };

/**
 * Idempotency-Key records in one process's memory, for 24 hours (lost on restart: the server uses
 * the SQLite store; this one serves tests and embedders without a database). Only successful
 * answers are kept: a failed call may be retried. Bounded by count and by the bytes of the stored
 * bodies; the oldest go first, and expired records are dropped as new ones arrive (insertion order
 * is expiry order: one TTL).
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  private entries = new Map<string, Entry>();
  private bytes = 0;

  constructor(
    private opts: { ttlMs: number; maxEntries: number; maxBytes: number } = {
      ttlMs: 24 * 3600_000,
      maxEntries: 100_000,
      maxBytes: 64 * 1024 * 1024,
    },
    private now: () => number = Date.now,
  ) {}

  // a process-local record dies with its call's process, so no claim is ever taken over here
  begin(accountId: string, key: string, bodyHash: string, _requestId: string): IdempotencyBegin {
    const id = `${accountId}\u0000${key}`;
    const now = this.now();
    const e = this.entries.get(id);
    if (e && e.expiresAt > now) {
      if (e.bodyHash !== bodyHash) return { state: "mismatch" };
      return e.response ? { state: "replay", response: e.response } : { state: "in_flight" };
    }
    // re-inserted at the end, so the map stays in expiry order
    if (e) this.remove(id, e);
    this.entries.set(id, { bodyHash, expiresAt: now + this.opts.ttlMs, response: null });
    this.trim(now);
    return { state: "new" };
  }

  complete(accountId: string, key: string, response: StoredResponse): void {
    const e = this.entries.get(`${accountId}\u0000${key}`);
    if (!e || e.response) return;
    e.response = response;
    this.bytes += sizeOf(response);
    this.trim(this.now());
  }

  abandon(accountId: string, key: string): void {
    const id = `${accountId}\u0000${key}`;
    const e = this.entries.get(id);
    if (e && e.response === null) this.remove(id, e);
  }

  size(): number {
    return this.entries.size;
  }

  /** approximate bytes of the stored responses */
  storedBytes(): number {
    return this.bytes;
  }

  private trim(now: number): void {
    for (const [id, e] of this.entries) {
      const over = this.entries.size > this.opts.maxEntries || this.bytes > this.opts.maxBytes;
      if (!over && e.expiresAt > now) break;
      this.remove(id, e);
    }
  }

  private remove(id: string, e: Entry): void {
    this.entries.delete(id);
    if (e.response) this.bytes -= sizeOf(e.response);
  }
}

function sizeOf(r: StoredResponse): number {
  let n = r.body.length + 64;
  for (const k in r.headers) n += k.length + (r.headers[k]?.length ?? 0);
  return n;
}
