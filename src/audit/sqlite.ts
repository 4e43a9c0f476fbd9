import type { Database } from "bun:sqlite";
import { CHAIN, changesNothing, seal, walkChain } from "./chain";
import type { AuditDraft, AuditQuery, AuditRow, AuditTrail, VerifyResult } from "./interface";

const COLUMNS =
  "seq, id, at, actor, account_id AS accountId, action, target_id AS targetId, before, after, client, prev_hash AS prevHash, hash";

/**
 * Appends an entry to the chain, inside the caller's write transaction (the one of the change it
 * records): the head row is read and moved in it, so the connection's write lock, which SQLite
 * takes at the transaction's first write, orders the appends of every process on the file.
 */
export function appendAudit(sqlite: Database, d: AuditDraft): AuditRow | null {
  if (!sqlite.inTransaction) throw new Error("an audit entry is appended in the transaction of its change");
  if (changesNothing(d)) return null;
  const head = sqlite
    .query<{ seq: number; hash: string }, [string]>("SELECT seq, hash FROM audit_head WHERE chain = ?")
    .get(CHAIN);
  if (!head) throw new Error("the audit chain's head row is missing");
  const r = seal(d, head);
  sqlite
    .query(
      "INSERT INTO audit_log (seq, id, at, actor, account_id, action, target_id, before, after, client, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .run(r.seq, r.id, r.at, r.actor, r.accountId, r.action, r.targetId, r.before, r.after, r.client, r.prevHash, r.hash);
  sqlite.query("UPDATE audit_head SET seq = ?, hash = ? WHERE chain = ?").run(r.seq, r.hash, CHAIN);
  return r;
}

/** The audit trail's reads on the embedded SQLite file. */
export class SqliteAuditTrail implements AuditTrail {
  constructor(private sqlite: Database) {}

  page(q: AuditQuery): AuditRow[] {
    const where: string[] = [];
    const args: (string | number)[] = [];
    const add = (cond: string, v: string | number | undefined) => {
      if (v === undefined) return;
      where.push(cond);
      args.push(v);
    };
    add("seq < ?", q.beforeSeq);
    add("account_id = ?", q.accountId);
    add("actor = ?", q.actor);
    add("action = ?", q.action);
    add("at >= ?", q.since);
    const sql = `SELECT ${COLUMNS} FROM audit_log ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY seq DESC LIMIT ?`;
    return this.sqlite.query<AuditRow, (string | number)[]>(sql).all(...args, q.limit);
  }

  /** The head is read first: every entry up to it was committed with it, whatever is appended while the walk runs. */
  verify(): Promise<VerifyResult> {
    const head = this.sqlite
      .query<{ seq: number; hash: string }, [string]>("SELECT seq, hash FROM audit_head WHERE chain = ?")
      .get(CHAIN);
    const next = this.sqlite.query<AuditRow, [number]>(`SELECT ${COLUMNS} FROM audit_log WHERE seq > ? ORDER BY seq LIMIT 1000`);
    return walkChain(head, (after) => next.all(after));
  }
}
