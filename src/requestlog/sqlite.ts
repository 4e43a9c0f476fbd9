import type { Database } from "bun:sqlite";
import { ORDER, whereOf } from "./filters";
import {
  COLUMNS,
  entryIfOwn,
  entryOf,
  type LogRow,
  type RequestLogEntry,
  type RequestLogQuery,
  type RequestLogStore,
  type RequestRecord,
  valuesOf,
} from "./interface";

const TUPLE = `(${COLUMNS.map(() => "?").join(", ")})`;
const insertOf = (rows: number) =>
  `INSERT OR IGNORE INTO request_log (${COLUMNS.join(", ")}) VALUES ${Array.from({ length: rows }, () => TUPLE).join(", ")}`;
/** rows per multi-row INSERT (18 values each, far below SQLite's limit of bound values) */
const CHUNK = 32;

/** The request log in the embedded SQLite file (migration 0015, its indexes 0017). */
export class SqliteRequestLogStore implements RequestLogStore {
  private insertMany: (rows: RequestRecord[]) => void;

  constructor(private sqlite: Database) {
    const one = sqlite.prepare(insertOf(1));
    const chunk = sqlite.prepare(insertOf(CHUNK));
    // one transaction per batch: one fsync (WAL) for hundreds of rows; 32 rows a statement, which
    // costs each row about a third less than a statement of its own (bench/README.md, 2026-11-26)
    this.insertMany = sqlite.transaction((rows: RequestRecord[]) => {
      let i = 0;
      for (; i + CHUNK <= rows.length; i += CHUNK) {
        const values: (string | number | boolean | null)[] = [];
        for (let j = i; j < i + CHUNK; j++) values.push(...valuesOf(rows[j] as RequestRecord));
        chunk.run(...(values as (string | number | null)[]));
      }
      for (; i < rows.length; i++) one.run(...(valuesOf(rows[i] as RequestRecord) as (string | number | null)[]));
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
    return entryIfOwn(r, accountId);
  }

  prune(before: number, max: number): number {
    return this.sqlite
      .query("DELETE FROM request_log WHERE rowid IN (SELECT rowid FROM request_log WHERE time < ? ORDER BY time LIMIT ?)")
      .run(before, max).changes;
  }
}
