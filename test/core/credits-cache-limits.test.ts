import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { calls, heavyCount, wordCount } from "../helpers/echo-function";
import { startGateway, type TestGateway } from "../helpers/gateway";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway({
    functions: [wordCount, heavyCount],
    configText: `[plans.free.rate_limits]\n"word-count" = 1000\n\n[plans.tight.rate_limits]\n"word-count" = 5\n`,
  });
});
afterAll(() => gw.close());

const H = (key: string, extra: Record<string, string> = {}) => ({ "x-api-key": key, ...extra });

describe("credits", () => {
  test("60 concurrent 1-credit calls on a 30-credit key: exactly 30 succeed, 30 get 402, balance ends at 0", async () => {
    const { key, accountId } = gw.newKey({ credits: 30 });
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) => gw.post("/api/v1/ai/word-count", { text: `call number ${i}`, delay_ms: 20 }, H(key))),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200).length).toBe(30);
    expect(statuses.filter((s) => s === 402).length).toBe(30);
    const refused = results.find((r) => r.status === 402)!;
    expect(refused.json.error.code).toBe("insufficient_credits");
    expect(refused.json.meta.credits_deducted).toBe(0);
    expect(gw.deps.ledger.balance(accountId)).toBe(0);
    const charges = gw.deps.storage.sqlite
      .query("SELECT count(*) AS n, sum(amount) AS s FROM ledger WHERE account_id = ? AND kind = 'charge'")
      .get(accountId) as { n: number; s: number };
    expect(charges).toEqual({ n: 30, s: -30 });
  });

  test("meta reports credits deducted and remaining; failures cost nothing", async () => {
    const { key, accountId } = gw.newKey({ credits: 10 });
    const ok = await gw.post("/api/v1/ai/word-count", { text: "one two three" }, H(key));
    expect(ok.status).toBe(200);
    expect(ok.json.data.result).toEqual({ words: 3 });
    expect(ok.json.meta).toMatchObject({
      credits_deducted: 1,
      credits_remaining: 9,
      provider: "local",
      cached: false,
      version: "v1",
    });
    const timing = ok.headers.get("server-timing") ?? "";
    for (const stage of ["auth", "ratelimit", "validate", "credits", "cache", "provider", "total"])
      expect(timing).toMatch(new RegExp(`\\b${stage};dur=\\d`));
    const bad = await gw.post("/api/v1/ai/word-count", { text: "" }, H(key));
    expect(bad.status).toBe(400);
    expect(gw.deps.ledger.balance(accountId)).toBe(9);
  });
});

describe("cache", () => {
  test("a repeat is a HIT charged like a miss; the same body from another account is a MISS", async () => {
    const a = gw.newKey({ credits: 10 });
    const b = gw.newKey({ credits: 10 });
    const body = { text: "cache me if you can" };
    const before = calls.count;
    const first = await gw.post("/api/v1/ai/word-count", body, H(a.key));
    const second = await gw.post("/api/v1/ai/word-count", body, H(a.key));
    expect(first.headers.get("x-cache")).toBe("MISS");
    expect(second.headers.get("x-cache")).toBe("HIT");
    expect(second.json.meta.cached).toBe(true);
    expect(second.json.data.result).toEqual(first.json.data.result);
    expect(second.json.meta.credits_deducted).toBe(1);
    expect(gw.deps.ledger.balance(a.accountId)).toBe(8);
    const other = await gw.post("/api/v1/ai/word-count", body, H(b.key));
    expect(other.headers.get("x-cache")).toBe("MISS");
    expect(calls.count - before).toBe(2);
  });

  test("Cache-Control: no-cache bypasses the cache; api_key in the body is not part of the key", async () => {
    const a = gw.newKey({ credits: 10 });
    const before = calls.count;
    await gw.post("/api/v1/ai/word-count", { text: "bypass test", api_key: a.key });
    const again = await gw.post("/api/v1/ai/word-count", { text: "bypass test" }, H(a.key));
    expect(again.headers.get("x-cache")).toBe("HIT");
    const fresh = await gw.post("/api/v1/ai/word-count", { text: "bypass test" }, H(a.key, { "cache-control": "no-cache" }));
    expect(fresh.headers.get("x-cache")).toBe("MISS");
    expect(calls.count - before).toBe(2);
  });

  test("concurrent identical requests share one execution and are each charged", async () => {
    const a = gw.newKey({ credits: 20 });
    const before = calls.count;
    const rs = await Promise.all(
      Array.from({ length: 8 }, () =>
        gw.post("/api/v1/ai/word-count", { text: "single flight please", delay_ms: 100 }, H(a.key)),
      ),
    );
    expect(rs.every((r) => r.status === 200)).toBe(true);
    expect(calls.count - before).toBe(1);
    expect(gw.deps.ledger.balance(a.accountId)).toBe(12);
  });
});

