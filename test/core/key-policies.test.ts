// Key policies (CONTRACT section 13, docs/key-policies.md) through a real server on one SQLite
// file: what each field refuses, with which answer, that a refusal costs nothing and reaches no
// provider, and the admin and account views of a key's policy.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { freshDatabase, sharedServersUp } from "../helpers/shared-servers";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";

const TOKEN = "operator-token-for-key-policy-tests-0123456789";
const admin = { authorization: `Bearer ${TOKEN}` };

let sim: Upstream;
let gw: TestGateway;
beforeAll(async () => {
  sim = await startUpstream();
  gw = await startGateway({
    env: { TEXTAI_ADMIN_TOKEN: TOKEN },
    configText: `
${simProvider({ url: `${sim.url}/v1`, name: "primary", model: "model-a" })}
${simProvider({ url: `${sim.url}/v1`, name: "backup", model: "model-b" })}
[plans.three.rate_limits]
"sentiment-analysis" = 3
`,
  });
});
afterAll(async () => {
  await gw.close();
  await sim.close();
});

/** a key made through the admin API with this policy, on a new account with `credits` */
async function keyWith(policy: Record<string, unknown>, credits = 100, plan?: string) {
  const acc = await gw.post("/admin/v1/accounts", { credits, ...(plan ? { plan } : {}) }, admin);
  expect(acc.status, JSON.stringify(acc.json)).toBe(201);
  const accountId = acc.json.data.result.id as string;
  const made = await gw.post("/admin/v1/keys", { label: "narrow", account_id: accountId, policy }, admin);
  expect(made.status, JSON.stringify(made.json)).toBe(201);
  return { key: made.json.data.result.key as string, id: made.json.data.result.id as string, accountId };
}

