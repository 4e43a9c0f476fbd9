export interface StoredResponse {
  status: number;
  body: string;
  headers: Record<string, string>;
}

type Entry = { bodyHash: string; expiresAt: number; response: StoredResponse | null };

export type IdempotencyBegin =
  | { state: "new" }
  | { state: "replay"; response: StoredResponse }
  | { state: "mismatch" }
  | { state: "in_flight" };

/**
 * Idempotency-Key records, per account, for 24 hours; in memory only because they hold response
 * bodies, which are never written to disk. Only successful answers are kept: a failed call may be retried.
 */
export class IdempotencyStore {
  private entries = new Map<string, Entry>();

  constructor(
    private opts: { ttlMs: number; maxEntries: number } = { ttlMs: 24 * 3600_000, maxEntries: 100_000 },
    private now: () => number = Date.now,
  ) {}

  begin(accountId: string, key: string, bodyHash: string): IdempotencyBegin {
    const id = `${accountId}\u0000${key}`;
    const e = this.entries.get(id);
    if (e && e.expiresAt > this.now()) {
      if (e.bodyHash !== bodyHash) return { state: "mismatch" };
      return e.response ? { state: "replay", response: e.response } : { state: "in_flight" };
    }
    this.entries.set(id, { bodyHash, expiresAt: this.now() + this.opts.ttlMs, response: null });
    while (this.entries.size > this.opts.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
    return { state: "new" };
  }

  complete(accountId: string, key: string, response: StoredResponse): void {
    const e = this.entries.get(`${accountId}\u0000${key}`);
    if (e) e.response = response;
  }

  abandon(accountId: string, key: string): void {
    const id = `${accountId}\u0000${key}`;
    if (this.entries.get(id)?.response === null) this.entries.delete(id);
  }

  size(): number {
    return this.entries.size;
  }
}
