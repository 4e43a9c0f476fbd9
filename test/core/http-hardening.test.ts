import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { wordCount } from "../helpers/echo-function";
import { startGateway, type TestGateway } from "../helpers/gateway";

let gw: TestGateway;
let key: string;
beforeAll(async () => {
  gw = await startGateway({ functions: [wordCount], configText: `[limits]\nmax_body_bytes = 4096\nmax_text_chars = 500\n` });
  key = gw.newKey({ credits: 1000 }).key;
});
afterAll(() => gw.close());

const raw = (path: string, init: RequestInit) => fetch(gw.url + path, init);

function expectError(res: { status: number; json: Record<string, any>; headers: Headers }, status: number, code: string) {
  expect({ status: res.status, code: res.json.error?.code }).toEqual({ status, code });
  expect(res.json).toMatchObject({ success: false, status: "error", code: status, meta: { version: "v1", credits_deducted: 0 } });
  expect(res.json.request_id).toMatch(/^req_[0-9a-f-]{36}$/);
  expect(res.headers.get("x-request-id")).toBe(res.json.request_id);
}

async function asJson(res: Response) {
  return { status: res.status, headers: res.headers, json: (await res.json()) as Record<string, any> };
}

describe("authentication", () => {
  test("missing and invalid keys", async () => {
    expectError(await gw.post("/api/v1/ai/word-count", { text: "hi" }), 401, "missing_api_key");
    expectError(await gw.post("/api/v1/ai/word-count", { text: "hi" }, { "x-api-key": "tai_live_nope" }), 401, "invalid_api_key");
    // the key in Authorization without its scheme: refused, saying what is missing (2026-12-06)
    const slip = await gw.post("/api/v1/ai/word-count", { text: "hi" }, { authorization: key });
    expectError(slip, 401, "missing_api_key");
    expect(slip.json.message).toContain('the Authorization header needs its scheme: "Bearer <key>"');
    const plain = await gw.post("/api/v1/ai/word-count", { text: "hi" });
    expect(plain.json.message).not.toContain("scheme");
  });

  test("the three places, with x-api-key first", async () => {
    expect((await gw.post("/api/v1/ai/word-count", { text: "a" }, { "X-API-Key": key })).status).toBe(200);
    expect((await gw.post("/api/v1/ai/word-count", { text: "b" }, { authorization: `Bearer ${key}` })).status).toBe(200);
    expect((await gw.post("/api/v1/ai/word-count", { text: "c", api_key: key })).status).toBe(200);
    // a wrong header key wins over a right body key
    expect((await gw.post("/api/v1/ai/word-count", { text: "d", api_key: key }, { "x-api-key": "tai_live_wrong" })).status).toBe(
      401,
    );
  });

  test("revocation through the admin store fails the key on the next request", async () => {
    const k = gw.newKey({ credits: 5 });
    expect((await gw.post("/api/v1/ai/word-count", { text: "x" }, { "x-api-key": k.key })).status).toBe(200);
    gw.deps.keys.revoke(k.id);
    expectError(await gw.post("/api/v1/ai/word-count", { text: "x" }, { "x-api-key": k.key }), 401, "invalid_api_key");
  });
});

