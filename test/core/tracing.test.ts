// Tracing (CONTRACT section 13): a real gateway exports over OTLP/HTTP to a receiver on a real port,
// which decodes every span; the upstream simulator records the traceparent each provider call carried.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, loadConfig } from "../../src/config";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { KIND, type OtlpReceiver, type ReceivedSpan, STATUS_ERROR, startOtlpReceiver } from "../helpers/otlp";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";

const ROOT = join(import.meta.dir, "../..");
/** in every body sent below: it must never reach an export */
const MARKER = `body-marker-${crypto.randomUUID()}`;

let otlp: OtlpReceiver;
let sim: Upstream;
let gw: TestGateway;
let key: string;

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  sim = await startUpstream();
  const url = `${sim.url}/v1`;
  gw = await startGateway({
    functions: undefined,
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: `${otlp.url}/`, OTEL_BSP_SCHEDULE_DELAY: "20", OTEL_SERVICE_NAME: "gateway-under-test" },
    configText: [
      simProvider({ url, name: "primary", model: "model-a" }),
      simProvider({ url, name: "backup", type: "openai", model: "model-b" }),
      "[routes]",
      '"sentiment-analysis" = ["primary", "backup"]',
      '"chat-completions" = ["primary"]',
      "",
    ].join("\n"),
  });
  key = gw.newKey({ credits: 1000 }).key;
});

afterAll(async () => {
  await gw.close();
  await sim.close();
  await otlp.close();
});

beforeEach(() => sim.reset());

