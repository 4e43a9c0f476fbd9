// Sign-in and session rules over plain HTTP (the browser scenario covers the pages themselves).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { hashToken, SESSION_LIMITS } from "../../src/dashboard/security";
import { SqliteDashboardStore } from "../../src/dashboard/sqlite";
import { openStorage } from "../../src/storage/db";
import { shown, submit } from "../helpers/dashboard-forms";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { freshDatabase, sharedServersUp } from "../helpers/shared-servers";

const ROOT = join(import.meta.dir, "../..");
const TOKEN = "operator-token-for-session-tests";

function cli(args: string[], env: Record<string, string>, stdin?: string) {
  const p = Bun.spawnSync([process.execPath, join(ROOT, "src/cli.ts"), ...args], {
    env: { ...process.env, ...env },
    cwd: ROOT,
    stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
  });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}

/**
 * The sign-in form posted: `status` is its answer's (303, signed in or refused: Post/Redirect/Get),
 * `shows` and `body` are the refused sign-in's page, asked as the browser asks it with the flash
 * cookie (its status is the refusal's: 401, 429); `setCookie` is the session's cookie, if any.
 */
async function signIn(gw: TestGateway, email: string, password: string, headers: Record<string, string> = {}) {
  const origin = new URL(gw.url).origin;
  const res = await fetch(`${gw.url}/dashboard/login`, {
    method: "POST",
    redirect: "manual",
    headers: { origin, "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams({ email, password }),
  });
  const setCookie = res.headers.getSetCookie().find((c) => c.startsWith("textai_session=")) ?? "";
  const flash = res.headers.getSetCookie().find((c) => c.startsWith("textai_flash="));
  const page = flash
    ? await fetch(gw.url + res.headers.get("location"), { headers: { cookie: flash.split(";")[0] as string } })
    : null;
  return {
    status: res.status,
    shows: page?.status ?? res.status,
    setCookie,
    cookie: setCookie.split(";")[0],
    body: page ? await page.text() : await res.text(),
    requestId: res.headers.get("x-request-id"),
  };
}

const signedIn = async (gw: TestGateway, cookie: string) =>
  (await fetch(`${gw.url}/dashboard`, { headers: { cookie }, redirect: "manual" })).status === 200;

async function makeLogin(gw: TestGateway, email: string, password: string) {
  const res = await gw.post("/admin/v1/accounts", { email, password }, { authorization: `Bearer ${TOKEN}` });
  expect(res.status).toBe(201);
  return res.json.data.result.id as string;
}

describe("sessions", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: TOKEN } });
    await makeLogin(gw, "ann@example.com", "ann's long password");
    await makeLogin(gw, "tim@example.com", "tim's long password");
  });
  afterAll(() => gw.close());

  test("the cookie: random, HttpOnly, SameSite=Strict, stored only as its SHA-256; x-request-id on the answer", async () => {
    const a = await signIn(gw, "ann@example.com", "ann's long password");
    const b = await signIn(gw, "ANN@example.com", "ann's long password");
    expect(a.status).toBe(303);
    expect(a.requestId).toMatch(/^req_/);
    expect(a.setCookie).toMatch(/^textai_session=[A-Za-z0-9_-]{43}; Path=\/dashboard; HttpOnly; SameSite=Strict$/);
    expect(a.cookie).not.toBe(b.cookie);
    const token = a.cookie.split("=")[1];
    const rows = gw.deps.storage.sqlite.query<{ token_hash: string }, []>("SELECT token_hash FROM dashboard_sessions").all();
    expect(rows.map((r) => r.token_hash)).toContain(hashToken(token));
    expect(JSON.stringify(rows)).not.toContain(token);
  });

  test("a wrong password and an unknown email get the same answer in about the same time", async () => {
    const wrong: number[] = [];
    const unknown: number[] = [];
    let wrongBody = "";
    let unknownBody = "";
    for (let i = 0; i < 4; i++) {
      let t = performance.now();
      const w = await signIn(gw, "tim@example.com", `not it ${i}`);
      wrong.push(performance.now() - t);
      t = performance.now();
      const u = await signIn(gw, `nobody${i}@example.com`, "tim's long password");
      unknown.push(performance.now() - t);
      expect([w.status, u.status]).toEqual([303, 303]);
      expect([w.shows, u.shows]).toEqual([401, 401]);
      expect(w.setCookie + u.setCookie).toBe("");
      wrongBody = w.body.replace(/value="[^"]*"/, "");
      unknownBody = u.body.replace(/value="[^"]*"/, "");
    }
    expect(unknownBody).toBe(wrongBody);
    // both verify an argon2id hash; generous bounds, the machine is noisy
    const median = (xs: number[]) => xs.sort((x, y) => x - y)[2];
    const ratio = median(unknown) / median(wrong);
    console.log(`sign-in refusal: wrong password ${median(wrong).toFixed(1)} ms, unknown email ${median(unknown).toFixed(1)} ms`);
    expect(ratio).toBeGreaterThan(0.25);
    expect(ratio).toBeLessThan(4);
    // eight argon2id verifications: on a loaded 2-core machine that can take several seconds
  }, 30_000);

  test("a password change ends every session; the browser that changed it gets a new one", async () => {
    const a = await signIn(gw, "ann@example.com", "ann's long password");
    const b = await signIn(gw, "ann@example.com", "ann's long password");
    expect((await signedIn(gw, a.cookie)) && (await signedIn(gw, b.cookie))).toBe(true);
    const res = await fetch(`${gw.url}/dashboard/password`, {
      method: "POST",
      redirect: "manual",
      headers: { origin: new URL(gw.url).origin, cookie: a.cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ current: "ann's long password", next: "ann's newer password" }),
    });
    expect([res.status, res.headers.get("location")]).toEqual([303, "/dashboard/password"]);
    const fresh = (res.headers.getSetCookie().find((c) => c.startsWith("textai_session=")) ?? "").split(";")[0] as string;
    expect(await signedIn(gw, a.cookie)).toBe(false);
    expect(await signedIn(gw, b.cookie)).toBe(false);
    expect(await signedIn(gw, fresh)).toBe(true);
    expect((await signIn(gw, "ann@example.com", "ann's long password")).shows).toBe(401);
    expect((await signIn(gw, "ann@example.com", "ann's newer password")).status).toBe(303);
    // and no password reached the log
    const logs = gw.logs.join("\n");
    for (const secret of ["ann's long password", "ann's newer password", "ann%27s"]) expect(logs).not.toContain(secret);
  });

  test("sign-out ends the session on the server; a foreign Origin cannot sign anyone out or in", async () => {
    const a = await signIn(gw, "ann@example.com", "ann's newer password");
    const foreign = await fetch(`${gw.url}/dashboard/logout`, {
      method: "POST",
      headers: { origin: "https://evil.example", cookie: a.cookie },
      redirect: "manual",
    });
    expect(foreign.status).toBe(403);
    expect(await signedIn(gw, a.cookie)).toBe(true);
    expect((await signIn(gw, "ann@example.com", "ann's newer password", { origin: "https://evil.example" })).status).toBe(403);
    const out = await fetch(`${gw.url}/dashboard/logout`, {
      method: "POST",
      headers: { origin: new URL(gw.url).origin, cookie: a.cookie },
      redirect: "manual",
    });
    expect(out.status).toBe(303);
    expect(out.headers.get("set-cookie")).toContain("Max-Age=0");
    expect(await signedIn(gw, a.cookie)).toBe(false);
  });

  test("JSON routes: 401 without a session, x-request-id always", async () => {
    const res = await gw.get("/dashboard/api/keys");
    expect(res.status).toBe(401);
    expect(res.json.error.code).toBe("not_signed_in");
    expect(res.headers.get("x-request-id")).toBe(res.json.request_id);
  });
});

