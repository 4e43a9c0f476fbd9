/**
 * The `anthropic` provider type against the Anthropic simulator (test/helpers/anthropic-upstream.ts,
 * proven by @anthropic-ai/sdk): function calls by forced tool use, the chat completions translation
 * both ways (plain and streamed, system prompts, tools and their results, images, stop sequences,
 * max_tokens, response_format), what it refuses to translate, its errors, and the Messages API
 * passed through as sent.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import type { ProviderConfig } from "../../src/config";
import { creditsFor } from "../../src/credits/pricing";
import { attemptFunction } from "../../src/providers/attempt";
import { capableTargets } from "../../src/providers/chat";
import { buildProvider } from "../../src/providers/index";
import { type Provider, ProviderError, type ProxyRequest } from "../../src/providers/types";
import { reportedUsage, type TokenUsage } from "../../src/providers/usage";
import { mockText } from "../../src/providers/vendors/mock/provider";
import { type AnthropicUpstream, startAnthropicUpstream } from "../helpers/anthropic-upstream";
import { rejection, TinyResult, tiny } from "./fixtures";

let sim: AnthropicUpstream;
beforeAll(async () => {
  sim = await startAnthropicUpstream();
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

// biome-ignore lint/suspicious/noExplicitAny: the answers are read field by field, as a client would
type Answer = Record<string, any>;

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

function claude(over: Partial<ProviderConfig> = {}): Provider {
  return buildProvider({ name: "claude", type: "anthropic", base_url: sim.url, api_key: "sk-ant-test", ...over });
}

const signal = () => new AbortController().signal;
const chat = (p: Provider, body: Record<string, unknown>) =>
  (p.proxy as (r: ProxyRequest) => Promise<Answer>)({ api: "chat/completions", body, signal: signal() });
async function streamed(p: Provider, body: Record<string, unknown>): Promise<Answer[]> {
  const out: Answer[] = [];
  const events = (p.proxyStream as (r: ProxyRequest) => AsyncIterable<unknown>)({
    api: "chat/completions",
    body: { ...body, stream: true },
    signal: signal(),
  });
  for await (const e of events) out.push(e as Answer);
  return out;
}
const sent = (i = 0) => sim.calls.requests[i]?.body as Answer;

describe("configuration", () => {
  test("its key in x-api-key with anthropic-version, to /v1/messages under a base URL written without /v1; no embeddings", async () => {
    const p = claude({ base_url: `${sim.url}/` });
    await chat(p, { model: "claude-sim-1", messages: [{ role: "user", content: "hi" }] });
    const rec = sim.calls.requests[0];
    expect(rec?.path).toBe("/v1/messages");
    expect(rec?.headers["x-api-key"]).toBe("sk-ant-test");
    expect(rec?.headers["anthropic-version"]).toBe("2023-06-01");
    expect(rec?.headers.authorization).toBeUndefined();
    // a base URL written with /v1 is not doubled
    await chat(claude({ base_url: `${sim.url}/v1` }), { model: "m", messages: [{ role: "user", content: "hi" }] });
    expect(sim.calls.requests[1]?.path).toBe("/v1/messages");
    expect(p.embed).toBeUndefined();
    expect([...(p.features ?? [])].sort()).toEqual(["images", "structured_output", "tools"]);
    expect(claude({ base_url: undefined }).features?.has("remote_urls")).toBe(true);
    expect(p.modelPatterns).toEqual(["*"]);
    expect(p.modelFor("tiny")).toBe("claude-haiku-4-5");
  });
});

describe("function calls: structured output by forced tool use", () => {
  test("the schema is the forced tool's input_schema, the system prompt is `system`, the answer is the tool's input", async () => {
    const p = claude({ default_model: "claude-sim-1" });
    const out = await p.complete({
      fn: "tiny",
      messages: [
        { role: "system", content: "Classify the sentiment." },
        { role: "user", content: "a fine day" },
      ],
      schema: { name: "tiny", schema: TinyResult },
      temperature: 0.2,
    });
    const body = sent();
    expect(body.system).toBe("Classify the sentiment.");
    expect(body.messages).toEqual([{ role: "user", content: "a fine day" }]);
    expect(body.max_tokens).toBe(4096);
    expect(body.temperature).toBe(0.2);
    expect(body.tools).toEqual([{ name: "tiny", input_schema: JSON.parse(JSON.stringify(TinyResult)) }]);
    expect(body.tool_choice).toEqual({ type: "tool", name: "tiny" });
    expect(Value.Check(TinyResult, JSON.parse(out.text))).toBe(true);
    expect(out.finishReason).toBe("stop");
    expect(out.model).toBe("claude-sim-1");
    expect(out.usage?.prompt_tokens).toBeGreaterThan(0);
  });

  test("a function attempt: valid, repaired once, invalid twice", async () => {
    const p = claude();
    const attempt = () =>
      attemptFunction({ def: tiny, request: { text: "good" }, accountId: "a", provider: p, signal: signal() });
    expect(Value.Check(TinyResult, (await attempt())?.result)).toBe(true);
    sim.program([{ schemaInvalid: true }]);
    expect(Value.Check(TinyResult, (await attempt())?.result)).toBe(true);
    sim.program([{ schemaInvalid: true }, { malformed: true }]);
    expect(await rejection(attempt())).toMatchObject({ kind: "invalid_output" });
    expect(sim.calls.count).toBe(5);
  });
});

describe("chat completions translated to Messages", () => {
  test("system and developer messages become `system`; stop, max_tokens, temperature, top_p, user", async () => {
    const answer = await chat(claude(), {
      model: "claude-sim-1",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "developer", content: [{ type: "text", text: "Use English." }] },
        { role: "user", content: "hello translated world" },
      ],
      stop: "world",
      max_completion_tokens: 100,
      temperature: 0.5,
      top_p: 0.9,
      user: "user-42",
      seed: 7,
      n: 1,
    });
    expect(sent()).toEqual({
      model: "claude-sim-1",
      max_tokens: 100,
      messages: [{ role: "user", content: [{ type: "text", text: "hello translated world" }] }],
      system: "Be brief.\n\nUse English.",
      temperature: 0.5,
      top_p: 0.9,
      stop_sequences: ["world"],
      metadata: { user_id: "user-42" },
    });
    // the answer ("Mock answer about: hello translated world") cut at the stop sequence
    expect(answer.object).toBe("chat.completion");
    expect(answer.choices[0].message).toEqual({
      role: "assistant",
      content: "Mock answer about: hello translated ",
      refusal: null,
    });
    expect(answer.choices[0].finish_reason).toBe("stop");
    expect(answer.usage.prompt_tokens).toBeGreaterThan(0);
    expect(answer.usage.total_tokens).toBe(answer.usage.prompt_tokens + answer.usage.completion_tokens);
  });

  test("tools: definitions and tool_choice; tool_calls back; the tool's result as tool_result in the next user turn", async () => {
    const p = claude();
    const tools = [
      {
        type: "function",
        function: {
          name: "get_weather",
          description: "weather",
          parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
        },
      },
    ];
    const first = await chat(p, {
      model: "m",
      messages: [{ role: "user", content: "weather in Oslo?" }],
      tools,
      tool_choice: "required",
      parallel_tool_calls: false,
    });
    expect(sent().tools).toEqual([
      {
        name: "get_weather",
        description: "weather",
        input_schema: tools[0]?.function.parameters,
      },
    ]);
    expect(sent().tool_choice).toEqual({ type: "any", disable_parallel_tool_use: true });
    const call = first.choices[0].message.tool_calls[0];
    expect(first.choices[0].finish_reason).toBe("tool_calls");
    expect(first.choices[0].message.content).toBeNull();
    expect(call).toMatchObject({ type: "function", function: { name: "get_weather" } });
    expect(typeof JSON.parse(call.function.arguments).city).toBe("string");
    const second = await chat(p, {
      model: "m",
      messages: [
        { role: "user", content: "weather in Oslo?" },
        { role: "assistant", content: null, tool_calls: [call] },
        { role: "tool", tool_call_id: call.id, content: "rainy" },
        { role: "user", content: "and tomorrow?" },
      ],
      tools,
      tool_choice: { type: "function", function: { name: "get_weather" } },
    });
    expect(sent(1).messages).toEqual([
      { role: "user", content: [{ type: "text", text: "weather in Oslo?" }] },
      {
        role: "assistant",
        content: [{ type: "tool_use", id: call.id, name: "get_weather", input: JSON.parse(call.function.arguments) }],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: call.id, content: "rainy" },
          { type: "text", text: "and tomorrow?" },
        ],
      },
    ]);
    expect(sent(1).tool_choice).toEqual({ type: "tool", name: "get_weather" });
    expect(second.choices[0].finish_reason).toBe("tool_calls");
  });

  test("images: a data: URL as a base64 source, an https URL as a url source", async () => {
    await chat(claude(), {
      model: "m",
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "compare" },
            { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } },
            { type: "image_url", image_url: { url: "https://example.com/cat.png", detail: "low" } },
          ],
        },
      ],
    });
    expect(sent().messages[0].content).toEqual([
      { type: "text", text: "compare" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
      { type: "image", source: { type: "url", url: "https://example.com/cat.png" } },
    ]);
  });

  test("response_format json_schema: a forced tool whose input is the message content, finish stop", async () => {
    const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
    const answer = await chat(claude(), {
      model: "m",
      messages: [{ role: "user", content: "a city" }],
      response_format: { type: "json_schema", json_schema: { name: "city", schema, strict: true } },
    });
    expect(sent().tools).toEqual([{ name: "json_answer", input_schema: schema }]);
    expect(sent().tool_choice).toEqual({ type: "tool", name: "json_answer" });
    expect(typeof JSON.parse(answer.choices[0].message.content).city).toBe("string");
    expect(answer.choices[0].finish_reason).toBe("stop");
    expect(answer.choices[0].message.tool_calls).toBeUndefined();
  });

  test("finish reasons: max_tokens is length, refusal is content_filter; thinking comes back as reasoning_content", async () => {
    const p = claude();
    const long = await chat(p, { model: "m", max_tokens: 2, messages: [{ role: "user", content: "a long answer please" }] });
    expect(long.choices[0].finish_reason).toBe("length");
    sim.program([{ stopReason: "refusal" }]);
    const refused = await chat(p, { model: "m", messages: [{ role: "user", content: "no" }] });
    expect(refused.choices[0].finish_reason).toBe("content_filter");
    const thought = await chat(p, {
      model: "m",
      max_tokens: 3000,
      thinking: { type: "enabled", budget_tokens: 1024 },
      messages: [{ role: "user", content: "think" }],
    });
    expect(sent(2).thinking).toEqual({ type: "enabled", budget_tokens: 1024 });
    expect(thought.choices[0].message.reasoning_content).toContain("answer briefly");
  });

  test("prompt caching: cache_control on a part is kept; cache reads and writes come back in prompt_tokens_details", async () => {
    const body = {
      model: "m",
      messages: [
        {
          role: "system",
          content: [{ type: "text", text: "Stable instructions. ".repeat(40), cache_control: { type: "ephemeral" } }],
        },
        { role: "user", content: "hello cache" },
      ],
    };
    const p = claude();
    const first = await chat(p, body);
    expect(sent().system).toEqual([
      { type: "text", text: "Stable instructions. ".repeat(40), cache_control: { type: "ephemeral" } },
    ]);
    expect(first.usage.prompt_tokens_details.cache_write_tokens).toBeGreaterThan(100);
    expect(first.usage.prompt_tokens_details.cached_tokens).toBe(0);
    const second = await chat(p, body);
    expect(second.usage.prompt_tokens_details.cached_tokens).toBe(first.usage.prompt_tokens_details.cache_write_tokens);
    expect(second.usage.prompt_tokens).toBe(first.usage.prompt_tokens);
  });

  test("what has no equivalent is refused, not dropped: the route skips the provider, naming the field", () => {
    const p = claude();
    const target = [{ name: "claude", provider: p }];
    const base = { model: "m", messages: [{ role: "user", content: "hi" }] };
    for (const [extra, field] of [
      [{ n: 2 }, "n"],
      [{ logprobs: true }, "logprobs"],
      [{ presence_penalty: 0.5 }, "presence_penalty"],
      [{ temperature: 1.5 }, "temperature"],
      [{ reasoning_effort: "high" }, "reasoning_effort"],
      [{ messages: [{ role: "user", content: "hi", name: "bob" }] }, "messages[0].name"],
      [{ messages: [{ role: "function", name: "f", content: "x" }] }, "messages[0].role"],
      [
        { messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "data:image/bmp;base64,Qk0=" } }] }] },
        "messages[0].content",
      ],
    ] as const) {
      expect(p.untranslatable?.("chat/completions", { ...base, ...extra })).toBe(field);
      expect(() => capableTargets("chat/completions", { ...base, ...extra }, target as never)).toThrow(`cannot serve "${field}"`);
    }
    // n: 1, seed, zero penalties change nothing on Anthropic's side
    expect(
      p.untranslatable?.("chat/completions", { ...base, n: 1, seed: 3, presence_penalty: 0, stream_options: {} }),
    ).toBeNull();
    // embeddings: not a feature it has
    expect(() => capableTargets("embeddings", { model: "m", input: "x" }, target as never)).toThrow("no embeddings support");
  });
});

describe("streams translated to chunks", () => {
  test("text deltas, the finish, and the usage chunk when asked", async () => {
    const chunks = await streamed(claude(), {
      model: "claude-sim-1",
      messages: [{ role: "user", content: "stream me please" }],
      stream_options: { include_usage: true },
    });
    expect(chunks[0]?.choices[0].delta).toEqual({ role: "assistant", content: "" });
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe(mockText("stream me please"));
    expect(chunks.at(-2)?.choices[0].finish_reason).toBe("stop");
    expect(chunks.at(-1)?.choices).toEqual([]);
    expect(chunks.at(-1)?.usage.prompt_tokens).toBeGreaterThan(0);
    expect(chunks.every((c) => c.object === "chat.completion.chunk" && c.model === "claude-sim-1")).toBe(true);
    expect(sent().stream).toBe(true);
    // without include_usage, no usage chunk
    const plain = await streamed(claude(), { model: "m", messages: [{ role: "user", content: "again" }] });
    expect(plain.some((c) => "usage" in c)).toBe(false);
  });

  test("tool calls stream as tool_calls deltas whose arguments add up; a response_format's JSON as content", async () => {
    const tools = [
      { type: "function", function: { name: "pick", parameters: { type: "object", properties: { n: { type: "integer" } } } } },
    ];
    const chunks = await streamed(claude(), { model: "m", messages: [{ role: "user", content: "pick" }], tools });
    const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(calls[0]).toMatchObject({ index: 0, type: "function", function: { name: "pick", arguments: "" } });
    const args = calls.map((c: { function: { arguments?: string } }) => c.function.arguments ?? "").join("");
    expect(typeof JSON.parse(args).n).toBe("number");
    expect(chunks.at(-1)?.choices[0].finish_reason).toBe("tool_calls");
    const formatted = await streamed(claude(), {
      model: "m",
      messages: [{ role: "user", content: "json" }],
      response_format: { type: "json_object" },
    });
    expect(JSON.parse(formatted.map((c) => c.choices[0]?.delta.content ?? "").join(""))).toBeObject();
    expect(formatted.at(-1)?.choices[0].finish_reason).toBe("stop");
  });

  test("a stream cut before message_stop fails as connection; an error event in it is the upstream's own error, its type kept", async () => {
    sim.program([{ streamCut: true }, { streamError: true }]);
    const body = { model: "m", messages: [{ role: "user", content: "one two three four five six" }] };
    expect(await rejection(streamed(claude(), body))).toMatchObject({ kind: "connection" });
    expect(await rejection(streamed(claude(), body))).toMatchObject({
      kind: "upstream_error",
      code: "upstream_error",
      upstream: { type: "overloaded_error", message: "Overloaded" },
    });
  });
});

describe("errors", () => {
  const body = { model: "m", messages: [{ role: "user", content: "hi" }] };
  test("429 keeps retry-after; 529 overloaded and 5xx are retryable statuses; 401 is a status the route does not pass on", async () => {
    sim.program([{ status: 429, retryAfter: 3 }, { status: 529 }, { status: 503 }, { status: 401 }]);
    const p = claude();
    expect(await rejection(chat(p, body))).toMatchObject({ kind: "status", status: 429, retryAfterMs: 3000 });
    const overloaded = (await rejection(chat(p, body))) as ProviderError;
    expect(overloaded).toMatchObject({ kind: "status", status: 529, upstream: { type: "overloaded_error" } });
    expect(await rejection(chat(p, body))).toMatchObject({ kind: "status", status: 503 });
    expect(await rejection(chat(p, body))).toMatchObject({ kind: "status", status: 401 });
  });

  test("a prompt too long is context_length, naming messages", async () => {
    sim.program([{ contextLength: true }]);
    expect(await rejection(chat(claude(), body))).toMatchObject({
      kind: "context_length",
      status: 400,
      upstream: { type: "invalid_request_error", code: "context_length_exceeded", param: "messages" },
    });
  });

  test("Anthropic's 400 message passes; behind pass_upstream_messages = false it is withheld", async () => {
    sim.program([
      { status: 400, message: "messages.0: see /srv/x" },
      { status: 400, message: "messages.0: see /srv/x" },
    ]);
    expect(await rejection(chat(claude(), body))).toMatchObject({
      upstream: { message: "messages.0: see /srv/x", type: "invalid_request_error" },
    });
    const withheld = (await rejection(chat(claude({ pass_upstream_messages: false }), body))) as ProviderError;
    expect(withheld.upstream?.message).toBe('provider "claude" rejected the request (400 invalid_request_error)');
  });
});

describe("the Messages API passed through (for the inbound /v1/messages)", () => {
  test("messages and messagesStream send the body as given and give Anthropic's answer and events back", async () => {
    const p = claude();
    const body = { model: "claude-sim-1", max_tokens: 100, messages: [{ role: "user", content: "pass me through" }] };
    const text = JSON.stringify(body);
    const answer = (await p.messages?.({ body, text, signal: signal() })) as Answer;
    expect(answer.type).toBe("message");
    expect(answer.content[0].text).toBe(mockText("pass me through"));
    expect(sim.calls.requests[0]?.raw).toBe(text);
    const events: Answer[] = [];
    for await (const e of p.messagesStream?.({ body: { ...body, stream: true }, signal: signal() }) ?? [])
      events.push(e as Answer);
    expect(events[0]?.type).toBe("message_start");
    expect(events.at(-1)?.type).toBe("message_stop");
    const counted = (await p.countTokens?.({
      body: { model: "claude-sim-1", messages: body.messages },
      signal: signal(),
    })) as Answer;
    expect(counted.input_tokens).toBeGreaterThan(0);
    sim.program([{ streamCut: true }]);
    const cut = (async () => {
      for await (const _ of p.messagesStream?.({ body: { ...body, stream: true }, signal: signal() }) ?? []) {
        /* drain */
      }
    })();
    expect(await rejection(cut)).toBeInstanceOf(ProviderError);
  });
});

