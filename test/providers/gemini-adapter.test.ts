/**
 * The `gemini` vendor's adapter (src/providers/vendors/gemini/) against the Gemini simulator
 * (test/helpers/gemini-upstream.ts, proven by @google/genai): function calls with native
 * structured output over the catalog's real result schemas, OpenAI's chat body translated to
 * generateContent and the answer back (plain and streamed), embeddings, and Gemini's errors as
 * the gateway's.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import type { ProviderConfig } from "../../src/config";
import type { AnyFunctionDef } from "../../src/functions/define";
import { FUNCTIONS, getFunction } from "../../src/functions/registry";
import { validateAgainst } from "../../src/functions/validate";
import { attemptFunction } from "../../src/providers/attempt";
import type { ProxyCall } from "../../src/providers/chat";
import { buildProvider } from "../../src/providers/index";
import { type Provider, ProviderError, type ProxyApi } from "../../src/providers/types";
import { toGeminiSchema } from "../../src/providers/vendors/gemini/schema";
import { mockText } from "../../src/providers/vendors/mock/provider";
import { type GeminiUpstream, startGeminiUpstream } from "../helpers/gemini-upstream";
import { call, makeRouter, rejection, TinyResult, tiny } from "./fixtures";

// biome-ignore lint/suspicious/noExplicitAny: OpenAI-shaped answers, read field by field; the assertions check their shape
type J = Record<string, any>;

let sim: GeminiUpstream;
beforeAll(async () => {
  sim = await startGeminiUpstream();
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const entry = (over: Partial<ProviderConfig> = {}): ProviderConfig => ({
  name: "gem",
  type: "gemini",
  base_url: sim.url,
  api_key: "gm-test-key",
  ...over,
});
const gemini = (over: Partial<ProviderConfig> = {}) => buildProvider(entry(over));
const signal = () => new AbortController().signal;
const proxied = (p: Provider, body: Record<string, unknown>, api: ProxyApi = "chat/completions") =>
  (p.proxy as NonNullable<Provider["proxy"]>)({ api, body, signal: signal() }) as Promise<J>;
async function streamed(p: Provider, body: Record<string, unknown>): Promise<J[]> {
  const out: J[] = [];
  for await (const e of (p.proxyStream as NonNullable<Provider["proxyStream"]>)({
    api: "chat/completions",
    body,
    signal: signal(),
  }))
    out.push(e as J);
  return out;
}
const sent = (i = 0) => sim.calls.requests[i] as { path: string; body: J; headers: Record<string, string> };

/** the keywords of every node of a schema (property names left out) */
function schemaKeywords(node: unknown, out = new Set<string>()): Set<string> {
  if (!node || typeof node !== "object") return out;
  const s = node as Record<string, unknown>;
  for (const k of Object.keys(s)) out.add(k);
  if (s.properties && typeof s.properties === "object") for (const v of Object.values(s.properties)) schemaKeywords(v, out);
  if (s.items) schemaKeywords(s.items, out);
  if (Array.isArray(s.anyOf)) for (const v of s.anyOf) schemaKeywords(v, out);
  return out;
}

