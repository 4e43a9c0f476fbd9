/**
 * Members and roles (docs/teams.md, CONTRACT section 17) through a real server on a real SQLite
 * file: the login an account is made with is its first owner; invitations by a one-time link
 * (expired, reused, for another account, unknown: each refused, saying why); the last owner cannot
 * leave, be removed or be demoted; a role change counts from the member's next request and a
 * removed member's sessions stop; a developer sees and revokes only the keys it made.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";

const TOKEN = "admin-token-for-the-members-test-0123456789";
const admin = { authorization: `Bearer ${TOKEN}` };
const PASSWORD = "a long enough password";

let gw: TestGateway;
let origin: string;

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
  const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0] as string;
  return {
    status: res.status,
    json,
    text,
    cookie,
    /** every cookie it set, as name=value */
    cookies: res.headers.getSetCookie().map((c) => c.split(";")[0] as string),
    location: res.headers.get("location"),
    label: `${method} ${path}: ${res.status} ${text.slice(0, 300)}`,
  };
}
const adminCall = (method: string, path: string, body?: unknown) => call(method, path, { body, headers: admin });

/**
 * A form as a browser sends it: its answer, a 303 whether it was done or refused (Post/Redirect/Get),
 * and the page it leads to, asked with the cookies the answer set (the flash: a refusal's page has
 * the refusal's status and says why).
 */
async function submitted(path: string, o: { form: Record<string, string>; headers?: Record<string, string> }) {
  const posted = await call("POST", path, o);
  expect(posted.status, posted.label).toBe(303);
  const cookie = [o.headers?.cookie, ...posted.cookies].filter(Boolean).join("; ");
  return { posted, page: await call("GET", posted.location as string, { headers: { cookie } }) };
}
/** what a browser shows after a link's form or its GET */
const opened = async (method: string, path: string) =>
  method === "POST" ? (await submitted(path, { form: { password: PASSWORD } })).page : call(method, path);

async function newAccount(email: string): Promise<{ id: string; cookie: string }> {
  const made = await adminCall("POST", "/admin/v1/accounts", { email, password: PASSWORD, credits: 20 });
  expect(made.status, made.label).toBe(201);
  const signedIn = await call("POST", "/dashboard/login", { form: { email, password: PASSWORD } });
  expect(signedIn.status, signedIn.label).toBe(303);
  return { id: made.json.data.result.id, cookie: signedIn.cookie };
}

/** An invitation through the admin API: its path (the URL without the origin) and its answer. */
async function invite(account: string, email: string, role: string) {
  const r = await adminCall("POST", `/admin/v1/accounts/${account}/members`, { email, role });
  expect(r.status, r.label).toBe(201);
  const url = new URL(r.json.data.result.url);
  tokens.push(url.searchParams.get("token") as string);
  return { path: url.pathname + url.search, token: url.searchParams.get("token") as string, result: r.json.data.result };
}

/** Opens an invitation's link and joins: the new member's session cookie. */
async function join(path: string, name = "New Member"): Promise<string> {
  const r = await call("POST", path, { form: { name, password: PASSWORD } });
  expect(r.status, r.label).toBe(303);
  expect(r.location).toBe("/dashboard");
  return r.cookie;
}

/** every invitation token the tests were given: none may reach a log line */
const tokens: string[] = [];
let acme: { id: string; cookie: string };
let other: { id: string; cookie: string };

beforeAll(async () => {
  gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: TOKEN } });
  origin = new URL(gw.url).origin;
  acme = await newAccount("owner@acme.example");
  other = await newAccount("owner@other.example");
});
afterAll(() => gw.close());