describe("input hardening", () => {
  test("unknown route is a 404 in the envelope", async () => {
    expectError(await gw.get("/api/v1/ai/nope", { "x-api-key": key }), 404, "not_found");
  });

  test("invalid JSON, wrong content type, non-object bodies", async () => {
    expectError(await gw.post("/api/v1/ai/word-count", "{not json", { "x-api-key": key }), 400, "invalid_json");
    expectError(
      await asJson(
        await raw("/api/v1/ai/word-count", {
          method: "POST",
          headers: { "x-api-key": key, "content-type": "text/plain" },
          body: "hi",
        }),
      ),
      415,
      "unsupported_media_type",
    );
    expectError(await gw.post("/api/v1/ai/word-count", "[1,2]", { "x-api-key": key }), 400, "invalid_request");
  });

  test("invalid UTF-8 is a 400", async () => {
    const bytes = new Uint8Array([0x7b, 0x22, 0x74, 0x65, 0x78, 0x74, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]);
    expectError(
      await asJson(
        await raw("/api/v1/ai/word-count", {
          method: "POST",
          headers: { "x-api-key": key, "content-type": "application/json" },
          body: bytes,
        }),
      ),
      400,
      "invalid_json",
    );
  });

  test("oversized bodies are 413, with Content-Length and chunked", async () => {
    const big = JSON.stringify({ text: "x".repeat(10_000) });
    expectError(await gw.post("/api/v1/ai/word-count", big, { "x-api-key": key }), 413, "payload_too_large");
    const stream = new ReadableStream({
      start(c) {
        for (let i = 0; i < 10; i++)
          c.enqueue(new TextEncoder().encode(i === 0 ? `{"text":"${"y".repeat(1000)}` : "y".repeat(1000)));
        c.enqueue(new TextEncoder().encode('"}'));
        c.close();
      },
    });
    const res = await raw("/api/v1/ai/word-count", {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: stream,
    });
    expectError(await asJson(res), 413, "payload_too_large");
    expect((await gw.post("/api/v1/ai/word-count", { text: "still serving" }, { "x-api-key": key })).status).toBe(200);
  });

  test("validation errors name the field; unknown fields are refused, naming them", async () => {
    const missing = await gw.post("/api/v1/ai/word-count", { nope: 1 }, { "x-api-key": key });
    expectError(missing, 400, "invalid_request");
    expect(missing.json.error.param).toBe("text");
    const wrongType = await gw.post("/api/v1/ai/word-count", { text: 42 }, { "x-api-key": key });
    expect(wrongType.json.error.param).toBe("text");
    const tooLong = await gw.post("/api/v1/ai/word-count", { text: "w ".repeat(400) }, { "x-api-key": key });
    expectError(tooLong, 400, "invalid_request");
    expect(tooLong.json.error.param).toBe("text");
    const extra = await gw.post("/api/v1/ai/word-count", { text: "fine", extra: { a: 1 } }, { "x-api-key": key });
    expectError(extra, 400, "invalid_request");
    expect(extra.json.error.param).toBe("extra");
  });

  test("__proto__ and constructor keys are harmless; deep nesting is refused", async () => {
    const polluted = await gw.post(
      "/api/v1/ai/word-count",
      '{"text":"proto test","__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}}}',
      { "x-api-key": key },
    );
    expect(polluted.status).toBe(200);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const deep = `{"text":"deep","a":${"[".repeat(100)}${"]".repeat(100)}}`;
    expectError(await gw.post("/api/v1/ai/word-count", deep, { "x-api-key": key }), 400, "invalid_request");
    expect((await gw.get("/health")).status).toBe(200);
  });
});

describe("privacy", () => {
  test("a request body marker never appears in logs or in the database file", async () => {
    const marker = `MARKER-${crypto.randomUUID()}`;
    const r = await gw.post("/api/v1/ai/word-count", { text: `secret ${marker}` }, { "x-api-key": key });
    expect(r.status).toBe(200);
    await gw.post("/api/v1/ai/word-count", { text: 5, note: marker }, { "x-api-key": key });
    gw.deps.keys.flushLastUsed();
    gw.deps.storage.sqlite.exec("PRAGMA wal_checkpoint(FULL)");
    expect(gw.logs.length).toBeGreaterThan(0);
    expect(gw.logs.join("\n")).not.toContain(marker);
    for (const f of [gw.dbPath, `${gw.dbPath}-wal`]) {
      const file = Bun.file(f);
      if (await file.exists()) expect(Buffer.from(await file.arrayBuffer()).includes(marker)).toBe(false);
    }
    // keys are stored only as hashes
    expect(Buffer.from(await Bun.file(gw.dbPath).arrayBuffer()).includes(key)).toBe(false);
  });
});
