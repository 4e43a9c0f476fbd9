// Key policies in the dashboard over plain HTTP (forms and the JSON route): an account holder
// narrows its own keys and nobody else's, never widens them; the operator edits any key.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { shown, submit } from "../helpers/dashboard-forms";
import { startGateway, type TestGateway } from "../helpers/gateway";

const TOKEN = "operator-token-for-dashboard-policy-tests";
const admin = { authorization: `Bearer ${TOKEN}` };

let gw: TestGateway;
let origin: string;
beforeAll(async () => {
  gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: TOKEN } });
  origin = new URL(gw.url).origin;
});
afterAll(() => gw.close());

const form = (path: string, body: Record<string, string>, cookie = "") =>
  fetch(gw.url + path, {
    method: "POST",
    redirect: "manual",
    headers: { origin, cookie, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(body),
  });

/** a refused form: a 303 like any (Post/Redirect/Get); the page it leads to, whose status is the refusal's */
async function refused(path: string, body: Record<string, string>, cookie: string) {
  const s = await submit(gw.url, path, body, { cookie });
  expect(s.posted.status, shown(s)).toBe(303);
  return { status: s.page?.status, body: s.page?.body ?? "" };
}

/** an account with a dashboard login, signed in; its session cookie */
async function holder(email: string): Promise<{ accountId: string; cookie: string }> {
  const made = await gw.post("/admin/v1/accounts", { email, password: "a long enough password", credits: 50 }, admin);
  expect(made.status).toBe(201);
  const res = await form("/dashboard/login", { email, password: "a long enough password" });
  expect(res.status).toBe(303);
  return { accountId: made.json.data.result.id, cookie: (res.headers.get("set-cookie") ?? "").split(";")[0] };
}

const fields = (o: Partial<Record<string, string>>) => ({
  allowed_functions: "",
  allowed_models: "",
  rate_limit_per_minute: "",
  monthly_credit_limit: "",
  expires_at: "",
  ...o,
});
const sentiment = (key: string) =>
  gw.post("/api/v1/ai/sentiment-analysis", { text: "Fine." }, { "x-api-key": key, "cache-control": "no-cache" });
const policyOf = async (id: string) => (await gw.get(`/admin/v1/keys/${id}`, admin)).json.data.result.policy;

describe("key policies in the dashboard", () => {
  test("an account holder narrows its own key (applied at the next call), sees it listed, and cannot widen or clear it", async () => {
    const { accountId, cookie } = await holder("nora@example.com");
    const k = gw.newKey({ accountId });
    const page = await (await fetch(`${gw.url}/dashboard/keys`, { headers: { cookie } })).text();
    expect(page).toContain(`action="/dashboard/keys/${k.id}/policy"`);

    const narrowed = await form(
      `/dashboard/keys/${k.id}/policy`,
      fields({ allowed_functions: "text-summarize", monthly_credit_limit: "10" }),
      cookie,
    );
    expect(narrowed.status, await narrowed.text()).toBe(303);
    expect((await sentiment(k.key)).status).toBe(403);
    const listed = await (await fetch(`${gw.url}/dashboard/keys`, { headers: { cookie } })).text();
    expect(listed).toContain("functions=text-summarize monthly-credits=10");

    // widening (a higher limit), clearing (an empty field) and adding a function are refused, on the page
    for (const o of [
      { allowed_functions: "text-summarize", monthly_credit_limit: "11" },
      { allowed_functions: "text-summarize" },
      { allowed_functions: "text-summarize, sentiment-analysis", monthly_credit_limit: "10" },
    ]) {
      const res = await refused(`/dashboard/keys/${k.id}/policy`, fields(o), cookie);
      expect(res.status).toBe(403);
      expect(res.body).toContain("you can only narrow");
    }
    expect(await policyOf(k.id)).toMatchObject({ allowed_functions: ["text-summarize"], monthly_credit_limit: 10 });

    // the JSON route narrows further; another account's key is not found
    const patch = (id: string, policy: unknown, c = cookie) =>
      fetch(`${gw.url}/dashboard/api/keys/${id}`, {
        method: "PATCH",
        headers: { origin, cookie: c, "content-type": "application/json" },
        body: JSON.stringify({ policy }),
      });
    const json = await patch(k.id, { monthly_credit_limit: 4, rate_limit_per_minute: 2 });
    expect(json.status).toBe(200);
    const body = (await json.json()) as { data: { result: { policy: Record<string, unknown>; month_credits_used: number } } };
    expect(body.data.result.policy).toMatchObject({ monthly_credit_limit: 4, rate_limit_per_minute: 2 });
    expect(body.data.result.month_credits_used).toBe(0);
    expect((await patch(k.id, { rate_limit_per_minute: null })).status).toBe(403);
    const other = gw.newKey();
    expect((await patch(other.id, { rate_limit_per_minute: 1 })).status).toBe(404);
    expect((await refused(`/dashboard/keys/${other.id}/policy`, fields({ rate_limit_per_minute: "1" }), cookie)).status).toBe(
      404,
    );
    expect(await policyOf(other.id)).toMatchObject({ rate_limit_per_minute: null });
    // no session: refused, nothing changed
    expect((await patch(k.id, { monthly_credit_limit: 1 }, "")).status).toBe(401);
    expect(await policyOf(k.id)).toMatchObject({ monthly_credit_limit: 4 });
  });

  test("the operator edits any key's policy, widening and clearing included", async () => {
    const signedIn = await form("/dashboard/operator/login", { token: TOKEN });
    expect(signedIn.status).toBe(303);
    const cookie = (signedIn.headers.get("set-cookie") ?? "").split(";")[0];
    const k = gw.newKey();
    await gw.deps.keys.setPolicy(k.id, { allowed_functions: ["text-summarize"], rate_limit_per_minute: 3 });
    const page = await (await fetch(`${gw.url}/dashboard/operator/accounts/${k.accountId}`, { headers: { cookie } })).text();
    expect(page).toContain(`action="/dashboard/operator/keys/${k.id}/policy"`);
    expect((await sentiment(k.key)).status).toBe(403);
    const res = await form(`/dashboard/operator/keys/${k.id}/policy`, fields({ rate_limit_per_minute: "30" }), cookie);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/dashboard/operator/accounts/${k.accountId}`);
    expect(await policyOf(k.id)).toMatchObject({ allowed_functions: null, rate_limit_per_minute: 30 });
    expect((await sentiment(k.key)).status).toBe(200);
    const bad = await refused(`/dashboard/operator/keys/${k.id}/policy`, fields({ expires_at: "tomorrow" }), cookie);
    expect(bad.status).toBe(400);
    expect(bad.body).toContain("ISO 8601");
  });

  test("an unknown function name (a typo) is 400 naming it, from the holder's form, its JSON route and the operator's form; nothing changes", async () => {
    const { accountId, cookie } = await holder("typo@example.com");
    const k = gw.newKey({ accountId });
    const mine = await refused(`/dashboard/keys/${k.id}/policy`, fields({ allowed_functions: "sentimnt-analysis" }), cookie);
    const page = mine.body;
    expect(mine.status, page).toBe(400);
    expect(page).toContain("unknown function &quot;sentimnt-analysis&quot;");
    expect(page).toContain("sentiment-analysis");
    const json = await fetch(`${gw.url}/dashboard/api/keys/${k.id}`, {
      method: "PATCH",
      headers: { origin, cookie, "content-type": "application/json" },
      body: JSON.stringify({ policy: { allowed_functions: ["text-summarize", "chat-complete"] } }),
    });
    const body = (await json.json()) as { error: { code: string; param: string; message: string } };
    expect(json.status, JSON.stringify(body)).toBe(400);
    expect(body.error).toMatchObject({ code: "invalid_request", param: "policy.allowed_functions" });
    expect(body.error.message).toContain('unknown function "chat-complete"');

    const signedIn = await form("/dashboard/operator/login", { token: TOKEN });
    const op = (signedIn.headers.get("set-cookie") ?? "").split(";")[0];
    const bad = await refused(`/dashboard/operator/keys/${k.id}/policy`, fields({ allowed_functions: "embedings" }), op);
    expect(bad.status).toBe(400);
    expect(bad.body).toContain("unknown function &quot;embedings&quot;");
    expect(await policyOf(k.id)).toMatchObject({ allowed_functions: null });
    expect((await sentiment(k.key)).status).toBe(200);
  });
});
