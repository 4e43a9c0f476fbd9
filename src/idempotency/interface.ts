/** The answer kept for an Idempotency-Key (contract section 6). */
export interface StoredResponse {
  status: number;
  body: string;
  headers: Record<string, string>;
}

export type IdempotencyBegin =
  /**
   * claimed for this call; `earlier`: the request ids of earlier claims of the key that kept no
   * answer (their calls died in flight, `kill -9`, or failed after such a takeover), oldest first.
   * One may have been charged before it died, after its charge committed and before its answer
   * was kept: the caller asks the ledger, and if so runs this call without charging again.
   */
  | { state: "new"; earlier?: string[] }
  | { state: "replay"; response: StoredResponse }
  | { state: "mismatch" }
  | { state: "in_flight" }
  /** done, but its answer was over the size bound and was not kept */
  | { state: "gone" };

/**
 * Idempotency-Key records per account: `begin` claims a key for a call (or reports a repeat),
 * `complete` keeps the call's answer for the TTL, `abandon` frees the key of a failed call so it
 * may be retried (a record that names an earlier claim whose call died keeps its ids, so the next
 * retry asks the ledger about them too). Implementations: in memory (one process), SQLite
 * (survives restarts and is shared by processes on one file), Redis (many nodes).
 */
export interface IdempotencyStore {
  /** `requestId`: this call's, the one its charge will carry, kept in the in-flight record */
  begin(accountId: string, key: string, bodyHash: string, requestId: string): IdempotencyBegin | Promise<IdempotencyBegin>;
  complete(accountId: string, key: string, response: StoredResponse): void | Promise<void>;
  abandon(accountId: string, key: string): void | Promise<void>;
  /** records held (for the metrics gauge) */
  size(): number;
}
