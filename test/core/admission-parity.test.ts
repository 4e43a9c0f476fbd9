/**
 * Issue 37, one admission path: the function pipeline (http/pipeline.ts) and the /v1 proxy
 * pipeline (http/proxy-pipeline.ts) share one admission stage (http/admission.ts) and one charge
 * lifecycle (credits/charged-answer.ts). The same cases run through a function endpoint
 * (POST /api/v1/ai/translation, routed to the upstream simulator) and through
 * /v1/chat/completions, plain and streamed (the official OpenAI SDK), and through /v1/messages
 * (Anthropic's SDK: its body translated to a chat one), on a real server on a real port, and must end the same way: key policy, guardrails, cache, the key's own rate limit, the
 * charge. Run on the embedded services (the edge takes the limit) and, when the shared servers
 * are up, with Redis (a function call takes it in its first trip).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import type { ErrorCode } from "../../src/errors";
import { readJson } from "../../src/http/body";
import { messagesErrorType } from "../../src/http/messages-errors";
import { ProxyPipeline } from "../../src/http/proxy-pipeline";
import { newRequestState } from "../../src/http/state";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { freshRedis, sharedServersUp, type TestRedis } from "../helpers/shared-servers";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";

const ADMIN = "admission-parity-admin-token-0123456789abcdef";
const CARD = "4111 1111 1111 1111";
const ROOT = join(import.meta.dir, "../..");

type Path = "function" | "chat" | "stream" | "messages";
const PATHS: Path[] = ["function", "chat", "stream", "messages"];

/** A refusal as `path` tells it: the gateway's code, or on /v1/messages (Anthropic's shape, which has no code) the code's Anthropic type. */
const want = (path: Path, status: number, code: ErrorCode) => ({
  status,
  code: path === "messages" ? messagesErrorType(code) : code,
});

/** What a call ended as, the same way whatever the path: status, error code, cache, Retry-After. */
interface Outcome {
  status: number;
  code: string | null;
  cache: string | null;
  retryAfter: string | null;
  /** credits the answer says it charged (plain answers) */
  deducted: number | null;
}

