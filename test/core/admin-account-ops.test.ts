import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Type as T } from "@sinclair/typebox";
import { ConfigError, loadConfig } from "../../src/config";
import { defineFunction } from "../../src/functions/define";
import { MIGRATIONS } from "../../src/storage/migrations";
import { wordCount } from "../helpers/echo-function";
import { startGateway, type TestGateway } from "../helpers/gateway";

const ADMIN = "admin-secret-token-0123456789abcdef";
const classify = defineFunction({
  name: "classify-test",
  path: "/api/v1/ai/classify-test",
  summary: "needs a model",
  request: T.Object({ text: T.String() }),
  result: T.Object({ label: T.Union([T.Literal("a"), T.Literal("b")]), score: T.Number({ minimum: 0, maximum: 1 }) }),
  cost: 2,
  rateClass: "standard",
  promptVersion: 1,
  prompt: (r) => [{ role: "user", content: r.text }],
  example: { request: { text: "x" }, result: { label: "a", score: 0.5 } },
});

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway({
    functions: [wordCount, classify],
    env: { TEXTAI_ADMIN_TOKEN: ADMIN, TEXTAI_DB_BUSY_TIMEOUT_MS: "200" },
    configText: `[[providers]]\nname = "mock"\ntype = "mock"\nlatency_ms = 1\n`,
  });
});
afterAll(() => gw.close());

const admin = { authorization: `Bearer ${ADMIN}` };

describe("admin API", () => {
  test("wrong token is 403; accounts, credits, keys and revocation", async () => {
    expect((await gw.get("/admin/v1/keys", { authorization: "Bearer nope" })).status).toBe(403);
    const acc = await gw.post("/admin/v1/accounts", { name: "Acme", plan: "pro", credits: 5 }, admin);
    expect(acc.status).toBe(201);
    expect(acc.json.data.result).toMatchObject({ name: "Acme", plan: "pro", balance: 5 });
    const id = acc.json.data.result.id;
    const grant = await gw.post(`/admin/v1/accounts/${id}/credits`, { amount: 10, reason: "top-up" }, admin);
    expect(grant.json.data.result.balance).toBe(15);
    expect((await gw.post(`/admin/v1/accounts/${id}/credits`, { amount: 0 }, admin)).json.error.param).toBe("amount");
    const created = await gw.post("/admin/v1/keys", { label: "svc", account_id: id }, admin);
    expect(created.status).toBe(201);
    const key = created.json.data.result.key as string;
    expect(key).toMatch(/^tai_live_[0-9A-Za-z]{40,}$/);
    const listed = await gw.get(`/admin/v1/keys?account_id=${id}`, admin);
    expect(JSON.stringify(listed.json)).not.toContain(key);
    expect(listed.json.data.result.data[0].masked_key).toBe(`tai_live_…${key.slice(-4)}`);
    expect((await gw.post("/api/v1/ai/word-count", { text: "hi" }, { "x-api-key": key })).status).toBe(200);
    const view = await gw.get(`/admin/v1/accounts/${id}`, admin);
    expect(view.json.data.result.usage.requests).toBe(1);
    expect(
      (await fetch(`${gw.url}/admin/v1/keys/${created.json.data.result.id}`, { method: "DELETE", headers: admin })).status,
    ).toBe(200);
    expect((await gw.post("/api/v1/ai/word-count", { text: "hi" }, { "x-api-key": key })).status).toBe(401);
    expect((await gw.get("/admin/v1/accounts/acc_missing", admin)).status).toBe(404);
  });

  test("a misspelled field is refused with the name it was probably meant to be, and creates nothing", async () => {
    const before = (await gw.get("/admin/v1/accounts?limit=500", admin)).json.data.result.data.length;
    const typo = await gw.post("/admin/v1/accounts", { name: "Typo Co", credit: 500 }, admin);
    expect(typo.status).toBe(400);
    expect(typo.json.error).toMatchObject({ code: "invalid_request", param: "credit" });
    expect(typo.json.error.message).toContain('did you mean "credits"');
    expect((await gw.get("/admin/v1/accounts?limit=500", admin)).json.data.result.data.length).toBe(before);
    const key = await gw.post("/admin/v1/keys", { label: "svc", acount_id: "acc_x" }, admin);
    expect(key.status).toBe(400);
    expect(key.json.error.message).toContain('did you mean "account_id"');
    const grant = await gw.post("/admin/v1/accounts/acc_x/credits", { amount: 5, reasons: "x" }, admin);
    expect(grant.json.error.param).toBe("reasons");
  });
});

