/**
 * The audit trail (CONTRACT section 17, docs/audit.md) on one node's SQLite file, through a real
 * server and the CLI: every state-changing route of the admin API, the dashboard and the operator
 * console (read from app.routes, so a new one without an entry fails) and every state-changing CLI
 * verb (read from the CLI's own list) writes exactly one entry with its before and after; no entry
 * holds a secret; the chain verifies, and a deleted or edited row is found by `textai audit verify`.
 */

import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { SqliteAuditTrail } from "../../src/audit/sqlite";
import { CLI_VERBS } from "../../src/cli";
import { startGateway, type TestGateway } from "../helpers/gateway";

const TOKEN = "admin-token-for-the-audit-trail-0123456789";
const admin = { authorization: `Bearer ${TOKEN}` };
const ROOT = join(import.meta.dir, "../..");
const STATE_CHANGING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

type Entry = {
  seq: number;
  actor: string;
  account_id: string | null;
  action: string;
  target_id: string | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  client: string | null;
};
/** What one change is expected to record: its action, actor ("self": the account itself) and account, and whether it has a before. */
type Expect = { action: string; actor: string; account?: string | null; before: boolean; label: string };

/** Routes that change state without an entry, each with its reason (a new one is a decision, never a default). */
const NO_ENTRY: Record<string, string> = {
  "POST /dashboard/login": "signs in: opens a session, changes no account, key, credit or setting",
  "POST /dashboard/logout": "signs out: ends the session it carries",
  "POST /dashboard/operator/login": "signs the operator in: opens a session",
  "POST /dashboard/api/playground/:fn":
    "a function call, charged like an API call: it is in the request log and the credit ledger, not a change of configuration",
};
/** CLI verbs for PostgreSQL only (this test's gateway is on SQLite), each with where it is proven. */
const PG_ONLY_VERBS: Record<string, string> = {
  "credits journal":
    "`forfeit` writes one credits.journal.forfeit entry (test/cluster/credit-journal.test.ts); `status` reads; `ship` applies charges, recorded in the ledger as a node's are",
};
/** CLI verbs that change nothing (`serve` runs the server, whose routes are walked here). */
const READ_ONLY_VERBS = new Set([
  "serve",
  "keys list",
  "usage",
  "requests",
  "audit list",
  "audit verify",
  "webhooks list",
  "webhooks deliveries",
  "members list",
  // writes a copy of the database to a new file; the database itself is unchanged
  "backup",
]);

let gw: TestGateway;
let origin: string;
const secrets: string[] = [TOKEN];
/** every entry the walk expected, in order: the whole chain must be exactly these */
const expected: Expect[] = [];

const hashOf = (s: string) => createHash("sha256").update(s).digest("hex");
const keep = (key: string) => {
  secrets.push(key, hashOf(key));
  return key;
};

