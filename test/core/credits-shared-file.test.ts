import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { wordCount } from "../helpers/echo-function";
import { startGateway, type TestGateway } from "../helpers/gateway";

// Two gateways on one SQLite file: each has its own connection and its own in-memory holds, as two
// processes would.
const ADMIN = "shared-admin-token-0123456789abcdef";
const admin = { authorization: `Bearer ${ADMIN}` };
const config = `[costs]\n"word-count" = 5\n`;
let a: TestGateway;
let b: TestGateway;
beforeAll(async () => {
  a = await startGateway({ functions: [wordCount], configText: config, env: { TEXTAI_ADMIN_TOKEN: ADMIN } });
  b = await startGateway({ functions: [wordCount], configText: config, env: { TEXTAI_DB: a.dbPath } });
});
afterAll(async () => {
  await b.close();
  await a.close();
});

const noStore = (key: string) => ({ "x-api-key": key, "cache-control": "no-store" });

describe("credits when two processes share a file", () => {
  test("credits_remaining is the committed balance, never negative, when the other process spent meanwhile", async () => {
    const { key } = a.newKey({ credits: 10 });
    // process A holds all 10 credits for two slow calls
    const slow = [1, 2].map((i) => a.post("/api/v1/ai/word-count", { text: `slow call ${i}`, delay_ms: 400 }, noStore(key)));
    await Bun.sleep(100);
    // process B spends 5 of them meanwhile
    const fast = await b.post("/api/v1/ai/word-count", { text: "fast call" }, noStore(key));
    expect(fast.status, JSON.stringify(fast.json)).toBe(200);
    expect(fast.json.meta.credits_remaining).toBe(5);
    const done = await Promise.all(slow);
    const ok = done.filter((r) => r.status === 200);
    const refused = done.filter((r) => r.status !== 200);
    expect(ok.length).toBe(1);
    expect(refused.map((r) => r.json.error?.code)).toEqual(["insufficient_credits"]);
    expect(ok[0].json.meta.credits_remaining, JSON.stringify(ok[0].json.meta)).toBe(0);
    const usage = await a.get("/api/v1/account/usage", { "x-api-key": key });
    expect(usage.json.data.result).toMatchObject({ balance: 0, requests: 2, credits_used: 10 });
  });

  test("an admin debit (negative grant) takes credits back, never below zero nor below what calls in flight hold", async () => {
    const { key, accountId } = a.newKey({ credits: 10 });
    const debit = (amount: number) => a.post(`/admin/v1/accounts/${accountId}/credits`, { amount, reason: "refund" }, admin);
    const first = await debit(-4);
    expect(first.status, JSON.stringify(first.json)).toBe(200);
    expect(first.json.data.result).toMatchObject({ granted: -4, balance: 6 });

    const tooMuch = await debit(-7);
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.json.error).toMatchObject({ code: "invalid_request", param: "amount" });
    expect(tooMuch.json.error.message).toContain("below zero");

    // a call in flight holds 5 of the 6: taking back 3 would leave it unpaid
    const call = a.post("/api/v1/ai/word-count", { text: "held call", delay_ms: 400 }, noStore(key));
    await Bun.sleep(100);
    const underHold = await debit(-3);
    expect(underHold.status).toBe(400);
    expect(underHold.json.error.message).toContain("in flight");
    const done = await call;
    expect(done.status, JSON.stringify(done.json)).toBe(200);
    expect(done.json.meta.credits_remaining).toBe(1);
    expect((await debit(-1)).json.data.result.balance).toBe(0);
    expect((await debit(-1)).status).toBe(400);
    expect((await debit(0)).json.error.param).toBe("amount");
    const usage = await a.get("/api/v1/account/usage", { "x-api-key": key });
    expect(usage.json.data.result).toMatchObject({ balance: 0, credits_used: 5, credits_granted: 10 - 4 - 1 });
  });
});