test("sessions end after 12 hours idle", () => {
  const storage = openStorage(":memory:");
  try {
    const store = new SqliteDashboardStore(storage.sqlite);
    const t0 = 1_800_000_000_000;
    store.createSession({ tokenHash: "h1", accountId: "acc_1", kind: "account", createdAt: t0, lastSeenAt: t0 });
    // seen 11 h later: still valid, and the idle clock restarts
    expect(store.touchSession("h1", t0 + 11 * 3600_000, SESSION_LIMITS)?.kind).toBe("account");
    expect(store.touchSession("h1", t0 + 22 * 3600_000, SESSION_LIMITS)?.kind).toBe("account");
    // then 12 h and a second of silence
    expect(store.touchSession("h1", t0 + 34 * 3600_000 + 1000, SESSION_LIMITS)).toBeNull();
    expect(store.touchSession("h1", t0 + 34 * 3600_000 + 2000, SESSION_LIMITS)).toBeNull();
  } finally {
    storage.close();
  }
});

describe("behind a proxy", () => {
  test("X-Forwarded-Proto counts only from a trusted proxy", async () => {
    const untrusted = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: TOKEN } });
    const trusted = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: TOKEN, TEXTAI_TRUSTED_PROXIES: "127.0.0.1" } });
    try {
      for (const gw of [untrusted, trusted]) await makeLogin(gw, "bo@example.com", "bo's long password");
      const host = (gw: TestGateway) => new URL(gw.url).host;
      // the browser saw https://host: that is the Origin it sends
      const via = (gw: TestGateway) =>
        signIn(gw, "bo@example.com", "bo's long password", { "x-forwarded-proto": "https", origin: `https://${host(gw)}` });
      const t = await via(trusted);
      expect(t.status).toBe(303);
      expect(t.setCookie).toEndWith("; Secure");
      // from anyone else the header is ignored: the request is plain http, and an https Origin is foreign
      const u = await via(untrusted);
      expect(u.status).toBe(403);
      const plain = await signIn(untrusted, "bo@example.com", "bo's long password", { "x-forwarded-proto": "https" });
      expect(plain.status).toBe(303);
      expect(plain.setCookie).not.toContain("Secure");
    } finally {
      await untrusted.close();
      await trusted.close();
    }
  });
});

