// How long dashboard sessions last (docs/security.md), through a real server on a real SQLite file:
// an operator session ends when the admin token changes, every session has an absolute lifetime,
// and ended sessions are deleted by a sweep, not only when presented.
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SESSION_LIMITS } from "../../src/dashboard/security";
import { startGateway, type TestGateway } from "../helpers/gateway";

const TOKEN_A = "operator-token-A-for-lifetime-tests-0123456789";
const TOKEN_B = "operator-token-B-for-lifetime-tests-0123456789";
const HOUR = 3600_000;
// the SQLite files that outlive a gateway's restart
const home = mkdtempSync(join(tmpdir(), "textai-lifetimes-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));

async function form(gw: TestGateway, path: string, body: Record<string, string>, cookie = "") {
  const res = await fetch(gw.url + path, {
    method: "POST",
    redirect: "manual",
    headers: { origin: new URL(gw.url).origin, cookie, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(body),
  });
  await res.text();
  return {
    status: res.status,
    location: res.headers.get("location"),
    cookie: (res.headers.get("set-cookie") ?? "").split(";")[0],
  };
}

const page = async (gw: TestGateway, path: string, cookie: string) => {
  const res = await fetch(gw.url + path, { headers: { cookie }, redirect: "manual" });
  await res.text();
  return { status: res.status, location: res.headers.get("location") };
};

/** Runs `sql` on the gateway's SQLite file, as time passing would leave it. */
function onFile(dbPath: string, sql: string, ...args: number[]) {
  const db = new Database(dbPath);
  try {
    return db.query(sql).run(...args).changes;
  } finally {
    db.close();
  }
}
const sessionCount = (dbPath: string) => {
  const db = new Database(dbPath, { readonly: true });
  try {
    return db.query<{ n: number }, []>("SELECT count(*) AS n FROM dashboard_sessions").get()?.n ?? 0;
  } finally {
    db.close();
  }
};

test("an operator session ends when the gateway restarts with another admin token (and survives a restart with the same)", async () => {
  const dbPath = join(home, "token-change.db");
  let gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: TOKEN_A, TEXTAI_DB: dbPath } });
  try {
    const { accountId } = gw.newKey({ credits: 10 });
    const signedIn = await form(gw, "/dashboard/operator/login", { token: TOKEN_A });
    expect(signedIn.status).toBe(303);
    const cookie = signedIn.cookie;
    expect((await page(gw, "/dashboard/operator", cookie)).status).toBe(200);

    await gw.close();
    gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: TOKEN_A, TEXTAI_DB: dbPath } });
    expect((await page(gw, "/dashboard/operator", cookie)).status).toBe(200);

    await gw.close();
    gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: TOKEN_B, TEXTAI_DB: dbPath } });
    expect(await page(gw, "/dashboard/operator", cookie)).toEqual({ status: 303, location: "/dashboard/operator/login" });
    const grant = await form(gw, `/dashboard/operator/accounts/${accountId}/credits`, { amount: "5000" }, cookie);
    expect(grant).toMatchObject({ status: 303, location: "/dashboard/operator/login" });
    const usage = await gw.get("/admin/v1/accounts/" + accountId, { authorization: `Bearer ${TOKEN_B}` });
    expect(usage.json.data.result.balance).toBe(10);
  } finally {
    await gw.close();
  }
}, 30_000);

test("every session has an absolute lifetime: active all along, it still ends (holder 7 days, operator 8 hours)", async () => {
  const gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: TOKEN_A } });
  try {
    const made = await gw.post(
      "/admin/v1/accounts",
      { email: "old@example.com", password: "old's long password" },
      { authorization: `Bearer ${TOKEN_A}` },
    );
    expect(made.status).toBe(201);
    const holder = (await form(gw, "/dashboard/login", { email: "old@example.com", password: "old's long password" })).cookie;
    const operator = (await form(gw, "/dashboard/operator/login", { token: TOKEN_A })).cookie;
    expect((await page(gw, "/dashboard", holder)).status).toBe(200);
    expect((await page(gw, "/dashboard/operator", operator)).status).toBe(200);
    // begun just within their lifetimes, seen a moment ago: still valid
    const now = Date.now();
    onFile(
      gw.dbPath,
      "UPDATE dashboard_sessions SET created_at = ?, last_seen_at = ? WHERE kind = 'account'",
      now - SESSION_LIMITS.account.lifetimeMs + 60_000,
      now,
    );
    onFile(
      gw.dbPath,
      "UPDATE dashboard_sessions SET created_at = ?, last_seen_at = ? WHERE kind = 'operator'",
      now - SESSION_LIMITS.operator.lifetimeMs + 60_000,
      now,
    );
    expect((await page(gw, "/dashboard", holder)).status).toBe(200);
    expect((await page(gw, "/dashboard/operator", operator)).status).toBe(200);
    // begun longer ago than their lifetimes, though seen a moment ago
    onFile(gw.dbPath, "UPDATE dashboard_sessions SET created_at = created_at - ?", 2 * 60_000);
    expect(await page(gw, "/dashboard", holder)).toEqual({ status: 303, location: "/dashboard/login" });
    expect(await page(gw, "/dashboard/operator", operator)).toEqual({ status: 303, location: "/dashboard/operator/login" });
    expect(sessionCount(gw.dbPath)).toBe(0);
  } finally {
    await gw.close();
  }
}, 30_000);

test("ended sessions are deleted by the sweep without being presented; live ones stay", async () => {
  const dbPath = join(home, "sweep.db");
  let gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: TOKEN_A, TEXTAI_DB: dbPath } });
  try {
    const made = await gw.post(
      "/admin/v1/accounts",
      { email: "gone@example.com", password: "gone's long password" },
      { authorization: `Bearer ${TOKEN_A}` },
    );
    expect(made.status).toBe(201);
    const sign = () => form(gw, "/dashboard/login", { email: "gone@example.com", password: "gone's long password" });
    await sign();
    await sign();
    await form(gw, "/dashboard/operator/login", { token: TOKEN_A });
    const live = (await sign()).cookie;
    expect(sessionCount(dbPath)).toBe(4);
    // three of them age past their ends (idle, lifetime, operator lifetime); nobody presents them
    const now = Date.now();
    const rows = new Database(dbPath, { readonly: true })
      .query<{ token_hash: string; kind: string }, []>("SELECT token_hash, kind FROM dashboard_sessions ORDER BY created_at")
      .all();
    const [first, second, op] = [rows[0], rows[1], rows.find((r) => r.kind === "operator")];
    const db = new Database(dbPath);
    db.query("UPDATE dashboard_sessions SET last_seen_at = ? WHERE token_hash = ?").run(now - 13 * HOUR, first.token_hash);
    db.query("UPDATE dashboard_sessions SET created_at = ? WHERE token_hash = ?").run(now - 8 * 24 * HOUR, second.token_hash);
    db.query("UPDATE dashboard_sessions SET created_at = ? WHERE token_hash = ?").run(now - 9 * HOUR, op?.token_hash ?? "");
    db.close();
    // the sweep runs when a gateway starts (and every 10 minutes)
    await gw.close();
    gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: TOKEN_A, TEXTAI_DB: dbPath } });
    for (let i = 0; i < 50 && sessionCount(dbPath) > 1; i++) await Bun.sleep(20);
    expect(sessionCount(dbPath)).toBe(1);
    expect((await page(gw, "/dashboard", live)).status).toBe(200);
  } finally {
    await gw.close();
  }
}, 30_000);