async function call(
  method: string,
  path: string,
  opts: { body?: unknown; form?: Record<string, string>; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { origin, ...opts.headers };
  let body: string | undefined;
  if (opts.form) {
    headers["content-type"] = "application/x-www-form-urlencoded";
    body = new URLSearchParams(opts.form).toString();
  } else if (opts.body !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(opts.body);
  }
  const res = await fetch(gw.url + path, { method, headers, body, redirect: "manual" });
  const text = await res.text();
  // biome-ignore lint/suspicious/noExplicitAny: the tests walk the envelope; their assertions check its shape
  let json: Record<string, any> = {};
  try {
    json = JSON.parse(text);
  } catch {}
  for (const k of text.match(/tai_live_[A-Za-z0-9]{40,}/g) ?? []) keep(k);
  return {
    status: res.status,
    json,
    text,
    cookie: (res.headers.get("set-cookie") ?? "").split(";")[0],
    cookies: res.headers.getSetCookie().map((c) => c.split(";")[0] as string),
    location: res.headers.get("location") ?? "",
    label: `${method} ${path}: ${res.status} ${text.slice(0, 300)}`,
  };
}
const adminCall = (method: string, path: string, body?: unknown) => call(method, path, { body, headers: admin });
/**
 * The page a form's 303 leads to (every dashboard form answers so: Post/Redirect/Get), asked as the
 * browser asks it, with the cookies the answer set: its flash carries what the page shows once (a
 * new key, a signing secret, an invitation's link).
 */
const pageAfter = (r: Awaited<ReturnType<typeof call>>, headers: { cookie: string }) =>
  call("GET", r.location, { headers: { cookie: [headers.cookie, ...r.cookies].join("; ") } });

async function entries(): Promise<Entry[]> {
  const r = await gw.get("/admin/v1/audit?limit=500", admin);
  expect(r.status).toBe(200);
  return (r.json.data.result.data as Entry[]).reverse();
}

/** Runs `change`, then checks it added exactly one entry, as `want` says, with its before and after. */
async function oneEntry(want: Expect, change: () => Promise<unknown>): Promise<Entry> {
  const before = await entries();
  await change();
  const after = await entries();
  const added = after.slice(before.length);
  expect(added.length, `${want.label}: ${JSON.stringify(added)}`).toBe(1);
  const e = added[0] as Entry;
  expect(e.action, want.label).toBe(want.action);
  // "self": the account itself (a sign-up); "self-member": the member the entry is about (joining by invitation)
  const self = want.actor === "self" ? e.account_id : want.actor === "self-member" ? e.target_id : want.actor;
  expect(e.actor, want.label).toBe(self as string);
  if (want.account !== undefined) expect(e.account_id, want.label).toBe(want.account);
  expect(e.after, want.label).not.toBeNull();
  if (want.before) expect(e.before, want.label).not.toBeNull();
  else expect(e.before, want.label).toBeNull();
  expected.push(want);
  return e;
}

/** `textai …` on the gateway's file, the password (when given) on standard input. */
function textai(args: string[], stdin?: string, db = gw.dbPath): { code: number; out: string; err: string } {
  const r = Bun.spawnSync(["bun", "src/cli.ts", ...args], {
    cwd: ROOT,
    env: { ...process.env, TEXTAI_DB: db, TEXTAI_LOG_LEVEL: "warn" },
    stdin: stdin === undefined ? "ignore" : Buffer.from(`${stdin}\n`),
  });
  const out = r.stdout.toString();
  for (const k of out.match(/tai_live_[A-Za-z0-9]{40,}/g) ?? []) keep(k);
  return { code: r.exitCode ?? -1, out, err: r.stderr.toString() };
}

let holder: { id: string; cookie: string; password: string };
let operatorCookie: string;

beforeAll(async () => {
  gw = await startGateway({
    env: { TEXTAI_ADMIN_TOKEN: TOKEN },
    // alerts: endpoints on 127.0.0.1 (a closed port: deliveries fail at once and stay pending)
    configText:
      "[dashboard]\nsignup = true\n[plans.gold.rate_limits]\naccount = 100\n[alerts]\nallow_private_urls = true\npoll_ms = 50\nretry_base_ms = 60000\n",
  });
  origin = new URL(gw.url).origin;
  const password = "the holder's first password";
  secrets.push(password);
  const made = await adminCall("POST", "/admin/v1/accounts", { email: "holder@example.com", password, credits: 50 });
  expect(made.status, made.label).toBe(201);
  expected.push({ action: "account.create", actor: "admin-token", before: false, label: "setup" });
  const signedIn = await call("POST", "/dashboard/login", { form: { email: "holder@example.com", password } });
  expect(signedIn.status, signedIn.label).toBe(303);
  holder = { id: made.json.data.result.id, cookie: signedIn.cookie, password };
  const op = await call("POST", "/dashboard/operator/login", { form: { token: TOKEN } });
  expect(op.status, op.label).toBe(303);
  operatorCookie = op.cookie;
  secrets.push(holder.cookie.split("=")[1] ?? "", operatorCookie.split("=")[1] ?? "");
});
afterAll(() => gw.close());

/** A key of the holder's account, made through the admin API (its own entry, counted). */
async function holderKey(label: string): Promise<string> {
  const r = await adminCall("POST", "/admin/v1/keys", { label, account_id: holder.id });
  expect(r.status, r.label).toBe(201);
  expected.push({ action: "key.create", actor: "admin-token", before: false, label });
  return r.json.data.result.id;
}

const asHolder = () => ({ cookie: holder.cookie });
const asOperator = () => ({ cookie: operatorCookie });
const ok = (r: { status: number; label: string }, status: number) => expect(r.status, r.label).toBe(status);

/** An alert endpoint of the holder's account (its own entry, counted); its secret kept to be looked for in the trail. */
async function holderWebhook(): Promise<string> {
  const r = await adminCall("POST", "/admin/v1/webhooks", {
    account_id: holder.id,
    url: "http://127.0.0.1:9/hook",
    events: ["balance.low"],
    balance_below: 1000,
  });
  expect(r.status, r.label).toBe(201);
  secrets.push(r.json.data.result.secret);
  expected.push({ action: "webhook.create", actor: "admin-token", before: false, label: "webhook" });
  return r.json.data.result.id;
}

/** A delivery of `webhook`: a take-back under its threshold (a credits.grant entry, counted) raises balance.low. */
async function holderDelivery(webhook: string): Promise<string> {
  ok(await adminCall("POST", `/admin/v1/accounts/${holder.id}/credits`, { amount: 2000 }), 200);
  ok(await adminCall("POST", `/admin/v1/accounts/${holder.id}/credits`, { amount: -2000 }), 200);
  expected.push(
    { action: "credits.grant", actor: "admin-token", before: true, label: "up" },
    { action: "credits.grant", actor: "admin-token", before: true, label: "down" },
  );
  const list = await adminCall("GET", `/admin/v1/webhooks/${webhook}/deliveries`);
  expect(list.json.data.result.data.length, list.label).toBeGreaterThan(0);
  return list.json.data.result.data[0].id;
}

/** Who the holder's dashboard changes name as their actor: its member's id once accounts have members (docs/teams.md), else the account's. */
function holderActor(): string {
  const db = new Database(gw.dbPath, { readonly: true });
  try {
    return (
      db.query<{ id: string }, [string]>("SELECT id FROM members WHERE account_id = ? AND role = 'owner'").get(holder.id)?.id ??
      holder.id
    );
  } catch {
    return holder.id;
  } finally {
    db.close();
  }
}

/** The secret in an answer (a new endpoint's or a rotation's), kept to be looked for in the trail. */
const keepSecret = (text: string) => {
  for (const s of text.match(/whsec_[0-9a-f]{64}/g) ?? []) secrets.push(s);
};

/** An invitation to the holder's account through the admin API (its own entry, counted): the link's path. */
async function holderInvite(email: string, role: string): Promise<string> {
  const r = await adminCall("POST", `/admin/v1/accounts/${holder.id}/members`, { email, role });
  ok(r, 201);
  expected.push({ action: "member.invite", actor: "admin-token", before: false, label: `invite ${email}` });
  const url = new URL(r.json.data.result.url);
  secrets.push(url.searchParams.get("token") as string);
  return url.pathname + url.search;
}

/** A member of the holder's account, invited and joined (two entries, counted): its id. */
async function holderMember(email: string, role: string): Promise<string> {
  const path = await holderInvite(email, role);
  const joined = await call("POST", path, { form: { password: "a member's own password" } });
  ok(joined, 303);
  secrets.push(joined.cookie.split("=")[1] ?? "");
  expected.push({ action: "member.join", actor: "self-member", before: false, label: `join ${email}` });
  const list = await adminCall("GET", `/admin/v1/accounts/${holder.id}/members`);
  return list.json.data.result.data.find((m: { email: string }) => m.email === email).id;
}

/** The member-change recipes (docs/teams.md): each writes one entry, its before and after the member's role. */
const MEMBER_RECIPES: Record<string, () => Promise<unknown>> = {
  "POST /admin/v1/accounts/:id/members": async () => {
    const e = await oneEntry(
      { action: "member.invite", actor: "admin-token", account: holder.id, before: false, label: "invite" },
      async () =>
        ok(
          await adminCall("POST", `/admin/v1/accounts/${holder.id}/members`, { email: "invited@example.com", role: "viewer" }),
          201,
        ),
    );
    expect(e.after).toMatchObject({ email: "invited@example.com", role: "viewer" });
    expect(e.target_id).toStartWith("inv_");
  },
  "PATCH /admin/v1/accounts/:id/members/:member_id": async () => {
    const id = await holderMember("role@example.com", "viewer");
    const e = await oneEntry(
      { action: "member.role.update", actor: "admin-token", account: holder.id, before: true, label: "role" },
      async () => ok(await adminCall("PATCH", `/admin/v1/accounts/${holder.id}/members/${id}`, { role: "developer" }), 200),
    );
    expect([e.before, e.after, e.target_id]).toEqual([{ role: "viewer" }, { role: "developer" }, id]);
  },
  "DELETE /admin/v1/accounts/:id/members/:member_id": async () => {
    const id = await holderMember("gone@example.com", "viewer");
    await oneEntry(
      { action: "member.remove", actor: "admin-token", account: holder.id, before: true, label: "remove" },
      async () => ok(await adminCall("DELETE", `/admin/v1/accounts/${holder.id}/members/${id}`), 200),
    );
  },
  "POST /dashboard/join/:account": async () => {
    const path = await holderInvite("joiner@example.com", "developer");
    const e = await oneEntry(
      { action: "member.join", actor: "self-member", account: holder.id, before: false, label: "join" },
      async () => {
        const r = await call("POST", path, { form: { name: "Jo", password: "a joiner's own password" } });
        ok(r, 303);
        secrets.push("a joiner's own password", r.cookie.split("=")[1] ?? "");
      },
    );
    expect(e.actor).toBe(e.target_id as string);
    expect(e.after).toEqual({ email: "joiner@example.com", role: "developer" });
  },
  "POST /dashboard/members": () =>
    oneEntry(
      { action: "member.invite", actor: holderActor(), account: holder.id, before: false, label: "form invite" },
      async () => {
        const posted = await call("POST", "/dashboard/members", {
          form: { email: "formed@example.com", role: "admin" },
          headers: asHolder(),
        });
        ok(posted, 303);
        const r = await pageAfter(posted, asHolder());
        ok(r, 200);
        secrets.push(/token=(inv_[A-Za-z0-9]+)/.exec(r.text)?.[1] ?? "");
      },
    ),
  "POST /dashboard/members/:id/role": async () => {
    const id = await holderMember("formrole@example.com", "viewer");
    await oneEntry({ action: "member.role.update", actor: holderActor(), before: true, label: "form role" }, async () =>
      ok(await call("POST", `/dashboard/members/${id}/role`, { form: { role: "admin" }, headers: asHolder() }), 303),
    );
  },
  "POST /dashboard/members/:id/remove": async () => {
    const id = await holderMember("formremove@example.com", "viewer");
    await oneEntry({ action: "member.remove", actor: holderActor(), before: true, label: "form remove" }, async () =>
      ok(await call("POST", `/dashboard/members/${id}/remove`, { form: {}, headers: asHolder() }), 303),
    );
  },
};

/** One recipe per state-changing route: the change, made for real, and what its entry must say. */
const RECIPES: Record<string, () => Promise<unknown>> = {
  "POST /admin/v1/webhooks": async () => {
    const e = await oneEntry(
      { action: "webhook.create", actor: "admin-token", account: holder.id, before: false, label: "webhook" },
      async () => {
        const r = await adminCall("POST", "/admin/v1/webhooks", {
          account_id: holder.id,
          url: "http://127.0.0.1:9/a",
          events: ["key.budget_80"],
        });
        ok(r, 201);
        keepSecret(r.text);
      },
    );
    expect(e.after).toMatchObject({ url: "http://127.0.0.1:9/a", events: ["key.budget_80"] });
  },
  "POST /admin/v1/webhooks/:id/rotate-secret": async () => {
    const id = await holderWebhook();
    await oneEntry({ action: "webhook.rotate_secret", actor: "admin-token", before: true, label: "rotate" }, async () => {
      const r = await adminCall("POST", `/admin/v1/webhooks/${id}/rotate-secret`);
      ok(r, 200);
      keepSecret(r.text);
    });
  },
  "POST /admin/v1/webhooks/:id/deliveries/:delivery_id/resend": async () => {
    const id = await holderWebhook();
    const delivery = await holderDelivery(id);
    await oneEntry({ action: "webhook.resend", actor: "admin-token", before: true, label: "resend" }, async () =>
      ok(await adminCall("POST", `/admin/v1/webhooks/${id}/deliveries/${delivery}/resend`), 200),
    );
  },
  "DELETE /admin/v1/webhooks/:id": async () => {
    const id = await holderWebhook();
    await oneEntry({ action: "webhook.remove", actor: "admin-token", before: true, label: "remove webhook" }, async () =>
      ok(await adminCall("DELETE", `/admin/v1/webhooks/${id}`), 200),
    );
  },
  "POST /dashboard/alerts": () =>
    oneEntry(
      { action: "webhook.create", actor: holderActor(), account: holder.id, before: false, label: "form webhook" },
      async () => {
        const form = { url: "http://127.0.0.1:9/form", events: "key.budget_100" };
        const posted = await call("POST", "/dashboard/alerts", { form, headers: asHolder() });
        ok(posted, 303);
        const r = await pageAfter(posted, asHolder());
        ok(r, 200);
        keepSecret(r.text);
      },
    ),
  "POST /dashboard/alerts/:id/rotate": async () => {
    const id = await holderWebhook();
    await oneEntry({ action: "webhook.rotate_secret", actor: holderActor(), before: true, label: "form rotate" }, async () => {
      const posted = await call("POST", `/dashboard/alerts/${id}/rotate`, { form: {}, headers: asHolder() });
      ok(posted, 303);
      const r = await pageAfter(posted, asHolder());
      ok(r, 200);
      keepSecret(r.text);
    });
  },
  "POST /dashboard/alerts/:id/remove": async () => {
    const id = await holderWebhook();
    await oneEntry({ action: "webhook.remove", actor: holderActor(), before: true, label: "form remove" }, async () =>
      ok(await call("POST", `/dashboard/alerts/${id}/remove`, { form: {}, headers: asHolder() }), 303),
    );
  },
  "POST /dashboard/alerts/:id/deliveries/:delivery_id/resend": async () => {
    const id = await holderWebhook();
    const delivery = await holderDelivery(id);
    await oneEntry({ action: "webhook.resend", actor: holderActor(), before: true, label: "form resend" }, async () =>
      ok(await call("POST", `/dashboard/alerts/${id}/deliveries/${delivery}/resend`, { form: {}, headers: asHolder() }), 303),
    );
  },
  "POST /admin/v1/accounts": () =>
    oneEntry({ action: "account.create", actor: "admin-token", before: false, label: "admin account" }, async () => {
      const password = "a password for the admin's account";
      secrets.push(password);
      ok(await adminCall("POST", "/admin/v1/accounts", { email: "second@example.com", password, plan: "gold" }), 201);
    }),
  "PATCH /admin/v1/accounts/:id": async () => {
    const e = await oneEntry(
      { action: "account.tags.update", actor: "admin-token", account: holder.id, before: true, label: "tags" },
      async () => ok(await adminCall("PATCH", `/admin/v1/accounts/${holder.id}`, { tags: { region: "eu" } }), 200),
    );
    expect(e.before).toEqual({ tags: null });
    expect(e.after).toEqual({ tags: { region: "eu" } });
  },
  "POST /admin/v1/accounts/:id/credits": async () => {
    const e = await oneEntry(
      { action: "credits.grant", actor: "admin-token", account: holder.id, before: true, label: "grant" },
      async () => ok(await adminCall("POST", `/admin/v1/accounts/${holder.id}/credits`, { amount: 7, reason: "goodwill" }), 200),
    );
    expect(e.after).toMatchObject({ amount: 7, reason: "goodwill", balance: (e.before?.balance as number) + 7 });
  },
  "POST /admin/v1/keys": () =>
    oneEntry({ action: "key.create", actor: "admin-token", account: holder.id, before: false, label: "admin key" }, async () =>
      ok(await adminCall("POST", "/admin/v1/keys", { label: "admin-made", account_id: holder.id }), 201),
    ),
  "PATCH /admin/v1/keys/:id": async () => {
    const id = await holderKey("to limit");
    const e = await oneEntry(
      { action: "key.policy.update", actor: "admin-token", before: true, label: "admin policy" },
      async () => ok(await adminCall("PATCH", `/admin/v1/keys/${id}`, { policy: { rate_limit_per_minute: 30 } }), 200),
    );
    expect(e.before).toEqual({ rate_limit_per_minute: null });
    expect(e.after).toEqual({ rate_limit_per_minute: 30 });
    expect(e.target_id).toBe(id);
  },
  "DELETE /admin/v1/keys/:id": async () => {
    const id = await holderKey("to revoke");
    const e = await oneEntry({ action: "key.revoke", actor: "admin-token", before: true, label: "admin revoke" }, async () =>
      ok(await adminCall("DELETE", `/admin/v1/keys/${id}`), 200),
    );
    expect([e.before, e.after]).toEqual([{ status: "active" }, { status: "revoked" }]);
  },
  "POST /dashboard/keys": () =>
    oneEntry({ action: "key.create", actor: holderActor(), account: holder.id, before: false, label: "form key" }, async () =>
      ok(
        await pageAfter(
          await call("POST", "/dashboard/keys", { form: { label: "from the form" }, headers: asHolder() }),
          asHolder(),
        ),
        200,
      ),
    ),
  "POST /dashboard/keys/:id/revoke": async () => {
    const id = await holderKey("form revoke");
    await oneEntry({ action: "key.revoke", actor: holderActor(), before: true, label: "form revoke" }, async () =>
      ok(await call("POST", `/dashboard/keys/${id}/revoke`, { form: {}, headers: asHolder() }), 303),
    );
  },
  "POST /dashboard/keys/:id/policy": async () => {
    const id = await holderKey("form policy");
    const e = await oneEntry(
      { action: "key.policy.update", actor: holderActor(), before: true, label: "form policy" },
      async () =>
        ok(
          await call("POST", `/dashboard/keys/${id}/policy`, { form: { rate_limit_per_minute: "20" }, headers: asHolder() }),
          303,
        ),
    );
    expect(e.after).toEqual({ rate_limit_per_minute: 20 });
  },
  "POST /dashboard/password": async () => {
    const next = "the holder's second password";
    secrets.push(next);
    await oneEntry(
      { action: "password.change", actor: holderActor(), account: holder.id, before: true, label: "password" },
      async () => {
        const r = await call("POST", "/dashboard/password", { form: { current: holder.password, next }, headers: asHolder() });
        ok(r, 303);
        holder.cookie = r.cookie;
        holder.password = next;
        secrets.push(r.cookie.split("=")[1] ?? "");
      },
    );
  },
  "POST /dashboard/api/keys": () =>
    oneEntry({ action: "key.create", actor: holderActor(), account: holder.id, before: false, label: "json key" }, async () =>
      ok(await call("POST", "/dashboard/api/keys", { body: { label: "from the api" }, headers: asHolder() }), 201),
    ),
  "DELETE /dashboard/api/keys/:id": async () => {
    const id = await holderKey("json revoke");
    await oneEntry({ action: "key.revoke", actor: holderActor(), before: true, label: "json revoke" }, async () =>
      ok(await call("DELETE", `/dashboard/api/keys/${id}`, { headers: asHolder() }), 200),
    );
  },
  "PATCH /dashboard/api/keys/:id": async () => {
    const id = await holderKey("json policy");
    await oneEntry({ action: "key.policy.update", actor: holderActor(), before: true, label: "json policy" }, async () =>
      ok(
        await call("PATCH", `/dashboard/api/keys/${id}`, {
          body: { policy: { rate_limit_per_minute: 10 } },
          headers: asHolder(),
        }),
        200,
      ),
    );
  },
  "POST /dashboard/signup": async () => {
    const password = "a sign-up's own password";
    secrets.push(password);
    // the actor of a sign-up is the new account itself
    const e = await oneEntry({ action: "account.signup", actor: "self", before: false, label: "signup" }, async () =>
      ok(await call("POST", "/dashboard/signup", { form: { email: "newcomer@example.com", password } }), 303),
    );
    expect(e.after).toMatchObject({ email: "newcomer@example.com" });
  },
  "POST /dashboard/operator/accounts": () =>
    oneEntry({ action: "account.create", actor: "operator", before: false, label: "console account" }, async () => {
      const password = "the console's account password";
      secrets.push(password);
      ok(
        await call("POST", "/dashboard/operator/accounts", {
          form: { email: "console@example.com", password, credits: "3" },
          headers: asOperator(),
        }),
        303,
      );
    }),
  "POST /dashboard/operator/accounts/:id/credits": () =>
    oneEntry({ action: "credits.grant", actor: "operator", account: holder.id, before: true, label: "console grant" }, async () =>
      ok(
        await call("POST", `/dashboard/operator/accounts/${holder.id}/credits`, {
          form: { amount: "-2" },
          headers: asOperator(),
        }),
        303,
      ),
    ),
  "POST /dashboard/operator/accounts/:id/plan": async () => {
    const e = await oneEntry(
      { action: "plan.change", actor: "operator", account: holder.id, before: true, label: "plan" },
      async () =>
        ok(
          await call("POST", `/dashboard/operator/accounts/${holder.id}/plan`, { form: { plan: "gold" }, headers: asOperator() }),
          303,
        ),
    );
    expect([e.before, e.after]).toEqual([{ plan: "free" }, { plan: "gold" }]);
  },
  "POST /dashboard/operator/keys/:id/revoke": async () => {
    const id = await holderKey("console revoke");
    await oneEntry({ action: "key.revoke", actor: "operator", before: true, label: "console revoke" }, async () =>
      ok(await call("POST", `/dashboard/operator/keys/${id}/revoke`, { form: {}, headers: asOperator() }), 303),
    );
  },
  "POST /dashboard/operator/keys/:id/policy": async () => {
    const id = await holderKey("console policy");
    await oneEntry({ action: "key.policy.update", actor: "operator", before: true, label: "console policy" }, async () =>
      ok(
        await call("POST", `/dashboard/operator/keys/${id}/policy`, {
          form: { monthly_credit_limit: "40" },
          headers: asOperator(),
        }),
        303,
      ),
    );
  },
  ...MEMBER_RECIPES,
};

describe("audit trail on SQLite: every change of state writes one entry", () => {
  test("every state-changing admin, dashboard and console route has a recipe here, or a reason it writes none", () => {
    const changing = gw.routes
      .filter((r) => STATE_CHANGING.has(r.method) && (r.path.startsWith("/admin/") || r.path.startsWith("/dashboard")))
      .map((r) => `${r.method} ${r.path}`);
    expect(changing.length).toBeGreaterThan(15);
    const covered = new Set([...Object.keys(RECIPES), ...Object.keys(NO_ENTRY)]);
    expect(changing.filter((r) => !covered.has(r))).toEqual([]);
    // and no recipe names a route that is gone
    expect([...covered].filter((r) => !changing.includes(r))).toEqual([]);
  });

  test("each route's change writes exactly one entry, with its actor, account, before and after", async () => {
    for (const [route, recipe] of Object.entries(RECIPES)) {
      try {
        await recipe();
      } catch (e) {
        throw new Error(`${route}: ${(e as Error).message}`);
      }
    }
  });

  test("every state-changing CLI verb writes exactly one entry (actor cli, no client address); the others none", async () => {
    const changing = CLI_VERBS.filter((v) => !READ_ONLY_VERBS.has(v) && !(v in PG_ONLY_VERBS));
    const cliAccount = holder.id;
    let keyId = "";
    let webhookId = "";
    let cliMember = "";
    const verbs: Record<string, { want: Omit<Expect, "actor" | "label">; run: () => void }> = {
      "keys create": {
        want: { action: "key.create", account: cliAccount, before: false },
        run: () => {
          const r = textai(["keys", "create", "--label", "cli key", "--account", cliAccount, "--json"]);
          expect(r.code, r.err).toBe(0);
          keyId = JSON.parse(r.out).id;
        },
      },
      "keys update": {
        want: { action: "key.policy.update", before: true },
        run: () => expect(textai(["keys", "update", keyId, "--rpm", "5"]).code).toBe(0),
      },
      "keys revoke": {
        want: { action: "key.revoke", before: true },
        run: () => expect(textai(["keys", "revoke", keyId]).code).toBe(0),
      },
      "accounts create": {
        want: { action: "account.create", before: false },
        run: () => {
          secrets.push("the cli account's password");
          expect(textai(["accounts", "create", "--email", "cli@example.com"], "the cli account's password").code).toBe(0);
        },
      },
      "accounts set-login": {
        want: { action: "login.set", account: cliAccount, before: true },
        run: () => {
          secrets.push("a password set by the cli");
          const r = textai(
            ["accounts", "set-login", "--account", cliAccount, "--email", "holder@example.com"],
            "a password set by the cli",
          );
          expect(r.code, r.err).toBe(0);
          // it ended the holder's sessions: the dashboard test signs in again with it
          holder.password = "a password set by the cli";
        },
      },
      "members add": {
        want: { action: "member.invite", account: cliAccount, before: false },
        run: () => {
          const r = textai([
            "members",
            "add",
            "--account",
            cliAccount,
            "--email",
            "cli-member@example.com",
            "--role",
            "viewer",
            "--json",
          ]);
          expect(r.code, r.err).toBe(0);
          const url = new URL(JSON.parse(r.out).url);
          expect(url.pathname).toBe(`/dashboard/join/${cliAccount}`);
          secrets.push(url.searchParams.get("token") as string);
        },
      },
      "members role": {
        want: { action: "member.role.update", account: cliAccount, before: true },
        run: () => {
          const list = textai(["members", "list", "--account", cliAccount, "--json"]);
          cliMember = (JSON.parse(list.out) as { id: string; role: string }[]).find((m) => m.role !== "owner")?.id as string;
          const r = textai(["members", "role", "--account", cliAccount, "--member", cliMember, "--role", "viewer", "--json"]);
          expect(r.code, r.err).toBe(0);
        },
      },
      "members remove": {
        want: { action: "member.remove", account: cliAccount, before: true },
        run: () => {
          const owner = textai(["members", "list", "--account", cliAccount, "--json"]);
          const ownerId = (JSON.parse(owner.out) as { id: string; role: string }[]).find((m) => m.role === "owner")?.id as string;
          // the last owner is refused (nothing written), then another member is removed
          const last = textai(["members", "remove", "--account", cliAccount, "--member", ownerId]);
          expect(last.code).toBe(1);
          expect(last.err).toContain("last owner");
          expect(textai(["members", "remove", "--account", cliAccount, "--member", cliMember]).code).toBe(0);
        },
      },
      "accounts tags": {
        want: { action: "account.tags.update", account: cliAccount, before: true },
        run: () => expect(textai(["accounts", "tags", "--account", cliAccount, "--tags", "region=us"]).code).toBe(0),
      },
      "credits grant": {
        want: { action: "credits.grant", account: cliAccount, before: true },
        run: () => expect(textai(["credits", "grant", "--account", cliAccount, "--amount", "3"]).code).toBe(0),
      },
      "webhooks add": {
        want: { action: "webhook.create", account: cliAccount, before: false },
        run: () => {
          const r = textai([
            "webhooks",
            "add",
            "--account",
            cliAccount,
            "--url",
            "http://203.0.113.10/cli",
            "--events",
            "key.budget_80",
            "--json",
          ]);
          expect(r.code, r.err).toBe(0);
          keepSecret(r.out);
          webhookId = JSON.parse(r.out).id;
        },
      },
      "webhooks rotate": {
        want: { action: "webhook.rotate_secret", account: cliAccount, before: true },
        run: () => {
          const r = textai(["webhooks", "rotate", webhookId, "--json"]);
          expect(r.code, r.err).toBe(0);
          keepSecret(r.out);
        },
      },
      "webhooks remove": {
        want: { action: "webhook.remove", account: cliAccount, before: true },
        run: () => expect(textai(["webhooks", "remove", webhookId]).code).toBe(0),
      },
      "credits reconcile": {
        want: { action: "credits.reconcile", account: null, before: true },
        run: () => expect(textai(["credits", "reconcile"]).code).toBe(0),
      },
    };
    expect(changing.filter((v) => !(v in verbs))).toEqual([]);
    expect(Object.keys(verbs).filter((v) => !changing.includes(v))).toEqual([]);
    for (const [verb, { want, run }] of Object.entries(verbs)) {
      const e = await oneEntry({ ...want, actor: "cli", label: `textai ${verb}` }, async () => run());
      expect(e.client, verb).toBeNull();
    }
    // the read-only verbs add nothing
    const n = (await entries()).length;
    for (const args of [
      ["keys", "list"],
      ["usage", "--account", cliAccount],
      ["requests"],
      ["audit", "list"],
      ["audit", "verify"],
      ["webhooks", "list"],
    ])
      expect(textai(args).code, args.join(" ")).toBe(0);
    expect((await entries()).length).toBe(n);
  }, 60_000); // about twenty CLI processes one after another: 7 s alone, past 30 s under a load average of 7 (2026-12-06)

  test("the chain is exactly the changes made, in order, with client addresses, and holds no secret", async () => {
    const all = await entries();
    expect(all.map((e) => e.action)).toEqual(expected.map((w) => w.action));
    expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i + 1));
    for (const e of all.filter((e) => e.actor !== "cli")) expect(e.client, e.action).toBe("127.0.0.1");
    // the whole trail as it is exported, and as it is stored
    const exported = await (await fetch(`${gw.url}/admin/v1/audit?format=json`, { headers: admin })).text();
    expect(JSON.parse(exported).length).toBe(all.length);
    const db = new Database(gw.dbPath, { readonly: true });
    const stored = JSON.stringify(db.query("SELECT * FROM audit_log").all());
    for (const { h } of db.query<{ h: string }, []>("SELECT password_hash AS h FROM members").all()) secrets.push(h);
    db.close();
    expect(secrets.length).toBeGreaterThan(20);
    for (const text of [exported, stored]) {
      for (const s of secrets.filter((s) => s.length >= 8))
        expect(text.includes(s), `a secret in the trail: ${s.slice(0, 12)}…`).toBe(false);
      expect(text).not.toMatch(/tai_live_[A-Za-z0-9]{4,}|\$argon2/);
    }
  });

  test("textai audit verify and GET /admin/v1/audit/verify: the chain is intact", async () => {
    const r = textai(["audit", "verify", "--json"]);
    expect(r.code, r.err).toBe(0);
    const cli = JSON.parse(r.out);
    expect(cli).toMatchObject({ ok: true, entries: expected.length });
    const api = await gw.get("/admin/v1/audit/verify", admin);
    expect(api.json.data.result).toEqual(cli);
  });
});