describe("sign-in limits", () => {
  test("per email and client address: the sixth try in 15 minutes is refused even with the right password", async () => {
    const gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: TOKEN } });
    try {
      await makeLogin(gw, "cy@example.com", "cy's long password");
      for (let i = 0; i < 5; i++) expect((await signIn(gw, "cy@example.com", `wrong ${i}`)).shows).toBe(401);
      const blocked = await signIn(gw, "cy@example.com", "cy's long password");
      expect(blocked.shows).toBe(429);
      expect(blocked.setCookie).toBe("");
    } finally {
      await gw.close();
    }
  });

  test("per client address: twenty failures over many emails stop that client", async () => {
    const gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: TOKEN } });
    try {
      await makeLogin(gw, "di@example.com", "di's long password");
      for (let i = 0; i < 20; i++) expect((await signIn(gw, `guess${i}@example.com`, "password123")).shows).toBe(401);
      expect((await signIn(gw, "di@example.com", "di's long password")).shows).toBe(429);
    } finally {
      await gw.close();
    }
  }, 30_000);
});

describe("operator view, sign-up, CLI", () => {
  test("no admin token: the operator view does not exist; open sign-up only when configured", async () => {
    const closed = await startGateway();
    const open = await startGateway({ configText: "[dashboard]\nsignup = true\n" });
    try {
      expect((await closed.get("/dashboard/operator/login")).status).toBe(404);
      expect((await closed.get("/dashboard/operator")).status).toBe(404);
      expect((await closed.get("/dashboard/signup")).status).toBe(404);
      const short = await fetch(`${closed.url}/login`, { redirect: "manual" });
      expect([short.status, short.headers.get("location")]).toEqual([303, "/dashboard/login"]);
      const res = await fetch(`${open.url}/dashboard/signup`, {
        method: "POST",
        redirect: "manual",
        headers: { origin: new URL(open.url).origin, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ email: "eve@example.com", password: "eve's long password" }),
      });
      // the new account is signed in at once, and its password signs in like any other
      expect([res.status, res.headers.get("location")]).toEqual([303, "/dashboard"]);
      expect(res.headers.get("set-cookie")).toStartWith("textai_session=");
      const { cookie, status } = await signIn(open, "eve@example.com", "eve's long password");
      expect(status).toBe(303);
      const overview = await fetch(`${open.url}/dashboard/api/overview`, { headers: { cookie } });
      const body = (await overview.json()) as { data: { result: { usage: { balance: number } } } };
      expect(body.data.result.usage.balance).toBe(0); // signup_credits defaults to 0: open sign-up is no credit faucet
    } finally {
      await closed.close();
      await open.close();
    }
  }, 30_000);

  test("accounts create and set-login read the password from stdin", async () => {
    const gw = await startGateway();
    try {
      const env = { TEXTAI_DB: gw.dbPath };
      const made = cli(
        ["accounts", "create", "--email", "Fay@Example.com", "--plan", "pro", "--credits", "7", "--json"],
        env,
        "fay's long password\n",
      );
      expect(made.code).toBe(0);
      expect(JSON.parse(made.out)).toMatchObject({ email: "fay@example.com", plan: "pro", balance: 7 });
      expect((await signIn(gw, "fay@example.com", "fay's long password")).status).toBe(303);
      expect(cli(["accounts", "create", "--email", "fay@example.com"], env, "another long password\n").code).toBe(1);
      const short = cli(["accounts", "create", "--email", "gus@example.com"], env, "short\n");
      expect(short.code).toBe(2);
      expect(short.err).toContain("at least 10 characters");
      expect(cli(["accounts", "create", "--email", "gus@example.com"], env, "").code).toBe(2);

      // an account made by keys create gets a login
      const { accountId } = gw.newKey();
      expect(
        cli(["accounts", "set-login", "--account", accountId, "--email", "gus@example.com"], env, "gus's long password\n").code,
      ).toBe(0);
      expect((await signIn(gw, "gus@example.com", "gus's long password")).status).toBe(303);
      expect(
        cli(["accounts", "set-login", "--account", "acc_nope", "--email", "hal@example.com"], env, "hal's long password\n").code,
      ).toBe(1);
    } finally {
      await gw.close();
    }
  }, 30_000);

  test("POST /admin/v1/accounts: email and password go together, an email signs in one account only", async () => {
    const gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: TOKEN } });
    try {
      const auth = { authorization: `Bearer ${TOKEN}` };
      expect((await gw.post("/admin/v1/accounts", { email: "ivy@example.com" }, auth)).status).toBe(400);
      expect((await gw.post("/admin/v1/accounts", { email: "ivy@example.com", password: "short" }, auth)).status).toBe(400);
      expect(
        (await gw.post("/admin/v1/accounts", { email: "ivy@example.com", password: "ivy's long password" }, auth)).status,
      ).toBe(201);
      const again = await gw.post("/admin/v1/accounts", { email: "IVY@example.com", password: "ivy's long password" }, auth);
      expect(again.status).toBe(409);
    } finally {
      await gw.close();
    }
  });
});

