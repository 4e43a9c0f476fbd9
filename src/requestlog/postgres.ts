import { type PgStorage, pgCall } from "../storage/postgres";
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
  rowOf,
} from "./interface";

/**
 * One statement for any number of rows: the rows travel as one JSON parameter, so the statement's
 * text (and its prepared plan) is the same for every batch, and the node builds one string instead
 * of a placeholder and a parameter per column of each row.
 */
const INSERT = `INSERT INTO request_log (${COLUMNS.join(", ")})
  SELECT ${COLUMNS.join(", ")} FROM json_populate_recordset(null::request_log, ($1::text)::json)
  ON CONFLICT (request_id) DO NOTHING`;

/** JSON escapes of lone surrogates (PostgreSQL refuses them in JSON; a text parameter took them as U+FFFD) */
const LONE_SURROGATE = /\\ud[89a-f]/;

/** The request log in PostgreSQL (drizzle/pg 0010, its indexes 0013), written by every node. */
export class PostgresRequestLogStore implements RequestLogStore {
  constructor(private pg: PgStorage) {}

  insert(rows: RequestRecord[]): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    let text = JSON.stringify(rows.map(rowOf));
    if (LONE_SURROGATE.test(text))
      text = JSON.stringify(rows.map(rowOf), (_, v) => (typeof v === "string" ? v.toWellFormed() : v));
    return pgCall(this.pg, async () => {
      await this.pg.sql.unsafe(INSERT, [text]);
    });
  }

  page(q: RequestLogQuery): Promise<RequestLogEntry[]> {
    const { where, params } = whereOf(q, (i) => `$${i}`);
    return pgCall(this.pg, async () => {
      const rows = (await this.pg.sql.unsafe(`SELECT * FROM request_log ${where} ${ORDER} LIMIT $${params.length + 1}`, [
        ...params,
        q.limit,
      ])) as LogRow[];
      return rows.map(entryOf);
    });
  }

  get(requestId: string, accountId?: string): Promise<RequestLogEntry | null> {
    return pgCall(this.pg, async () => {
      const [r] = (await this.pg.sql`SELECT * FROM request_log WHERE request_id = ${requestId}`) as LogRow[];
      return entryIfOwn(r, accountId);
    });
  }

  prune(before: number, max: number): Promise<number> {
    return pgCall(this.pg, async () => {
      const r = await this.pg.sql`
        DELETE FROM request_log WHERE request_id IN
          (SELECT request_id FROM request_log WHERE time < ${before} ORDER BY time LIMIT ${max})`;
      return r.count;
    });
  }
}
