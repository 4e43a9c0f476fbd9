/**
 * The Anthropic simulator (test/helpers/anthropic-upstream.ts) proven by Anthropic's own SDK: what
 * the SDK sends it understands, and what it answers the SDK parses (plain, streamed with
 * finalMessage(), a tool round, an image, prompt caching, thinking) and maps (its error classes,
 * retry-after, a stream's error event). So the adapter tested against it is tested against the protocol.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { mockText } from "../../src/providers/vendors/mock/provider";
import { type AnthropicUpstream, startAnthropicUpstream } from "../helpers/anthropic-upstream";

let sim: AnthropicUpstream;
beforeAll(async () => {
  sim = await startAnthropicUpstream();
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const client = (over: { apiKey?: string } = {}) =>
  new Anthropic({ apiKey: over.apiKey ?? "sk-ant-sim", baseURL: sim.url, maxRetries: 0, timeout: 5000 });
const MODEL = "claude-sim-1";
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

describe("the official SDK against the simulator", () => {
  test("messages.create: a text answer, its usage, the SDK's headers", async () => {
    const msg = await client().messages.create({
      model: MODEL,
      max_tokens: 200,
      system: "Be brief.",
      messages: [{ role: "user", content: "hello anthropic simulator" }],
    });
    expect(msg.type).toBe("message");
    expect(msg.role).toBe("assistant");
    expect(msg.stop_reason).toBe("end_turn");
    expect(msg.content).toEqual([{ type: "text", text: mockText("hello anthropic simulator") } as never]);
    expect(msg.usage.input_tokens).toBeGreaterThan(0);
    expect(msg.usage.output_tokens).toBeGreaterThan(0);
    const rec = sim.calls.requests[0];
    // SDK 1.x sends the key as a bearer token, and its own API version
    expect(rec?.headers.authorization).toBe("Bearer sk-ant-sim");
    expect(rec?.headers["anthropic-version"]).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(rec?.body).toMatchObject({ model: MODEL, max_tokens: 200, system: "Be brief." });
  });

  test("messages.stream() and finalMessage(): the events in order add up to the same message", async () => {
    const stream = client().messages.stream({
      model: MODEL,
      max_tokens: 200,
      messages: [{ role: "user", content: "stream me a sentence please" }],
    });
    const types: string[] = [];
    stream.on("streamEvent", (e) => types.push(e.type));
    let text = "";
    stream.on("text", (t) => {
      text += t;
    });
    const final = await stream.finalMessage();
    expect(final.content).toEqual([{ type: "text", text: mockText("stream me a sentence please") } as never]);
    expect(text).toBe(mockText("stream me a sentence please"));
    expect(final.stop_reason).toBe("end_turn");
    expect(final.usage.output_tokens).toBeGreaterThan(1);
    expect(types[0]).toBe("message_start");
    expect(types.slice(-2)).toEqual(["message_delta", "message_stop"]);
    expect(sim.calls.requests[0]?.stream).toBe(true);
    // thinking (with its signature) and a tool_use whose input arrives as input_json_delta pieces
    const tooled = await client()
      .messages.stream({
        model: MODEL,
        max_tokens: 3000,
        thinking: { type: "enabled", budget_tokens: 1024 },
        tools: [{ name: "pick", input_schema: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] } }],
        tool_choice: { type: "any" },
        messages: [{ role: "user", content: "pick a number" }],
      })
      .finalMessage();
    expect(tooled.content.map((b) => b.type)).toEqual(["thinking", "tool_use"]);
    expect((tooled.content[0] as { signature: string }).signature).toStartWith("sig_");
    expect(typeof (tooled.content[1] as { input: { n: unknown } }).input.n).toBe("number");
    expect(tooled.stop_reason).toBe("tool_use");
  });

  test("a tool round: forced tool_use, its input from the schema, then the tool_result answered in text", async () => {
    const tools = [
      {
        name: "get_weather",
        description: "the weather in a city",
        input_schema: {
          type: "object" as const,
          properties: { city: { type: "string" } },
          required: ["city"],
        },
      },
    ];
    const c = client();
    const first = await c.messages.create({
      model: MODEL,
      max_tokens: 300,
      tools,
      tool_choice: { type: "tool", name: "get_weather" },
      messages: [{ role: "user", content: "weather in Paris?" }],
    });
    expect(first.stop_reason).toBe("tool_use");
    const use = first.content.find((b) => b.type === "tool_use");
    if (use?.type !== "tool_use") throw new Error("no tool_use");
    expect(use.name).toBe("get_weather");
    expect(typeof (use.input as { city: unknown }).city).toBe("string");
    const second = await c.messages.create({
      model: MODEL,
      max_tokens: 300,
      tools,
      messages: [
        { role: "user", content: "weather in Paris?" },
        { role: "assistant", content: first.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "sunny, 21C" }] },
      ],
    });
    expect(second.stop_reason).toBe("end_turn");
    expect(second.content[0]).toMatchObject({ type: "text", text: "Tool said: sunny, 21C" });
    // a tool_use left without its tool_result is the API's 400, as the SDK's BadRequestError
    const err = await c.messages
      .create({
        model: MODEL,
        max_tokens: 300,
        tools,
        messages: [
          { role: "user", content: "weather in Paris?" },
          { role: "assistant", content: first.content },
          { role: "user", content: "and?" },
        ],
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect((err as InstanceType<typeof Anthropic.BadRequestError>).message).toContain("tool_result");
    // an empty turn is refused too
    const empty = await c.messages
      .create({
        model: MODEL,
        max_tokens: 50,
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: "" },
          { role: "user", content: "again" },
        ],
      })
      .catch((e: unknown) => e);
    expect(empty).toBeInstanceOf(Anthropic.BadRequestError);
  });

  test("an image (base64), thinking, stop sequences and prompt caching", async () => {
    const c = client();
    const long = "A long and stable system prompt. ".repeat(50);
    const ask = () =>
      c.messages.create({
        model: MODEL,
        max_tokens: 2000,
        thinking: { type: "enabled", budget_tokens: 1024 },
        stop_sequences: ["."],
        system: [{ type: "text", text: long, cache_control: { type: "ephemeral" } }],
        messages: [
          {
            role: "user",
            content: [
              { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
              { type: "text", text: "describe it. then stop" },
            ],
          },
        ],
      });
    const first = await ask();
    expect(first.content[0]?.type).toBe("thinking");
    expect(first.stop_reason).toBe("stop_sequence");
    expect(first.stop_sequence).toBe(".");
    expect(first.usage.cache_creation_input_tokens).toBeGreaterThan(100);
    expect(first.usage.cache_read_input_tokens).toBe(0);
    const second = await ask();
    expect(second.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens);
    expect(second.usage.cache_creation_input_tokens).toBe(0);
    expect(second.usage.input_tokens).toBe(first.usage.input_tokens);
  });

  test("errors: 429 with retry-after, 529 overloaded, 401 without a key, a stream's error event", async () => {
    sim.program([{ status: 429, retryAfter: 7 }, { status: 529 }, { streamError: true }, { status: 401 }]);
    const c = client();
    const body = { model: MODEL, max_tokens: 50, messages: [{ role: "user" as const, content: "hi" }] };
    const limited = await c.messages.create(body).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
    const rl = limited as InstanceType<typeof Anthropic.RateLimitError>;
    expect(rl.headers?.get("retry-after")).toBe("7");
    expect(rl.requestID).toStartWith("req_sim");
    expect((rl.error as { error: { type: string } }).error.type).toBe("rate_limit_error");
    const overloaded = await c.messages.create(body).catch((e: unknown) => e);
    expect(overloaded).toBeInstanceOf(Anthropic.InternalServerError);
    expect((overloaded as InstanceType<typeof Anthropic.APIError>).status).toBe(529);
    const streamed = await c.messages
      .stream(body)
      .finalMessage()
      .catch((e: unknown) => e);
    expect(streamed).toBeInstanceOf(Anthropic.APIError);
    expect(String((streamed as Error).message)).toContain("overloaded_error");
    expect(await c.messages.create(body).catch((e: unknown) => e)).toBeInstanceOf(Anthropic.AuthenticationError);
    // no key at all: the API's own 401, in its shape
    const anonymous = await fetch(`${sim.url}/v1/messages`, {
      method: "POST",
      headers: { "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("request-id")).toStartWith("req_");
    expect(await anonymous.json()).toMatchObject({ type: "error", error: { type: "authentication_error" } });
  });

  test("API version 2026-10-21 refuses temperature (the version the adapter does not send)", async () => {
    // the SDK's types no longer have it either
    const body = {
      model: MODEL,
      max_tokens: 50,
      temperature: 0.5,
      messages: [{ role: "user", content: "hi" }],
    } as unknown as Anthropic.MessageCreateParamsNonStreaming;
    const err = await client()
      .messages.create(body)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    const ok = await client().messages.create(body, { headers: { "anthropic-version": "2023-06-01" } });
    expect(ok.stop_reason).toBe("end_turn");
  });

  test("count_tokens and the model list", async () => {
    const c = client();
    const counted = await c.messages.countTokens({ model: MODEL, messages: [{ role: "user", content: "count these words" }] });
    expect(counted.input_tokens).toBeGreaterThan(0);
    const models = await c.models.list();
    expect(models.data.map((m) => m.id)).toEqual(["claude-sim-1"]);
  });
});