function backend(name: string, redisEnv: () => Promise<TestRedis | null>) {
  describe(`the same admission for a function and /v1 (${name})`, () => {
    let sim: Upstream;
    let gw: TestGateway;
    let redis: TestRedis | null = null;
    beforeAll(async () => {
      redis = await redisEnv();
      sim = await startUpstream();
      gw = await startGateway({
        env: { TEXTAI_ADMIN_TOKEN: ADMIN, ...redis?.env },
        configText: `${simProvider({ url: `${sim.url}/v1`, name: "sim", model: "model-a" })}
[routes]
translation = ["sim"]

[plans.blocking.guardrails]
block_pii = ["credit_card"]
`,
      });
    });
    afterAll(async () => {
      await gw?.close();
      await sim?.close();
      await redis?.flush();
    });

    const policy = async (id: string, p: Record<string, unknown>) => {
      const r = await fetch(`${gw.url}/admin/v1/keys/${id}`, {
        method: "PATCH",
        headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
        body: JSON.stringify({ policy: p }),
      });
      expect(r.status, await r.clone().text()).toBe(200);
    };

    /** One call of `text` through `path`; the function's answer is programmed to be a valid translation. */
    async function call(path: Path, key: string, text: string, headers: Record<string, string> = {}): Promise<Outcome> {
      if (path === "function") {
        sim.program([{ content: JSON.stringify({ translated_text: "Hola", source_language: "en", target_language: "es" }) }]);
        const r = await gw.post("/api/v1/ai/translation", { text, target_language: "es" }, { "x-api-key": key, ...headers });
        return {
          status: r.status,
          code: r.status === 200 ? null : String(r.json.error?.code),
          cache: r.headers.get("x-cache"),
          retryAfter: r.headers.get("retry-after"),
          deducted: r.status === 200 ? Number(r.json.meta.credits_deducted) : null,
        };
      }
      if (path === "messages") return messagesCall(key, text, headers);
      const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0, defaultHeaders: headers });
      const messages = [{ role: "user" as const, content: text }];
      try {
        if (path === "chat") {
          const { response } = await client.chat.completions.create({ model: "model-a", messages }).withResponse();
          return {
            status: response.status,
            code: null,
            cache: response.headers.get("x-cache"),
            retryAfter: response.headers.get("retry-after"),
            deducted: Number(response.headers.get("x-textai-credits-deducted")),
          };
        }
        const { data: stream, response } = await client.chat.completions
          .create({ model: "model-a", messages, stream: true })
          .withResponse();
        let chunks = 0;
        for await (const _ of stream) chunks++;
        expect(chunks).toBeGreaterThan(0);
        return { status: response.status, code: null, cache: response.headers.get("x-cache"), retryAfter: null, deducted: null };
      } catch (e) {
        if (!(e instanceof OpenAI.APIError)) throw e;
        return {
          status: e.status ?? 0,
          code: e.code ?? null,
          cache: null,
          retryAfter: e.headers?.get("retry-after") ?? null,
          deducted: null,
        };
      }
    }

    /** One call of `text` through /v1/messages with Anthropic's SDK. */
    async function messagesCall(key: string, text: string, headers: Record<string, string>): Promise<Outcome> {
      const client = new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0, defaultHeaders: headers });
      try {
        const { response } = await client.messages
          .create({ model: "model-a", max_tokens: 200, messages: [{ role: "user", content: text }] })
          .withResponse();
        return {
          status: response.status,
          code: null,
          cache: response.headers.get("x-cache"),
          retryAfter: response.headers.get("retry-after"),
          deducted: Number(response.headers.get("x-textai-credits-deducted")),
        };
      } catch (e) {
        if (!(e instanceof Anthropic.APIError)) throw e;
        const body = e.error as { error?: { type?: string } } | undefined;
        return {
          status: e.status ?? 0,
          code: body?.error?.type ?? null,
          cache: null,
          retryAfter: e.headers?.get("retry-after") ?? null,
          deducted: null,
        };
      }
    }

    const balance = async (accountId: string) => Number(await gw.deps.ledger.balance(accountId));
    /** the part of an outcome every path shares (a stream has no X-Cache and no credit header) */
    const refused = (o: Outcome) => ({ status: o.status, code: o.code });

    test("key policy: a model or a function the key may not use is the same 403 on every path, uncharged, sent nowhere", async () => {
      for (const path of PATHS) {
        const models = gw.newKey({ credits: 100 });
        await policy(models.id, { allowed_models: ["some-other-model"] });
        const fns = gw.newKey({ credits: 100 });
        await policy(fns.id, { allowed_functions: ["sentiment-analysis"] });
        const sent = sim.calls.count;
        expect(refused(await call(path, models.key, "Hello there")), path).toEqual(want(path, 403, "forbidden"));
        expect(refused(await call(path, fns.key, "Hello there")), path).toEqual(want(path, 403, "forbidden"));
        expect(sim.calls.count, path).toBe(sent);
        expect(await balance(models.accountId), path).toBe(100);
        expect(await balance(fns.accountId), path).toBe(100);
      }
    });

    test("guardrails: a blocked kind is the same 422 on every path, uncharged, sent nowhere", async () => {
      for (const path of PATHS) {
        const k = gw.newKey({ credits: 100, plan: "blocking" });
        const sent = sim.calls.count;
        expect(refused(await call(path, k.key, `Charge my card ${CARD} please`)), path).toEqual(
          want(path, 422, "guardrail_blocked"),
        );
        expect(sim.calls.count, path).toBe(sent);
        expect(await balance(k.accountId), path).toBe(100);
      }
    });

    test("cache: the repeat is a HIT on both plain paths, Cache-Control: no-cache bypasses it; a stream never is", async () => {
      for (const path of ["function", "chat", "messages"] as const) {
        const k = gw.newKey({ credits: 100 });
        const text = `Cache me through ${path} ${crypto.randomUUID()}`;
        const sent = sim.calls.count;
        expect((await call(path, k.key, text)).cache, path).toBe("MISS");
        expect((await call(path, k.key, text)).cache, path).toBe("HIT");
        expect(sim.calls.count, path).toBe(sent + 1);
        expect((await call(path, k.key, text, { "cache-control": "no-cache" })).cache, path).toBe("MISS");
        expect(sim.calls.count, path).toBe(sent + 2);
      }
      const k = gw.newKey({ credits: 100 });
      const text = `Stream me ${crypto.randomUUID()}`;
      const sent = sim.calls.count;
      expect((await call("stream", k.key, text)).status).toBe(200);
      expect((await call("stream", k.key, text)).status).toBe(200);
      expect(sim.calls.count).toBe(sent + 2);
    });

    test("rate limit: the key's own bucket, once empty, is the same 429 with Retry-After on every path", async () => {
      // with Redis a function call's limit is taken in its first trip (callstart/), /v1's at the edge
      expect(gw.deps.callStarter != null).toBe(redis !== null);
      for (const path of PATHS) {
        const k = gw.newKey({ credits: 100 });
        await policy(k.id, { rate_limit_per_minute: 2 });
        for (let i = 0; i < 2; i++) expect((await call(path, k.key, `Within the limit ${i}`)).status, path).toBe(200);
        const before = await balance(k.accountId);
        const sent = sim.calls.count;
        const limited = await call(path, k.key, "One too many");
        expect(refused(limited), path).toEqual(want(path, 429, "rate_limited"));
        expect(Number(limited.retryAfter), path).toBeGreaterThanOrEqual(1);
        expect(sim.calls.count, path).toBe(sent);
        expect(await balance(k.accountId), path).toBe(before);
      }
    });

    test("charge: an answer is charged once, what it says it charged; no credits is the same 402 on every path", async () => {
      for (const path of PATHS) {
        const k = gw.newKey({ credits: 100 });
        const o = await call(path, k.key, `Charge me once ${crypto.randomUUID()}`);
        expect(o.status, path).toBe(200);
        // a stream is charged when it has ended: its last chunk has been read by now, the charge follows
        let spent = 100 - (await balance(k.accountId));
        for (let i = 0; i < 40 && spent === 0; i++) {
          await Bun.sleep(25);
          spent = 100 - (await balance(k.accountId));
        }
        expect(spent, path).toBeGreaterThan(0);
        if (o.deducted !== null) expect(spent, path).toBe(o.deducted);
        await Bun.sleep(50);
        expect(100 - (await balance(k.accountId)), path).toBe(spent);

        const broke = gw.newKey({ credits: 0 });
        const sent = sim.calls.count;
        expect(refused(await call(path, broke.key, "No credits left")), path).toEqual(want(path, 402, "insufficient_credits"));
        expect(sim.calls.count, path).toBe(sent);
      }
    });
  });
}

