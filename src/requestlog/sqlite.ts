import type { Database } from "bun:sqlite";
import { ORDER, whereOf } from "./filters";
import {
  COLUMNS,
  entryOf,
  type LogRow,
  type RequestLogEntry,
  type RequestLogQuery,
  type RequestLogStore,
  type RequestRecord,
  valuesOf,
} from "./interface";

const INSERT = `INSERT OR IGNORE INTO request_log (${COLUMNS.join(", ")}) VALUES (${COLUMNS.map(() => "?").join(", ")})`;

/** The request log in the embedded SQLite file (migration 0014). */
export class SqliteRequestLogStore implements RequestLogStore {
  private insertMany: (rows: RequestRecord[]) => void;

  constructor(private sqlite: Database) {
    const stmt = sqlite.prepare(INSERT);
    // one transaction per batch: one fsync (WAL) for hundreds of rows
    this.insertMany = sqlite.transaction((rows: RequestRecord[]) => {
      for (const r of rows) stmt.run(...(valuesOf(r) as (string | number | null)[]));
    });
  }

  insert(rows: RequestRecord[]): void {
    if (rows.length > 0) this.insertMany(rows);
  }

  page(q: RequestLogQuery): RequestLogEntry[] {
    const { where, params } = whereOf(q, () => "?");
    const rows = this.sqlite.query(`SELECT * FROM request_log ${where} ${ORDER} LIMIT ?`).all(...params, q.limit) as LogRow[];
    return rows.map(entryOf);
  }

  get(requestId: string, accountId?: string): RequestLogEntry | null {
    const r = this.sqlite.query("SELECT * FROM request_log WHERE request_id = ?").get(requestId) as LogRow | null;
    return r && (accountId === undefined || r.account_id === accountId) ? entryOf(r) : null;
  }

  prune(before: number, max: number): number {
    return this.sqlite
      .query("DELETE FROM request_log WHERE rowid IN (SELECT rowid FROM request_log WHERE time < ? ORDER BY time LIMIT ?)")
      .run(before, max).changes;
  }
}