describe("members", () => {
  test("the login an account is made with is its first member, an owner", async () => {
    const r = await adminCall("GET", `/admin/v1/accounts/${acme.id}/members`);
    expect(r.status, r.label).toBe(200);
    expect(r.json.data.result.data).toEqual([
      {
        id: expect.stringMatching(/^mem_/),
        account_id: acme.id,
        email: "owner@acme.example",
        name: null,
        role: "owner",
        created_at: expect.any(String),
      },
    ]);
    const missing = await adminCall("GET", "/admin/v1/accounts/acc_none/members");
    expect(missing.status, missing.label).toBe(404);
  });

  test("an invitation: a one-time URL valid 72 hours, only its hash stored; joining signs the member in with its role", async () => {
    const before = Date.now();
    const { path, token, result } = await invite(acme.id, "Dev@Acme.example", "developer");
    expect(token).toMatch(/^inv_[A-Za-z0-9]{40}$/);
    expect(result).toMatchObject({ email: "dev@acme.example", role: "developer", account_id: acme.id });
    const hours = (Date.parse(result.expires_at) - before) / 3_600_000;
    expect(hours).toBeGreaterThan(71.9);
    expect(hours).toBeLessThan(72.1);
    const db = new Database(gw.dbPath, { readonly: true });
    const rows = db.query<{ token_hash: string }, []>("SELECT token_hash FROM invitations").all();
    db.close();
    expect(rows.some((r) => r.token_hash === new Bun.CryptoHasher("sha256").update(token).digest("hex"))).toBe(true);
    expect(JSON.stringify(rows)).not.toContain(token);
    const page = await call("GET", path);
    expect(page.status, page.label).toBe(200);
    expect(page.text).toContain("dev@acme.example");
    const cookie = await join(path, "Dee Veloper");
    const overview = await call("GET", "/dashboard/api/overview", { headers: { cookie } });
    expect(overview.status, overview.label).toBe(200);
    expect(overview.json.data.result.email).toBe("dev@acme.example");
    // a member signs in with its own email and password afterwards
    const again = await call("POST", "/dashboard/login", { form: { email: "dev@acme.example", password: PASSWORD } });
    expect(again.status, again.label).toBe(303);
    const list = (await adminCall("GET", `/admin/v1/accounts/${acme.id}/members`)).json.data.result.data;
    expect(list.map((m: Json) => [m.email, m.name, m.role])).toEqual([
      ["owner@acme.example", null, "owner"],
      ["dev@acme.example", "Dee Veloper", "developer"],
    ]);
  });

  test("a used, an expired, another account's and an unknown link are refused with a page that says why, and change nothing", async () => {
    const used = await invite(acme.id, "once@acme.example", "viewer");
    await join(used.path);
    for (const method of ["GET", "POST"]) {
      const r = await opened(method, used.path);
      expect(r.status, r.label).toBe(410);
      expect(r.text).toContain("already been used");
    }
    const late = await invite(acme.id, "late@acme.example", "viewer");
    const db = new Database(gw.dbPath);
    db.query("UPDATE invitations SET expires_at = ? WHERE id = ?").run(Date.now() - 1, late.result.id);
    db.close();
    for (const method of ["GET", "POST"]) {
      const r = await opened(method, late.path);
      expect(r.status, r.label).toBe(410);
      expect(r.text).toContain("has expired");
    }
    // acme's invitation under the other account's path
    const misplaced = await invite(acme.id, "lost@acme.example", "admin");
    const wrong = misplaced.path.replace(acme.id, other.id);
    for (const method of ["GET", "POST"]) {
      const r = await opened(method, wrong);
      expect(r.status, r.label).toBe(403);
      expect(r.text).toContain("for another account");
    }
    const unknown = await call("GET", `/dashboard/join/${acme.id}?token=inv_notARealToken`);
    expect(unknown.status, unknown.label).toBe(404);
    expect(unknown.text).toContain("not valid");
    const emails = (await adminCall("GET", `/admin/v1/accounts/${acme.id}/members`)).json.data.result.data.map(
      (m: Json) => m.email,
    );
    expect(emails).not.toContain("late@acme.example");
    expect(emails).not.toContain("lost@acme.example");
    // the misplaced link still works where it belongs
    await join(misplaced.path);
    // an email that is already a member's cannot be invited again, nor a bad role
    const taken = await adminCall("POST", `/admin/v1/accounts/${other.id}/members`, {
      email: "owner@acme.example",
      role: "viewer",
    });
    expect(taken.status, taken.label).toBe(409);
    const badRole = await adminCall("POST", `/admin/v1/accounts/${acme.id}/members`, {
      email: "x@acme.example",
      role: "superuser",
    });
    expect(badRole.status, badRole.label).toBe(400);
    expect(badRole.json.error.code).toBe("invalid_request");
  });

  test("the last owner cannot be demoted, removed or leave; with a second owner it can", async () => {
    const { path } = await invite(other.id, "second@other.example", "admin");
    const second = await join(path);
    const members = (await adminCall("GET", `/admin/v1/accounts/${other.id}/members`)).json.data.result.data as Json[];
    const first = members.find((m) => m.role === "owner")?.id as string;
    const secondId = members.find((m) => m.role === "admin")?.id as string;
    const demote = await adminCall("PATCH", `/admin/v1/accounts/${other.id}/members/${first}`, { role: "admin" });
    expect(demote.status, demote.label).toBe(409);
    expect(demote.json.error.message).toContain("last owner");
    const remove = await adminCall("DELETE", `/admin/v1/accounts/${other.id}/members/${first}`);
    expect(remove.status, remove.label).toBe(409);
    const leave = (await submitted(`/dashboard/members/${first}/remove`, { form: {}, headers: { cookie: other.cookie } })).page;
    expect(leave.status, leave.label).toBe(409);
    expect(leave.text).toContain("last owner");
    // the admin may not touch members at all
    const byAdmin = await call("POST", `/dashboard/members/${first}/role`, {
      form: { role: "viewer" },
      headers: { cookie: second },
    });
    expect(byAdmin.status, byAdmin.label).toBe(403);
    // the owner makes the second an owner, then may step down
    const promote = await call("POST", `/dashboard/members/${secondId}/role`, {
      form: { role: "owner" },
      headers: { cookie: other.cookie },
    });
    expect(promote.status, promote.label).toBe(303);
    const stepDown = await adminCall("PATCH", `/admin/v1/accounts/${other.id}/members/${first}`, { role: "viewer" });
    expect(stepDown.status, stepDown.label).toBe(200);
    expect(stepDown.json.data.result.role).toBe("viewer");
    const lastNow = await adminCall("DELETE", `/admin/v1/accounts/${other.id}/members/${secondId}`);
    expect(lastNow.status, lastNow.label).toBe(409);
    // another account's member is not found under this one
    const elsewhere = await adminCall("PATCH", `/admin/v1/accounts/${acme.id}/members/${secondId}`, { role: "viewer" });
    expect(elsewhere.status, elsewhere.label).toBe(404);
  });

  test("a role change counts from the member's next request; a removed member's session stops", async () => {
    const { path } = await invite(acme.id, "ray@acme.example", "viewer");
    const cookie = await join(path);
    const id = ((await adminCall("GET", `/admin/v1/accounts/${acme.id}/members`)).json.data.result.data as Json[]).find(
      (m) => m.email === "ray@acme.example",
    )?.id as string;
    const asRay = { cookie };
    const refused = await call("POST", "/dashboard/api/keys", { body: { label: "ray's" }, headers: asRay });
    expect(refused.status, refused.label).toBe(403);
    expect(refused.json.error.code).toBe("forbidden");
    expect(refused.json.error.message).toContain("developer");
    const page = await call("GET", "/dashboard/requests", { headers: asRay });
    expect(page.status, page.label).toBe(403);
    expect(page.text).toContain("This needs the developer role or above; you are a viewer.");
    const promoted = await adminCall("PATCH", `/admin/v1/accounts/${acme.id}/members/${id}`, { role: "developer" });
    expect(promoted.status, promoted.label).toBe(200);
    const made = await call("POST", "/dashboard/api/keys", { body: { label: "ray's" }, headers: asRay });
    expect(made.status, made.label).toBe(201);
    // a developer sees and revokes only the keys it made; the owner's and the admin API's are not its own
    const ownerKey = await call("POST", "/dashboard/api/keys", {
      body: { label: "the owner's" },
      headers: { cookie: acme.cookie },
    });
    const apiKey = await adminCall("POST", "/admin/v1/keys", { label: "by the admin API", account_id: acme.id });
    const seen = await call("GET", "/dashboard/api/keys", { headers: asRay });
    expect(seen.json.data.result.data.map((k: Json) => k.id)).toEqual([made.json.data.result.id]);
    const all = await call("GET", "/dashboard/api/keys", { headers: { cookie: acme.cookie } });
    expect(all.json.data.result.data.length).toBeGreaterThanOrEqual(3);
    for (const k of [ownerKey.json.data.result.id, apiKey.json.data.result.id]) {
      const r = await call("DELETE", `/dashboard/api/keys/${k}`, { headers: asRay });
      expect(r.status, r.label).toBe(404);
    }
    const own = await call("DELETE", `/dashboard/api/keys/${made.json.data.result.id}`, { headers: asRay });
    expect(own.status, own.label).toBe(200);
    // a policy is an admin's
    const policy = await call("PATCH", `/dashboard/api/keys/${made.json.data.result.id}`, {
      body: { policy: { rate_limit_per_minute: 1 } },
      headers: asRay,
    });
    expect(policy.status, policy.label).toBe(403);
    const removed = await adminCall("DELETE", `/admin/v1/accounts/${acme.id}/members/${id}`);
    expect(removed.status, removed.label).toBe(200);
    const gone = await call("GET", "/dashboard/api/overview", { headers: asRay });
    expect(gone.status, gone.label).toBe(401);
    expect(gone.json.error.code).toBe("not_signed_in");
    const signedOut = await call("GET", "/dashboard", { headers: asRay });
    expect(signedOut.status).toBe(303);
    expect(signedOut.location).toBe("/dashboard/login");
    const signIn = await submitted("/dashboard/login", { form: { email: "ray@acme.example", password: PASSWORD } });
    expect(signIn.page.status, signIn.page.label).toBe(401);
  });

  test("no log line holds an invitation's token or a password (the links' paths are logged, their tokens never)", async () => {
    await Bun.sleep(50);
    const logs = gw.logs.join("\n");
    expect(logs).toContain("/dashboard/join/");
    expect(tokens.length).toBeGreaterThan(5);
    for (const t of tokens) expect(logs).not.toContain(t);
    expect(logs).not.toContain(PASSWORD);
  });

  test("the Members page: every member reads it; only owners see the forms; an owner's invitation shows its link once", async () => {
    const viewerPage = await call("GET", "/dashboard/members", {
      headers: { cookie: await join((await invite(acme.id, "vi@acme.example", "viewer")).path) },
    });
    expect(viewerPage.status, viewerPage.label).toBe(200);
    // (an email may break after its "@" and before a dot: html.ts breakableEmail)
    expect(viewerPage.text.replace(/<\/?(?:wbr|span)[^>]*>/g, "")).toContain("owner@acme.example");
    expect(viewerPage.text).not.toContain("Invite a member");
    const invited = await submitted("/dashboard/members", {
      form: { email: "form@acme.example", role: "admin" },
      headers: { cookie: acme.cookie },
    });
    const ownerPage = invited.page;
    expect([invited.posted.location, ownerPage.status], ownerPage.label).toEqual(["/dashboard/members", 200]);
    const url = /id="invite-url">([^<]+)</.exec(ownerPage.text)?.[1] as string;
    expect(url).toStartWith(`${origin}/dashboard/join/${acme.id}?token=inv_`);
    // the link is in neither the answer's Location nor in the clear in its cookie, and a reload shows it no more
    const token = new URL(url).searchParams.get("token") as string;
    tokens.push(token);
    expect(JSON.stringify(invited.posted)).not.toContain(token);
    const reloaded = await call("GET", "/dashboard/members", { headers: { cookie: acme.cookie } });
    expect(reloaded.status, reloaded.label).toBe(200);
    expect(reloaded.text).not.toContain(token);
    const bad = await submitted("/dashboard/members", {
      form: { email: "not-an-email", role: "admin" },
      headers: { cookie: acme.cookie },
    });
    expect(bad.page.status, bad.page.label).toBe(400);
    expect(bad.page.text).toContain("not valid");
    // the form again with what was sent
    expect(bad.page.text).toContain('value="not-an-email"');
    expect(bad.page.text).toContain('<option value="admin" selected>admin</option>');
  });
});
