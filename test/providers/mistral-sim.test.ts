/**
 * The Mistral simulator (test/helpers/mistral-sim.ts) proven by Mistral's official SDK
 * (@mistralai/mistralai) pointed at it: chat.complete, chat.stream, a tool call round, embeddings,
 * and its errors (401, 429 with Retry-After, 422 for a field Mistral has not, 400 for a tool call
 * id not of Mistral's form), so the gateway's adapter is tested against Mistral's protocol.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { Mistral } from "@mistralai/mistralai";
import { MistralError } from "@mistralai/mistralai/models/errors";
import { type MistralSim, startMistral } from "../helpers/mistral-sim";

let sim: MistralSim;
beforeAll(async () => {
  sim = await startMistral();
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const client = (apiKey = sim.apiKey) => new Mistral({ apiKey, serverURL: sim.url, retryConfig: { strategy: "none" } });

const weather = {
  type: "function" as const,
  function: {
    name: "get_weather",
    description: "The weather in a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};

describe("Mistral's SDK against the simulator", () => {
  test("chat.complete: an answer with usage; random_seed and safe_prompt reach the API as Mistral names them", async () => {
    const res = await client().chat.complete({
      model: "mistral-small-latest",
      messages: [{ role: "user", content: "hello mistral" }],
      randomSeed: 7,
      safePrompt: true,
    });
    expect(res.choices?.[0]?.message?.content).toBeString();
    expect(res.choices?.[0]?.finishReason).toBe("stop");
    expect(res.usage.promptTokens).toBeGreaterThan(0);
    expect(sim.calls.requests[0]?.body).toMatchObject({ random_seed: 7, safe_prompt: true });
  });

  test("chat.stream: the text in pieces, the last chunk with the finish and the usage", async () => {
    const stream = await client().chat.stream({
      model: "mistral-small-latest",
      messages: [{ role: "user", content: "stream this please" }],
    });
    let text = "";
    let finish: string | null | undefined;
    let usage: unknown;
    for await (const event of stream) {
      const c = event.data.choices[0];
      if (typeof c?.delta.content === "string") text += c.delta.content;
      if (c?.finishReason) finish = c.finishReason;
      if (event.data.usage) usage = event.data.usage;
    }
    expect(text.length).toBeGreaterThan(0);
    expect(finish).toBe("stop");
    expect(usage).toMatchObject({ promptTokens: expect.any(Number) });
  });

  test("a tool call round: tool_choice any calls the tool with a nine-character id; the tool's result is answered in text", async () => {
    const mistral = client();
    const first = await mistral.chat.complete({
      model: "mistral-small-latest",
      messages: [{ role: "user", content: "weather in Paris?" }],
      tools: [weather],
      toolChoice: "any",
    });
    const call = first.choices?.[0]?.message?.toolCalls?.[0];
    expect(first.choices?.[0]?.finishReason).toBe("tool_calls");
    expect(call?.id).toMatch(/^[A-Za-z0-9]{9}$/);
    expect(call?.function.name).toBe("get_weather");
    const second = await mistral.chat.complete({
      model: "mistral-small-latest",
      messages: [
        { role: "user", content: "weather in Paris?" },
        { role: "assistant", content: "", toolCalls: [call as NonNullable<typeof call>] },
        { role: "tool", toolCallId: call?.id as string, name: "get_weather", content: "sunny, 21C" },
      ],
      tools: [weather],
    });
    expect(second.choices?.[0]?.message?.content).toBe("Tool said: sunny, 21C");
  });

  test("a tool call id not of Mistral's form is refused (400), as Mistral does", async () => {
    const err = await client()
      .chat.complete({
        model: "mistral-small-latest",
        messages: [
          { role: "user", content: "weather?" },
          {
            role: "assistant",
            content: "",
            toolCalls: [{ id: "call_abc123", function: { name: "get_weather", arguments: "{}" } }],
          },
          { role: "tool", toolCallId: "call_abc123", content: "sunny" },
        ],
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MistralError);
    expect((err as MistralError).statusCode).toBe(400);
    expect((err as MistralError).body).toContain("must be a-z, A-Z, 0-9, with a length of 9");
  });

  test("embeddings.create: one vector per input, in order, with usage", async () => {
    const res = await client().embeddings.create({ model: "mistral-embed", inputs: ["one", "two"] });
    expect(res.data.map((d) => d.index)).toEqual([0, 1]);
    expect(res.data[0]?.embedding).toHaveLength(1024);
    expect(res.usage.promptTokens).toBeGreaterThan(0);
  });

  test("errors: a wrong key is 401, a 429 keeps Retry-After, a field Mistral has not is a 422 validation error", async () => {
    const unauthorized = await client("wrong")
      .chat.complete({ model: "m", messages: [{ role: "user", content: "x" }] })
      .catch((e) => e);
    expect((unauthorized as MistralError).statusCode).toBe(401);
    sim.program([{ status: 429, retryAfter: 2 }]);
    const limited = await client()
      .chat.complete({ model: "m", messages: [{ role: "user", content: "x" }] })
      .catch((e) => e);
    expect(limited).toBeInstanceOf(MistralError);
    expect((limited as MistralError).statusCode).toBe(429);
    expect((limited as MistralError).headers.get("retry-after")).toBe("2");
    // the SDK sends only Mistral's fields; an OpenAI field reaches the API through a raw request
    const raw = await fetch(`${sim.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${sim.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "x" }], logit_bias: { "1": 5 } }),
    });
    expect(raw.status).toBe(422);
    expect(((await raw.json()) as { detail: { loc: string[] }[] }).detail[0]?.loc).toEqual(["body", "logit_bias"]);
    sim.program([{ status: 503 }]);
    const down = await client()
      .chat.complete({ model: "m", messages: [{ role: "user", content: "x" }] })
      .catch((e) => e);
    expect((down as MistralError).statusCode).toBe(503);
  });
});
