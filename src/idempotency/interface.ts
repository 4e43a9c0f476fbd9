/** The answer kept for an Idempotency-Key (contract section 6). */
export interface StoredResponse {
  status: number;
  body: string;
  headers: Record<string, string>;
}

export type IdempotencyBegin =
  | { state: "new" }
  | { state: "replay"; response: StoredResponse }
  | { state: "mismatch" }
  | { state: "in_flight" }
  /** done, but its answer was over the size bound and was not kept */
  | { state: "gone" };

/**
 * Idempotency-Key records per account: `begin` claims a key for a call (or reports a repeat),
 * `complete` keeps the call's answer for the TTL, `abandon` frees the key of a failed call so it
 * may be retried. Implementations: in memory (one process), SQLite (survives restarts and is shared
 * by processes on one file); Redis for many nodes slots in here.
 */
export interface IdempotencyStore {
  begin(accountId: string, key: string, bodyHash: string): IdempotencyBegin | Promise<IdempotencyBegin>;
  complete(accountId: string, key: string, response: StoredResponse): void | Promise<void>;
  abandon(accountId: string, key: string): void | Promise<void>;
  /** records held (for the metrics gauge) */
  size(): number;
}
