// A provider that answered 429 with Retry-After is paused for that long (src/providers/breaker.ts
// pauseFor). While the pause holds, a /v1 call no other provider can serve gets what the first one
// got: 429 rate_limited with the Retry-After left (the SDK's RateLimitError), not a 502; a breaker
// opened by failures still answers 502 provider_error with a circuit_open attempt, and since
// 2026-12-06 a Retry-After: the cool-down left (test/providers/rate-limit-pause.test.ts).
import { describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { openaiClient, providerToml, rawPost, useGateway } from "./setup";

const ctx = useGateway({
  configText: (url) => `
[breaker]
failure_threshold = 2
cooldown_ms = 30000

[routes]
"chat-completions" = ["primary"]
responses = ["primary", "backup"]
embeddings = ["third"]

${providerToml("primary", url, "model-a", 'embedding_model = "embed-a"')}
${providerToml("backup", url, "model-a", 'embedding_model = "embed-b"')}
${providerToml("third", url, "model-c", 'embedding_model = "embed-c"')}
`,
});

const ask = (content: string) => [{ role: "user" as const, content }];

describe("a provider's requested pause", () => {
  test("calls during it are 429 rate_limited with the Retry-After left, unsent and uncharged; another provider still serves", async () => {
    const { sim, gw } = ctx;
    const { key, accountId } = gw.newKey({ credits: 10 });
    sim.reset();
    sim.program([{ status: 429, retryAfter: 5 }]);
    const first = await openaiClient(gw, key)
      .chat.completions.create({ model: "model-a", messages: ask("busy") })
      .catch((e) => e);
    expect(first).toBeInstanceOf(OpenAI.RateLimitError);
    expect(first.headers.get("retry-after")).toBe("5");
    expect(sim.calls.count).toBe(1);

    for (let i = 0; i < 3; i++) {
      const res = await rawPost(gw, "/v1/chat/completions", key, { model: "model-a", messages: ask(`again ${i}`) });
      const body = (await res.json()) as { error: { code: string; type: string; message: string } };
      expect(res.status, JSON.stringify(body)).toBe(429);
      expect(body.error.code).toBe("rate_limited");
      expect(body.error.message).toContain("primary: paused");
      const left = Number(res.headers.get("retry-after"));
      expect(left).toBeGreaterThanOrEqual(1);
      expect(left).toBeLessThanOrEqual(5);
    }
    const sdk = await openaiClient(gw, key)
      .chat.completions.create({ model: "model-a", messages: ask("sdk again") })
      .catch((e) => e);
    expect(sdk).toBeInstanceOf(OpenAI.RateLimitError);
    // the pause held: nothing more reached the upstream, nothing was charged
    expect(sim.calls.count).toBe(1);
    expect(gw.deps.ledger.balance(accountId)).toBe(10);

    // a route with another provider: the paused one is skipped, the next answers
    const served = await rawPost(gw, "/v1/responses", key, { model: "model-a", input: "hello" });
    expect(served.status, await served.clone().text()).toBe(200);
    expect(sim.calls.count).toBe(2);
  });

  test("a breaker opened by failures still answers 502 provider_error naming circuit_open, with the cool-down left as Retry-After", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    sim.program([{ status: 500, times: 2 }]);
    for (let i = 0; i < 2; i++) {
      const res = await rawPost(gw, "/v1/embeddings", key, { model: "embed-c", input: `fail ${i}` });
      expect(res.status).toBe(502);
    }
    const open = await rawPost(gw, "/v1/embeddings", key, { model: "embed-c", input: "skipped" });
    const body = (await open.json()) as { error: { code: string; message: string } };
    expect(open.status, JSON.stringify(body)).toBe(502);
    expect(body.error.code).toBe("provider_error");
    expect(body.error.message).toContain("third: circuit_open");
    expect(Number(open.headers.get("retry-after"))).toBeGreaterThanOrEqual(29);
    expect(Number(open.headers.get("retry-after"))).toBeLessThanOrEqual(30);
    expect(sim.calls.count).toBe(2);
  });
});
