import { describe, expect, test } from "bun:test";
import { rawPost, useGateway } from "./setup";

const ctx = useGateway();

const base = { model: "model-a", messages: [{ role: "user", content: "cache me if you can" }] };
const img = (data: string) => ({
  model: "model-a",
  messages: [
    {
      role: "user",
      content: [
        { type: "text", text: "what is in this picture?" },
        { type: "image_url", image_url: { url: `data:image/png;base64,${data}` } },
      ],
    },
  ],
});
const tool = (name: string) => ({
  type: "function",
  function: { name, parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
});

/** One forwarded field changed at a time (each against the cached base request). */
const VARIANTS: [string, Record<string, unknown>][] = [
  ["tools", { tools: [tool("get_weather")] }],
  ["tool_choice", { tools: [tool("get_weather")], tool_choice: "none" }],
  ["response_format json_object", { response_format: { type: "json_object" } }],
  [
    "response_format json_schema",
    {
      response_format: {
        type: "json_schema",
        json_schema: { name: "x", strict: true, schema: { type: "object", properties: {} } },
      },
    },
  ],
  ["stop", { stop: ["if"] }],
  ["seed", { seed: 7 }],
  ["temperature 0", { temperature: 0 }],
  ["max_tokens", { max_tokens: 5 }],
  ["max_completion_tokens", { max_completion_tokens: 5 }],
  ["logprobs", { logprobs: true }],
  ["logit_bias", { logit_bias: { "50256": -100 } }],
  ["presence_penalty", { presence_penalty: 0.5 }],
  ["user", { user: "someone-else" }],
  ["a vendor field", { top_k: 3 }],
  ["model", { model: "model-b" }],
  ["a system message", { messages: [{ role: "system", content: "be brief" }, ...base.messages] }],
  ["developer instead of system", { messages: [{ role: "developer", content: "be brief" }, ...base.messages] }],
];

const post = (key: string, body: unknown, headers?: Record<string, string>) =>
  rawPost(ctx.gw, "/v1/chat/completions", key, body, headers);

describe("the cache never answers one request with another's result", () => {
  test("every forwarded field is part of the key: a request differing in one field reaches the provider", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 1000 });
    sim.reset();
    const first = await post(key, base);
    expect(first.headers.get("x-cache")).toBe("MISS");
    const again = await post(key, base);
    expect(again.headers.get("x-cache")).toBe("HIT");
    expect(await again.json()).toEqual(await first.json());
    expect(sim.calls.count).toBe(1);

    for (const [name, patch] of VARIANTS) {
      const before = sim.calls.count;
      const res = await post(key, { ...base, ...patch });
      const body = await res.text();
      expect({ name, status: res.status, cache: res.headers.get("x-cache"), body: res.status === 200 ? "" : body }).toEqual({
        name,
        status: 200,
        cache: "MISS",
        body: "",
      });
      expect({ name, calls: sim.calls.count }).toEqual({ name, calls: before + 1 });
      const sent = sim.calls.requests.at(-1)?.body ?? {};
      for (const [field, value] of Object.entries(patch))
        expect({ name, [field]: sent[field] }).toEqual({ name, [field]: value });
      // the same variant again is a hit of its own answer
      const repeat = await post(key, { ...base, ...patch });
      expect({ name, cache: repeat.headers.get("x-cache") }).toEqual({ name, cache: "HIT" });
      expect(await repeat.text()).toBe(body);
    }
    expect(sim.calls.count).toBe(1 + VARIANTS.length);
  });

  test("two different images never share an answer", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    const a = await post(key, img("AAAA"));
    const b = await post(key, img("BBBB"));
    expect([a.headers.get("x-cache"), b.headers.get("x-cache")]).toEqual(["MISS", "MISS"]);
    expect(sim.calls.count).toBe(2);
    const parts = sim.calls.requests.map(
      (r) => (r.body.messages as { content: { image_url?: { url: string } }[] }[])[0]?.content[1],
    );
    expect(parts.map((p) => p?.image_url?.url)).toEqual(["data:image/png;base64,AAAA", "data:image/png;base64,BBBB"]);
  });

  test("not cached: n > 1, an explicit sample without a seed, streams; cached: the same sample with a seed", async () => {
    const { sim, gw } = ctx;
    const { key, accountId } = gw.newKey({ credits: 100 });
    sim.reset();
    const twice = async (body: Record<string, unknown>) => {
      const before = sim.calls.count;
      const one = await post(key, body);
      const two = await post(key, body);
      await one.text();
      await two.text();
      return { calls: sim.calls.count - before, cache: [one.headers.get("x-cache"), two.headers.get("x-cache")] };
    };
    const n2 = await twice({ ...base, n: 2 });
    expect(n2.calls).toBe(2);
    const lastN = sim.calls.requests.at(-1)?.body;
    expect(lastN?.n).toBe(2);
    expect(await twice({ ...base, temperature: 0.8 })).toEqual({ calls: 2, cache: ["MISS", "MISS"] });
    expect(await twice({ ...base, top_p: 0.5 })).toEqual({ calls: 2, cache: ["MISS", "MISS"] });
    expect(await twice({ ...base, temperature: 0.8, seed: 42 })).toEqual({ calls: 1, cache: ["MISS", "HIT"] });
    expect((await twice({ ...base, stream: true })).calls).toBe(2);
    expect(await twice({ ...base, messages: [{ role: "user", content: "bypass" }] })).toEqual({
      calls: 1,
      cache: ["MISS", "HIT"],
    });
    // every call is charged, cached or not: 2 + 2 + 2 + 2 + 2 + 2
    expect(gw.deps.ledger.balance(accountId)).toBe(100 - 12);
  });

  test("Cache-Control: no-cache bypasses the cache", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    const body = { ...base, messages: [{ role: "user", content: "fresh please" }] };
    await (await post(key, body)).text();
    const fresh = await post(key, body, { "cache-control": "no-cache" });
    expect(fresh.headers.get("x-cache")).toBe("MISS");
    expect(sim.calls.count).toBe(2);
  });
});