describe("turns Anthropic would refuse", () => {
  test("an empty assistant turn is left out, its neighbours merged (a function's repair of an empty answer, a chat history)", async () => {
    const p = claude();
    sim.program([{ content: "" }]);
    // the first answer is empty text: the repair's turns are user, (empty assistant left out), user
    const out = await attemptFunction({ def: tiny, request: { text: "good" }, accountId: "a", provider: p, signal: signal() });
    expect(Value.Check(TinyResult, out?.result)).toBe(true);
    const repair = sent(1).messages as { role: string }[];
    expect(repair.map((m) => m.role)).toEqual(["user"]);
    await chat(p, {
      model: "m",
      messages: [
        { role: "user", content: "a" },
        { role: "assistant", content: "" },
        { role: "user", content: "b" },
      ],
    });
    expect(sent(2).messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "a" },
          { type: "text", text: "b" },
        ],
      },
    ]);
  });
});

describe("the usage pricing reads", () => {
  test("a Messages API usage: its cache reads and writes added to the input, each priced at its own price", () => {
    const usage = reportedUsage({
      type: "message",
      usage: { input_tokens: 10, cache_read_input_tokens: 1000, cache_creation_input_tokens: 200, output_tokens: 5 },
    });
    expect(usage).toEqual({ input: 1210, output: 5, kinds: { cached_input: 1000, cache_write: 200 } });
    const price = { input: 3, output: 15, kinds: { cached_input: 0.3, cache_write: 3.75 } };
    // (10 × 3 + 1000 × 0.3 + 200 × 3.75 + 5 × 15) / 1000 = 1.155, rounded up
    expect(creditsFor(price, usage as TokenUsage)).toBe(2);
    // without cache prices every input token is input
    expect(creditsFor({ input: 1000, output: 0 }, usage as TokenUsage)).toBe(1210);
    expect(creditsFor({ input: 1000, output: 0, kinds: { cached_input: 100 } }, usage as TokenUsage)).toBe(10 + 100 + 200);
    // OpenAI's details (a chat answer translated, or OpenAI's own)
    expect(
      reportedUsage({ usage: { prompt_tokens: 50, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 40 } } }),
    ).toEqual({ input: 50, output: 1, kinds: { cached_input: 40 } });
  });
});