describe("rate limits", () => {
  test("limit + 5 rapid calls: exactly limit pass, then 429 with Retry-After; rejected calls cost nothing", async () => {
    const { key, accountId } = gw.newKey({ credits: 100, plan: "tight" });
    const before = calls.count;
    const statuses: number[] = [];
    let last: Awaited<ReturnType<TestGateway["post"]>> | null = null;
    for (let i = 0; i < 10; i++) {
      last = await gw.post("/api/v1/ai/word-count", { text: `limit ${i}` }, H(key));
      statuses.push(last.status);
      if (i === 0) {
        expect(last.headers.get("ratelimit-limit")).toBe("5");
        expect(last.headers.get("ratelimit-remaining")).toBe("4");
        expect(last.headers.get("x-ratelimit-limit")).toBe("5");
      }
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429, 429, 429]);
    expect(Number(last!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(last!.json.error.code).toBe("rate_limited");
    expect(calls.count - before).toBe(5);
    expect(gw.deps.ledger.balance(accountId)).toBe(95);
  });

  test("the free plan's heavy class allows 10 per minute", async () => {
    const { key } = gw.newKey({ credits: 100 });
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await gw.post("/api/v1/ai/heavy-count", { text: `heavy ${i}` }, H(key))).status);
    expect(statuses.filter((s) => s === 200).length).toBe(10);
    expect(statuses.slice(10)).toEqual([429, 429]);
  });
});

describe("idempotency", () => {
  test("a repeat with the same key and body replays without charging; another body is 422; in flight is 409", async () => {
    const { key, accountId } = gw.newKey({ credits: 10 });
    const h = H(key, { "idempotency-key": "order-1" });
    const first = await gw.post("/api/v1/ai/word-count", { text: "pay once" }, h);
    const replay = await gw.post("/api/v1/ai/word-count", { text: "pay once" }, h);
    expect(replay.status).toBe(200);
    expect(replay.json.request_id).not.toBe(first.json.request_id);
    expect(replay.json.data).toEqual(first.json.data);
    expect(replay.json.meta.credits_deducted).toBe(0);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    // a replay carries what every function answer carries (a walkthrough, 2026-12-06: X-Cache and
    // Server-Timing were missing, and execution_time_ms was the first answer's)
    expect([first.headers.get("x-cache"), replay.headers.get("x-cache")]).toEqual(["MISS", "MISS"]);
    expect(replay.headers.get("server-timing")).toContain("total;dur=");
    expect(replay.json.meta.execution_time_ms).toBeLessThan(50);
    expect(gw.deps.ledger.balance(accountId)).toBe(9);
    const other = await gw.post("/api/v1/ai/word-count", { text: "something else" }, h);
    expect(other.status).toBe(422);
    const h2 = H(key, { "idempotency-key": "slow-1" });
    const slow = gw.post("/api/v1/ai/word-count", { text: "slow", delay_ms: 300 }, h2);
    await Bun.sleep(50);
    const dup = await gw.post("/api/v1/ai/word-count", { text: "slow", delay_ms: 300 }, h2);
    expect(dup.status).toBe(409);
    expect((await slow).status).toBe(200);
  });
});
