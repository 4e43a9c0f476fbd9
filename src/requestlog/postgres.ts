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
  valuesOf,
} from "./interface";

/** Each column's placeholder suffix: the guardrail counts arrive as JSON text. */
const CASTS = COLUMNS.map((c) => (c === "guardrails" ? "::jsonb" : ""));

/** The request log in PostgreSQL (drizzle/pg 0009), written by every node. */
export class PostgresRequestLogStore implements RequestLogStore {
  constructor(private pg: PgStorage) {}

  insert(rows: RequestRecord[]): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    // one statement per batch: a multi-row VALUES list, at most 18 * 500 parameters
    const params: (string | number | boolean | null)[] = [];
    const tuples = rows.map((r) => {
      const vals = valuesOf(r);
      const start = params.length;
      params.push(...vals);
      return `(${vals.map((_, i) => `$${start + i + 1}${CASTS[i]}`).join(", ")})`;
    });
    return pgCall(this.pg, async () => {
      await this.pg.sql.unsafe(
        `INSERT INTO request_log (${COLUMNS.join(", ")}) VALUES ${tuples.join(", ")} ON CONFLICT (request_id) DO NOTHING`,
        params,
      );
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
