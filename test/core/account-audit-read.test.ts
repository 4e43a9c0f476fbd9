/**
 * Who reads an account's audit trail with a key (CONTRACT section 17: "readable per account by its
 * owners and admins"; docs/audit.md#reading-it), through a real server on a real SQLite file:
 * `GET /api/v1/account/audit` answers a key made with the admin API (no member made it) and a key
 * made in the dashboard by a member who is, at that request, an owner or admin; a developer's key,
 * a demoted admin's key (at its next read) and a removed member's key are refused with 403
 * `forbidden`, saying who may read it. The same rule on PostgreSQL: test/cluster/members-nodes.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { AUDIT_READERS } from "../../src/http/routes/audit";
import { startGateway, type TestGateway } from "../helpers/gateway";

const TOKEN = "admin-token-for-the-audit-readers-0123456789";
const admin = { authorization: `Bearer ${TOKEN}` };
const PASSWORD = "a long enough password";

let gw: TestGateway;
let origin: string;
let account: string;

// biome-ignore lint/suspicious/noExplicitAny: the tests walk the envelope; their assertions check its shape
type Json = Record<string, any>;
async function call(
  method: string,
  path: string,
  o: { body?: unknown; form?: Record<string, string>; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { origin, ...o.headers };
  let body: string | undefined;
  if (o.form) {
    headers["content-type"] = "application/x-www-form-urlencoded";
    body = new URLSearchParams(o.form).toString();
  } else if (o.body !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(o.body);
  }
  const res = await fetch(gw.url + path, { method, headers, body, redirect: "manual" });
  const text = await res.text();
  let json: Json = {};
  try {
    json = JSON.parse(text);
  } catch {}
  return {
    status: res.status,
    json,
    text,
    headers: res.headers,
    cookie: (res.headers.get("set-cookie") ?? "").split(";")[0] as string,
    label: `${method} ${path}: ${res.status} ${text.slice(0, 300)}`,
  };
}
const adminCall = (method: string, path: string, body?: unknown) => call(method, path, { body, headers: admin });

/** A member of the account with `role`, joined by its invitation: its id and session cookie. */
async function member(email: string, role: string): Promise<{ id: string; cookie: string }> {
  const inv = await adminCall("POST", `/admin/v1/accounts/${account}/members`, { email, role });
  expect(inv.status, inv.label).toBe(201);
  const url = new URL(inv.json.data.result.url);
  const joined = await call("POST", url.pathname + url.search, { form: { password: PASSWORD } });
  expect(joined.status, joined.label).toBe(303);
  const list = await adminCall("GET", `/admin/v1/accounts/${account}/members`);
  const id = (list.json.data.result.data as { id: string; email: string }[]).find((m) => m.email === email)?.id as string;
  return { id, cookie: joined.cookie };
}

/** A key the signed-in member makes in the dashboard. */
async function dashboardKey(cookie: string, label: string): Promise<string> {
  const r = await call("POST", "/dashboard/api/keys", { body: { label }, headers: { cookie } });
  expect(r.status, r.label).toBe(201);
  return r.json.data.result.key as string;
}

const read = (key: string, query = "limit=5") => call("GET", `/api/v1/account/audit?${query}`, { headers: { "x-api-key": key } });

/** A refusal: 403 forbidden in the envelope, saying who may read the trail. */
function expectRefused(r: Awaited<ReturnType<typeof read>>) {
  expect(r.status, r.label).toBe(403);
  expect(r.json, r.label).toMatchObject({
    success: false,
    code: 403,
    error: { code: "forbidden", type: "permission_error", message: AUDIT_READERS },
  });
  expect(AUDIT_READERS).toContain("readable only by its owners and admins");
  expect(AUDIT_READERS).toContain("admin API or the CLI");
}

beforeAll(async () => {
  gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: TOKEN } });
  origin = new URL(gw.url).origin;
  const made = await adminCall("POST", "/admin/v1/accounts", { email: "owner@readers.example", password: PASSWORD, credits: 20 });
  expect(made.status, made.label).toBe(201);
  account = made.json.data.result.id;
});
afterAll(() => gw.close());

