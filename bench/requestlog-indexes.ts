/**
 * The request log's indexes on SQLite (issue 26): what each set costs a written row and how fast
 * the routes' filtered page queries stay on a table of `--rows` rows.
 *
 *   bun bench/requestlog-indexes.ts [--rows 200000] [--variants old,new] [--pg]
 *
 * For each variant: a fresh SQLite file in WAL mode (as the gateway opens it) with the table of
 * migration 0015 and that variant's indexes; the rows written through SqliteRequestLogStore in
 * batches of 500 (as the recorder writes them), CPU µs per row, one account (the bench's case)
 * and 50 accounts interleaved; then each query's plan (EXPLAIN QUERY PLAN) and its median time
 * over 21 runs, read through the store (page of 51 rows, as readPage asks), and a prune of 500.
 * Data: 30 days; account A has half the rows, 49 others share the rest; 3 keys an account; ten
 * functions, one of them rare (0.1 %); 95 % status 200, 3 % 429, 2 % other.
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import m0015 from "../drizzle/0015_request_log.sql" with { type: "text" };
import m0017 from "../drizzle/0017_request_log_indexes.sql" with { type: "text" };
import type { RequestLogQuery, RequestRecord } from "../src/requestlog/interface";
import { SqliteRequestLogStore } from "../src/requestlog/sqlite";

const { values } = parseArgs({
  options: {
    rows: { type: "string", default: "200000" },
    variants: { type: "string", default: "old,new" },
    pg: { type: "boolean", default: false },
  },
});
const ROWS = Number(values.rows);

const statements = (sql: string) =>
  sql
    .split("--> statement-breakpoint")
    .map((x) => x.trim())
    .filter(Boolean);
/** each variant: the statements after the table (migration 0015 makes the table and its four indexes) */
const VARIANTS: Record<string, string[]> = {
  /** migration 0015: four indexes beside the key */
  old: [],
  /** migration 0017: two, with the filter columns */
  new: statements(m0017),
  /** 0017's two without the filter columns (not kept: a filter not in an index reads the table) */
  bare: [
    "DROP INDEX request_log_time_filters_idx",
    "DROP INDEX request_log_account_time_filters_idx",
    "CREATE INDEX request_log_time_idx ON request_log (time)",
    "CREATE INDEX request_log_account_time_idx ON request_log (account_id, time)",
  ],
};
const SETUP: Record<string, string[]> = {
  old: statements(m0015),
  new: statements(m0015),
  bare: [...statements(m0015), ...statements(m0017)],
  norowid: [
    (statements(m0015)[0] as string).replace(/\)\s*$/, ") WITHOUT ROWID"),
    ...statements(m0017).filter((s) => s.includes("CREATE")),
  ],
};
VARIANTS.norowid = [];

const DAY = 86_400_000;
const END = Date.parse("2026-11-26T00:00:00Z");
const FUNCTIONS = ["sentiment-analysis", "chat-completions", "summarize", "translate", "embeddings", "classify"];
const FUNCTIONS_MORE = ["keywords", "entities", "language-detection"];

function record(i: number, n: number, accounts: number): RequestRecord {
  const time = END - 30 * DAY + Math.floor((i / n) * 30 * DAY);
  const a = accounts === 1 || i % 2 === 0 ? 0 : 1 + (i % (accounts - 1));
  // a hash of i, independent of the account's parity
  const r = (Math.imul(i ^ (i >>> 7), 2654435761) >>> 0) % 1000;
  const fn = r === 7 ? "rare-fn" : r < 600 ? (FUNCTIONS[r % FUNCTIONS.length] as string) : (FUNCTIONS_MORE[r % 3] as string);
  const status = r < 950 ? 200 : r < 980 ? 429 : r < 990 ? 402 : 502;
  return {
    requestId: `req_${time.toString(16).padStart(12, "0")}-${i.toString(16).padStart(20, "0")}`,
    time,
    accountId: `acc_${String(a).padStart(20, "0")}`,
    keyId: `key_${String(a).padStart(16, "0")}_${i % 3}`,
    method: "POST",
    path: `/api/v1/${fn}`,
    function: fn,
    status,
    errorCode: status === 200 ? null : "rate_limited",
    provider: "openai",
    model: "gpt-4o-mini",
    latencyMs: 12,
    credits: 1,
    cache: i % 2 ? "HIT" : "MISS",
    promptTokens: null,
    completionTokens: null,
    idempotentReplay: false,
    guardrails: null,
  };
}