const hex = (bytes: number) =>
  [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
const byName = (spans: ReceivedSpan[], name: string) => spans.filter((s) => s.name === name);
const server = (spans: ReceivedSpan[]) => spans.find((s) => s.kind === KIND.SERVER) as ReceivedSpan;

/** The spans of one trace once its server span has arrived (children end first, so they are in the same or an earlier export). */
async function traceOf(traceId: string): Promise<ReceivedSpan[]> {
  await otlp.waitFor((all) => all.filter((s) => s.traceId === traceId && s.kind === KIND.SERVER), 1);
  return otlp.spans.filter((s) => s.traceId === traceId);
}

/** The trace of the request whose answer carried this request id. */
async function traceOfRequest(requestId: string): Promise<ReceivedSpan[]> {
  const [root] = await otlp.waitFor((all) => all.filter((s) => s.attributes["textai.request_id"] === requestId), 1);
  expect(root).toBeDefined();
  return traceOf(root!.traceId);
}

function parseTraceparent(value: string | undefined): { traceId: string; parentId: string; flags: string } {
  const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(value ?? "");
  expect(m, `traceparent ${value}`).not.toBeNull();
  return { traceId: m![1]!, parentId: m![2]!, flags: m![3]! };
}

describe("tracing with OTEL_EXPORTER_OTLP_ENDPOINT", () => {
  test("a function call continues the client's trace: a server span, stage spans and the provider attempt, whose span is the provider call's parent", async () => {
    const traceId = hex(16);
    const clientSpan = hex(8);
    const r = await gw.post(
      "/api/v1/ai/sentiment-analysis",
      { text: `I like this a lot ${MARKER}` },
      { "x-api-key": key, traceparent: `00-${traceId}-${clientSpan}-01` },
    );
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    const spans = await traceOf(traceId);
    const root = server(spans);
    expect(root.parentSpanId).toBe(clientSpan);
    expect(root.name).toBe("POST /api/v1/ai/sentiment-analysis");
    expect(root.service).toBe("gateway-under-test");
    expect(root.attributes).toMatchObject({
      "http.request.method": "POST",
      "http.response.status_code": 200,
      "textai.request_id": r.json.request_id,
      "textai.function": "sentiment-analysis",
      "textai.credits": r.json.meta.credits_deducted,
      "textai.cache": "MISS",
      "gen_ai.system": "primary",
      "gen_ai.request.model": "model-a",
    });
    expect(root.attributes["textai.credits"]).toBeGreaterThan(0);
    expect(root.attributes["gen_ai.usage.input_tokens"]).toBeGreaterThan(0);
    expect(root.attributes["gen_ai.usage.output_tokens"]).toBeGreaterThan(0);

    for (const name of ["authenticate", "cache lookup", "hold credits", "charge"]) {
      const [child] = byName(spans, name);
      expect(child, `span "${name}" in ${spans.map((s) => s.name).join(", ")}`).toBeDefined();
      expect(child!.parentSpanId).toBe(root.spanId);
      expect(child!.startNs).toBeGreaterThanOrEqual(root.startNs);
      expect(child!.endNs).toBeLessThanOrEqual(root.endNs);
    }
    const attempts = spans.filter((s) => s.kind === KIND.CLIENT);
    expect(attempts.length).toBe(1);
    const attempt = attempts[0]!;
    expect(attempt.parentSpanId).toBe(root.spanId);
    expect(attempt.startNs).toBeGreaterThanOrEqual(root.startNs);
    expect(attempt.endNs).toBeLessThanOrEqual(root.endNs);
    expect(attempt.name).toBe("chat model-a");
    expect(attempt.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.system": "primary",
      "gen_ai.request.model": "model-a",
      "gen_ai.usage.input_tokens": root.attributes["gen_ai.usage.input_tokens"],
      "gen_ai.usage.output_tokens": root.attributes["gen_ai.usage.output_tokens"],
    });

    expect(sim.calls.requests.length).toBe(1);
    const sent = parseTraceparent(sim.calls.requests[0]!.headers.traceparent);
    expect(sent).toEqual({ traceId, parentId: attempt.spanId, flags: "01" });
  });

  test("every span lies within its request's span, call after call (all times on one clock, to the nanosecond)", async () => {
    // the SDK turns a plain millisecond time into wall time by an offset it takes per span from
    // Date.now(), so spans' times could disagree by up to 1 ms: a charge ended after its request
    const traceIds: string[] = [];
    for (let i = 0; i < 30; i++) {
      const traceId = hex(16);
      traceIds.push(traceId);
      const r = await gw.post(
        "/api/v1/ai/sentiment-analysis",
        { text: `call ${i} ${crypto.randomUUID()} ${MARKER}` },
        { "x-api-key": key, traceparent: `00-${traceId}-${hex(8)}-01` },
      );
      expect(r.status).toBe(200);
    }
    const outside: string[] = [];
    for (const traceId of traceIds) {
      const spans = await traceOf(traceId);
      const root = server(spans);
      for (const s of spans) {
        if (s === root) continue;
        if (s.startNs < root.startNs || s.endNs > root.endNs || s.endNs < s.startNs)
          outside.push(`${s.name}: ${s.startNs - root.startNs}..${s.endNs - root.endNs} ns`);
      }
    }
    expect(outside).toEqual([]);
  });

  test("each provider attempt is a span of its own: the failed one in error, and each call carried its own span as parent", async () => {
    sim.program([{ status: 503 }]);
    const r = await gw.post("/api/v1/ai/sentiment-analysis", { text: `Rather good, ${MARKER} aside` }, { "x-api-key": key });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json.meta.provider).toBe("backup");
    const spans = await traceOfRequest(r.json.request_id);
    const root = server(spans);
    // no traceparent came in: the gateway started the trace
    expect(root.parentSpanId).toBe("");
    const attempts = spans.filter((s) => s.kind === KIND.CLIENT).sort((a, b) => Number(a.startNs - b.startNs));
    expect(attempts.map((a) => [a.name, a.attributes["textai.provider"], a.attributes["error.type"] ?? "none"])).toEqual([
      ["chat model-a", "primary", "http_503"],
      ["chat model-b", "backup", "none"],
    ]);
    expect(attempts[0]!.status.code).toBe(STATUS_ERROR);
    expect(attempts[1]!.attributes["gen_ai.system"]).toBe("openai");
    expect(root.attributes["gen_ai.system"]).toBe("openai");
    expect(root.attributes["gen_ai.response.model"]).toBe("model-b");

    const sent = sim.calls.requests.map((c) => parseTraceparent(c.headers.traceparent));
    expect(sent.map((s) => s.traceId)).toEqual([root.traceId, root.traceId]);
    expect(sent.map((s) => s.parentId)).toEqual(attempts.map((a) => a.spanId));
  });

  test("a cache hit: a cache lookup and a charge, and no provider attempt", async () => {
    const body = { text: `Same words twice ${MARKER}` };
    const first = await gw.post("/api/v1/ai/sentiment-analysis", body, { "x-api-key": key });
    const hit = await gw.post("/api/v1/ai/sentiment-analysis", body, { "x-api-key": key });
    expect(hit.headers.get("x-cache"), JSON.stringify(hit.json)).toBe("HIT");
    expect(first.status).toBe(200);
    const spans = await traceOfRequest(hit.json.request_id);
    expect(spans.filter((s) => s.kind === KIND.CLIENT)).toEqual([]);
    expect(byName(spans, "cache lookup").length).toBe(1);
    expect(byName(spans, "charge").length).toBe(1);
    expect(byName(spans, "hold credits").length).toBe(0);
    expect(server(spans).attributes).toMatchObject({
      "textai.cache": "HIT",
      "textai.credits": hit.json.meta.credits_deducted,
      "textai.provider": first.json.meta.provider,
      "gen_ai.system": first.json.meta.provider,
    });
    expect(sim.calls.requests.length).toBe(1);
  });

  test("a streamed /v1 chat completion: the server span ends with the stream and carries its usage; the provider got the traceparent", async () => {
    const traceId = hex(16);
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${key}`,
        traceparent: `00-${traceId}-${hex(8)}-01`,
      },
      body: JSON.stringify({ model: "model-a", stream: true, messages: [{ role: "user", content: `Say hi ${MARKER}` }] }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain("[DONE]");
    const spans = await traceOf(traceId);
    const root = server(spans);
    expect(root.name).toBe("POST /v1/chat/completions");
    expect(root.attributes).toMatchObject({ "textai.function": "chat-completions", "gen_ai.request.model": "model-a" });
    expect(root.attributes["textai.credits"]).toBeGreaterThan(0);
    expect(root.attributes["gen_ai.usage.output_tokens"]).toBeGreaterThan(0);
    const [attempt] = spans.filter((s) => s.kind === KIND.CLIENT);
    expect(attempt!.endNs).toBeLessThanOrEqual(root.endNs);
    expect(byName(spans, "charge").length).toBe(1);
    const sent = parseTraceparent(sim.calls.requests[0]!.headers.traceparent);
    expect(sent).toEqual({ traceId, parentId: attempt!.spanId, flags: "01" });
  });

  test("refused and failed requests are traced with their error code only, never their input", async () => {
    const traceId = hex(16);
    const bad = await gw.post(
      "/api/v1/ai/sentiment-analysis",
      // an unknown field is named in the answer's message: the message must not be exported
      { text: "fine", [`x${MARKER}`]: 1 },
      { "x-api-key": key, traceparent: `00-${traceId}-${hex(8)}-01` },
    );
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.json)).toContain(MARKER);
    const root = server(await traceOf(traceId));
    expect(root.attributes).toMatchObject({ "http.response.status_code": 400, "error.type": "invalid_request" });
    // a client error is not the server's: the server span's status stays unset
    expect(root.status.code ?? 0).toBe(0);

    const unknownKey = await gw.post("/api/v1/ai/sentiment-analysis", { text: MARKER }, { "x-api-key": `tai_live_${MARKER}` });
    expect(unknownKey.status).toBe(401);
    const spans = await traceOfRequest(unknownKey.json.request_id);
    expect(server(spans).attributes["error.type"]).toBe(unknownKey.json.error.code);

    sim.program([{ status: 500, times: 2 }]);
    const failed = await gw.post("/api/v1/ai/sentiment-analysis", { text: `No luck ${MARKER}` }, { "x-api-key": key });
    expect(failed.status).toBe(502);
    const failedRoot = server(await traceOfRequest(failed.json.request_id));
    expect(failedRoot.status.code).toBe(STATUS_ERROR);
    expect(failedRoot.attributes["error.type"]).toBe("provider_error");
  });

  test("a traceparent that is not W3C's starts a new trace", async () => {
    const r = await gw.post(
      "/api/v1/ai/sentiment-analysis",
      { text: `New trace ${MARKER}` },
      {
        "x-api-key": key,
        traceparent: `00-${"0".repeat(32)}-${hex(8)}-01`,
      },
    );
    expect(r.status).toBe(200);
    const root = server(await traceOfRequest(r.json.request_id));
    expect(root.parentSpanId).toBe("");
    expect(root.traceId).not.toBe("0".repeat(32));
    expect(parseTraceparent(sim.calls.requests[0]!.headers.traceparent).traceId).toBe(root.traceId);
  });

  test("a caller's trace marked not sampled is continued unrecorded: the provider gets its trace id, nothing is exported", async () => {
    const traceId = hex(16);
    const r = await gw.post(
      "/api/v1/ai/sentiment-analysis",
      { text: `Quietly ${MARKER}` },
      {
        "x-api-key": key,
        traceparent: `00-${traceId}-${hex(8)}-00`,
      },
    );
    expect(r.status).toBe(200);
    const sent = parseTraceparent(sim.calls.requests[0]!.headers.traceparent);
    expect({ traceId: sent.traceId, flags: sent.flags }).toEqual({ traceId, flags: "00" });
    // a later request's trace is exported after it: the unsampled one would have been by then
    const later = await gw.post("/api/v1/ai/sentiment-analysis", { text: `Loudly ${MARKER}` }, { "x-api-key": key });
    await traceOfRequest(later.json.request_id);
    expect(otlp.spans.filter((s) => s.traceId === traceId)).toEqual([]);
  });

  test("no export carries a body: the marker every request above sent appears in none", async () => {
    // the gateway's own last spans are exported at shutdown
    await gw.close();
    expect(otlp.bodies.length).toBeGreaterThan(0);
    expect(otlp.contentTypes.every((t) => t.startsWith("application/json"))).toBe(true);
    expect(otlp.spans.length).toBeGreaterThan(20);
    for (const body of otlp.bodies) expect(body).not.toContain(MARKER);
  });

  test("the endpoint must be an http(s) URL", () => {
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "localhost:4318" })).toThrow(ConfigError);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "grpc://collector:4317" })).toThrow(/http:\/\/ or https:\/\//);
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" }).tracing?.tracesUrl).toBe(
      "http://collector:4318/v1/traces",
    );
    expect(loadConfig({}).tracing).toBeNull();
  });
});

describe("without OTEL_EXPORTER_OTLP_ENDPOINT", () => {
  /**
   * A fresh process serves a function call and reports the OpenTelemetry modules it loaded (the
   * test runner shares one process between files, and this file loads them).
   */
  function loadedIn(extraEnv: Record<string, string>): string[] {
    const dir = mkdtempSync(join(tmpdir(), "textai-otel-lazy-"));
    try {
      const script = `
        const { loadConfig } = require(${JSON.stringify(join(ROOT, "src/config.ts"))});
        const { startServer } = require(${JSON.stringify(join(ROOT, "src/server.ts"))});
        const { createLogger } = require(${JSON.stringify(join(ROOT, "src/log.ts"))});
        const env = { TEXTAI_DB: ${JSON.stringify(join(dir, "t.db"))}, PORT: "0", TEXTAI_DRAIN_GRACE_MS: "0", ...${JSON.stringify(extraEnv)} };
        const s = startServer(loadConfig(env), { logger: createLogger("error", () => {}) });
        const key = s.deps.keys.createKey({ label: "lazy" }).key;
        const r = await fetch(s.url + "/api/v1/ai/sentiment-analysis", {
          method: "POST", headers: { "x-api-key": key, "content-type": "application/json" }, body: '{"text":"lovely"}' });
        if (r.status !== 200) throw new Error("status " + r.status);
        await s.stop();
        // require.cache lists the ES modules Bun loaded too
        console.log(JSON.stringify(Object.keys(require.cache).filter((k) => k.includes("@opentelemetry"))));
        process.exit(0);
      `;
      const p = Bun.spawnSync([process.execPath, "-e", script], { cwd: ROOT, env: { PATH: process.env.PATH ?? "" } });
      expect(p.exitCode, p.stderr.toString()).toBe(0);
      return JSON.parse(p.stdout.toString().trim().split("\n").at(-1) ?? "[]");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  test("no OpenTelemetry module is loaded; with the variable they are", () => {
    expect(loadedIn({})).toEqual([]);
    // the same check sees them when tracing is on (a collector that is not there changes nothing for the answer)
    expect(loadedIn({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9" }).length).toBeGreaterThan(3);
  }, 30_000);

  test("only src/tracing/otel.ts imports an OpenTelemetry package at run time", () => {
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (/\.ts$/.test(entry.name) && path !== join(ROOT, "src/tracing/otel.ts")) {
          const text = readFileSync(path, "utf8");
          if (/(?:import(?!\s+type\b)[^;]*from\s*|require\(\s*|import\(\s*)["']@opentelemetry\//.test(text)) offenders.push(path);
        }
      }
    };
    walk(join(ROOT, "src"));
    expect(offenders).toEqual([]);
  });
});
