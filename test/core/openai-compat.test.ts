import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";

let sim: Upstream;
let gw: TestGateway;
beforeAll(async () => {
  sim = await startUpstream();
  gw = await startGateway({
    functions: [],
    configText: `
${simProvider({ url: `${sim.url}/v1`, name: "primary", model: "model-a" })}
${simProvider({ url: `${sim.url}/v1`, name: "backup", model: "model-b" })}
[plans.tiny.rate_limits]
"chat-completions" = 2
`,
  });
});
afterAll(async () => {
  await gw.close();
  await sim.close();
});

const client = (apiKey: string) => new OpenAI({ apiKey, baseURL: `${gw.url}/v1`, maxRetries: 0 });
const ask = [{ role: "user" as const, content: "Say hello to the gateway" }];

describe("OpenAI-compatible endpoint through the official SDK", () => {
  test("plain chat: answer, headers, one credit", async () => {
    const { key, accountId } = gw.newKey({ credits: 10 });
    sim.reset();
    const { data, response } = await client(key).chat.completions.create({ model: "model-a", messages: ask }).withResponse();
    expect(data.object).toBe("chat.completion");
    expect(typeof data.choices[0].message.content).toBe("string");
    expect(data.choices[0].message.content!.length).toBeGreaterThan(0);
    expect(response.headers.get("x-textai-provider")).toBe("primary");
    expect(response.headers.get("x-request-id")).toMatch(/^req_/);
    expect(gw.deps.ledger.balance(accountId)).toBe(9);
    expect(sim.calls.count).toBe(1);
  });

  test("streaming chat delivers chunks and ends with [DONE]; charged once", async () => {
    const { key, accountId } = gw.newKey({ credits: 10 });
    const stream = await client(key).chat.completions.create({ model: "model-a", messages: ask, stream: true });
    let text = "";
    let chunks = 0;
    for await (const c of stream) {
      chunks++;
      text += c.choices[0]?.delta?.content ?? "";
    }
    expect(chunks).toBeGreaterThan(2);
    expect(text.length).toBeGreaterThan(0);
    expect(gw.deps.ledger.balance(accountId)).toBe(9);
  });

  test("SDK error classes: bad key, rate limit, no credits", async () => {
    const denied = await client("tai_live_bogus")
      .chat.completions.create({ model: "m", messages: ask })
      .catch((e) => e);
    expect(denied).toBeInstanceOf(OpenAI.AuthenticationError);
    const tiny = gw.newKey({ credits: 10, plan: "tiny" });
    const c = client(tiny.key);
    await c.chat.completions.create({ model: "model-a", messages: [{ role: "user", content: "one" }] });
    await c.chat.completions.create({ model: "model-a", messages: [{ role: "user", content: "two" }] });
    const limited = await c.chat.completions
      .create({ model: "model-a", messages: [{ role: "user", content: "three" }] })
      .catch((e) => e);
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect(Number((limited as InstanceType<typeof OpenAI.RateLimitError>).headers?.get("retry-after"))).toBeGreaterThanOrEqual(1);
    const broke = gw.newKey({ credits: 0 });
    const noCredits = await client(broke.key)
      .chat.completions.create({ model: "model-a", messages: ask })
      .catch((e) => e);
    expect(noCredits).toBeInstanceOf(OpenAI.APIError);
    expect((noCredits as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
  });

  test("falls back to the next provider when the first answers 500; cache serves the repeat", async () => {
    const { key, accountId } = gw.newKey({ credits: 10 });
    sim.reset();
    sim.program([{ status: 500, times: 5 }], { model: "model-a" });
    const messages = [{ role: "user" as const, content: "fallback please" }];
    const { response } = await client(key)
      .chat.completions.create({ messages, model: "" as string })
      .withResponse();
    expect(response.headers.get("x-textai-provider")).toBe("backup");
    const timing = response.headers.get("server-timing") ?? "";
    for (const stage of ["auth", "ratelimit", "validate", "cache", "credits", "provider", "settle", "total"])
      expect(timing).toMatch(new RegExp(`\\b${stage};dur=\\d`));
    const again = await client(key)
      .chat.completions.create({ messages, model: "" as string })
      .withResponse();
    expect(again.response.headers.get("x-cache")).toBe("HIT");
    expect(gw.deps.ledger.balance(accountId)).toBe(8);
  });

  test("a stream cut upstream ends with an error event, never [DONE], and costs nothing", async () => {
    const { key, accountId } = gw.newKey({ credits: 10 });
    sim.reset();
    sim.program([{ streamCut: true }]);
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key },
      body: JSON.stringify({ model: "model-a", messages: ask, stream: true }),
    });
    const body = await res.text();
    expect(body).toContain('"error"');
    expect(body).not.toContain("[DONE]");
    expect(gw.deps.ledger.balance(accountId)).toBe(10);
  });

  test("a client that disconnects aborts the upstream call", async () => {
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    sim.program([{ delayMs: 3000 }]);
    const ac = new AbortController();
    const pending = fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      signal: ac.signal,
      headers: { "content-type": "application/json", "x-api-key": key, "cache-control": "no-cache" },
      body: JSON.stringify({ model: "model-a", messages: [{ role: "user", content: "slow one" }] }),
    }).catch(() => null);
    await Bun.sleep(300);
    ac.abort();
    await pending;
    for (let i = 0; i < 40 && !sim.calls.requests.some((r) => r.aborted); i++) await Bun.sleep(50);
    expect(sim.calls.requests.some((r) => r.aborted)).toBe(true);
  });

  test("GET /v1/models lists provider/model and plain ids", async () => {
    const { key } = gw.newKey({ credits: 1 });
    const models = await client(key).models.list();
    const ids = models.data.map((m) => m.id);
    for (const id of ["primary/model-a", "backup/model-b", "model-a", "model-b"]) expect(ids).toContain(id);
  });
});