describe("audit trail reads", () => {
  test("an account reads its own entries only, with its key, as a page, CSV and JSON; filters and cursors page them", async () => {
    const key = (await adminCall("POST", "/admin/v1/keys", { label: "reader", account_id: holder.id })).json.data.result
      .key as string;
    const own = await gw.get("/api/v1/account/audit?limit=5", { "x-api-key": key });
    expect(own.status, JSON.stringify(own.json)).toBe(200);
    const page1 = own.json.data.result;
    expect(page1.data.length).toBe(5);
    expect(page1.data.every((e: Entry) => e.account_id === holder.id)).toBe(true);
    expect(typeof own.json.meta.credits_remaining).toBe("number");
    const page2 = (await gw.get(`/api/v1/account/audit?limit=5&cursor=${page1.next_cursor}`, { "x-api-key": key })).json.data
      .result;
    expect(page2.data[0].seq).toBeLessThan(page1.data[4].seq);
    const revokes = (await gw.get("/api/v1/account/audit?action=key.revoke&limit=500", { "x-api-key": key })).json.data.result
      .data;
    expect(revokes.length).toBe(5);
    expect(new Set(revokes.map((e: Entry) => e.actor))).toEqual(new Set(["admin-token", holderActor(), "operator", "cli"]));
    const byOperator = (await gw.get("/api/v1/account/audit?actor=operator&limit=500", { "x-api-key": key })).json.data.result
      .data;
    expect(byOperator.map((e: Entry) => e.action).sort()).toEqual([
      "credits.grant",
      "key.policy.update",
      "key.revoke",
      "plan.change",
    ]);
    const csv = await fetch(`${gw.url}/api/v1/account/audit?format=csv&action=key.revoke`, { headers: { "x-api-key": key } });
    expect(csv.headers.get("content-type")).toStartWith("text/csv");
    const lines = (await csv.text()).trim().split("\r\n");
    expect(lines[0]).toBe("time,seq,id,actor,account_id,action,target_id,before,after,client,prev_hash,hash");
    expect(lines.length).toBe(6);
    const json = await fetch(`${gw.url}/api/v1/account/audit?format=json`, { headers: { "x-api-key": key } });
    const all = (await json.json()) as Entry[];
    expect(all.every((e) => e.account_id === holder.id)).toBe(true);
    // the admin API filters by account; the account's filter cannot widen its own view
    const adminView = (await gw.get(`/admin/v1/audit?account_id=${holder.id}&limit=500`, admin)).json.data.result.data;
    expect(adminView.length).toBe(all.length);
    const other = await gw.get("/api/v1/account/audit?account_id=acc_someone_else&limit=500", { "x-api-key": key });
    expect(other.json.data.result.data.length).toBe(Math.min(500, all.length));
  });

  test("bad filters are refused in the envelope, naming the parameter", async () => {
    for (const [q, param] of [
      ["since=yesterday", "since"],
      ["limit=0", "limit"],
      ["limit=501", "limit"],
      ["cursor=nonsense!", "cursor"],
      ["format=xml", "format"],
      [`actor=${"x".repeat(201)}`, "actor"],
    ]) {
      const r = await gw.get(`/admin/v1/audit?${q}`, admin);
      expect(r.status, q).toBe(400);
      expect(r.json.error, q).toMatchObject({ code: "invalid_request", param });
    }
    const since = await gw.get(`/admin/v1/audit?since=${new Date(Date.now() + 60_000).toISOString()}`, admin);
    expect(since.json.data.result.data).toEqual([]);
  });

  test("the dashboard's Audit page and downloads show the account's entries; the console's every entry", async () => {
    const signedIn = await call("POST", "/dashboard/login", { form: { email: "holder@example.com", password: holder.password } });
    expect(signedIn.status, signedIn.label).toBe(303);
    holder.cookie = signedIn.cookie;
    const pageRes = await fetch(`${gw.url}/dashboard/audit?action=key.revoke`, { headers: asHolder() });
    expect(pageRes.status).toBe(200);
    const htmlText = await pageRes.text();
    expect(htmlText.match(/data-action="key.revoke"/g)?.length).toBe(5);
    const csv = await fetch(`${gw.url}/dashboard/audit.csv`, { headers: asHolder() });
    expect(csv.headers.get("content-disposition")).toContain(".csv");
    const json = (await (
      await fetch(`${gw.url}/dashboard/audit.json?actor=operator`, { headers: asHolder() })
    ).json()) as Entry[];
    expect(json.length).toBe(4);
    const bad = await fetch(`${gw.url}/dashboard/audit?since=soon`, { headers: asHolder() });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("since must be an ISO 8601");
    const console_ = await (await fetch(`${gw.url}/dashboard/operator/audit?limit=500`, { headers: asOperator() })).text();
    expect(console_).toContain('data-action="account.signup"');
  });
});