describe("GET /api/v1/account/audit: only keys an owner or admin stands behind", () => {
  test("a developer's key is refused; an admin's and an owner's read; the admin's is refused right after its demotion; an admin-API key reads", async () => {
    const owner = await call("POST", "/dashboard/login", { form: { email: "owner@readers.example", password: PASSWORD } });
    expect(owner.status, owner.label).toBe(303);
    const dev = await member("dev@readers.example", "developer");
    const adm = await member("adm@readers.example", "admin");
    const devKey = await dashboardKey(dev.cookie, "developer's");
    const admKey = await dashboardKey(adm.cookie, "admin's");
    const ownerKey = await dashboardKey(owner.cookie, "owner's");
    const apiKey = (await adminCall("POST", "/admin/v1/keys", { label: "admin API's", account_id: account })).json.data.result
      .key as string;

    expectRefused(await read(devKey));
    // the downloads too
    expectRefused(await read(devKey, "format=csv"));
    expectRefused(await read(devKey, "format=json"));
    // the developer's key still works where a key of the account may go
    expect((await call("GET", "/api/v1/account/usage", { headers: { "x-api-key": devKey } })).status).toBe(200);

    for (const key of [admKey, ownerKey, apiKey]) {
      const r = await read(key);
      expect(r.status, r.label).toBe(200);
      expect(r.json.data.result.data.length).toBe(5);
      expect(r.json.data.result.data.every((e: { account_id: string }) => e.account_id === account)).toBe(true);
    }
    const csv = await read(admKey, "format=csv");
    expect(csv.status, csv.label).toBe(200);
    expect(csv.headers.get("content-type")).toStartWith("text/csv");

    // demoted to developer: the same key is refused at its very next read, and reads again once promoted back
    expect((await adminCall("PATCH", `/admin/v1/accounts/${account}/members/${adm.id}`, { role: "developer" })).status).toBe(200);
    expectRefused(await read(admKey));
    expect((await adminCall("PATCH", `/admin/v1/accounts/${account}/members/${adm.id}`, { role: "viewer" })).status).toBe(200);
    expectRefused(await read(admKey));
    expect((await adminCall("PATCH", `/admin/v1/accounts/${account}/members/${adm.id}`, { role: "admin" })).status).toBe(200);
    expect((await read(admKey)).status).toBe(200);
    // the developer promoted to admin now reads with the key it made as a developer
    expect((await adminCall("PATCH", `/admin/v1/accounts/${account}/members/${dev.id}`, { role: "admin" })).status).toBe(200);
    expect((await read(devKey)).status).toBe(200);

    // a removed member's key (still active: removing a member does not revoke its keys) no longer reads
    expect((await adminCall("DELETE", `/admin/v1/accounts/${account}/members/${adm.id}`)).status).toBe(200);
    expectRefused(await read(admKey));
    // the admin API's key reads throughout
    expect((await read(apiKey)).status).toBe(200);
  });

  test("a key whose allowed_functions leave out `audit` is refused, downloads included; one that lists it reads", async () => {
    const narrowed = await adminCall("POST", "/admin/v1/keys", {
      label: "sentiment only",
      account_id: account,
      policy: { allowed_functions: ["sentiment-analysis"] },
    });
    expect(narrowed.status, narrowed.label).toBe(201);
    const key = narrowed.json.data.result.key as string;
    for (const query of ["limit=5", "format=csv", "format=json"]) {
      const r = await read(key, query);
      expect(r.status, r.label).toBe(403);
      expect(r.json.error.code, r.label).toBe("forbidden");
      expect(r.json.error.message, r.label).toContain("may not call audit");
      expect(r.text).not.toContain("@readers.example");
    }
    // the account's own figures stay open to it
    expect((await call("GET", "/api/v1/account/usage", { headers: { "x-api-key": key } })).status).toBe(200);
    const listed = await adminCall("POST", "/admin/v1/keys", {
      label: "sentiment and audit",
      account_id: account,
      policy: { allowed_functions: ["sentiment-analysis", "audit"] },
    });
    expect((await read(listed.json.data.result.key as string)).status).toBe(200);
  });
});