describe("account endpoints", () => {
  test("usage, usage-summary and current key come from the ledger", async () => {
    const { key, accountId } = gw.newKey({ credits: 20, label: "reporting" });
    const h = { "x-api-key": key };
    await gw.post("/api/v1/ai/word-count", { text: "one" }, h);
    await gw.post("/api/v1/ai/word-count", { text: "one" }, h);
    await gw.post("/api/v1/ai/classify-test", { text: "two" }, h);
    const usage = await gw.get("/api/v1/account/usage", h);
    expect(usage.status).toBe(200);
    expect(usage.json.data.result).toMatchObject({
      account_id: accountId,
      balance: 16,
      requests: 3,
      credits_used: 4,
      credits_granted: 20,
      cached_requests: 1,
    });
    expect(usage.headers.get("ratelimit-limit")).toBe("60");
    const summary = await gw.get("/api/v1/account/usage-summary", h);
    expect(summary.json.data.result.months[0]).toMatchObject({ requests: 3, credits_used: 4, credits_granted: 20 });
    const current = await gw.get("/api/v1/account/api-key/current", h);
    expect(current.json.data.result).toMatchObject({ label: "reporting", plan: "free", status: "active", balance: 16 });
    expect(current.json.data.result.masked_key).toBe(`tai_live_…${key.slice(-4)}`);
    expect(JSON.stringify(current.json)).not.toContain(key);
  });
});

describe("mock provider", () => {
  test("a function with no offline implementation is answered by mock with a schema-valid result", async () => {
    const { key } = gw.newKey({ credits: 5 });
    const r = await gw.post("/api/v1/ai/classify-test", { text: "something" }, { "x-api-key": key });
    expect(r.status).toBe(200);
    expect(["a", "b"]).toContain(r.json.data.result.label);
    expect(r.json.meta).toMatchObject({ provider: "mock", credits_deducted: 2 });
  });
});

describe("operations", () => {
  test("health, ready, metrics, openapi and docs", async () => {
    expect((await gw.get("/health")).json.data.result.status).toBe("ok");
    const ready = await gw.get("/ready", admin);
    expect(ready.status).toBe(200);
    expect(ready.json.data.result.providers.mock).toBeDefined();
    const metrics = await (await fetch(`${gw.url}/metrics`, { headers: admin })).text();
    expect(metrics).toContain('textai_requests_total{function="word-count",status="200"}');
    expect(metrics).toContain("textai_request_duration_seconds_bucket");
    expect(metrics).toContain("textai_cache_entries");
    const doc = (await gw.get("/openapi.json")).json;
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.paths["/api/v1/ai/word-count"].post.requestBody.content["application/json"].schema.required).toContain("text");
    expect(doc.paths["/admin/v1/keys"]).toBeDefined();
    const docs = await fetch(`${gw.url}/docs`);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain("/docs/assets/scalar.js");
    const bundle = await fetch(`${gw.url}/docs/assets/scalar.js`);
    expect(bundle.headers.get("content-type")).toContain("javascript");
    expect((await bundle.text()).length).toBeGreaterThan(100_000);
  });

  test("a draining server reports not ready", async () => {
    gw.deps.lifecycle.draining = true;
    const r = await gw.get("/ready");
    gw.deps.lifecycle.draining = false;
    expect(r.status).toBe(503);
    expect(r.headers.get("retry-after")).toBe("1");
  });

  test("ready does not wait for the offline engine: it lists the parts loaded so far", async () => {
    const ready = await gw.get("/ready", admin);
    expect(ready.status).toBe(200);
    expect(ready.json.data.result).toMatchObject({ status: "ready", draining: false });
    expect(Array.isArray(ready.json.data.result.engines_loaded)).toBe(true);
  });
});

describe("storage", () => {
  test("a locked database answers 503 with Retry-After and charges nothing", async () => {
    const { key, accountId } = gw.newKey({ credits: 5 });
    const other = new Database(gw.dbPath);
    other.exec("PRAGMA busy_timeout = 0");
    other.exec("BEGIN IMMEDIATE");
    try {
      const r = await gw.post("/api/v1/ai/word-count", { text: "locked out" }, { "x-api-key": key });
      expect(r.status).toBe(503);
      expect(r.json.error.code).toBe("service_unavailable");
      expect(r.headers.get("retry-after")).toBe("1");
    } finally {
      other.exec("ROLLBACK");
      other.close();
    }
    expect(gw.deps.ledger.balance(accountId)).toBe(5);
    expect((await gw.post("/api/v1/ai/word-count", { text: "unlocked" }, { "x-api-key": key })).status).toBe(200);
  });

  test("every generated migration is embedded", () => {
    const journal = JSON.parse(readFileSync(new URL("../../drizzle/meta/_journal.json", import.meta.url), "utf8")) as {
      entries: { tag: string }[];
    };
    expect(MIGRATIONS.map((m) => m.tag)).toEqual(journal.entries.map((e) => e.tag));
    for (const m of MIGRATIONS) expect(m.sql).toBe(readFileSync(new URL(`../../drizzle/${m.tag}.sql`, import.meta.url), "utf8"));
  });
});