describe("function calls: native structured output", () => {
  test("the request: v1beta path, x-goog-api-key, systemInstruction, responseMimeType and the result schema as Gemini's Schema", async () => {
    const router = makeRouter({ providers: [entry()] });
    const out = await router.run(call(tiny, { text: "a fine day" }));
    expect(out.provider).toBe("gem");
    expect(out.model).toBe("gemini-2.5-flash");
    expect(Value.Check(TinyResult, out.result)).toBe(true);
    const req = sent();
    expect(req.path).toBe("/v1beta/models/gemini-2.5-flash:generateContent");
    expect(req.headers["x-goog-api-key"]).toBe("gm-test-key");
    expect(req.headers.authorization).toBeUndefined();
    expect(req.body.systemInstruction.parts[0].text).toContain("Classify the sentiment.");
    expect(req.body.contents).toEqual([{ role: "user", parts: [{ text: "a fine day" }] }]);
    expect(req.body.generationConfig.responseMimeType).toBe("application/json");
    expect(req.body.generationConfig.responseSchema).toEqual({
      type: "object",
      properties: {
        label: { type: "string", enum: ["positive", "negative", "neutral"] },
        score: { type: "number", minimum: 0, maximum: 1 },
        keywords: { type: "array", maxItems: 5, items: { type: "string" } },
        note: { type: "string" },
      },
      required: ["label", "score", "keywords"],
      propertyOrdering: ["label", "score", "keywords", "note"],
    });
  });

  // real function schemas: each converted (or sent as JSON Schema when Gemini's subset cannot say it), answered and validated
  const textFunctions = FUNCTIONS.filter((d) => d.kind !== "image" && !d.preferLocal);
  test.each(textFunctions.map((d) => [d.name, d] as const))("%s: answered through gemini and valid", async (_name, def) => {
    const request = validateAgainst<Record<string, unknown>>(def.request, structuredClone(def.example.request), 100_000);
    const req = (def as AnyFunctionDef).normalize
      ? ((def as AnyFunctionDef).normalize as (r: unknown) => unknown)(request)
      : request;
    const out = await attemptFunction({ def, request: req, accountId: "acct_gem", provider: gemini(), signal: signal() });
    expect(out).not.toBeNull();
    const config = sent().body.generationConfig as Record<string, unknown>;
    expect(config.responseMimeType).toBe("application/json");
    const schema = config.responseSchema ?? config.responseJsonSchema;
    expect(schema).toBeDefined();
    if (config.responseSchema) {
      const allowed = new Set([
        ...["type", "format", "description", "nullable", "enum", "properties", "required", "propertyOrdering", "items"],
        ...["minItems", "maxItems", "minimum", "maximum", "minLength", "maxLength", "pattern", "anyOf", "title"],
      ]);
      expect([...schemaKeywords(config.responseSchema)].filter((k) => !allowed.has(k))).toEqual([]);
    }
  });

  test("sentiment-analysis goes as Gemini's Schema; email-analyze (a free-form map of entities) as responseJsonSchema", () => {
    const sentiment = toGeminiSchema(getFunction("sentiment-analysis")?.result as unknown as Record<string, unknown>);
    expect(sentiment).not.toBeNull();
    const keys = schemaKeywords(sentiment);
    for (const k of ["additionalProperties", "const", "$id", "patternProperties"]) expect(keys.has(k)).toBe(false);
    expect(toGeminiSchema(getFunction("email-analyze")?.result as unknown as Record<string, unknown>)).toBeNull();
  });

  test("a free-form map or a tuple is not said in the subset: the JSON Schema goes as responseJsonSchema", () => {
    expect(toGeminiSchema({ type: "object", additionalProperties: { type: "number" } })).toBeNull();
    expect(toGeminiSchema({ type: "object", properties: { x: {} } })).toBeNull();
    expect(toGeminiSchema({ type: "array", prefixItems: [{ type: "string" }] })).toBeNull();
    expect(toGeminiSchema({ type: ["string", "null"] })).toEqual({ type: "string", nullable: true });
    expect(toGeminiSchema({ anyOf: [{ type: "integer" }, { type: "null" }] })).toEqual({ type: "integer", nullable: true });
  });

  test("a blocked prompt and a withheld answer are content_filter (422 content_filtered), not counted against the provider", async () => {
    sim.program([{ blockReason: "SAFETY" }, { finishReason: "SAFETY" }]);
    const p = gemini();
    const ask = () =>
      p.complete({ fn: "tiny", messages: [{ role: "user", content: "x" }], schema: { name: "tiny", schema: TinyResult } });
    for (const why of ["blocked the prompt (SAFETY)", "withheld the answer (SAFETY)"]) {
      const e = (await rejection(ask())) as ProviderError;
      expect(e).toBeInstanceOf(ProviderError);
      expect(e.kind).toBe("content_filter");
      expect(e.status).toBe(422);
      expect(e.upstream?.code).toBe("content_filtered");
      expect(e.message).toContain(why);
    }
  });

  test("through the router: every provider's filter refused is 422 content_filtered; another provider answers otherwise", async () => {
    sim.program([{ blockReason: "PROHIBITED_CONTENT" }]);
    const err = await rejection(makeRouter({ providers: [entry()] }).run(call(tiny, { text: "x" })));
    expect(err.code).toBe("content_filtered");
    expect(err.status).toBe(422);
    expect(err.attempts).toMatchObject([{ provider: "gem", error: "content_filter", status: 422 }]);
    sim.program([{ blockReason: "SAFETY" }]);
    const router = makeRouter({ providers: [entry(), { name: "m", type: "mock" }] });
    const out = await router.run(call(tiny, { text: "x" }));
    expect(out.provider).toBe("m");
    expect(router.status().gem?.consecutiveFailures).toBe(0);
  });
});

