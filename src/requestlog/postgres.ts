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

/** Each column's PostgreSQL type (drizzle/pg 0010): the type of its array parameter. */
const PG_TYPES: Record<(typeof COLUMNS)[number], string> = {
  request_id: "text",
  time: "int8",
  account_id: "text",
  key_id: "text",
  method: "text",
  path: "text",
  function: "text",
  status: "int4",
  error_code: "text",
  provider: "text",
  model: "text",
  latency_ms: "int4",
  credits: "int8",
  cache: "text",
  prompt_tokens: "int8",
  completion_tokens: "int8",
  idempotent_replay: "bool",
  // the guardrail counts arrive as JSON text
  guardrails: "jsonb",
};

/**
 * One statement for every batch, whatever its size: each column's values as one array parameter,
 * unnested into rows. (A VALUES list would be a new statement text, prepared and kept by each
 * connection, for each batch size.)
 */
const INSERT = `INSERT INTO request_log (${COLUMNS.join(", ")}) SELECT * FROM unnest(${COLUMNS.map(
  (c, i) => `$${i + 1}::${PG_TYPES[c]}[]`,
).join(", ")}) ON CONFLICT (request_id) DO NOTHING`;

/** The request log in PostgreSQL (drizzle/pg 0010), written by every node. */
export class PostgresRequestLogStore implements RequestLogStore {
  constructor(private pg: PgStorage) {}

  insert(rows: RequestRecord[]): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    const values = rows.map(valuesOf);
    const { sql } = this.pg;
    const params = COLUMNS.map((_, c) => sql.array(values.map((v) => v[c])));
    return pgCall(this.pg, async () => {
      await sql.unsafe(INSERT, params);
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