test("docs/audit.md's check of an entry's hash, run as written, gives every exported entry's hash", async () => {
  const doc = readFileSync(join(ROOT, "docs/audit.md"), "utf8");
  const code = /```js\n([\s\S]*?)```/.exec(doc)?.[1] ?? "";
  expect(code).toContain("function entryHash");
  const entryHash = new Function("createHash", `${code.replace(/^import .*$/m, "")}\nreturn entryHash;`)(createHash) as (
    e: unknown,
  ) => string;
  const all = (await (await fetch(`${gw.url}/admin/v1/audit?format=json`, { headers: admin })).json()) as { hash: string }[];
  expect(all.length).toBeGreaterThan(20);
  for (const e of all) expect(entryHash(e)).toBe(e.hash);
});

describe("textai audit verify finds a broken chain", () => {
  /** A copy of the gateway's file, its append-only triggers dropped and `tamper` applied, as one with the file's access could. */
  function tampered(name: string, tamper: (db: Database) => void): string {
    const live = new Database(gw.dbPath);
    live.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    live.close();
    const path = join(gw.dir, `${name}.db`);
    copyFileSync(gw.dbPath, path);
    const db = new Database(path);
    db.exec("DROP TRIGGER audit_log_no_update; DROP TRIGGER audit_log_no_delete;");
    tamper(db);
    db.close();
    return path;
  }

  test("the triggers refuse an edit and a removal of an entry", () => {
    const db = new Database(gw.dbPath);
    expect(() => db.exec("UPDATE audit_log SET actor = 'nobody' WHERE seq = 1")).toThrow(/append-only/);
    expect(() => db.exec("DELETE FROM audit_log WHERE seq = 1")).toThrow(/append-only/);
    db.close();
  });

  test("an edited row: the first broken link is that entry, and the command exits 1", () => {
    const path = tampered("edited", (db) =>
      db.exec(`UPDATE audit_log SET after = '{"amount":7000,"balance":7057,"reason":"goodwill"}' WHERE seq = 4`),
    );
    const r = textai(["audit", "verify"], undefined, path);
    expect(r.code).toBe(1);
    expect(r.err).toContain("Audit chain broken at entry 4");
    expect(r.err).toContain("was changed after it was written");
  });

  test("a deleted row: the entry missing is named", () => {
    const path = tampered("deleted", (db) => db.exec("DELETE FROM audit_log WHERE seq = 6"));
    const r = textai(["audit", "verify", "--json"], undefined, path);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out)).toMatchObject({ ok: false, entries: 5, broken: { seq: 6 } });
    expect(JSON.parse(r.out).broken.problem).toContain("entry 6 is missing");
  });

  test("an edited row whose hash was made again, and the last rows removed with the head left: each is found", async () => {
    const rehashed = tampered("rehashed", (db) => {
      const { entryHash } = require("../../src/audit/chain") as typeof import("../../src/audit/chain");
      const row = db
        .query<Record<string, unknown>, []>(
          "SELECT seq, id, at, actor, account_id AS accountId, action, target_id AS targetId, before, after, client, prev_hash AS prevHash FROM audit_log WHERE seq = 3",
        )
        .get()!;
      const forged = { ...row, actor: "someone-else" };
      db.query("UPDATE audit_log SET actor = ?, hash = ? WHERE seq = 3").run(forged.actor, entryHash(forged as never));
    });
    const r1 = await new SqliteAuditTrail(new Database(rehashed)).verify();
    expect(r1).toMatchObject({ ok: false, broken: { seq: 4 } });
    if (!r1.ok) expect(r1.broken.problem).toContain("does not follow entry 3");
    const cut = tampered("cut", (db) => db.exec(`DELETE FROM audit_log WHERE seq > ${expected.length - 2}`));
    const r2 = await new SqliteAuditTrail(new Database(cut)).verify();
    expect(r2).toMatchObject({ ok: false, entries: expected.length - 2, broken: { seq: expected.length - 1 } });
  });
});