describe("/v1/chat/completions translated", () => {
  const png =
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";
  const tools = [
    {
      type: "function",
      function: {
        name: "lookup_order",
        description: "An order by id",
        parameters: { type: "object", properties: { id: { type: "string" } }, required: ["id"], additionalProperties: false },
      },
    },
  ];

  test("the body: system, roles, image, tool calls and results, tools, tool_choice, options, response_format", async () => {
    const p = gemini();
    await proxied(p, {
      model: "gemini-2.5-pro",
      messages: [
        { role: "system", content: "You help with orders." },
        {
          role: "user",
          content: [
            { type: "text", text: "what is in this picture?" },
            { type: "image_url", image_url: { url: png } },
          ],
        },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup_order", arguments: '{"id":"A1"}' } }],
        },
        { role: "tool", tool_call_id: "call_1", content: '{"status":"shipped"}' },
        { role: "tool", tool_call_id: "call_1", content: "plain text" },
      ],
      tools,
      tool_choice: { type: "function", function: { name: "lookup_order" } },
      temperature: 0.4,
      top_p: 0.9,
      max_tokens: 300,
      n: 2,
      stop: ["END"],
      seed: 7,
      response_format: {
        type: "json_schema",
        json_schema: { name: "x", schema: { type: "object", properties: { a: { type: "string" } } } },
      },
      user: "u-1",
    });
    const req = sent();
    expect(req.path).toBe("/v1beta/models/gemini-2.5-pro:generateContent");
    expect(req.body).toEqual({
      contents: [
        {
          role: "user",
          parts: [
            { text: "what is in this picture?" },
            { inlineData: { mimeType: "image/png", data: png.slice("data:image/png;base64,".length) } },
          ],
        },
        { role: "model", parts: [{ functionCall: { name: "lookup_order", args: { id: "A1" } } }] },
        {
          role: "user",
          parts: [
            { functionResponse: { name: "lookup_order", response: { status: "shipped" } } },
            { functionResponse: { name: "lookup_order", response: { result: "plain text" } } },
          ],
        },
      ],
      systemInstruction: { parts: [{ text: "You help with orders." }] },
      tools: [
        {
          functionDeclarations: [
            {
              name: "lookup_order",
              description: "An order by id",
              parameters: { type: "object", properties: { id: { type: "string" } }, required: ["id"], propertyOrdering: ["id"] },
            },
          ],
        },
      ],
      toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["lookup_order"] } },
      generationConfig: {
        temperature: 0.4,
        topP: 0.9,
        maxOutputTokens: 300,
        candidateCount: 2,
        seed: 7,
        stopSequences: ["END"],
        responseMimeType: "application/json",
        responseSchema: { type: "object", properties: { a: { type: "string" } }, propertyOrdering: ["a"] },
      },
    });
  });

  test("the answer: content, n choices, usage with cached and reasoning tokens", async () => {
    sim.program([{ usage: { cachedContentTokenCount: 5, thoughtsTokenCount: 9 } }]);
    const a = await proxied(gemini(), { model: "gemini-2.5-flash", messages: [{ role: "user", content: "hello gemini" }], n: 2 });
    expect(a.object).toBe("chat.completion");
    expect(a.choices.map((c: J) => c.message.content)).toEqual([
      `${mockText("hello gemini")} (1)`,
      `${mockText("hello gemini")} (2)`,
    ]);
    expect(a.choices.map((c: J) => c.finish_reason)).toEqual(["stop", "stop"]);
    const raw = sim.calls.requests[0];
    expect(raw?.status).toBe(200);
    expect(a.usage.prompt_tokens_details.cached_tokens).toBe(5);
    expect(a.usage.completion_tokens_details.reasoning_tokens).toBe(9);
    expect(a.usage.total_tokens).toBe(a.usage.prompt_tokens + a.usage.completion_tokens);
    expect(a.usage.completion_tokens).toBeGreaterThan(9);
  });

  test("a function call comes back as tool_calls with a generated id; finish_reason tool_calls", async () => {
    const a = await proxied(gemini(), {
      model: "m",
      messages: [{ role: "user", content: "where is A1?" }],
      tools,
      tool_choice: "required",
    });
    const choice = a.choices[0];
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls[0]).toMatchObject({ type: "function", function: { name: "lookup_order" } });
    expect(choice.message.tool_calls[0].id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(typeof JSON.parse(choice.message.tool_calls[0].function.arguments).id).toBe("string");
    expect(sent().body.toolConfig).toEqual({ functionCallingConfig: { mode: "ANY" } });
  });

  test("finish reasons: MAX_TOKENS is length, SAFETY and RECITATION are content_filter", async () => {
    const p = gemini();
    const body = { model: "m", messages: [{ role: "user", content: "a long question with many words in it" }] };
    expect((await proxied(p, { ...body, max_tokens: 2 })).choices[0].finish_reason).toBe("length");
    sim.program([{ finishReason: "SAFETY" }, { finishReason: "RECITATION" }]);
    for (let i = 0; i < 2; i++) {
      const a = await proxied(p, body);
      expect(a.choices[0].finish_reason).toBe("content_filter");
      expect(a.choices[0].message.content).toBe("");
    }
  });

  test("streamed: role, text deltas, the finish, and the usage chunk when asked", async () => {
    sim.program([{ usage: { thoughtsTokenCount: 4 } }]);
    const events = await streamed(gemini(), {
      model: "m",
      messages: [{ role: "user", content: "one two three four five" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(sent().path).toBe("/v1beta/models/m:streamGenerateContent?alt=sse");
    expect(events[0].choices[0].delta).toEqual({ role: "assistant", content: "" });
    expect(events.map((e) => e.choices[0]?.delta.content ?? "").join("")).toBe(mockText("one two three four five"));
    expect(events.every((e) => e.object === "chat.completion.chunk" && e.id === events[0]?.id)).toBe(true);
    expect(events.at(-2)?.choices[0].finish_reason).toBe("stop");
    expect(events.at(-1)?.choices).toEqual([]);
    expect(events.at(-1)?.usage.completion_tokens_details.reasoning_tokens).toBe(4);
    const noUsage = await streamed(gemini(), { model: "m", messages: [{ role: "user", content: "hi" }], stream: true });
    expect(noUsage.some((e) => e.usage)).toBe(false);
  });

  test("streamed tool call: one tool_calls delta with id, name and arguments; finish tool_calls", async () => {
    const events = await streamed(gemini(), { model: "m", messages: [{ role: "user", content: "A1?" }], tools, stream: true });
    const calls = events.flatMap((e) => e.choices[0]?.delta.tool_calls ?? []);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ index: 0, type: "function", function: { name: "lookup_order" } });
    expect(events.at(-1)?.choices[0].finish_reason).toBe("tool_calls");
  });

  test("a blocked prompt on a stream fails before the first event; a cut stream fails after", async () => {
    sim.program([{ blockReason: "SAFETY" }, { streamCut: true, chunkChars: 3 }]);
    const body = { model: "m", messages: [{ role: "user", content: "a long enough text to be cut" }], stream: true };
    const first = (await rejection(streamed(gemini(), body))) as ProviderError;
    expect(first.kind).toBe("content_filter");
    const cut = (await rejection(streamed(gemini(), body))) as ProviderError;
    expect(cut.kind).toBe("connection");
  });

  test("fields Gemini has no counterpart for are named, so the routes skip the provider", () => {
    const p = gemini();
    const msg = [{ role: "user", content: "hi" }];
    const u = (api: ProxyApi, body: Record<string, unknown>) => p.untranslatable?.(api, body) ?? null;
    expect(
      u("chat/completions", { model: "m", messages: msg, temperature: 1, stream: true, user: "x", logprobs: false }),
    ).toBeNull();
    expect(u("chat/completions", { model: "m", messages: msg, logprobs: true })).toBe("logprobs");
    expect(u("chat/completions", { model: "m", messages: msg, logit_bias: { 1: 2 } })).toBe("logit_bias");
    expect(u("chat/completions", { model: "m", messages: msg, reasoning_effort: "high" })).toBeNull();
    expect(u("chat/completions", { model: "m", messages: msg, reasoning_effort: "xhigh" })).toBe("reasoning_effort");
    expect(u("chat/completions", { model: "m", messages: msg, tools: [{ type: "web_search" }] })).toBe("tools[0].type");
    const allowed = { type: "allowed_tools", allowed_tools: { mode: "auto", tools: [] } };
    expect(u("chat/completions", { model: "m", messages: msg, tools: [], tool_choice: allowed })).toBe("tool_choice");
    const remote = [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://example.com/a.png" } }] }];
    expect(u("chat/completions", { model: "m", messages: remote })).toBe("messages[0].content[0].image_url");
    expect(u("embeddings", { model: "e", input: [[1, 2, 3]] })).toBe("input");
    expect(u("embeddings", { model: "e", input: ["a"], dimensions: 8 })).toBeNull();
  });
});

describe("embeddings", () => {
  test("/v1/embeddings through batchEmbedContents, dimensions and base64; the provider's own embed", async () => {
    const p = gemini();
    const a = await proxied(p, { model: "gemini-embedding-001", input: ["alpha", "beta"], dimensions: 16 }, "embeddings");
    expect(a.object).toBe("list");
    expect(a.data.map((d: J) => [d.index, d.embedding.length])).toEqual([
      [0, 16],
      [1, 16],
    ]);
    const req = sent();
    expect(req.path).toBe("/v1beta/models/gemini-embedding-001:batchEmbedContents");
    expect(req.body.requests[0]).toEqual({
      model: "models/gemini-embedding-001",
      content: { parts: [{ text: "alpha" }] },
      outputDimensionality: 16,
    });
    const b64 = await proxied(p, { model: "gemini-embedding-001", input: "alpha", encoding_format: "base64" }, "embeddings");
    const floats = new Float32Array(Buffer.from(b64.data[0].embedding, "base64").buffer.slice(0));
    expect(floats.length).toBe(64);
    const texts = Array.from({ length: 150 }, (_, i) => `text ${i}`);
    const vectors = await (p.embed as NonNullable<Provider["embed"]>)(texts);
    expect(vectors).toHaveLength(150);
    expect(sim.calls.requests.slice(2).map((r) => (r.body.requests as unknown[]).length)).toEqual([100, 50]);
  });
});

describe("errors", () => {
  const ask = (p: Provider) =>
    rejection(proxied(p, { model: "m", messages: [{ role: "user", content: "hi" }] })) as Promise<ProviderError>;

  test("429 RESOURCE_EXHAUSTED: the RetryInfo delay, else Retry-After, as retryAfterMs", async () => {
    sim.program([
      { status: 429, retryDelay: "2.5s" },
      { status: 429, retryAfter: 3 },
    ]);
    expect(await ask(gemini())).toMatchObject({ kind: "status", status: 429, retryAfterMs: 2500 });
    expect(await ask(gemini())).toMatchObject({ kind: "status", status: 429, retryAfterMs: 3000 });
  });

  test("503 UNAVAILABLE and 500 INTERNAL are statuses the router falls back from", async () => {
    sim.program([{ status: 503 }, { status: 500 }]);
    expect(await ask(gemini())).toMatchObject({ kind: "status", status: 503, upstream: { code: "unavailable" } });
    expect(await ask(gemini())).toMatchObject({ kind: "status", status: 500, upstream: { code: "internal" } });
  });

  test("a key Google refuses is the gateway's failure (401, nothing for the client), never the client's 400", async () => {
    sim.configure({ apiKey: "the-right-one" });
    const e = await ask(gemini());
    expect(e).toMatchObject({ kind: "status", status: 401 });
    expect(e.upstream).toBeUndefined();
    expect(e.message).not.toContain("API key not valid");
  });

  test("context length: kind context_length, 400 naming messages", async () => {
    sim.program([{ status: 400, contextLength: true }]);
    expect(await ask(gemini())).toMatchObject({
      kind: "context_length",
      status: 400,
      upstream: { code: "context_length_exceeded", param: "messages" },
    });
  });

  test("a 400 about the request passes with Google's message; the timeout and a dropped connection are theirs", async () => {
    sim.program([
      { status: 400, message: "Invalid value at 'generation_config.temperature'" },
      { delayMs: 1000 },
      { drop: true },
    ]);
    expect(await ask(gemini())).toMatchObject({
      kind: "status",
      status: 400,
      upstream: { message: "Invalid value at 'generation_config.temperature'", code: "invalid_argument" },
    });
    expect(await ask(gemini({ timeout_ms: 100 }))).toMatchObject({ kind: "timeout" });
    expect(await ask(gemini())).toMatchObject({ kind: "connection" });
    sim.program([{ status: 400, message: "Invalid value at 'generation_config.temperature'" }]);
    expect(await ask(gemini({ pass_upstream_messages: false }))).toMatchObject({
      status: 400,
      upstream: { message: 'provider "gem" rejected the request (400 invalid_argument)' },
    });
  });
});

describe("/v1/responses through chat completions", () => {
  test("a Responses call is answered by generateContent and translated back", async () => {
    const router = makeRouter({ providers: [entry({ default_model: "gemini-2.5-flash" })] });
    const c: ProxyCall = {
      api: "responses",
      body: { model: "gemini-2.5-flash", input: "hello responses", instructions: "Be nice." },
      signal: signal(),
      deadlineMs: Date.now() + 5000,
      requestId: "req_gem",
    };
    const out = await router.proxy(c, router.proxyTargets(c));
    const answer = JSON.parse(out.json);
    expect(answer.object).toBe("response");
    expect(answer.output[0].content[0].text).toBe(mockText("hello responses"));
    expect(sent().path).toBe("/v1beta/models/gemini-2.5-flash:generateContent");
    expect(sent().body.systemInstruction).toEqual({ parts: [{ text: "Be nice." }] });
  });
});
