import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrate } from "../../src/storage/db";
import { MIGRATIONS } from "../../src/storage/migrations";
import { wordCount } from "../helpers/echo-function";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { valueNow } from "../helpers/value-now";

// A database written by the version before the rollups (migrations up to 0004), holding a million
// ledger rows: the rollup migration backfills them, and every read after that stays O(1) in the
// ledger's size.
const ROWS = 1_000_000;
const ADMIN = "usage-admin-token-0123456789abcdef";
const dir = mkdtempSync(join(tmpdir(), "textai-usage-"));
const dbPath = join(dir, "big.db");
const BIG = "acc_big";
const OTHER = "acc_other";
const FNS = ["sentiment-analysis", "email-analyze", "word-count", "translation"];
const PROVIDERS = ["local", "openai", null];

function buildOldDatabase(): void {
  const db = new Database(dbPath, { create: true, strict: true });
  db.exec("PRAGMA journal_mode = WAL");
  const before = MIGRATIONS.findIndex((m) => m.tag === "0005_usage_daily");
  expect(before).toBeGreaterThan(0);
  migrate(db, MIGRATIONS.slice(0, before));
  const now = Date.now();
  const d = new Date(now);
  const monthStart = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 2, 1);
  const insert = db.prepare(
    "INSERT INTO ledger (account_id, key_id, amount, kind, function, request_id, provider, cached, reason, created_at) VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?, ?)",
  );
  db.transaction(() => {
    db.query("INSERT INTO accounts (id, plan, balance) VALUES (?, 'free', 0), (?, 'free', 0)").run(BIG, OTHER);
    for (let i = 0; i < ROWS; i++) {
      const account = i % 10 === 9 ? OTHER : BIG;
      // two thirds of the rows in the current month, the rest spread over the two before
      const at = i % 3 === 0 ? start + ((i * 7919) % (monthStart - start)) : monthStart + ((i * 104729) % (now - monthStart + 1));
      if (i % 1000 === 0) insert.run(account, null, 50, i % 2000 === 0 ? "welcome" : "grant", null, null, 0, "test", at);
      else
        insert.run(
          account,
          "key_x",
          -(1 + (i % 3)),
          "charge",
          FNS[i % FNS.length],
          PROVIDERS[i % 3],
          i % 5 === 0 ? 1 : 0,
          null,
          at,
        );
    }
    // balances as the ledger says, kept positive for the calls below
    db.query("INSERT INTO ledger (account_id, amount, kind, reason, created_at) VALUES (?, 10000000, 'grant', 'float', ?)").run(
      BIG,
      now,
    );
    db.query("UPDATE accounts SET balance = (SELECT sum(amount) FROM ledger WHERE ledger.account_id = accounts.id)").run();
  })();
  db.close();
}

/** The figures as the ledger itself says, by a full scan (what the usage endpoint did before). */
function scan(db: Database, account: string, from: number) {
  const byFn = db
    .query<
      { function: string; requests: number; credits: number; cached: number; input_tokens: number; output_tokens: number },
      [string, number]
    >(
      "SELECT function, count(*) AS requests, -sum(amount) AS credits, sum(cached) AS cached, coalesce(sum(input_tokens), 0) AS input_tokens, coalesce(sum(output_tokens), 0) AS output_tokens FROM ledger WHERE account_id = ? AND kind = 'charge' AND created_at >= ? GROUP BY function ORDER BY function",
    )
    .all(account, from);
  const byProvider = db
    .query<{ provider: string; requests: number; credits: number }, [string, number]>(
      "SELECT coalesce(provider, 'none') AS provider, count(*) AS requests, -sum(amount) AS credits FROM ledger WHERE account_id = ? AND kind = 'charge' AND created_at >= ? GROUP BY 1 ORDER BY 1",
    )
    .all(account, from);
  const granted = db
    .query<{ g: number }, [string, number]>(
      "SELECT coalesce(sum(amount), 0) AS g FROM ledger WHERE account_id = ? AND kind != 'charge' AND created_at >= ?",
    )
    .get(account, from)!.g;
  const months = db
    .query<{ month: string; requests: number; credits: number }, [string]>(
      "SELECT strftime('%Y-%m', created_at / 1000, 'unixepoch') AS month, count(*) AS requests, -sum(amount) AS credits FROM ledger WHERE account_id = ? AND kind = 'charge' GROUP BY month ORDER BY month DESC",
    )
    .all(account);
  return { byFn, byProvider, granted, months };
}