const shared = await sharedServersUp("the dashboard on PostgreSQL");
describe.skipIf(!shared)("on PostgreSQL (TEXTAI_DATABASE_URL)", () => {
  test("sign in, create a key with the JSON route, use it, see it in usage and ledger, revoke it", async () => {
    const db = await freshDatabase();
    const gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: TOKEN, TEXTAI_DATABASE_URL: db.url } });
    try {
      await makeLogin(gw, "pg@example.com", "pg's long password");
      const s = await signIn(gw, "pg@example.com", "pg's long password");
      expect(s.status).toBe(303);
      const headers = { cookie: s.cookie, origin: new URL(gw.url).origin };
      const created = await gw.post("/dashboard/api/keys", { label: "on postgres" }, headers);
      expect(created.status).toBe(201);
      const key = created.json.data.result.key as string;
      const call = () => gw.post("/api/v1/ai/sentiment-analysis", { text: "Lovely." }, { "x-api-key": key });
      expect((await call()).status).toBe(200);
      const overview = await gw.get("/dashboard/api/overview", headers);
      expect(overview.json.data.result.usage).toMatchObject({ requests: 1, balance: 99 });
      const revoked = await fetch(`${gw.url}/dashboard/api/keys/${created.json.data.result.id}`, { method: "DELETE", headers });
      expect(revoked.status).toBe(200);
      expect((await call()).status).toBe(401);
      const ledger = await gw.get("/dashboard/api/ledger?limit=1", headers);
      expect(ledger.json.data.result).toMatchObject({ total: 2, rows: [{ kind: "charge", amount: -1 }] });
    } finally {
      await gw.close();
      await db.drop();
    }
  }, 30_000);
});

