import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { COLUMNS, type RequestRecord, rowOf, writeValues } from "../../src/requestlog/interface";
import { SqliteRequestLogStore } from "../../src/requestlog/sqlite";
import { migrate } from "../../src/storage/db";
import { entryWritten } from "../helpers/request-log";

/**
 * The SQLite store writes each row's values in place (`writeValues`); the PostgreSQL store sends
 * each row keyed by column (`rowOf`). Both must give every column the same value, in the order of
 * COLUMNS, whatever fields are set, and a row must read back as it was written, in a statement of
 * one row and in one of 32.
 */

/** A record's values in the order of COLUMNS, as `rowOf` keys them (the guardrail counts as JSON text). */
function valuesOf(r: RequestRecord): (string | number | boolean | null)[] {
  const row = rowOf(r);
  return COLUMNS.map((c) => (c === "guardrails" ? (r.guardrails === null ? null : JSON.stringify(r.guardrails)) : row[c])) as (
    | string
    | number
    | boolean
    | null
  )[];
}
const full: RequestRecord = {
  requestId: "req_full",
  time: 1_795_000_000_123,
  accountId: "acc_1",
  keyId: "key_1",
  method: "POST",
  path: "/v1/chat/completions",
  function: "chat-completions",
  status: 200,
  errorCode: null,
  provider: "openai",
  model: "gpt-4o-mini",
  latencyMs: 12,
  credits: 3,
  cache: "MISS",
  promptTokens: 10,
  completionTokens: 20,
  idempotentReplay: true,
  guardrails: { "redacted.email": 2, "blocked.credit_card": 0 },
};
const bare: RequestRecord = {
  ...full,
  requestId: "req_bare",
  function: null,
  status: 429,
  errorCode: "rate_limited",
  provider: null,
  model: null,
  credits: 0,
  cache: null,
  promptTokens: null,
  completionTokens: null,
  idempotentReplay: false,
  guardrails: null,
};

test("writeValues gives each column what valuesOf gives it, at the offset asked, touching nothing else", () => {
  for (const r of [full, bare]) {
    const out: (string | number | null)[] = new Array(COLUMNS.length * 3).fill("untouched");
    writeValues(r, out, COLUMNS.length);
    const want = valuesOf(r).map((v) => (typeof v === "boolean" ? (v ? 1 : 0) : v));
    expect(out.slice(COLUMNS.length, 2 * COLUMNS.length)).toEqual(want);
    expect(out.slice(0, COLUMNS.length).every((v) => v === "untouched")).toBe(true);
    expect(out.slice(2 * COLUMNS.length).every((v) => v === "untouched")).toBe(true);
  }
});

test("rows read back as written, one a statement and 32 a statement", () => {
  const db = new Database(":memory:", { strict: true });
  migrate(db);
  const store = new SqliteRequestLogStore(db);
  // 33 rows: one statement of 32, then one of one
  const rows = Array.from({ length: 33 }, (_, i) => ({
    ...(i % 2 ? full : bare),
    requestId: `req_${String(i).padStart(3, "0")}`,
    time: full.time + i,
  }));
  store.insert(rows);
  for (const r of rows) {
    const e = store.get(r.requestId);
    expect(e).toEqual(entryWritten(r));
  }
  db.close();
});