async function patch(id: string, policy: unknown) {
  const res = await fetch(`${gw.url}/admin/v1/keys/${id}`, {
    method: "PATCH",
    headers: { ...admin, "content-type": "application/json" },
    body: JSON.stringify({ policy }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers, read as the gateway helper reads them
  return { status: res.status, json: (await res.json()) as Record<string, any> };
}

const sentiment = (key: string, text = "What a lovely day.") =>
  gw.post("/api/v1/ai/sentiment-analysis", { text }, { "x-api-key": key, "cache-control": "no-cache" });
const chat = (key: string, model: string, content = "hello") =>
  gw.post("/v1/chat/completions", { model, messages: [{ role: "user", content }] }, { "x-api-key": key });
const balance = (accountId: string) => gw.deps.ledger.balance(accountId) as number;

describe("key policies", () => {
  test("allowed_functions: another function is 403 naming what the key may call, free and unsent; account endpoints still answer", async () => {
    const { key, accountId } = await keyWith({ allowed_functions: ["sentiment-analysis"] });
    expect((await sentiment(key)).status).toBe(200);
    const before = balance(accountId);
    sim.reset();
    const other = await gw.post("/api/v1/ai/text-summarize", { text: "One. Two. Three." }, { "x-api-key": key });
    expect(other.status, JSON.stringify(other.json)).toBe(403);
    expect(other.json.error.code).toBe("forbidden");
    expect(other.json.error.message).toContain("sentiment-analysis");
    const v1 = await chat(key, "model-a");
    expect(v1.status).toBe(403);
    expect(v1.json.error.message).toContain("chat-completions");
    expect(sim.calls.count).toBe(0);
    expect(balance(accountId)).toBe(before);
    for (const path of ["/api/v1/account/usage", "/api/v1/account/usage-summary", "/api/v1/account/api-key/current"])
      expect((await gw.get(path, { "x-api-key": key })).status).toBe(200);
  });

  test("allowed_models with *: /v1 asks for a model outside it (403 naming the allowed ones, no provider called); a function's route model is held to it too", async () => {
    const { key, accountId } = await keyWith({ allowed_models: ["model-a*"] });
    sim.reset();
    const refused = await chat(key, "model-b");
    expect(refused.status, JSON.stringify(refused.json)).toBe(403);
    expect(refused.json.error.code).toBe("forbidden");
    expect(refused.json.error.message).toContain("model-a*");
    expect(refused.json.error.param).toBe("model");
    expect(sim.calls.count).toBe(0);
    expect(balance(accountId)).toBe(100);
    const ok = await chat(key, "model-a");
    expect(ok.status, JSON.stringify(ok.json)).toBe(200);
    // "provider/model" is held to the model it names
    expect((await chat(key, "primary/model-a")).status).toBe(200);
    expect((await chat(key, "backup/model-b")).status).toBe(403);
    // a function's route (primary's model-a, then backup's model-b) keeps only the allowed models
    const onlyB = await keyWith({ allowed_models: ["model-b"] });
    const fn = await sentiment(onlyB.key);
    expect(fn.status, JSON.stringify(fn.json)).toBe(200);
    expect(fn.json.meta.provider).toBe("backup");
    expect(fn.json.meta.model).toBe("model-b");
    const none = await keyWith({ allowed_models: ["gpt-9*"] });
    sim.reset();
    const refusedFn = await sentiment(none.key);
    expect(refusedFn.status, JSON.stringify(refusedFn.json)).toBe(403);
    expect(refusedFn.json.error.message).toContain("gpt-9*");
    expect(sim.calls.count).toBe(0);
    expect(balance(none.accountId)).toBe(100);
  });

  test("every /v1 route is held to the policy: embeddings and responses by allowed_models and allowed_functions, unsent and free", async () => {
    const { key, id, accountId } = await keyWith({ allowed_models: ["model-a"] });
    const v1 = (path: string, body: Record<string, unknown>) =>
      gw.post(path, body, { "x-api-key": key, "cache-control": "no-cache" });
    sim.reset();
    for (const [path, body] of [
      ["/v1/embeddings", { model: "model-b", input: "hello" }],
      ["/v1/responses", { model: "model-b", input: "hello" }],
    ] as const) {
      const r = await v1(path, body);
      expect(r.status, `${path} ${JSON.stringify(r.json)}`).toBe(403);
      expect(r.json.error.code).toBe("forbidden");
      expect(r.json.error.message).toContain("model-a");
    }
    expect(sim.calls.count).toBe(0);
    expect(balance(accountId)).toBe(100);
    expect((await v1("/v1/responses", { model: "model-a", input: "hello" })).status).toBe(200);
    expect((await patch(id, { allowed_models: null, allowed_functions: ["embeddings"] })).status).toBe(200);
    sim.reset();
    const responses = await v1("/v1/responses", { model: "model-a", input: "hello" });
    expect(responses.status, JSON.stringify(responses.json)).toBe(403);
    expect(responses.json.error.message).toContain("embeddings");
    expect(sim.calls.count).toBe(0);
    // the model list is never refused by allowed_functions
    expect((await gw.get("/v1/models", { "x-api-key": key })).status).toBe(200);
  });

  test("allowed_functions of knowledge-base-search: the key searches the account's knowledge bases (stored and inline) and may not change them", async () => {
    const { key, accountId } = await keyWith({ allowed_functions: ["knowledge-base-search"] });
    const full = gw.newKey({ accountId });
    const kb = await gw.post("/api/v1/knowledge-bases", { name: "faq" }, { "x-api-key": full.key });
    expect(kb.status, JSON.stringify(kb.json)).toBe(201);
    const kbId = kb.json.data.result.id as string;
    const docs = { documents: [{ title: "Returns", content: "Items can be returned within 30 days of delivery." }] };
    expect((await gw.post(`/api/v1/knowledge-bases/${kbId}/documents`, docs, { "x-api-key": full.key })).status).toBe(201);
    const h = { "x-api-key": key };
    const found = await gw.post(`/api/v1/knowledge-bases/${kbId}/search`, { query: "returned within days" }, h);
    expect(found.status, JSON.stringify(found.json)).toBe(200);
    expect(found.json.data.result.results.length).toBeGreaterThan(0);
    const inline = await gw.post("/api/v1/ai/knowledge-bases", { query: "returns", ...docs }, h);
    expect(inline.status, JSON.stringify(inline.json)).toBe(200);
    const before = balance(accountId);
    const upload = await gw.post(`/api/v1/knowledge-bases/${kbId}/documents`, docs, h);
    expect(upload.status, JSON.stringify(upload.json)).toBe(403);
    expect(upload.json.error.code).toBe("forbidden");
    expect(upload.json.error.message).toContain("knowledge-base-search");
    expect((await gw.post("/api/v1/knowledge-bases", { name: "mine" }, h)).status).toBe(403);
    expect(balance(accountId)).toBe(before);
  });

  test("rate_limit_per_minute: the key's own bucket refuses with 429 and headers describing it; the account's other key is not limited by it", async () => {
    const { key, accountId } = await keyWith({ rate_limit_per_minute: 2 });
    const first = await sentiment(key, "one");
    expect(first.status).toBe(200);
    expect(first.headers.get("ratelimit-limit")).toBe("2");
    expect((await sentiment(key, "two")).status).toBe(200);
    const before = balance(accountId);
    const third = await sentiment(key, "three");
    expect(third.status, JSON.stringify(third.json)).toBe(429);
    expect(third.json.error.code).toBe("rate_limited");
    expect(third.headers.get("ratelimit-limit")).toBe("2");
    expect(third.headers.get("ratelimit-remaining")).toBe("0");
    expect(Number(third.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(balance(accountId)).toBe(before);
    // another function has its own bucket of 2
    expect((await gw.post("/api/v1/ai/text-summarize", { text: "One. Two." }, { "x-api-key": key })).status).toBe(200);
    const other = gw.newKey({ accountId });
    const free = await sentiment(other.key, "four");
    expect(free.status).toBe(200);
    expect(free.headers.get("ratelimit-limit")).toBe("60");
  });

  test("rate_limit_per_minute never widens the plan: a key allowed 100 a minute on a plan of 3 is refused at the plan's limit, with its headers", async () => {
    const { key, accountId } = await keyWith({ rate_limit_per_minute: 100 }, 100, "three");
    for (let i = 0; i < 3; i++) expect((await sentiment(key, `plan call ${i}`)).status).toBe(200);
    const before = balance(accountId);
    const fourth = await sentiment(key, "plan call 3");
    expect(fourth.status, JSON.stringify(fourth.json)).toBe(429);
    expect(fourth.json.error.code).toBe("rate_limited");
    expect(fourth.headers.get("ratelimit-limit")).toBe("3");
    expect(balance(accountId)).toBe(before);
  });

  test("monthly_credit_limit: 12 concurrent calls on a limit of 5 admit exactly 5; the rest are 402 key_budget_exceeded, uncharged; cache hits too", async () => {
    const { key, id, accountId } = await keyWith({ monthly_credit_limit: 5 });
    const texts = Array.from({ length: 12 }, (_, i) => `Call number ${i} is lovely.`);
    const results = await Promise.all(texts.map((t) => sentiment(key, t)));
    const codes = results.map((r) => r.status).sort();
    expect(codes, results.map((r) => JSON.stringify(r.json.error ?? "")).join("\n")).toEqual([
      ...Array(5).fill(200),
      ...Array(7).fill(402),
    ]);
    for (const r of results.filter((r) => r.status === 402)) expect(r.json.error.code).toBe("key_budget_exceeded");
    expect(balance(accountId)).toBe(95);
    // an answer in the cache is charged like a fresh one, so refused the same way
    const hit = await gw.post("/api/v1/ai/sentiment-analysis", { text: texts[0] }, { "x-api-key": key });
    expect(hit.status).toBe(402);
    expect(hit.json.error.code).toBe("key_budget_exceeded");
    const view = await gw.get(`/admin/v1/keys/${id}`, admin);
    expect(view.json.data.result.month_credits_used).toBe(5);
    expect(view.json.data.result.policy.monthly_credit_limit).toBe(5);
    const current = await gw.get("/api/v1/account/api-key/current", { "x-api-key": key });
    expect(current.json.data.result.month_credits_used).toBe(5);
    expect(current.json.data.result.policy.monthly_credit_limit).toBe(5);
    // raised: the key spends again at once
    expect((await patch(id, { monthly_credit_limit: 6 })).status).toBe(200);
    expect((await sentiment(key, "one more")).status).toBe(200);
    expect((await sentiment(key, "and another")).status).toBe(402);
  });

  test("monthly_credit_limit counts the calendar month (UTC): what the key spent last month does not count", async () => {
    const { key, id } = await keyWith({ monthly_credit_limit: 2 });
    expect((await sentiment(key, "first of the month")).status).toBe(200);
    expect((await sentiment(key, "second of the month")).status).toBe(200);
    expect((await sentiment(key, "over")).json.error.code).toBe("key_budget_exceeded");
    // the two charges move to the last millisecond of the previous month
    const now = new Date();
    const lastMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1) - 1;
    const db = new Database(gw.dbPath);
    db.run("PRAGMA busy_timeout = 5000");
    const moved = db.run("UPDATE ledger SET created_at = ? WHERE key_id = ? AND kind = 'charge'", [lastMonth, id]);
    db.close();
    expect(moved.changes).toBe(2);
    expect((await gw.get(`/admin/v1/keys/${id}`, admin)).json.data.result.month_credits_used).toBe(0);
    expect((await sentiment(key, "a new month")).status).toBe(200);
    expect((await gw.get("/api/v1/account/api-key/current", { "x-api-key": key })).json.data.result.month_credits_used).toBe(1);
  });

  test("monthly_credit_limit holds a streamed /v1 call before the provider is called", async () => {
    const { key, id } = await keyWith({ monthly_credit_limit: 1 });
    const stream = (content: string) =>
      fetch(`${gw.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify({ model: "model-a", stream: true, max_tokens: 100, messages: [{ role: "user", content }] }),
      });
    const first = await stream("first");
    expect(first.status).toBe(200);
    expect(await first.text()).toContain("[DONE]");
    sim.reset();
    const second = await stream("second");
    expect(second.status).toBe(402);
    expect(((await second.json()) as { error: { code: string } }).error.code).toBe("key_budget_exceeded");
    expect(sim.calls.count).toBe(0);
    expect((await gw.get(`/admin/v1/keys/${id}`, admin)).json.data.result.month_credits_used).toBe(1);
  });

  test("monthly_credit_limit holds documents uploaded to a knowledge base too: refused before anything is stored or charged", async () => {
    const { key, accountId } = await keyWith({ monthly_credit_limit: 0 });
    const h = { "x-api-key": key };
    const kb = await gw.post("/api/v1/knowledge-bases", { name: "docs" }, h);
    expect(kb.status, JSON.stringify(kb.json)).toBe(201);
    const kbId = kb.json.data.result.id as string;
    const up = await gw.post(
      `/api/v1/knowledge-bases/${kbId}/documents`,
      { documents: [{ title: "Returns", content: "Items can be returned within 30 days." }] },
      h,
    );
    expect(up.status, JSON.stringify(up.json)).toBe(402);
    expect(up.json.error.code).toBe("key_budget_exceeded");
    expect(balance(accountId)).toBe(100);
    expect((await gw.get(`/api/v1/knowledge-bases/${kbId}`, h)).json.data.result.document_count).toBe(0);
  });

  test("expires_at: a key past it is 401 expired_api_key everywhere, from the very next request after the change", async () => {
    const { key, id } = await keyWith({ expires_at: new Date(Date.now() + 3600_000).toISOString() });
    expect((await sentiment(key)).status).toBe(200);
    const changed = await patch(id, { expires_at: "2020-01-01T00:00:00Z" });
    expect(changed.status, JSON.stringify(changed.json)).toBe(200);
    expect(changed.json.data.result.policy.expires_at).toBe("2020-01-01T00:00:00.000Z");
    const refused = await sentiment(key);
    expect(refused.status).toBe(401);
    expect(refused.json.error.code).toBe("expired_api_key");
    expect((await gw.get("/api/v1/account/usage", { "x-api-key": key })).json.error.code).toBe("expired_api_key");
    expect((await patch(id, { expires_at: null })).status).toBe(200);
    expect((await sentiment(key)).status).toBe(200);
  });

  test("admin API: PATCH replaces the fields given and null clears one; GET shows the policy; bad policies are 400 naming the field", async () => {
    const { key, id } = await keyWith({ allowed_functions: ["text-summarize"], rate_limit_per_minute: 30 });
    expect((await sentiment(key)).status).toBe(403);
    const changed = await patch(id, { allowed_functions: null, monthly_credit_limit: 50 });
    expect(changed.json.data.result.policy).toEqual({
      allowed_functions: null,
      allowed_models: null,
      rate_limit_per_minute: 30,
      monthly_credit_limit: 50,
      expires_at: null,
      guardrails: null,
      tags: null,
    });
    expect((await sentiment(key)).status).toBe(200);
    for (const [bad, param] of [
      [{ allowed_functions: [] }, "policy.allowed_functions"],
      [{ rate_limit_per_minute: 0 }, "policy.rate_limit_per_minute"],
      [{ monthly_credit_limit: -1 }, "policy.monthly_credit_limit"],
      [{ expires_at: "soon" }, "policy.expires_at"],
      [{ max_tokens: 5 }, "policy.max_tokens"],
      [{ allowed_functions: ["text-summarize", "sentimnt-analysis"] }, "policy.allowed_functions"],
    ] as const) {
      const res = await patch(id, bad);
      expect(res.status, JSON.stringify(res.json)).toBe(400);
      expect(res.json.error.param).toBe(param);
    }
    const made = await gw.post("/admin/v1/keys", { label: "x", policy: { rate_limit_per_minute: "fast" } }, admin);
    expect(made.status).toBe(400);
    expect((await patch("key_nobody", { rate_limit_per_minute: 1 })).status).toBe(404);
    expect((await gw.get(`/admin/v1/keys/${id}`, admin)).json.data.result.policy.monthly_credit_limit).toBe(50);
    // { policy: null } clears every field
    expect((await patch(id, null)).json.data.result.policy.rate_limit_per_minute).toBeNull();
  });
});

const ROOT = join(import.meta.dir, "../..");
function cli(...args: string[]) {
  const p = Bun.spawnSync([process.execPath, join(ROOT, "src/cli.ts"), ...args], {
    env: { ...process.env, TEXTAI_DB: gw.dbPath },
    cwd: ROOT,
  });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}

/** polls until `check` holds (the server reads a change made by another process within its 1 s key cache) */
async function within(ms: number, check: () => Promise<boolean>): Promise<number> {
  const t0 = performance.now();
  while (!(await check())) {
    if (performance.now() - t0 > ms) throw new Error(`not within ${ms} ms`);
    await Bun.sleep(20);
  }
  return performance.now() - t0;
}

describe("allowed_functions holds usage names only", () => {
  test("an unknown name (a typo) is 400 naming it and the known names, on create and on change; the policy stays as it was", async () => {
    const made = await gw.post("/admin/v1/keys", { label: "typo", policy: { allowed_functions: ["sentimnt-analysis"] } }, admin);
    expect(made.status, JSON.stringify(made.json)).toBe(400);
    expect(made.json.error).toMatchObject({ code: "invalid_request", param: "policy.allowed_functions" });
    expect(made.json.error.message).toContain('unknown function "sentimnt-analysis"');
    expect(made.json.error.message).toContain("sentiment-analysis");
    const { key, id } = await keyWith({ allowed_functions: ["sentiment-analysis", "chat-completions"] });
    const changed = await patch(id, { allowed_functions: ["sentiment-analysis", "chat-completion"] });
    expect(changed.status, JSON.stringify(changed.json)).toBe(400);
    expect(changed.json.error.message).toContain('"chat-completion"');
    expect((await gw.get(`/admin/v1/keys/${id}`, admin)).json.data.result.policy.allowed_functions).toEqual([
      "sentiment-analysis",
      "chat-completions",
    ]);
    expect((await sentiment(key)).status).toBe(200);
  });
});

const pgUp = await sharedServersUp("key policy validation on PostgreSQL");
describe.skipIf(!pgUp)("allowed_functions on PostgreSQL", () => {
  test("an unknown name is 400 naming it on create and change; the stored policy stays as it was", async () => {
    const db = await freshDatabase();
    const pg = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: TOKEN, TEXTAI_DATABASE_URL: db.url } });
    try {
      for (let i = 0; i < 100 && (await pg.get("/ready")).status !== 200; i++) await Bun.sleep(100);
      const typo = await pg.post("/admin/v1/keys", { label: "t", policy: { allowed_functions: ["review-sumary"] } }, admin);
      expect(typo.status, JSON.stringify(typo.json)).toBe(400);
      expect(typo.json.error.message).toContain('unknown function "review-sumary"');
      const made = await pg.post("/admin/v1/keys", { label: "t", policy: { allowed_functions: ["review-summary"] } }, admin);
      expect(made.status, JSON.stringify(made.json)).toBe(201);
      const id = made.json.data.result.id as string;
      const res = await fetch(`${pg.url}/admin/v1/keys/${id}`, {
        method: "PATCH",
        headers: { ...admin, "content-type": "application/json" },
        body: JSON.stringify({ policy: { allowed_functions: ["responses", "embedding"] } }),
      });
      const body = (await res.json()) as { error: { param: string; message: string } };
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(body.error.param).toBe("policy.allowed_functions");
      expect(body.error.message).toContain('"embedding"');
      expect((await pg.get(`/admin/v1/keys/${id}`, admin)).json.data.result.policy.allowed_functions).toEqual(["review-summary"]);
    } finally {
      await pg.close();
      await db.drop();
    }
  });
});

describe("key policies from the CLI beside a running server", () => {
  test("keys create with policy flags, keys update (an empty value clears), keys list shows the policy; bad flags exit 2", async () => {
    const made = cli(
      "keys",
      "create",
      "--label",
      "cli",
      "--credits",
      "20",
      "--functions",
      "text-summarize",
      "--rpm",
      "9",
      "--json",
    );
    expect(made.code, made.err).toBe(0);
    const k = JSON.parse(made.out) as { id: string; key: string; policy: Record<string, unknown> };
    expect(k.policy.allowed_functions).toEqual(["text-summarize"]);
    expect(k.policy.rate_limit_per_minute).toBe(9);
    expect((await sentiment(k.key)).status).toBe(403);

    const updated = cli("keys", "update", k.id, "--functions", "", "--monthly-credits", "1", "--expires", "2099-01-01T00:00:00Z");
    expect(updated.code, updated.err).toBe(0);
    expect(updated.out).toContain("monthly-credits=1");
    expect(updated.out).not.toContain("functions=");
    // another process changed it: the server applies it within its key cache's second
    const took = await within(1500, async () => (await sentiment(k.key, "after the update")).status === 200);
    expect(took).toBeLessThan(1500);
    const second = await sentiment(k.key, "over the monthly limit");
    expect(second.status).toBe(402);
    expect(second.json.error.code).toBe("key_budget_exceeded");

    const list = cli("keys", "list");
    expect(list.out).toContain("rpm=9 monthly-credits=1 expires=2099-01-01T00:00:00.000Z");
    const listed = JSON.parse(cli("keys", "list", "--json").out) as { id: string; policy: Record<string, unknown> }[];
    expect(listed.find((x) => x.id === k.id)?.policy.monthly_credit_limit).toBe(1);

    const typo = cli("keys", "update", k.id, "--functions", "text-sumarize");
    expect(typo.code).toBe(2);
    expect(typo.err).toContain('--functions: names an unknown function "text-sumarize"');
    expect(typo.err).toContain("text-summarize");
    const bad = cli("keys", "update", k.id, "--rpm", "lots");
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("--rpm");
    expect(cli("keys", "update", k.id).code).toBe(2);
    expect(cli("keys", "update", "key_nobody", "--rpm", "3").code).toBe(1);
  }, 30_000); // eight CLI processes one after another: about 0.6 s each on a loaded machine, past the 5 s default
});
