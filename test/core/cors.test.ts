/**
 * CORS (docs/configuration.md#cors): off by default; with `[cors] allowed_origins`, browser pages of
 * those origins get their preflights answered and can read every API answer (successes, refusals,
 * streams), while other origins, the dashboard and the admin API get nothing. A real server on a real
 * port; the browser's own behaviour in headless Chromium (a page served from another port calling the
 * gateway with fetch, allowed and not).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { loadConfig } from "../../src/config";
import { skipBrowser } from "../dashboard/browser-suite";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";

const PAGE_ORIGIN_HOST = "127.0.0.1";
const ALLOWED = "http://app.example.test:5173";
const ADMIN = "admin-token-cors-0123456789abcdef";
const SA = "/api/v1/ai/sentiment-analysis";
const CHAT = "/v1/chat/completions";

const preflight = (gw: TestGateway, path: string, origin: string, extra: Record<string, string> = {}) =>
  fetch(gw.url + path, {
    method: "OPTIONS",
    headers: { origin, "access-control-request-method": "POST", ...extra },
  });

describe("CORS off (the default)", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(() => gw?.close());

  test("no CORS header on any answer, a preflight is a method not allowed", async () => {
    const pre = await preflight(gw, SA, ALLOWED);
    expect(pre.status).toBe(405);
    expect(pre.headers.get("access-control-allow-origin")).toBeNull();
    const { key } = gw.newKey({ credits: 10 });
    const r = await gw.post(SA, { text: "I love it" }, { "x-api-key": key, origin: ALLOWED });
    expect(r.status).toBe(200);
    expect(r.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("CORS on for one origin", () => {
  let gw: TestGateway;
  let up: Upstream;
  let key: string;
  beforeAll(async () => {
    up = await startUpstream();
    gw = await startGateway({
      env: { TEXTAI_ADMIN_TOKEN: ADMIN },
      configText: `${simProvider({ url: `${up.url}/v1`, model: "sim-model" })}\n[cors]\nallowed_origins = ["${ALLOWED}"]\nmax_age_seconds = 120\n`,
    });
    key = gw.newKey({ credits: 100 }).key;
  });
  afterAll(async () => {
    await gw?.close();
    up?.close();
  });

  test("a preflight of the allowed origin is answered 204 with the route's methods and the headers asked for", async () => {
    const pre = await preflight(gw, CHAT, ALLOWED, {
      "access-control-request-headers": "authorization, content-type, x-stainless-os, idempotency-key",
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe(ALLOWED);
    expect(pre.headers.get("access-control-allow-methods")).toBe("POST");
    expect(pre.headers.get("access-control-allow-headers")).toBe("authorization, content-type, x-stainless-os, idempotency-key");
    expect(pre.headers.get("access-control-max-age")).toBe("120");
    expect(pre.headers.get("access-control-allow-credentials")).toBeNull();
    expect(pre.headers.get("vary")).toContain("Origin");
    expect(pre.headers.get("x-request-id")).toMatch(/^req_/);
    // a GET route's methods
    const models = await fetch(`${gw.url}/v1/models`, {
      method: "OPTIONS",
      headers: { origin: ALLOWED, "access-control-request-method": "GET" },
    });
    expect(models.status).toBe(204);
    expect(models.headers.get("access-control-allow-methods")).toContain("GET");
  });

  test("another origin, a path no route has, the dashboard and the admin API get no preflight", async () => {
    for (const [path, origin] of [
      [CHAT, "http://evil.example.test"],
      [CHAT, `${ALLOWED}/`],
      ["/api/v1/ai/no-such-function", ALLOWED],
      ["/dashboard/login", ALLOWED],
      ["/admin/v1/keys", ALLOWED],
    ] as const) {
      const pre = await preflight(gw, path, origin);
      expect([path, origin, pre.status, pre.headers.get("access-control-allow-methods")]).toEqual([
        path,
        origin,
        path.includes("no-such") ? 404 : 405,
        null,
      ]);
      // (an API path's 404 may be read by the allowed origin's page; nothing else may be read at all)
      if (!path.includes("no-such")) expect(pre.headers.get("access-control-allow-origin")).toBeNull();
    }
    const admin = await fetch(`${gw.url}/admin/v1/keys`, { headers: { authorization: `Bearer ${ADMIN}`, origin: ALLOWED } });
    expect(admin.status).toBe(200);
    expect(admin.headers.get("access-control-allow-origin")).toBeNull();
  });

  test("every API answer of the allowed origin can be read: success, refusal, too large, stream", async () => {
    const o = { origin: ALLOWED };
    const ok = await gw.post(SA, { text: "I love it" }, { ...o, "x-api-key": key });
    const noKey = await gw.post(SA, { text: "I love it" }, o);
    const tooLarge = await fetch(gw.url + SA, {
      method: "POST",
      headers: { ...o, "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ text: "x".repeat(2 * 1024 * 1024) }),
    });
    const chat = await gw.post(
      CHAT,
      { model: "sim-model", messages: [{ role: "user", content: "hi" }] },
      { ...o, authorization: `Bearer ${key}` },
    );
    const stream = await fetch(gw.url + CHAT, {
      method: "POST",
      headers: { ...o, authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "sim-model", stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    const streamed = await stream.text();
    const seen = [ok, noKey, tooLarge, chat, stream].map((r) => [
      r.status,
      r.headers.get("access-control-allow-origin"),
      r.headers.get("access-control-expose-headers")?.includes("x-request-id") ?? false,
    ]);
    expect(seen).toEqual([
      [200, ALLOWED, true],
      [401, ALLOWED, true],
      [413, ALLOWED, true],
      [200, ALLOWED, true],
      [200, ALLOWED, true],
    ]);
    expect(streamed).toContain("data: [DONE]");
    // and an origin not listed, or none: answered as ever, with nothing a browser would let its page
    // read, and Vary: Origin all the same (a cache keeps the answers of each origin apart)
    const other = await gw.post(SA, { text: "I love it" }, { origin: "http://evil.example.test", "x-api-key": key });
    const none = await gw.get("/v1/models", { authorization: `Bearer ${key}` });
    expect([other.status, none.status]).toEqual([200, 200]);
    for (const r of [other, none]) {
      expect(r.headers.get("access-control-allow-origin")).toBeNull();
      expect(r.headers.get("vary")).toContain("Origin");
    }
    // a 405's Allow can be read by the page
    const wrongMethod = await fetch(gw.url + SA, { method: "PUT", headers: { ...o, "x-api-key": key } });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get("access-control-expose-headers")).toContain("allow");
  });
});

describe("CORS settings are checked at start-up", () => {
  test.each([
    ['["https://app.example.com/"]', "not an origin"],
    ['["app.example.com"]', "not an origin"],
    ['["https://app.example.com/path"]', "not an origin"],
    ['["ftp://app.example.com"]', "not an origin"],
    ['["*", "https://app.example.com"]', "list it alone"],
  ])("%s is refused", (origins, message) => {
    const file = join(mkdtempSync(join(tmpdir(), "textai-cors-")), "config.toml");
    writeFileSync(file, `[cors]\nallowed_origins = ${origins}\n`);
    expect(() => loadConfig({ TEXTAI_DB: ":memory:", TEXTAI_CONFIG: file })).toThrow(message);
  });
});

const CHROMIUM = "/usr/bin/chromium";
describe.skipIf(skipBrowser || (!existsSync(CHROMIUM) && process.env.CI !== "true"))("CORS in headless Chromium", () => {
  let gw: TestGateway;
  let page: ReturnType<typeof Bun.serve>;
  let other: ReturnType<typeof Bun.serve>;
  let browser: Browser;
  let key: string;
  const html = "<!doctype html><title>app</title><p>app</p>";
  beforeAll(async () => {
    page = Bun.serve({
      port: 0,
      hostname: PAGE_ORIGIN_HOST,
      fetch: () => new Response(html, { headers: { "content-type": "text/html" } }),
    });
    other = Bun.serve({
      port: 0,
      hostname: PAGE_ORIGIN_HOST,
      fetch: () => new Response(html, { headers: { "content-type": "text/html" } }),
    });
    gw = await startGateway({ configText: `[cors]\nallowed_origins = ["http://${PAGE_ORIGIN_HOST}:${page.port}"]\n` });
    key = gw.newKey({ credits: 100 }).key;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
    page?.stop(true);
    other?.stop(true);
  });

  /** What a page of `origin` gets from fetch to the gateway with the key as a header (a preflighted request). */
  const callFrom = async (origin: string) => {
    const p = await browser.newPage();
    try {
      await p.goto(origin);
      return await p.evaluate(
        async ([url, k]) => {
          try {
            const r = await fetch(url, {
              method: "POST",
              headers: { authorization: `Bearer ${k}`, "content-type": "application/json" },
              body: JSON.stringify({ text: "I love this product" }),
            });
            const body = (await r.json()) as { data?: { result?: { label?: string } } };
            return { status: r.status, requestId: r.headers.get("x-request-id"), label: body.data?.result?.label ?? null };
          } catch (e) {
            return { error: String(e) };
          }
        },
        [gw.url + SA, key] as const,
      );
    } finally {
      await p.close();
    }
  };

  test("the allowed origin's page reads the answer and its headers; another origin's page is refused by the browser", async () => {
    const allowed = await callFrom(`http://${PAGE_ORIGIN_HOST}:${page.port}/`);
    expect(allowed).toMatchObject({ status: 200, label: "positive" });
    expect((allowed as { requestId: string }).requestId).toMatch(/^req_/);
    const refused = await callFrom(`http://${PAGE_ORIGIN_HOST}:${other.port}/`);
    expect(refused).toEqual({ error: "TypeError: Failed to fetch" });
  }, 30_000);
});
