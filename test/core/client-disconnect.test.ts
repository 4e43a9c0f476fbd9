import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Type as T } from "@sinclair/typebox";
import { defineFunction } from "../../src/functions/define";
import { wordCount } from "../helpers/echo-function";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { RawConnection } from "../helpers/raw-http";

// A client that goes away is its own outcome (499) in metrics, logs and breaker: never a 5xx,
// never "unhandled error", never a provider failure.
const slowModel = defineFunction({
  name: "slow-model",
  path: "/api/v1/ai/slow-model",
  summary: "answered by the mock provider only",
  request: T.Object({ text: T.String() }),
  result: T.Object({ label: T.String() }),
  cost: 1,
  rateClass: "standard",
  promptVersion: 1,
  prompt: (r) => [{ role: "user", content: r.text }],
  example: { request: { text: "x" }, result: { label: "a" } },
});

let gw: TestGateway;
let key: string;
beforeAll(async () => {
  gw = await startGateway({
    functions: [wordCount, slowModel],
    env: { TEXTAI_ADMIN_TOKEN: "disconnect-admin-0123456789abcdef0123456789" },
    configText: `[[providers]]\nname = "mock"\ntype = "mock"\nlatency_ms = 1500\n\n[routes]\n"slow-model" = ["mock"]\n"chat-completions" = ["mock"]\n\n[breaker]\nfailure_threshold = 2\n`,
  });
  key = gw.newKey({ credits: 100 }).key;
});
afterAll(() => gw.close());

const metrics = async () =>
  (await fetch(`${gw.url}/metrics`, { headers: { authorization: "Bearer disconnect-admin-0123456789abcdef0123456789" } })).text();
const count = (text: string, re: RegExp) =>
  text
    .split("\n")
    .filter((l) => re.test(l))
    .reduce((s, l) => s + Number(l.split(" ").pop()), 0);
const waitFor = async (check: () => Promise<boolean>) => {
  for (let i = 0; i < 50 && !(await check()); i++) await Bun.sleep(50);
};

describe("client disconnects", () => {
  test("a client that drops mid-body is counted 499, logged without 'unhandled error'", async () => {
    for (let i = 0; i < 3; i++) {
      const c = new RawConnection(gw.port);
      await c.ready;
      c.write(
        `POST /api/v1/ai/word-count HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nx-api-key: ${key}\r\ncontent-length: 500\r\n\r\n{"text": "half`,
      );
      await Bun.sleep(50);
      c.destroy();
    }
    await waitFor(async () => count(await metrics(), /^textai_requests_total\{function="word-count",status="499"\}/) >= 3);
    const text = await metrics();
    expect(count(text, /^textai_requests_total\{function="word-count",status="499"\}/), text).toBe(3);
    expect(count(text, /^textai_requests_total\{[^}]*status="5\d\d"\}/), text).toBe(0);
    expect(gw.logs.filter((l) => l.includes("unhandled error"))).toEqual([]);
    const logged = gw.logs.filter((l) => l.includes('"status":499'));
    expect(logged.length).toBe(3);
    expect(logged.every((l) => l.includes('"error_code":"client_closed"'))).toBe(true);
  });

  test("aborted calls to a provider are 499, not provider errors, and do not open its breaker", async () => {
    const abortAfter = async (path: string, body: unknown) => {
      const ctrl = new AbortController();
      const p = fetch(gw.url + path, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key, "cache-control": "no-store" },
        body: JSON.stringify(body),
        signal: ctrl.signal,
      }).catch((e: Error) => e);
      await Bun.sleep(200);
      ctrl.abort();
      expect(await p).toBeInstanceOf(Error);
    };
    // more aborts than the breaker's failure threshold
    for (let i = 0; i < 3; i++) await abortAfter("/api/v1/ai/slow-model", { text: `abort me ${i}` });
    for (let i = 0; i < 3; i++) await abortAfter("/v1/chat/completions", { messages: [{ role: "user", content: `bye ${i}` }] });
    await waitFor(async () => count(await metrics(), /^textai_requests_total\{[^}]*status="499"\}/) >= 9);
    const text = await metrics();
    expect(count(text, /^textai_requests_total\{function="slow-model",status="499"\}/), text).toBe(3);
    expect(count(text, /^textai_requests_total\{function="chat-completions",status="499"\}/), text).toBe(3);
    expect(count(text, /^textai_requests_total\{[^}]*status="5\d\d"\}/), text).toBe(0);
    expect(count(text, /^textai_provider_calls_total\{[^}]*outcome="error"\}/), text).toBe(0);
    expect(gw.deps.router.status().mock?.state).toBe("closed");
    // the provider still serves
    const ok = await gw.post("/api/v1/ai/slow-model", { text: "stay" }, { "x-api-key": key });
    expect(ok.status, JSON.stringify(ok.json)).toBe(200);
    expect(ok.json.meta.provider).toBe("mock");
    // nothing was charged for the aborted calls
    expect(ok.json.meta.credits_remaining).toBe(99);
  }, 30_000);
});
