import type { SQL } from "bun";
import { type PgStorage, pgCall } from "../storage/postgres";
import { CHAIN, changesNothing, seal, walkChain } from "./chain";
import type { AuditDraft, AuditQuery, AuditRow, AuditTrail, VerifyResult } from "./interface";

type PgRow = Omit<AuditRow, "seq" | "at"> & { seq: string | number; at: string | number };
const row = (r: PgRow): AuditRow => ({ ...r, seq: Number(r.seq), at: Number(r.at) });
const COLUMNS =
  'seq, id, at, actor, account_id AS "accountId", action, target_id AS "targetId", before, after, client, prev_hash AS "prevHash", hash';

/**
 * Appends an entry to the chain in `tx`, the transaction of the change it records. `FOR UPDATE` on
 * the head row makes the appends of every node wait for one another: the next one reads the head
 * this one leaves, once this transaction commits (or sees it unchanged if it rolls back).
 */
export async function appendAuditIn(tx: SQL, d: AuditDraft): Promise<AuditRow | null> {
  if (changesNothing(d)) return null;
  const [head] = await tx`SELECT seq, hash FROM audit_head WHERE chain = ${CHAIN} FOR UPDATE`;
  if (!head) throw new Error("the audit chain's head row is missing");
  const r = seal(d, { seq: Number(head.seq), hash: head.hash });
  await tx`INSERT INTO audit_log (seq, id, at, actor, account_id, action, target_id, before, after, client, prev_hash, hash)
    VALUES (${r.seq}, ${r.id}, ${r.at}, ${r.actor}, ${r.accountId}, ${r.action}, ${r.targetId}, ${r.before}, ${r.after},
      ${r.client}, ${r.prevHash}, ${r.hash})`;
  await tx`UPDATE audit_head SET seq = ${r.seq}, hash = ${r.hash} WHERE chain = ${CHAIN}`;
  return r;
}

/** The audit trail's reads in PostgreSQL, shared by every node. */
export class PostgresAuditTrail implements AuditTrail {
  constructor(private pg: PgStorage) {}

  page(q: AuditQuery): Promise<AuditRow[]> {
    const where: string[] = [];
    const args: (string | number)[] = [];
    const add = (cond: string, v: string | number | undefined) => {
      if (v === undefined) return;
      args.push(v);
      where.push(cond.replace("?", `$${args.length}`));
    };
    add("seq < ?", q.beforeSeq);
    add("account_id = ?", q.accountId);
    add("actor = ?", q.actor);
    add("action = ?", q.action);
    add("at >= ?", q.since);
    args.push(q.limit);
    const text = `SELECT ${COLUMNS} FROM audit_log ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY seq DESC LIMIT $${args.length}`;
    return pgCall(this.pg, async () => ((await this.pg.sql.unsafe(text, args)) as PgRow[]).map(row));
  }

  /** The head is read first: every entry up to it was committed with it, whatever is appended while the walk runs. */
  verify(): Promise<VerifyResult> {
    return pgCall(this.pg, async () => {
      const [head] = await this.pg.sql`SELECT seq, hash FROM audit_head WHERE chain = ${CHAIN}`;
      return walkChain(head ? { seq: Number(head.seq), hash: head.hash } : null, async (after) =>
        (
          (await this.pg.sql.unsafe(`SELECT ${COLUMNS} FROM audit_log WHERE seq > $1 ORDER BY seq LIMIT 1000`, [
            after,
          ])) as PgRow[]
        ).map(row),
      );
    });
  }
}