describe("configuration", () => {
  test("bad values stop start-up with a message naming the key", () => {
    expect(() => loadConfig({ PORT: "eighty" })).toThrow(/PORT/);
    // environment variables go through a schema too: whole numbers only, ranges, closed sets
    expect(() => loadConfig({ TEXTAI_WELCOME_CREDITS: "1.5" })).toThrow(/TEXTAI_WELCOME_CREDITS: expected integer, got "1.5"/);
    expect(() => loadConfig({ TEXTAI_DB_BUSY_TIMEOUT_MS: "1e3" })).toThrow(/TEXTAI_DB_BUSY_TIMEOUT_MS/);
    expect(() => loadConfig({ PORT: "70000" })).toThrow(/PORT: .*65535/);
    expect(() => loadConfig({ TEXTAI_LOG_LEVEL: "loud" })).toThrow(/TEXTAI_LOG_LEVEL: one of debug, info, warn, error/);
    expect(() => loadConfig({ TEXTAI_DRAIN_DEADLINE_MS: "0" })).toThrow(/TEXTAI_DRAIN_DEADLINE_MS/);
    expect(loadConfig({ PORT: " 9090 ", TEXTAI_WELCOME_CREDITS: "", TEXTAI_LOG_LEVEL: "warn" })).toMatchObject({
      port: 9090,
      welcomeCredits: 100,
      logLevel: "warn",
    });
    expect(() => loadConfig({ TEXTAI_CONFIG: "x.toml" }, "[cache]\nttl_seconds = -1\n")).toThrow(/cache\.ttl_seconds/);
    expect(() => loadConfig({ TEXTAI_CONFIG: "x.toml" }, '[routes]\n"chat" = ["nobody"]\n')).toThrow(/routes\.chat/);
    expect(() => loadConfig({ TEXTAI_CONFIG: "x.toml" }, "bogus_key = 1\n")).toThrow(ConfigError);
    expect(() => loadConfig({ TEXTAI_CONFIG: "x.json" }, '{"limits":{"max_body_bytes":"big"}}')).toThrow(
      /limits\.max_body_bytes/,
    );
  });

  test("a typo in [costs], [routes], a plan's rate_limits or [hedge_after_ms] stops `textai serve` naming the table, the key and the known names; known names start", async () => {
    const dir = mkdtempSync(join(tmpdir(), "textai-config-"));
    const serve = async (toml: string) => {
      writeFileSync(join(dir, "config.toml"), toml);
      const p = Bun.spawn([process.execPath, join(import.meta.dir, "../../src/cli.ts"), "serve", "--port", "0"], {
        env: { ...process.env, TEXTAI_CONFIG: join(dir, "config.toml"), TEXTAI_DB: join(dir, "t.db") },
        stdout: "pipe",
        stderr: "pipe",
      });
      const exited = await Promise.race([p.exited, Bun.sleep(15_000).then(() => null)]);
      if (exited === null) p.kill();
      return { code: exited, err: await new Response(p.stderr).text() };
    };
    try {
      const cost = await serve('[costs]\n"content-generaton" = 3\n');
      expect(cost.code, cost.err).toBe(2);
      expect(cost.err).toContain("error: costs.content-generaton: unknown function (one of ");
      expect(cost.err).toContain("content-generation, ");
      expect(cost.err).toContain("knowledge-indexing");
      const route = await serve('[routes]\n"sentimnt-analysis" = ["local"]\n');
      expect(route.code, route.err).toBe(2);
      expect(route.err).toMatch(/routes\.sentimnt-analysis: unknown function \(one of .*sentiment-analysis.*chat-completions/);
      const provider = await serve('[routes]\n"sentiment-analysis" = ["locl"]\n');
      expect(provider.code, provider.err).toBe(2);
      expect(provider.err).toContain('routes.sentiment-analysis: unknown provider "locl" (did you mean "local"?) (one of local)');
      const limit = await serve('[plans.free.rate_limits]\n"sentiment-analysys" = 5\n');
      expect(limit.code, limit.err).toBe(2);
      expect(limit.err).toMatch(
        /plans\.free\.rate_limits\.sentiment-analysys: unknown function \(one of .*key-create.*heavy, bulk, standard\)/,
      );
      const hedge = await serve('[hedge_after_ms]\n"sentiment" = 200\n');
      expect(hedge.code, hedge.err).toBe(2);
      expect(hedge.err).toContain("error: hedge_after_ms.sentiment: unknown function (one of ");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // every kind of name the tables hold starts: functions, knowledge functions and uploads, /v1 routes
    const ok = await startGateway({
      configText:
        '[routes]\n"sentiment-analysis" = ["local"]\n"chat-completions" = ["local"]\n"chatbot-chat" = ["local"]\n' +
        '[costs]\n"text-summarize" = 3\n"knowledge-indexing" = 2\n"faq-match" = 1\n' +
        '[hedge_after_ms]\n"sentiment-analysis" = 300\n' +
        '[plans.free.rate_limits]\n"sentiment-analysis" = 5\n"chat-completions" = 5\n"key-create" = 2\naccount = 9\n"chatbots" = 3\nheavy = 4\n',
    });
    expect((await ok.get("/ready")).status).toBe(200);
    await ok.close();
  });

  test("environment providers are enabled by their keys", () => {
    const c = loadConfig({ OPENAI_API_KEY: "sk-test", GROQ_API_KEY: "gsk-test" });
    expect(c.providers.map((p) => p.name)).toEqual(["openai", "groq", "local"]);
  });
});