backend("embedded services", async () => null);
backend("Redis", async () => ((await sharedServersUp("the admission parity test on Redis")) ? freshRedis() : null));

describe("an inbound API's route hands the proxy pipeline a body of its own", () => {
  let sim: Upstream;
  let gw: TestGateway;
  beforeAll(async () => {
    sim = await startUpstream();
    gw = await startGateway({ configText: simProvider({ url: `${sim.url}/v1`, name: "sim", model: "model-a" }) });
  });
  afterAll(async () => {
    await gw?.close();
    await sim?.close();
  });

  test("the translated body goes upstream, never the client's own bytes of another shape", async () => {
    const k = gw.newKey({ credits: 100 });
    // another vendor's body (Anthropic's Messages: the system prompt beside the messages), read as the edge reads it
    const theirs = { model: "model-a", system: "Be brief.", max_tokens: 20, messages: [{ role: "user", content: "Hello" }] };
    const request = new Request(`${gw.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(theirs),
    });
    const state = newRequestState("req_parity_inbound");
    const read = await readJson(request, gw.deps.config.limits);
    state.sentBody = read.sent;
    state.bodyBytes = read.bytes;
    state.parsedBody = read.body;
    const ours = {
      model: "model-a",
      max_tokens: 20,
      messages: [{ role: "system", content: "Be brief." }, ...(read.body.messages as unknown[])],
    };
    const auth = { keyId: k.id, accountId: k.accountId, plan: "free", label: "parity" };
    const from = sim.calls.requests.length;
    const res = await new ProxyPipeline(gw.deps).handle("chat/completions", request, state, { auth, body: ours });
    expect(res.status).toBe(200);
    expect(sim.calls.requests.slice(from).map((r) => r.body)).toEqual([ours]);
    expect(100 - Number(await gw.deps.ledger.balance(k.accountId))).toBe(Number(res.headers.get("x-textai-credits-deducted")));
  });
});

describe("one admission stage in the source", () => {
  const src = (f: string) => readFileSync(join(ROOT, "src", f), "utf8");
  test("the /v1 route files are routing only: no policy, guardrail, cache, credit or error rendering of their own", () => {
    for (const file of ["http/routes/openai-compat.ts", "http/routes/messages.ts"]) {
      const route = src(file);
      expect(route.split("\n").length, file).toBeLessThanOrEqual(150);
      for (const own of [
        "checkModel",
        "modelFilter",
        "guardFor",
        "inspectOrRefuse",
        "digest(",
        "reserve(",
        "openAiError",
        "new Response(JSON.stringify({ error",
        "admitGuarded",
        "ledger",
        "errorResponse",
      ])
        expect(route, file).not.toContain(own);
    }
  });
  test("both pipelines take the key policy, guardrails and cache key from http/admission.ts, and only it decides the limit", () => {
    for (const f of ["http/pipeline.ts", "http/proxy-pipeline.ts"]) {
      const s = src(f);
      for (const step of ["admitModels(", "admitGuarded(", "cacheWanted(", "cacheKeyOf("])
        expect(s, `${f} ${step}`).toContain(step);
      expect(s, f).not.toMatch(/no-cache\|no-store|checkModel\(|noAllowedModel\(|inspectOrRefuse\(|applyLimit|takeLimit/);
    }
    expect(src("http/edge.ts")).not.toMatch(/function (applyLimit|takeLimit)|limitDeferred =/);
  });
});
