import type { Database, Statement } from "bun:sqlite";
import { hostname } from "node:os";
import type { IdempotencyBegin, IdempotencyStore, StoredResponse } from "./interface";

export interface SqliteIdempotencyOptions {
  ttlMs: number;
  /** an answer longer than this is not kept; a repeat then gets 409 instead of a replay */
  maxAnswerBytes: number;
  /** how long an in-flight record blocks repeats when its process cannot be checked (another host) */
  leaseMs: number;
}

interface Row {
  body_hash: string;
  status: "in_flight" | "done";
  owner: string | null;
  lease_until: number | null;
  request_ids: string | null;
  response_status: number | null;
  response_body: string | null;
  response_headers: string | null;
  expires_at: number;
}

const HOST = hostname();
/** owners of the stores open in this process (a restarted process may get its old pid back) */
const OWNERS_HERE = new Set<string>();

/** True when `owner` names a process that may still be running its call. */
function ownerAlive(owner: string | null): boolean {
  if (!owner) return false;
  const [host, pid] = owner.split("|");
  if (host !== HOST) return true; // another machine: only the lease can tell
  // this host: the pid must exist; if it is ours, the record must be from a store of ours
  if (Number(pid) === process.pid) return OWNERS_HERE.has(owner);
  try {
    process.kill(Number(pid), 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === "EPERM";
  }
}

/**
 * Idempotency-Key records in the SQLite database, so a retry after a crash or a restart replays
 * the stored answer, and processes sharing the file see the same records. Each claim runs in an
 * IMMEDIATE transaction, so two processes cannot both start the same key. An in-flight record
 * left by a process that died (`kill -9`) stops blocking at once on this host (its pid is gone)
 * and after the lease elsewhere; the retry then runs it again. The record keeps the request id of
 * every claim, so the retry learns the ids of the claims that died, and the pipeline asks the
 * ledger whether one of them was charged (killed after its charge committed, before its answer
 * was kept): then the retry runs uncharged. Expired records are swept as new
 * ones arrive.
 */
export class SqliteIdempotencyStore implements IdempotencyStore {
  /** host|pid|token of this process: a record it claimed */
  readonly owner = `${HOST}|${process.pid}|${crypto.randomUUID()}`;
  private getStmt: Statement<Row, [string, string]>;
  private claimStmt: Statement;
  private completeStmt: Statement;
  private abandonStmt: Statement;
  private releaseStmt: Statement;
  private sweepStmt: Statement;
  private countStmt: Statement<{ n: number }, []>;
  private claim: ((accountId: string, key: string, bodyHash: string, requestId: string, now: number) => IdempotencyBegin) & {
    immediate: (accountId: string, key: string, bodyHash: string, requestId: string, now: number) => IdempotencyBegin;
  };
  private begun = 0;

  constructor(
    sqlite: Database,
    private opts: SqliteIdempotencyOptions = { ttlMs: 24 * 3600_000, maxAnswerBytes: 1 << 20, leaseMs: 65_000 },
    private now: () => number = Date.now,
  ) {
    OWNERS_HERE.add(this.owner);
    const q = sqlite;
    this.getStmt = q.prepare(
      "SELECT body_hash, status, owner, lease_until, request_ids, response_status, response_body, response_headers, expires_at FROM idempotency_keys WHERE account_id = ?1 AND key = ?2",
    );
    this.claimStmt = q.prepare(
      "INSERT OR REPLACE INTO idempotency_keys (account_id, key, body_hash, status, owner, lease_until, request_ids, created_at, expires_at) VALUES (?1, ?2, ?3, 'in_flight', ?4, ?5, ?6, ?7, ?8)",
    );
    this.completeStmt = q.prepare(
      "UPDATE idempotency_keys SET status = 'done', owner = NULL, lease_until = NULL, response_status = ?4, response_body = ?5, response_headers = ?6 WHERE account_id = ?1 AND key = ?2 AND owner = ?3 AND status = 'in_flight'",
    );
    // a record that names an earlier, crashed claim is kept (lease ended) so a retry still asks the ledger about it
    this.abandonStmt = q.prepare(
      "DELETE FROM idempotency_keys WHERE account_id = ?1 AND key = ?2 AND owner = ?3 AND status = 'in_flight' AND json_array_length(coalesce(request_ids, '[]')) <= 1",
    );
    this.releaseStmt = q.prepare(
      "UPDATE idempotency_keys SET owner = NULL, lease_until = 0 WHERE account_id = ?1 AND key = ?2 AND owner = ?3 AND status = 'in_flight'",
    );
    this.sweepStmt = q.prepare(
      "DELETE FROM idempotency_keys WHERE rowid IN (SELECT rowid FROM idempotency_keys WHERE expires_at <= ?1 LIMIT 500)",
    );
    this.countStmt = q.prepare("SELECT count(*) AS n FROM idempotency_keys");
    this.claim = q.transaction(
      (accountId: string, key: string, bodyHash: string, requestId: string, now: number): IdempotencyBegin => {
        const row = this.getStmt.get(accountId, key);
        let earlier: string[] = [];
        if (row && row.expires_at > now) {
          if (row.body_hash !== bodyHash) return { state: "mismatch" };
          if (row.status === "done") {
            if (row.response_body === null || row.response_status === null) return { state: "gone" };
            const headers = row.response_headers ? (JSON.parse(row.response_headers) as Record<string, string>) : {};
            return { state: "replay", response: { status: row.response_status, body: row.response_body, headers } };
          }
          if ((row.lease_until ?? 0) > now && ownerAlive(row.owner)) return { state: "in_flight" };
          // its process died or its lease ran out: the call never answered, so this one runs it (charged
          // only if none of the earlier claims was: the caller asks the ledger)
          earlier = row.request_ids ? (JSON.parse(row.request_ids) as string[]) : [];
        }
        const ids = JSON.stringify([...earlier, requestId]);
        this.claimStmt.run(accountId, key, bodyHash, this.owner, now + this.opts.leaseMs, ids, now, now + this.opts.ttlMs);
        return earlier.length > 0 ? { state: "new", earlier } : { state: "new" };
      },
    );
  }

  begin(accountId: string, key: string, bodyHash: string, requestId: string): IdempotencyBegin {
    const now = this.now();
    if (++this.begun % 64 === 0) this.sweepStmt.run(now);
    return this.claim.immediate(accountId, key, bodyHash, requestId, now);
  }

  complete(accountId: string, key: string, response: StoredResponse): void {
    const keep = response.body.length <= this.opts.maxAnswerBytes;
    this.completeStmt.run(
      accountId,
      key,
      this.owner,
      response.status,
      keep ? response.body : null,
      keep ? JSON.stringify(response.headers) : null,
    );
  }

  abandon(accountId: string, key: string): void {
    if (this.abandonStmt.run(accountId, key, this.owner).changes === 0) this.releaseStmt.run(accountId, key, this.owner);
  }

  size(): number {
    return this.countStmt.get()?.n ?? 0;
  }

  /** Drops every expired record now (the sweep otherwise runs as new records arrive). */
  sweep(): void {
    for (;;) if (this.sweepStmt.run(this.now()).changes < 500) return;
  }
}