let gw: TestGateway;
let key: string;
beforeAll(async () => {
  buildOldDatabase();
  gw = await startGateway({ functions: [wordCount], env: { TEXTAI_DB: dbPath, TEXTAI_ADMIN_TOKEN: ADMIN } });
  key = gw.newKey({ accountId: BIG }).key;
}, 120_000);
afterAll(async () => {
  await gw.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("usage reads from rollups kept with each charge, never from the ledger", () => {
  test("after a million ledger rows and live calls, the counters equal a ledger scan", async () => {
    const h = { "x-api-key": key };
    for (let i = 0; i < 5; i++) {
      const r = await gw.post("/api/v1/ai/word-count", { text: `one two ${i}` }, h);
      expect(r.status, JSON.stringify(r.json)).toBe(200);
    }
    // a cached answer is a charge too
    expect((await gw.post("/api/v1/ai/word-count", { text: "one two 0" }, h)).headers.get("x-cache")).toBe("HIT");
    await gw.post(`/admin/v1/accounts/${BIG}/credits`, { amount: 7, reason: "rollup" }, { authorization: `Bearer ${ADMIN}` });

    const now = new Date();
    const monthStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
    const db = new Database(dbPath, { readonly: true });
    try {
      const truth = scan(db, BIG, monthStart);
      const usage = (await gw.get("/api/v1/account/usage", h)).json.data.result;
      const fns = [...usage.by_function].sort((a: { function: string }, b: { function: string }) =>
        a.function < b.function ? -1 : 1,
      );
      expect(fns).toEqual(truth.byFn);
      const providers = [...usage.by_provider].sort((a: { provider: string }, b: { provider: string }) =>
        a.provider < b.provider ? -1 : 1,
      );
      expect(providers).toEqual(truth.byProvider);
      expect(usage.credits_granted).toBe(truth.granted);
      expect(usage.requests).toBe(truth.byFn.reduce((s, r) => s + r.requests, 0));
      expect(usage.requests).toBeGreaterThan(ROWS / 2);
      expect(usage.cached_requests).toBe(truth.byFn.reduce((s, r) => s + r.cached, 0));
      // the daily series adds up to the month
      expect(usage.by_day.reduce((s: number, d: { requests: number }) => s + d.requests, 0)).toBe(usage.requests);
      expect(usage.by_day.reduce((s: number, d: { credits_used: number }) => s + d.credits_used, 0)).toBe(usage.credits_used);

      const summary = (await gw.get("/api/v1/account/usage-summary", h)).json.data.result;
      expect(
        summary.months.map((m: { month: string; requests: number; credits_used: number }) => [
          m.month,
          m.requests,
          m.credits_used,
        ]),
      ).toEqual(truth.months.map((m) => [m.month, m.requests, m.credits]));

      const view = (await gw.get(`/admin/v1/accounts/${BIG}`, { authorization: `Bearer ${ADMIN}` })).json.data.result;
      expect(view.usage.requests).toBe(usage.requests);
      expect(view.usage.credits_granted).toBe(truth.granted);
      // the other account's rows are its own
      expect(valueNow(gw.deps.ledger.monthToDate(OTHER)).requests).toBe(
        scan(db, OTHER, monthStart).byFn.reduce((s, r) => s + r.requests, 0),
      );
    } finally {
      db.close();
    }
  }, 60_000);

  test("a read takes about a millisecond whatever the ledger holds (generous bound)", async () => {
    const ledger = gw.deps.ledger;
    const times: number[] = [];
    for (let i = 0; i < 30; i++) {
      const t = performance.now();
      ledger.monthToDate(BIG);
      ledger.monthly(BIG);
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    const median = times[15];
    expect(median, `median ${median.toFixed(2)} ms`).toBeLessThan(10);
    // and through HTTP, /health is not held up behind usage reads
    const h = { "x-api-key": key };
    const t = performance.now();
    await Promise.all([gw.get("/api/v1/account/usage", h), gw.get("/api/v1/account/usage-summary", h)]);
    expect(performance.now() - t).toBeLessThan(500);
  });
});