function cpuUs(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

function open(dir: string, name: string, variant: string): { db: Database; store: SqliteRequestLogStore } {
  const db = new Database(join(dir, `${name}.db`), { create: true, strict: true });
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  for (const sql of [...(SETUP[variant] as string[]), ...(VARIANTS[variant] as string[])]) db.exec(sql);
  return { db, store: new SqliteRequestLogStore(db) };
}

/** CPU µs per row written, 500 rows a batch. */
function fill(store: SqliteRequestLogStore, n: number, accounts: number): number {
  const recs = Array.from({ length: n }, (_, i) => record(i, n, accounts));
  const before = cpuUs();
  for (let i = 0; i < n; i += 500) store.insert(recs.slice(i, i + 500));
  return (cpuUs() - before) / n;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

const A = `acc_${"0".padStart(20, "0")}`;
const B = `acc_${"7".padStart(20, "0")}`;
const QUERIES: [string, Omit<RequestLogQuery, "limit">][] = [
  ["account A, no filter", { accountId: A }],
  ["account A, function (common)", { accountId: A, function: "sentiment-analysis" }],
  ["account A, function (0.1 %)", { accountId: A, function: "rare-fn" }],
  ["account A, function (none)", { accountId: A, function: "no-such-fn" }],
  ["account A, key", { accountId: A, keyId: `key_${"0".padStart(16, "0")}_1` }],
  ["account A, status 5xx", { accountId: A, statusMin: 500, statusMax: 599 }],
  ["account A, one day", { accountId: A, from: END - 10 * DAY, to: END - 9 * DAY }],
  ["account A, cursor mid-history", { accountId: A, cursor: { time: END - 15 * DAY, requestId: "req_z" } }],
  ["account B (1/98 of rows), no filter", { accountId: B }],
  ["account B, function (common)", { accountId: B, function: "sentiment-analysis" }],
  ["admin, no filter", {}],
  ["admin, status 429", { statusMin: 429, statusMax: 429 }],
  ["admin, function (common)", { function: "sentiment-analysis" }],
  ["admin, key of account B", { keyId: `key_${"7".padStart(16, "0")}_1` }],
  ["admin, one day", { from: END - 10 * DAY, to: END - 9 * DAY }],
];

const dir = mkdtempSync(join(tmpdir(), "textai-rlidx-"));
try {
  for (const variant of (values.variants as string).split(",")) {
    const one = open(dir, `${variant}-one`, variant);
    const perRowOne = fill(one.store, ROWS, 1);
    one.db.close();
    const many = open(dir, `${variant}-many`, variant);
    const perRowMany = fill(many.store, ROWS, 50);
    many.db.exec("ANALYZE");
    const indexes = many.db
      .query("SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'request_log' AND sql IS NOT NULL")
      .all() as { sql: string }[];
    console.log(`\n## SQLite, ${variant}: ${indexes.map((i) => i.sql).join("; ")}`);
    console.log(`write: ${perRowOne.toFixed(2)} µs CPU a row (one account), ${perRowMany.toFixed(2)} (50 accounts)`);
    console.log("| query | rows | median ms | plan |\n|---|--:|--:|---|");
    for (const [name, q] of QUERIES) {
      const full = { ...q, limit: 51 };
      const times: number[] = [];
      let rows = 0;
      for (let i = 0; i < 21; i++) {
        const t = performance.now();
        rows = many.store.page(full).length;
        times.push(performance.now() - t);
      }
      // the plan of the statement the store runs
      const { whereOf, ORDER } = await import("../src/requestlog/filters");
      const { where, params } = whereOf(full, () => "?");
      const plan = (
        many.db.query(`EXPLAIN QUERY PLAN SELECT * FROM request_log ${where} ${ORDER} LIMIT ?`).all(...params, 51) as {
          detail: string;
        }[]
      )
        .map((p) => p.detail)
        .join("; ");
      console.log(`| ${name} | ${rows} | ${median(times).toFixed(2)} | ${plan} |`);
    }
    const t = performance.now();
    const pruned = many.store.prune(END - 29 * DAY, 500);
    console.log(`prune: ${pruned} rows in ${(performance.now() - t).toFixed(2)} ms`);
    const t2 = performance.now();
    const none = many.store.prune(END - 40 * DAY, 500);
    console.log(`prune with nothing to prune: ${none} rows in ${(performance.now() - t2).toFixed(2)} ms`);
    many.db.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * `--pg`: the same queries on PostgreSQL (TEXTAI_BENCH_PG, default postgres://postgres@127.0.0.1:5432/test),
 * in a database of its own, rows made by generate_series with the same shape; per variant the
 * plan (EXPLAIN ANALYZE) and the execution time it reports.
 */
if (values.pg) {
  const { SQL } = await import("bun");
  const { whereOf, ORDER } = await import("../src/requestlog/filters");
  const base = process.env.TEXTAI_BENCH_PG ?? "postgres://postgres@127.0.0.1:5432/test";
  const { createOwnDatabase, dropOwnDatabase } = await import("../test/helpers/own-database");
  const { name, url } = await createOwnDatabase(base, "rlidx");
  const pg = new SQL(url);
  try {
    const { default: p0010 } = await import("../drizzle/pg/0010_request_log.sql", { with: { type: "text" } });
    await pg.unsafe(statements(p0010 as string)[0] as string);
    await pg.unsafe(`
      INSERT INTO request_log (request_id, time, account_id, key_id, method, path, function, status, latency_ms, credits)
      SELECT 'req_' || lpad(to_hex(t), 12, '0') || '-' || lpad(to_hex(i), 20, '0'), t,
        'acc_' || lpad(a::text, 20, '0'), 'key_' || lpad(a::text, 16, '0') || '_' || (i % 3), 'POST', '/api/v1/x',
        CASE WHEN r = 7 THEN 'rare-fn' WHEN r < 600 THEN (ARRAY['sentiment-analysis','chat-completions','summarize','translate','embeddings','classify'])[r % 6 + 1]
             ELSE (ARRAY['keywords','entities','language-detection'])[r % 3 + 1] END,
        CASE WHEN r < 950 THEN 200 WHEN r < 980 THEN 429 WHEN r < 990 THEN 402 ELSE 502 END, 12, 1
      FROM (SELECT i, ${END - 30 * DAY}::bigint + (i::bigint * ${30 * DAY} / ${ROWS}) AS t,
                   CASE WHEN i % 2 = 0 THEN 0 ELSE 1 + i % 49 END AS a, abs(hashint4(i)) % 1000 AS r
            FROM generate_series(0, ${ROWS - 1}) i) s`);
    const { default: p0013 } = await import("../drizzle/pg/0013_request_log_indexes.sql", { with: { type: "text" } });
    // old: 0010's four indexes; new: then 0013
    const variants: Record<string, string[]> = { old: statements(p0010 as string).slice(1), new: statements(p0013 as string) };
    for (const [variant, ddl] of Object.entries(variants)) {
      for (const sql of ddl) await pg.unsafe(sql);
      await pg.unsafe("ANALYZE request_log");
      console.log(`\n## PostgreSQL, ${variant}\n| query | ms (EXPLAIN ANALYZE) | plan |\n|---|--:|---|`);
      for (const [qname, q] of QUERIES) {
        const full = { ...q, limit: 51 };
        const { where, params } = whereOf(full, (i) => `$${i}`);
        const text = `SELECT * FROM request_log ${where} ${ORDER} LIMIT $${params.length + 1}`;
        let ms = 0;
        let plan = "";
        const times: number[] = [];
        for (let i = 0; i < 5; i++) {
          const rows = (await pg.unsafe(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, [...params, 51])) as {
            "QUERY PLAN": { "Execution Time": number; Plan: Record<string, unknown> }[];
          }[];
          const out = (rows[0] as { "QUERY PLAN": { "Execution Time": number; Plan: Record<string, unknown> }[] })[
            "QUERY PLAN"
          ][0] as { "Execution Time": number; Plan: Record<string, unknown> };
          times.push(out["Execution Time"]);
          const nodes: string[] = [];
          let n: Record<string, unknown> | undefined = out.Plan;
          while (n) {
            nodes.push(`${n["Node Type"]}${n["Index Name"] ? ` ${n["Index Name"]}` : ""}`);
            n = (n.Plans as Record<string, unknown>[] | undefined)?.[0];
          }
          plan = nodes.join(" > ");
        }
        ms = median(times);
        console.log(`| ${qname} | ${ms.toFixed(2)} | ${plan} |`);
      }
    }
  } finally {
    await pg.close();
    await dropOwnDatabase(base, name);
  }
}
