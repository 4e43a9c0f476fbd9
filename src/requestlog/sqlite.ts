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
  writeValues,
} from "./interface";

const TUPLE = `(${COLUMNS.map(() => "?").join(", ")})`;
const insertOf = (rows: number) =>
  `INSERT OR IGNORE INTO request_log (${COLUMNS.join(", ")}) VALUES ${Array.from({ length: rows }, () => TUPLE).join(", ")}`;
/** rows per multi-row INSERT (18 values each, far below SQLite's limit of bound values) */
const CHUNK = 32;

/** The request log in the embedded SQLite file (migration 0015, its indexes 0017). */
export class SqliteRequestLogStore implements RequestLogStore {
  /**
   * A flush's rows in one transaction (at 10,000 requests a second, a flush every 500 ms holds
   * 5,000): each row costs about a fifth less than in transactions of 500 (bench/README.md,
   * 2026-11-26), and the event loop is held no longer, as a flush writes its batches back to back.
   */
  readonly writeBatch = 5000;
  private insertMany: (rows: RequestRecord[]) => void;

  constructor(private sqlite: Database) {
    const one = sqlite.prepare(insertOf(1));
    const chunk = sqlite.prepare(insertOf(CHUNK));
    // each statement's values, filled in place for every statement it runs
    const oneValues: (string | number | null)[] = new Array(COLUMNS.length).fill(null);
    const chunkValues: (string | number | null)[] = new Array(COLUMNS.length * CHUNK).fill(null);
    // one transaction per batch: one fsync (WAL) for hundreds of rows; 32 rows a statement, which
    // costs each row about a third less than a statement of its own (bench/README.md, 2026-11-26)
    this.insertMany = sqlite.transaction((rows: RequestRecord[]) => {
      let i = 0;
      for (; i + CHUNK <= rows.length; i += CHUNK) {
        for (let j = 0; j < CHUNK; j++) writeValues(rows[i + j] as RequestRecord, chunkValues, j * COLUMNS.length);
        chunk.run(...chunkValues);
      }
      for (; i < rows.length; i++) {
        writeValues(rows[i] as RequestRecord, oneValues, 0);
        one.run(...oneValues);
      }
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
