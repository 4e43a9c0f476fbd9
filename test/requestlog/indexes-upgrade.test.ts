import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { ORDER, whereOf } from "../../src/requestlog/filters";
import type { RequestLogQuery, RequestRecord } from "../../src/requestlog/interface";
import { SqliteRequestLogStore } from "../../src/requestlog/sqlite";
import { migrate as migrateSqlite } from "../../src/storage/db";
import { MIGRATIONS } from "../../src/storage/migrations";
import { PG_MIGRATIONS } from "../../src/storage/migrations-pg";
import { migrate as migratePg } from "../../src/storage/postgres";
import { freshDatabase, sharedServersUp } from "../helpers/shared-servers";

/**
 * Issue 26: the request log's indexes went from four to two beside the key (SQLite 0017,
 * PostgreSQL 0013). A log written before the upgrade keeps its rows; afterwards the two indexes
 * are there with the filter columns, the four old ones are gone, and a filter on key, function or
 * status over all accounts is read along the time index (on SQLite's plan) instead of a scan of
 * the table.
 */
const dir = mkdtempSync(join(tmpdir(), "textai-rl-indexes-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T0 = Date.parse("2026-11-20T00:00:00Z");
function rec(i: number): RequestRecord {
  return {
    requestId: `req_old_${String(i).padStart(4, "0")}`,
    time: T0 + i * 1000,
    accountId: i % 2 ? "acc_a" : "acc_b",
    keyId: i % 2 ? `key_a${i % 3}` : "key_b",
    method: "POST",
    path: "/api/v1/x",
    function: i % 5 === 0 ? "summarize" : "sentiment-analysis",
    status: i % 7 === 0 ? 429 : 200,
    errorCode: i % 7 === 0 ? "rate_limited" : null,
    provider: null,
    model: null,
    latencyMs: 3,
    credits: i % 7 === 0 ? 0 : 1,
    cache: null,
    promptTokens: null,
    completionTokens: null,
    idempotentReplay: false,
    guardrails: null,
  };
}
const ROWS = Array.from({ length: 60 }, (_, i) => rec(i));

/** The ids a query should answer, newest first, worked out from the rows themselves. */
function expected(q: RequestLogQuery): string[] {
  return ROWS.filter(
    (r) =>
      (q.accountId === undefined || r.accountId === q.accountId) &&
      (q.keyId === undefined || r.keyId === q.keyId) &&
      (q.function === undefined || r.function === q.function) &&
      (q.statusMin === undefined || r.status >= q.statusMin) &&
      (q.statusMax === undefined || r.status <= q.statusMax),
  )
    .sort((a, b) => b.time - a.time)
    .slice(0, q.limit)
    .map((r) => r.requestId);
}

const QUERIES: RequestLogQuery[] = [
  { limit: 50 },
  { accountId: "acc_a", limit: 10 },
  { accountId: "acc_a", function: "summarize", limit: 50 },
  { accountId: "acc_a", keyId: "key_a1", limit: 50 },
  { keyId: "key_b", limit: 50 },
  { function: "summarize", limit: 50 },
  { statusMin: 429, statusMax: 429, limit: 50 },
  { accountId: "acc_b", statusMin: 400, statusMax: 499, function: "sentiment-analysis", limit: 50 },
];

const OLD_INDEXES = [
  "request_log_time_idx",
  "request_log_account_time_idx",
  "request_log_account_fn_time_idx",
  "request_log_key_time_idx",
];

describe("SQLite", () => {
  const path = join(dir, "old.db");
  const db = new Database(path, { create: true, strict: true });
  // the log as the version before 0017 left it, with entries in it
  migrateSqlite(
    db,
    MIGRATIONS.filter((m) => m.tag < "0017"),
  );
  new SqliteRequestLogStore(db).insert(ROWS);
  const before = db.query("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'request_log'").all();
  migrateSqlite(db);
  const store = new SqliteRequestLogStore(db);
  afterAll(() => db.close());

  test("the upgrade drops the four indexes and makes the two, the entries kept", () => {
    expect((before as { name: string }[]).map((r) => r.name)).toEqual(expect.arrayContaining(OLD_INDEXES));
    const idx = db
      .query("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'request_log' AND sql IS NOT NULL ORDER BY name")
      .all() as { name: string }[];
    expect(idx.map((r) => r.name)).toEqual(["request_log_account_time_filters_idx", "request_log_time_filters_idx"]);
    const cols = (name: string) => (db.query(`PRAGMA index_info(${name})`).all() as { name: string }[]).map((c) => c.name);
    expect(cols("request_log_time_filters_idx")).toEqual(["time", "key_id", "function", "status"]);
    expect(cols("request_log_account_time_filters_idx")).toEqual(["account_id", "time", "key_id", "function", "status"]);
    expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM request_log").get()?.n).toBe(ROWS.length);
  });

  test("every filter answers the same entries, newest first", () => {
    for (const q of QUERIES) expect(store.page(q).map((e) => e.request_id)).toEqual(expected(q));
    expect(store.get("req_old_0007")?.status).toBe(429);
  });

  test("a filter on key, function or status over every account reads along the time index, not the table", () => {
    // with the table's statistics, as a running gateway's PRAGMA optimize leaves them
    db.exec("ANALYZE");
    for (const q of [{ keyId: "key_b" }, { function: "summarize" }, { statusMin: 429, statusMax: 429 }]) {
      const { where, params } = whereOf({ ...q, limit: 51 }, () => "?");
      const plan = (
        db.query(`EXPLAIN QUERY PLAN SELECT * FROM request_log ${where} ${ORDER} LIMIT ?`).all(...params, 51) as {
          detail: string;
        }[]
      )
        .map((p) => p.detail)
        .join("; ");
      expect(plan, JSON.stringify(q)).toContain("USING INDEX request_log_time_filters_idx");
    }
  });

  test("pruning deletes the oldest entries along the time index", () => {
    const plan = (
      db.query("EXPLAIN QUERY PLAN SELECT rowid FROM request_log WHERE time < ? ORDER BY time LIMIT ?").all(T0 + 10_000, 500) as {
        detail: string;
      }[]
    )
      .map((p) => p.detail)
      .join("; ");
    expect(plan).toContain("request_log_time_filters_idx");
    expect(store.prune(T0 + 10_000, 500)).toBe(10);
    expect(store.page({ limit: 500 }).length).toBe(ROWS.length - 10);
  });
});

const shared = await sharedServersUp("request log indexes on PostgreSQL");
describe.skipIf(!shared)("PostgreSQL", () => {
  test("the upgrade drops the four indexes and makes the two; every filter answers the same entries", async () => {
    const fresh = await freshDatabase();
    const sql = new SQL(fresh.url);
    try {
      await migratePg(
        sql,
        PG_MIGRATIONS.filter((m) => m.tag < "0013"),
      );
      for (const r of ROWS)
        await sql`INSERT INTO request_log (request_id, time, account_id, key_id, method, path, function, status, error_code, latency_ms, credits)
          VALUES (${r.requestId}, ${r.time}, ${r.accountId}, ${r.keyId}, ${r.method}, ${r.path}, ${r.function}, ${r.status}, ${r.errorCode}, ${r.latencyMs}, ${r.credits})`;
      await migratePg(sql);
      const idx = (await sql`SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'request_log' ORDER BY indexname`) as {
        indexname: string;
        indexdef: string;
      }[];
      expect(idx.map((r) => r.indexname)).toEqual([
        "request_log_account_time_filters_idx",
        "request_log_pkey",
        "request_log_time_filters_idx",
      ]);
      expect(idx[0]?.indexdef).toContain('(account_id, "time", key_id, function, status)');
      expect(idx[2]?.indexdef).toContain('("time", key_id, function, status)');
      for (const q of QUERIES) {
        const { where, params } = whereOf(q, (i) => `$${i}`);
        const rows = (await sql.unsafe(`SELECT request_id FROM request_log ${where} ${ORDER} LIMIT $${params.length + 1}`, [
          ...params,
          q.limit,
        ])) as { request_id: string }[];
        expect(
          rows.map((r) => r.request_id),
          JSON.stringify(q),
        ).toEqual(expected(q));
      }
    } finally {
      await sql.close();
      await fresh.drop();
    }
  });
});