describe("operator console over HTTP", () => {
  test("admin token sign-in, plan change reaching the keys, credits taken back; an operator session is no holder's", async () => {
    const gw = await startGateway({
      env: { TEXTAI_ADMIN_TOKEN: TOKEN },
      configText: "[plans.pro]\nrate_limits = { standard = 600 }\n",
    });
    try {
      const origin = new URL(gw.url).origin;
      const form = (path: string, body: Record<string, string>, cookie = "") =>
        fetch(gw.url + path, {
          method: "POST",
          redirect: "manual",
          headers: { origin, cookie, "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams(body),
        });
      // a refused form answers 303 too (Post/Redirect/Get): its page, asked with the flash cookie, says why
      const refused = (path: string, body: Record<string, string>, cookie = "") => submit(gw.url, path, body, { cookie });
      const wrongToken = await refused("/dashboard/operator/login", { token: "not the token" });
      expect([wrongToken.posted.status, wrongToken.page?.status], shown(wrongToken)).toEqual([303, 401]);
      expect(wrongToken.page?.body).toContain("Wrong admin token.");
      const signedInOp = await form("/dashboard/operator/login", { token: TOKEN });
      expect(signedInOp.status).toBe(303);
      const cookie = (signedInOp.headers.get("set-cookie") ?? "").split(";")[0] as string;
      const { key, id, accountId } = gw.newKey({ credits: 10 });
      // a plan the gateway does not know is refused, saying which it knows (2026-12-06)
      const unknown = await refused(`/dashboard/operator/accounts/${accountId}/plan`, { plan: "platnum" }, cookie);
      expect([unknown.posted.status, unknown.page?.status], shown(unknown)).toEqual([303, 400]);
      expect(unknown.page?.body).toContain("unknown plan");
      expect((await form(`/dashboard/operator/accounts/${accountId}/plan`, { plan: "pro" }, cookie)).status).toBe(303);
      expect(
        (await gw.get(`/admin/v1/keys?account_id=${accountId}`, { authorization: `Bearer ${TOKEN}` })).json.data.result.data[0],
      ).toMatchObject({ id, plan: "pro" });
      const usage = await gw.get("/api/v1/account/usage", { "x-api-key": key });
      expect(usage.json.data.result.plan).toBe("pro");
      expect(
        (await form(`/dashboard/operator/accounts/${accountId}/credits`, { amount: "-4", reason: "refund" }, cookie)).status,
      ).toBe(303);
      expect(usage.json.data.result.balance - 4).toBe(
        (await gw.get("/api/v1/account/usage", { "x-api-key": key })).json.data.result.balance,
      );
      // a refused value goes back to the account's page with the reason and what was sent (no JSON
      // for a plain form), and changes nothing
      const before = (await gw.get("/api/v1/account/usage", { "x-api-key": key })).json.data.result.balance;
      const badAmount = await refused(
        `/dashboard/operator/accounts/${accountId}/credits`,
        { amount: "lots", reason: "why not" },
        cookie,
      );
      expect([badAmount.posted.status, badAmount.location]).toEqual([303, `/dashboard/operator/accounts/${accountId}`]);
      expect(badAmount.page?.status, shown(badAmount)).toBe(400);
      expect(badAmount.page?.headers["content-type"]).toStartWith("text/html");
      const badPage = badAmount.page?.body ?? "";
      expect(badPage).toContain("a grant is a whole number of credits from -1000000000 to 1000000000, other than 0 (got lots)");
      expect(badPage).toContain(accountId);
      expect(badPage).toMatch(/id="amount" name="amount" type="number" step="1" required value="lots" autofocus/);
      expect(badPage).toContain('value="why not"');
      expect((await gw.get("/api/v1/account/usage", { "x-api-key": key })).json.data.result.balance).toBe(before);
      // an account that is gone: back to the account list, saying so
      const gone = await refused("/dashboard/operator/accounts/acc_nobody/plan", { plan: "pro" }, cookie);
      expect([gone.location, gone.page?.status], shown(gone)).toEqual(["/dashboard/operator", 404]);
      expect(gone.page?.body).toContain("account not found");
      const badAccount = await refused(
        "/dashboard/operator/accounts",
        { email: "not-an-email", password: "a secret of the operator", name: "Newco" },
        cookie,
      );
      expect([badAccount.location, badAccount.page?.status], shown(badAccount)).toEqual(["/dashboard/operator", 400]);
      expect(badAccount.page?.body).toContain("Operator console");
      expect(badAccount.page?.body).toContain('value="not-an-email"');
      expect(badAccount.page?.body).toContain('value="Newco"');
      expect(badAccount.page?.body).not.toContain("a secret of the operator");
      // a foreign origin cannot use the operator's session
      const foreign = await fetch(`${gw.url}/dashboard/operator/accounts/${accountId}/credits`, {
        method: "POST",
        headers: { origin: "https://evil.example", cookie, "content-type": "application/x-www-form-urlencoded" },
        body: "amount=1000",
      });
      expect(foreign.status).toBe(403);
      // the operator's cookie opens no account holder's pages, and no cookie opens the console
      const holderPage = await fetch(`${gw.url}/dashboard/keys`, { headers: { cookie }, redirect: "manual" });
      expect(holderPage.headers.get("location")).toBe("/dashboard/operator");
      const anon = await fetch(`${gw.url}/dashboard/operator`, { redirect: "manual" });
      expect(anon.headers.get("location")).toBe("/dashboard/operator/login");
      expect((await gw.get("/dashboard/api/operator/state")).status).toBe(401);
      const state = await fetch(`${gw.url}/dashboard/api/operator/state`, { headers: { cookie } });
      const figures = ((await state.json()) as { data: { result: Record<string, unknown> } }).data.result;
      expect(figures).toMatchObject({ providers: [{ name: "local", breaker: "closed" }] });
      // the API's calls: one sentiment call counts, the dashboard's own pages do not
      const callsBefore = figures.requests_total as number;
      const caller = gw.newKey({ credits: 5 });
      expect((await gw.post("/api/v1/ai/sentiment-analysis", { text: "fine" }, { "x-api-key": caller.key })).status).toBe(200);
      for (let i = 0; i < 3; i++) await fetch(`${gw.url}/dashboard/operator`, { headers: { cookie } });
      const again = await fetch(`${gw.url}/dashboard/api/operator/state`, { headers: { cookie } });
      expect(((await again.json()) as { data: { result: Record<string, unknown> } }).data.result.requests_total).toBe(
        callsBefore + 1,
      );
      expect(gw.logs.join("\n")).not.toContain(TOKEN);
    } finally {
      await gw.close();
    }
  }, 30_000);
});
