// The dashboard's JSON routes refuse a field they do not know, as the admin API does (400
// invalid_request naming it), and change nothing: a real server, every body-taking route under
// /dashboard/api read from the app's routes (a new one without a body here fails). A key's policy at
// creation is taken from an owner or admin, validated as the admin API's, and refused from a developer.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";

const TOKEN = "operator-token-for-strict-json-tests-0123";
const admin = { authorization: `Bearer ${TOKEN}` };
const PASSWORD = "a long enough password";

let gw: TestGateway;
let origin: string;
beforeAll(async () => {
  gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: TOKEN } });
  origin = new URL(gw.url).origin;
});
afterAll(() => gw.close());

async function send(method: string, path: string, cookie: string, body: unknown) {
  const res = await fetch(gw.url + path, {
    method,
    redirect: "manual",
    headers: { origin, cookie, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  // biome-ignore lint/suspicious/noExplicitAny: the tests walk the envelope; their assertions check its shape
  let json: Record<string, any> = {};
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, json, label: `${method} ${path}: ${res.status} ${text.slice(0, 300)}` };
}

const form = (path: string, body: Record<string, string>) =>
  fetch(gw.url + path, {
    method: "POST",
    redirect: "manual",
    headers: { origin, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(body),
  });
const cookieOf = (res: Response) => (res.headers.get("set-cookie") ?? "").split(";")[0] as string;

async function owner(email: string) {
  const made = await gw.post("/admin/v1/accounts", { email, password: PASSWORD, credits: 50 }, admin);
  expect(made.status).toBe(201);
  const signedIn = await form("/dashboard/login", { email, password: PASSWORD });
  expect(signedIn.status).toBe(303);
  return { accountId: made.json.data.result.id as string, cookie: cookieOf(signedIn) };
}

const keyCount = async (accountId: string) =>
  ((await gw.get(`/admin/v1/keys?account_id=${accountId}`, admin)).json.data.result.data as unknown[]).length;

/** A valid body for each body-taking JSON route of the dashboard, by its method and path pattern. */
const VALID: Record<string, unknown> = {
  "POST /dashboard/api/keys": { label: "strict" },
  "PATCH /dashboard/api/keys/:id": { policy: { rate_limit_per_minute: 5 } },
  "POST /dashboard/api/playground/:fn": { text: "Fine." },
};

describe("the dashboard's JSON routes", () => {
  test("every one refuses an unknown field with 400 naming it, and changes nothing", async () => {
    const { accountId, cookie } = await owner("strict-ann@example.com");
    const k = gw.newKey({ accountId });
    const routes = gw.routes.filter((r) => r.path.startsWith("/dashboard/api/") && ["POST", "PATCH", "PUT"].includes(r.method));
    expect(routes.length).toBeGreaterThanOrEqual(3);
    const before = await keyCount(accountId);
    for (const r of routes) {
      const name = `${r.method} ${r.path}`;
      const valid = VALID[name];
      expect(valid, `${name}: give it a valid body in VALID`).toBeDefined();
      const path = r.path.replace(":id", k.id).replace(":fn", "sentiment-analysis");
      const refused = await send(r.method, path, cookie, { ...(valid as object), surprise: 1 });
      expect(refused.status, refused.label).toBe(400);
      expect(refused.json.error.code, refused.label).toBe("invalid_request");
      expect(refused.json.error.param, refused.label).toBe("surprise");
    }
    // a misspelled field is named with the one meant
    const typo = await send("POST", "/dashboard/api/keys", cookie, { label: "x", polciy: { allowed_models: ["gpt-4o"] } });
    expect(typo.status, typo.label).toBe(400);
    expect(typo.json.error.message).toContain("policy");
    expect(await keyCount(accountId)).toBe(before);
    expect((await gw.get(`/admin/v1/keys/${k.id}`, admin)).json.data.result.policy.rate_limit_per_minute).toBeNull();
    // the valid bodies still work
    for (const r of routes) {
      const path = r.path.replace(":id", k.id).replace(":fn", "sentiment-analysis");
      const done = await send(r.method, path, cookie, VALID[`${r.method} ${r.path}`]);
      expect(done.status, done.label).toBeLessThan(300);
    }
  });

  test("a policy at creation: an owner's is applied and audited as the admin API's; a bad one is 400; a developer's is 403", async () => {
    const { accountId, cookie } = await owner("strict-bo@example.com");
    const made = await send("POST", "/dashboard/api/keys", cookie, { label: "narrow", policy: { allowed_models: ["gpt-4o"] } });
    expect(made.status, made.label).toBe(201);
    expect(made.json.data.result.policy.allowed_models).toEqual(["gpt-4o"]);
    const stored = (await gw.get(`/admin/v1/keys/${made.json.data.result.id}`, admin)).json.data.result.policy;
    expect(stored.allowed_models).toEqual(["gpt-4o"]);
    const audit = await gw.get(`/admin/v1/audit?account_id=${accountId}&action=key.create`, admin);
    expect(audit.json.data.result.data[0].after.policy).toEqual({ allowed_models: ["gpt-4o"] });
    const bad = await send("POST", "/dashboard/api/keys", cookie, { label: "bad", policy: { allowed_modles: ["gpt-4o"] } });
    expect(bad.status, bad.label).toBe(400);
    expect(bad.json.error.param).toBe("policy.allowed_modles");

    const invited = await gw.post(
      `/admin/v1/accounts/${accountId}/members`,
      { email: "strict-dev@example.com", role: "developer" },
      admin,
    );
    expect(invited.status).toBe(201);
    const link = new URL(invited.json.data.result.url);
    const joined = await form(link.pathname + link.search, { name: "Dev", password: PASSWORD });
    expect(joined.status).toBe(303);
    const dev = cookieOf(joined);
    const count = await keyCount(accountId);
    const refused = await send("POST", "/dashboard/api/keys", dev, { label: "mine", policy: { allowed_models: ["gpt-4o"] } });
    expect(refused.status, refused.label).toBe(403);
    expect(refused.json.error.param).toBe("policy");
    expect(await keyCount(accountId)).toBe(count);
    expect((await send("POST", "/dashboard/api/keys", dev, { label: "mine" })).status).toBe(201);
  });
});
