/**
 * The operator's policy ceiling (issue 35, finding 5): `plans.NAME.policy` binds every key of the
 * plan's accounts, whoever made it and with whatever policy of its own, the dashboard playground
 * (which has no key), and the provider calls the gateway makes for them (a knowledge upload's
 * embeddings). A key can only narrow it. Through a real server, against the upstream simulator.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { underCeiling } from "../../src/auth/policy";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";

const ADMIN = "admin-token-plan-ceiling-0123456789abcdef";
const admin = { authorization: `Bearer ${ADMIN}` };
const PASSWORD = "a long enough password";
let sim: Upstream;
let gw: TestGateway;
let accountId: string;
const calls = (path: string) => sim.calls.requests.filter((r) => r.path === path).length;

beforeAll(async () => {
  sim = await startUpstream();
  gw = await startGateway({
    env: { TEXTAI_ADMIN_TOKEN: ADMIN },
    configText: `${simProvider({ url: `${sim.url}/v1`, model: "sim-model", extra: 'embedding_model = "sim-embed"\nmodel_patterns = ["*"]' })}
[routes]
"sentiment-analysis" = ["sim", "local"]

[plans.capped.policy]
allowed_functions = ["sentiment-analysis", "chat-completions", "knowledge-bases", "text-summarize"]
allowed_models = ["local", "sim-model"]
rate_limit_per_minute = 100

[plans.capped.rate_limits]
standard = 10000
heavy = 10000
`,
  });
  const acc = await gw.post(
    "/admin/v1/accounts",
    { plan: "capped", credits: 1000, email: "capped@example.com", password: PASSWORD },
    admin,
  );
  expect(acc.status, JSON.stringify(acc.json)).toBe(201);
  accountId = acc.json.data.result.id;
});
afterAll(async () => {
  await gw?.close();
  await sim?.close();
});

async function keyWith(policy?: Record<string, unknown>): Promise<string> {
  const made = await gw.post("/admin/v1/keys", { label: "k", account_id: accountId, ...(policy ? { policy } : {}) }, admin);
  expect(made.status, JSON.stringify(made.json)).toBe(201);
  return made.json.data.result.key;
}
const chat = (key: string, model: string) =>
  gw.post("/v1/chat/completions", { model, messages: [{ role: "user", content: "hi" }] }, { authorization: `Bearer ${key}` });

test("a key with no policy, or a wider one, is held to the plan's ceiling: models and functions", async () => {
  for (const key of [await keyWith(), await keyWith({ allowed_models: ["*"] })]) {
    const before = calls("/v1/chat/completions");
    const other = await chat(key, "other-model");
    expect(other.status, JSON.stringify(other.json)).toBe(403);
    expect(calls("/v1/chat/completions")).toBe(before);
    expect((await chat(key, "sim-model")).status).toBe(200);
    const fn = await gw.post("/api/v1/ai/spam-detection", { text: "Ceilings and keys." }, { "x-api-key": key });
    expect(fn.status, JSON.stringify(fn.json)).toBe(403);
  }
});

test("a key narrows the ceiling: its own smaller lists apply", async () => {
  const key = await keyWith({ allowed_functions: ["sentiment-analysis"], allowed_models: ["local"] });
  expect((await chat(key, "sim-model")).status).toBe(403);
  const local = await gw.post("/api/v1/ai/sentiment-analysis", { text: "I love it", model: "local" }, { "x-api-key": key });
  expect(local.status, JSON.stringify(local.json)).toBe(200);
  expect((await gw.post("/api/v1/ai/text-summarize", { text: "One. Two." }, { "x-api-key": key })).status).toBe(403);
});

test("a knowledge upload by a key of the plan embeds only if the ceiling allows the embedding model", async () => {
  const key = await keyWith();
  const kb = await gw.post("/api/v1/knowledge-bases", { name: "kb" }, { "x-api-key": key });
  expect(kb.status, JSON.stringify(kb.json)).toBe(201);
  const before = calls("/v1/embeddings");
  const up = await gw.post(
    `/api/v1/knowledge-bases/${kb.json.data.result.id}/documents`,
    { documents: ["Orders ship within a day."] },
    { "x-api-key": key },
  );
  expect(up.status, JSON.stringify(up.json)).toBe(201);
  expect(calls("/v1/embeddings")).toBe(before);
});

test("the dashboard playground runs under the ceiling too", async () => {
  const origin = new URL(gw.url).origin;
  const login = await fetch(`${gw.url}/dashboard/login`, {
    method: "POST",
    redirect: "manual",
    headers: { origin, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ email: "capped@example.com", password: PASSWORD }),
  });
  expect(login.status).toBe(303);
  const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] as string;
  const play = (fn: string, body: unknown) =>
    fetch(`${gw.url}/dashboard/api/playground/${fn}`, {
      method: "POST",
      headers: { origin, cookie, "content-type": "application/json" },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, json: await r.json() }));
  const outside = await play("spam-detection", { text: "Ceilings and keys." });
  expect(outside.status, JSON.stringify(outside.json)).toBe(403);
  const model = await play("sentiment-analysis", { text: "I love it", model: "other-model" });
  expect(model.status, JSON.stringify(model.json)).toBe(403);
  const inside = await play("sentiment-analysis", { text: "I love it", model: "local" });
  expect(inside.status, JSON.stringify(inside.json)).toBe(200);
});

test("a typo in a plan's allowed_functions stops the start, naming it", async () => {
  const err = await startGateway({ configText: '[plans.x.policy]\nallowed_functions = ["sentiment-analysys"]\n' }).then(
    (g) => g.close().then(() => null),
    (e: Error) => e,
  );
  expect(err?.message).toContain("plans.x.policy.allowed_functions: unknown function sentiment-analysys");
});

test("underCeiling: the lists both allow, the lower numbers, the key's other fields kept", () => {
  const ceiling = { allowed_functions: ["a", "b"], allowed_models: ["gpt-4o*", "local"], rate_limit_per_minute: 10 };
  expect(underCeiling(ceiling, undefined)).toEqual(ceiling);
  expect(
    underCeiling(ceiling, {
      allowed_functions: ["b", "c"],
      allowed_models: ["gpt-4o-mini", "claude-*", "*"],
      rate_limit_per_minute: 20,
      monthly_credit_limit: 5,
      expires_at: "2030-01-01T00:00:00.000Z",
    }),
  ).toEqual({
    allowed_functions: ["b"],
    // gpt-4o-mini is inside gpt-4o*; "*" contains both of the ceiling's; claude-* is in neither
    allowed_models: ["gpt-4o-mini", "gpt-4o*", "local"],
    rate_limit_per_minute: 10,
    monthly_credit_limit: 5,
    expires_at: "2030-01-01T00:00:00.000Z",
  });
  // nothing in common: no model at all
  expect(underCeiling({ allowed_models: ["local"] }, { allowed_models: ["gpt-*"] })?.allowed_models).toEqual([]);
  expect(underCeiling(undefined, { rate_limit_per_minute: 3 })).toEqual({ rate_limit_per_minute: 3 });
});
