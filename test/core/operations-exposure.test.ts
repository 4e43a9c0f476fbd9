import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { ConfigError, loadConfig } from "../../src/config";
import { PortInUse, startServer } from "../../src/server";
import { wordCount } from "../helpers/echo-function";
import { startGateway, type TestGateway } from "../helpers/gateway";

const ADMIN = "operations-admin-token-0123456789abcdef0123456789";
const operator = { authorization: `Bearer ${ADMIN}` };
const CONFIG = `metrics_listen = "127.0.0.1:0"\n\n[[providers]]\nname = "secret-upstream"\ntype = "mock"\n`;

/** Series of one metric as label text -> value. */
function series(text: string, name: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    const m = line.match(/^(\w+)(\{[^}]*\})? (\S+)$/);
    if (m && m[1] === name) out.set(m[2] ?? "", Number(m[3]));
  }
  return out;
}

describe("with an admin token and metrics_listen", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ functions: [wordCount], env: { TEXTAI_ADMIN_TOKEN: ADMIN }, configText: CONFIG });
    const { key } = gw.newKey({ credits: 10 });
    expect((await gw.post("/api/v1/ai/word-count", { text: "tenant traffic" }, { "x-api-key": key })).status).toBe(200);
  });
  afterAll(() => gw.close());

  test("liveness and readiness stay open; provider names and states, and engine parts, only for the admin token", async () => {
    expect((await gw.get("/health")).status).toBe(200);
    const anyone = await fetch(`${gw.url}/ready`);
    const text = await anyone.text();
    expect(anyone.status).toBe(200);
    const result = JSON.parse(text).data.result;
    expect(result).toMatchObject({ status: "ready", database: "ok", missing: [], draining: false });
    expect(result.providers).toBeUndefined();
    expect(result.engines_loaded).toBeUndefined();
    expect(text).not.toContain("secret-upstream");
    const op = await gw.get("/ready", operator);
    expect(op.json.data.result.providers["secret-upstream"]).toMatchObject({ state: "closed" });
    expect(Array.isArray(op.json.data.result.engines_loaded)).toBe(true);
    // a wrong token is simply not the operator
    expect((await gw.get("/ready", { authorization: "Bearer nope" })).json.data.result.providers).toBeUndefined();
  });

  test("/metrics on the main listener: 403 without the admin token or with a wrong one; the text with it", async () => {
    const attempts: Record<string, string>[] = [{}, { authorization: "Bearer nope" }, { "x-api-key": ADMIN }];
    for (const headers of attempts) {
      const res = await fetch(`${gw.url}/metrics`, { headers });
      const body = await res.text();
      expect(res.status).toBe(403);
      expect(JSON.parse(body)).toMatchObject({ success: false, error: { code: "forbidden" } });
      expect(body).not.toContain("textai_");
      expect(body).not.toContain("word-count");
    }
    const res = await fetch(`${gw.url}/metrics`, { headers: operator });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    const text = await res.text();
    expect(text).toContain('textai_requests_total{function="word-count",status="200"}');
    expect(text).toContain('textai_provider_circuit_open{provider="secret-upstream"}');
  });

  test("the metrics_listen address serves /metrics without a token, and nothing else", async () => {
    expect(gw.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(gw.metricsUrl).not.toBe(gw.url);
    const res = await fetch(`${gw.metricsUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    expect(await res.text()).toContain('textai_requests_total{function="word-count",status="200"}');
    const other = await fetch(`${gw.metricsUrl}/api/v1/account/usage`);
    expect(other.status).toBe(404);
    const body = (await other.json()) as { request_id: string; error: { code: string } };
    expect(body.error.code).toBe("not_found");
    expect(other.headers.get("x-request-id")).toBe(body.request_id);
    const post = await fetch(`${gw.metricsUrl}/metrics`, { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET");
  });

  test("textai_heap_bytes names what Bun reports, with no used above total", async () => {
    const text = await (await fetch(`${gw.metricsUrl}/metrics`)).text();
    const heap = series(text, "textai_heap_bytes");
    expect([...heap.keys()].sort()).toEqual(['{kind="block_capacity"}', '{kind="external"}', '{kind="live_after_gc"}']);
    for (const v of heap.values()) expect(v).toBeGreaterThanOrEqual(0);
    expect(heap.get('{kind="live_after_gc"}')).toBeGreaterThan(0);
    // the HELP line says why live_after_gc may exceed block_capacity
    expect(text).toMatch(/# HELP textai_heap_bytes .*large objects not included/);
  });
});

describe("without an admin token", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ functions: [wordCount] });
  });
  afterAll(() => gw.close());

  test("/metrics on the main listener is a 404 saying how to expose it; /ready and /health answer", async () => {
    const res = await gw.get("/metrics");
    expect(res.status).toBe(404);
    expect(res.json.message).toContain("TEXTAI_ADMIN_TOKEN");
    expect(res.json.message).toContain("metrics_listen");
    expect(gw.metricsUrl).toBeUndefined();
    expect((await gw.get("/ready")).status).toBe(200);
    expect((await gw.get("/health")).status).toBe(200);
  });
});

describe("metrics_listen configuration", () => {
  test("host:port from the file or TEXTAI_METRICS_LISTEN (which wins); a bad value names its key", () => {
    expect(loadConfig({}, 'metrics_listen = "0.0.0.0:9464"').metricsListen).toEqual({ host: "0.0.0.0", port: 9464 });
    expect(loadConfig({}, 'metrics_listen = "[::1]:9464"').metricsListen).toEqual({ host: "::1", port: 9464 });
    expect(loadConfig({}, 'metrics_listen = ":9464"').metricsListen).toEqual({ host: "127.0.0.1", port: 9464 });
    expect(loadConfig({ TEXTAI_METRICS_LISTEN: "127.0.0.2:9000" }, 'metrics_listen = "0.0.0.0:9464"').metricsListen).toEqual({
      host: "127.0.0.2",
      port: 9000,
    });
    expect(loadConfig({}).metricsListen).toBeNull();
    expect(() => loadConfig({}, 'metrics_listen = "9464"')).toThrow(ConfigError);
    expect(() => loadConfig({}, 'metrics_listen = "9464"')).toThrow(/metrics_listen/);
    expect(() => loadConfig({ TEXTAI_METRICS_LISTEN: "localhost:99999" })).toThrow(/TEXTAI_METRICS_LISTEN/);
    expect(() => loadConfig({}, "metrics_listen = 9464")).toThrow(/metrics_listen/);
  });

  test("a taken metrics port stops the start with PortInUse, and the main port is released", async () => {
    const taken = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("other") });
    const spare = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("spare") });
    const mainPort = spare.port;
    spare.stop(true);
    try {
      const config = loadConfig({
        TEXTAI_DB: ":memory:",
        PORT: String(mainPort),
        TEXTAI_LOG_LEVEL: "error",
        TEXTAI_METRICS_LISTEN: `127.0.0.1:${taken.port}`,
      });
      expect(() => startServer(config)).toThrow(PortInUse);
      // the main listener it had opened is closed again
      const again = Bun.serve({ hostname: "127.0.0.1", port: mainPort, reusePort: false, fetch: () => new Response("") });
      again.stop(true);
    } finally {
      taken.stop(true);
    }
  });

  test("the metrics listener closes with the gateway", async () => {
    const gw = await startGateway({ configText: CONFIG });
    const port = Number(new URL(gw.metricsUrl ?? "").port);
    expect((await fetch(`${gw.metricsUrl}/metrics`)).status).toBe(200);
    await gw.close();
    const refused = await new Promise<boolean>((resolve) => {
      const s = connect(port, "127.0.0.1");
      s.once("connect", () => {
        s.destroy();
        resolve(false);
      });
      s.once("error", () => resolve(true));
    });
    expect(refused).toBe(true);
  });
});
