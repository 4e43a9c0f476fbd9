/**
 * The contract of the two transports of an OpenAI-style provider (docs/providers.md): the lean
 * HTTP one (Bun's fetch, the default) and the official SDKs (their raw `post` for the `/v1`
 * pass-through, `chat.completions.create` for function calls). Every case runs against each, on
 * the upstream simulator and its failure modes; the parity cases also require both to end in the
 * same ProviderError, field by field (and function calls to send the same body and give the same
 * answer), so the lean transport is exactly what the SDK did.
 */
import { describe, expect, test } from "bun:test";
import type { ProviderConfig } from "../../src/config";
import type { AnyFunctionDef } from "../../src/functions/define";
import sentiment from "../../src/functions/sentiment-analysis";
import { attemptFunction } from "../../src/providers/attempt";
import {
  buildOpenAILikeProvider as createGroqProvider,
  buildOpenAILikeProvider as createOpenAIProvider,
} from "../../src/providers/index";
import type { OpenAILikeProvider } from "../../src/providers/openai-like";
import { toStructured } from "../../src/providers/structured";
import { type CompletionRequest, ProviderError, type ProxyApi } from "../../src/providers/types";
import { mockText } from "../../src/providers/vendors/mock/provider";
import type { Fault, Upstream } from "../helpers/upstream";
import { type Kind, PARITY } from "./contract-cases";
import { TinyResult, tiny, useUpstreams } from "./fixtures";

let sim: Upstream;
useUpstreams(1, ([first]) => {
  sim = first as Upstream;
});

/**
 * "http" on the simulator's plain-http URL is the HTTP/1.1 client on the event loop
 * (src/providers/http1.ts); "http-fetch" is the same transport on Bun's fetch, as for an https://
 * upstream (or with an HTTP proxy set).
 */
const TRANSPORTS = ["http", "http-fetch", "sdk"] as const;
type Transport = (typeof TRANSPORTS)[number];

function provider(transport: Transport, kind: Kind = "openai", over: Partial<ProviderConfig> = {}): OpenAILikeProvider {
  const config: ProviderConfig =
    kind === "groq"
      ? { name: "g", type: "groq", base_url: sim.url, api_key: "gsk_contract", ...over }
      : { name: "p", type: kind, base_url: `${sim.url}/v1`, api_key: "sk-contract", default_model: "sim-model", ...over };
  const opts = transport === "http-fetch" ? { transport: "http" as const, fetch } : { transport };
  const p = kind === "groq" ? createGroqProvider(config, opts) : createOpenAIProvider(config, opts);
  expect(p.transport.kind).toBe(opts.transport);
  return p;
}

const chatBody = (extra: Record<string, unknown> = {}) => ({
  model: "sim-model",
  messages: [{ role: "user", content: "hello contract suite" }],
  ...extra,
});

/** What a call ended in: its answer, or the ProviderError's every field. */
async function settle(p: Promise<unknown>): Promise<{ ok: unknown } | { error: Record<string, unknown> }> {
  try {
    return { ok: await p };
  } catch (e) {
    if (!(e instanceof ProviderError)) throw e;
    return {
      error: { kind: e.kind, message: e.message, status: e.status, retryAfterMs: e.retryAfterMs, upstream: e.upstream },
    };
  }
}

async function drain(events: AsyncIterable<unknown>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const e of events) out.push(e);
  return out;
}

const plain = (p: OpenAILikeProvider, body: Record<string, unknown>, api: ProxyApi = "chat/completions", signal?: AbortSignal) =>
  settle(p.proxy({ api, body, signal: signal ?? new AbortController().signal }));
const streamed = (
  p: OpenAILikeProvider,
  body: Record<string, unknown>,
  api: ProxyApi = "chat/completions",
  signal?: AbortSignal,
) => settle(drain(p.proxyStream({ api, body: { ...body, stream: true }, signal: signal ?? new AbortController().signal })));

describe.each(TRANSPORTS)("%s transport", (transport) => {
  test("a plain chat answer comes back parsed, the body sent as given, with the key and the call's headers", async () => {
    const p = provider(transport);
    const body = chatBody({ temperature: 0, vendor_field: { x: 1 } });
    const out = await plain(p, body);
    if (!("ok" in out)) throw new Error(JSON.stringify(out));
    const answer = out.ok as { object: string; choices: { message: { content: string } }[] };
    expect(answer.object).toBe("chat.completion");
    expect(answer.choices[0]?.message.content).toBe(mockText("hello contract suite"));
    const rec = sim.calls.requests[0];
    expect(rec?.path).toBe("/v1/chat/completions");
    expect(rec?.body).toEqual(body);
    expect(rec?.headers.authorization).toBe("Bearer sk-contract");
    expect(rec?.headers["content-type"]).toContain("application/json");
  });

  test("the call's headers (traceparent) reach the upstream", async () => {
    const p = provider(transport);
    const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    await p.proxy({ api: "chat/completions", body: chatBody(), signal: new AbortController().signal, headers: { traceparent } });
    expect(sim.calls.requests[0]?.headers.traceparent).toBe(traceparent);
  });

  test("embeddings and the Responses API go to their paths; Groq's to /openai/v1", async () => {
    const emb = (await provider(transport).proxy({
      api: "embeddings",
      body: { model: "sim-embed", input: ["a", "b"] },
      signal: new AbortController().signal,
    })) as { data: unknown[] };
    expect(emb.data).toHaveLength(2);
    const groq = provider(transport, "groq");
    const resp = (await groq.proxy({
      api: "responses",
      body: { model: "llama-x", input: "hello groq" },
      signal: new AbortController().signal,
    })) as { object: string };
    expect(resp.object).toBe("response");
    expect(sim.calls.requests.map((r) => r.path)).toEqual(["/v1/embeddings", "/openai/v1/responses"]);
    expect(sim.calls.requests[1]?.headers.authorization).toBe("Bearer gsk_contract");
  });

  test("a stream's events arrive parsed and in order; chat and Responses (named events)", async () => {
    const chat = await streamed(provider(transport), chatBody({ stream_options: { include_usage: true } }));
    if (!("ok" in chat)) throw new Error(JSON.stringify(chat));
    const chunks = chat.ok as { choices: { delta: { content?: string }; finish_reason: string | null }[]; usage?: unknown }[];
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe(mockText("hello contract suite"));
    expect(chunks.at(-1)?.usage).toBeDefined();
    const resp = await streamed(provider(transport, "groq"), { model: "m", input: "hello events" }, "responses");
    if (!("ok" in resp)) throw new Error(JSON.stringify(resp));
    const types = (resp.ok as { type: string }[]).map((e) => e.type);
    expect(types[0]).toBe("response.created");
    expect(types.at(-1)).toBe("response.completed");
  });

  test("4xx with an OpenAI error body: status, type, code, param and message (an OpenAI-type provider passes it)", async () => {
    sim.program([
      {
        status: 400,
        errorType: "invalid_request_error",
        errorCode: "bad_value",
        param: "temperature",
        message: "temperature is too hot",
      },
    ]);
    const out = await plain(provider(transport), chatBody());
    expect(out).toEqual({
      error: {
        kind: "status",
        message: "upstream answered 400: 400 temperature is too hot",
        status: 400,
        retryAfterMs: undefined,
        upstream: { message: "temperature is too hot", type: "invalid_request_error", code: "bad_value", param: "temperature" },
      },
    });
    expect(sim.calls.count).toBe(1);
  });

  test("a self-hosted server's 4xx message is withheld; a param that is not a field path is dropped", async () => {
    sim.program([{ status: 422, errorCode: "nope", param: "http://10.0.0.1/x", message: "see /srv/models/llama" }]);
    const out = await plain(provider(transport, "openai-compatible"), chatBody());
    expect(out).toEqual({
      error: {
        kind: "status",
        message: 'provider "p" rejected the request (422 nope)',
        status: 422,
        retryAfterMs: undefined,
        upstream: {
          message: 'provider "p" rejected the request (422 nope)',
          type: "invalid_request_error",
          code: "nope",
          param: null,
        },
      },
    });
  });

  test("a context-length 400 is context_length", async () => {
    sim.program([{ status: 400, contextLength: true }]);
    const out = await plain(provider(transport), chatBody());
    expect(out).toMatchObject({ error: { kind: "context_length", status: 400, upstream: { code: "context_length_exceeded" } } });
  });

  test("5xx, and 429 with Retry-After (in ms)", async () => {
    sim.program([{ status: 503 }, { status: 429, retryAfter: 2 }]);
    expect(await plain(provider(transport), chatBody())).toMatchObject({ error: { kind: "status", status: 503 } });
    expect(await plain(provider(transport), chatBody())).toMatchObject({
      error: { kind: "status", status: 429, retryAfterMs: 2000 },
    });
    expect(sim.calls.count).toBe(2);
  });

  test("the provider's timeout: before the answer, plain and streamed; no retry", async () => {
    sim.program([{ delayMs: 1000 }, { delayMs: 1000 }]);
    const p = provider(transport, "openai", { timeout_ms: 150 });
    expect(await plain(p, chatBody())).toMatchObject({ error: { kind: "timeout" } });
    expect(await streamed(p, chatBody())).toMatchObject({ error: { kind: "timeout" } });
    await Bun.sleep(50);
    expect(sim.calls.requests.map((r) => r.aborted)).toEqual([true, true]);
  });

  test("the caller's abort before the answer is aborted, and the upstream sees it", async () => {
    sim.program([{ delayMs: 1000 }]);
    const ctrl = new AbortController();
    setTimeout(() => ctrl.abort(), 50);
    expect(await plain(provider(transport), chatBody(), "chat/completions", ctrl.signal)).toMatchObject({
      error: { kind: "aborted" },
    });
    await Bun.sleep(50);
    expect(sim.calls.requests[0]?.aborted).toBe(true);
  });

  test("a signal aborted already: aborted, whatever the upstream would say", async () => {
    const ctrl = new AbortController();
    ctrl.abort();
    expect(await plain(provider(transport), chatBody(), "chat/completions", ctrl.signal)).toMatchObject({
      error: { kind: "aborted" },
    });
  });

  test("the caller's abort mid-stream ends the events and the upstream request", async () => {
    sim.program([{ chunkChars: 2 }]);
    const ctrl = new AbortController();
    const events = provider(transport).proxyStream({
      api: "chat/completions",
      body: chatBody({ stream: true }),
      signal: ctrl.signal,
    });
    let seen = 0;
    const out = await settle(
      (async () => {
        for await (const _ of events) if (++seen === 2) ctrl.abort();
      })(),
    );
    expect(seen).toBeLessThan(6);
    expect(out).toMatchObject({ error: { kind: expect.stringMatching(/^(aborted|connection)$/) } });
    await Bun.sleep(50);
    expect(sim.calls.requests[0]?.aborted).toBe(true);
  });

  test("a consumer that stops early aborts the upstream stream", async () => {
    sim.program([{ chunkChars: 2 }]);
    const events = provider(transport).proxyStream({
      api: "chat/completions",
      body: chatBody({ stream: true }),
      signal: new AbortController().signal,
    });
    for await (const _ of events) break;
    await Bun.sleep(50);
    expect(sim.calls.requests[0]?.aborted).toBe(true);
  });

  test("a connection that drops, or is refused, is connection", async () => {
    sim.program([{ drop: true }]);
    expect(await plain(provider(transport), chatBody())).toMatchObject({ error: { kind: "connection" } });
    const refused = provider(transport, "openai", { base_url: "http://127.0.0.1:9/v1" });
    expect(await plain(refused, chatBody())).toMatchObject({ error: { kind: "connection" } });
  });

  test("a stream cut after its first events throws; one that ends without a finish is cut too", async () => {
    sim.program([{ streamCut: true }]);
    expect(await streamed(provider(transport), chatBody())).toMatchObject({ error: { kind: "connection" } });
  });
});

test("Groq's error object passes as OpenAI's through the HTTP transport (groq-sdk passed the whole body as the message)", async () => {
  const fault: Fault = { status: 400, errorType: "invalid_request_error", errorCode: "bad", param: "messages", message: "nope" };
  sim.program([fault, fault]);
  const http = await plain(provider("http", "groq"), chatBody());
  expect(http).toEqual({
    error: {
      kind: "status",
      message: "upstream answered 400: 400 nope",
      status: 400,
      retryAfterMs: undefined,
      upstream: { message: "nope", type: "invalid_request_error", code: "bad", param: "messages" },
    },
  });
  const sdk = await plain(provider("sdk", "groq"), chatBody());
  expect(sdk).toMatchObject({ error: { kind: "status", status: 400, upstream: { type: null, code: null, param: null } } });
  expect((sdk as { error: { upstream: { message: string } } }).error.upstream.message).toStartWith('400 {"error":');
});

describe("both transports end each failure mode alike", () => {
  for (const c of PARITY) {
    test(c.name, async () => {
      const outcomes: unknown[] = [];
      for (const transport of TRANSPORTS) {
        sim.program(c.faults);
        const p = provider(transport, c.kind ?? "openai", c.over);
        outcomes.push(await (c.stream ? streamed(p, chatBody()) : plain(p, chatBody())));
      }
      expect(outcomes[0]).toEqual(outcomes[2]);
      expect(outcomes[1]).toEqual(outcomes[2]);
      expect(sim.calls.count).toBe(3);
    });
  }
});

// ---- function calls: a chat completion with a response_format, then the function's own checks ----

const fnCall = (over: Partial<CompletionRequest> = {}): CompletionRequest => ({
  fn: "tiny",
  messages: [
    { role: "system", content: "Classify the sentiment." },
    { role: "user", content: "a fine day" },
  ],
  schema: { name: "tiny", schema: TinyResult },
  ...over,
});
const completed = (p: OpenAILikeProvider, over: Partial<CompletionRequest> = {}) => settle(p.complete(fnCall(over)));
const attempted = (
  p: OpenAILikeProvider,
  signal = new AbortController().signal,
  def: AnyFunctionDef = tiny,
  request: unknown = { text: "a fine day" },
) => settle(attemptFunction({ def, request, accountId: "acct_contract", provider: p, signal }));

describe.each(TRANSPORTS)("%s transport, function calls", (transport) => {
  test("the body: model, messages, options and the adapted schema as json_schema; the answer parsed and its nulls removed", async () => {
    const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    sim.program([{ content: '{"label":"positive","score":0.5,"keywords":["fine"],"note":null}' }]);
    const out = await completed(provider(transport), { temperature: 0.2, maxTokens: 300, headers: { traceparent } });
    if (!("ok" in out)) throw new Error(JSON.stringify(out));
    const result = out.ok as { text: string; model: string; usage?: unknown; finishReason?: string };
    expect(JSON.parse(result.text)).toEqual({ label: "positive", score: 0.5, keywords: ["fine"] });
    expect(result.model).toBe("sim-model");
    expect(result.usage).toBeDefined();
    expect(result.finishReason).toBe("stop");
    const rec = sim.calls.requests[0];
    expect(rec?.path).toBe("/v1/chat/completions");
    expect(rec?.headers.authorization).toBe("Bearer sk-contract");
    expect(rec?.headers.traceparent).toBe(traceparent);
    const structured = toStructured(TinyResult);
    expect(JSON.stringify(rec?.body)).toBe(
      JSON.stringify({
        model: "sim-model",
        messages: fnCall().messages,
        temperature: 0.2,
        max_tokens: 300,
        response_format: { type: "json_schema", json_schema: { name: "tiny", strict: true, schema: structured.schema } },
        stream: false,
      }),
    );
  });

  test.each([
    ["openai-compatible", "sim-model"],
    ["groq", "llama-3.3-70b-versatile"],
  ] as const)(
    "a server without json_schema (%s): one 400, then json_object with the schema in the prompt, remembered per model",
    async (kind, model) => {
      sim.configure({ rejectJsonSchema: true });
      const p = provider(transport, kind);
      expect(await completed(p)).toMatchObject({ ok: { model } });
      expect(await completed(p)).toMatchObject({ ok: { model } });
      const formats = sim.calls.requests.map((r) => (r.body.response_format as { type: string }).type);
      expect(formats).toEqual(["json_schema", "json_object", "json_object"]);
      const messages = sim.calls.requests[1]?.body.messages as { role: string; content: string }[];
      expect(messages[0]?.content).toContain("matching this JSON Schema");
      expect(p.supportsJsonSchema(model)).toBe(false);
    },
  );

  test("a function attempt: a valid answer passes; an invalid one is repaired once; two are invalid_output", async () => {
    const p = provider(transport);
    expect(await attempted(p)).toMatchObject({ ok: { model: "sim-model", result: { label: expect.any(String) } } });
    sim.program([{ schemaInvalid: true }]);
    expect(await attempted(p)).toMatchObject({ ok: { model: "sim-model" } });
    sim.program([{ schemaInvalid: true }, { malformed: true }]);
    expect(await attempted(p)).toMatchObject({ error: { kind: "invalid_output" } });
    expect(sim.calls.count).toBe(5);
  });

  test("the provider's timeout, the caller's abort: the upstream sees both; no retry", async () => {
    sim.program([{ delayMs: 1000 }, { delayMs: 1000 }]);
    expect(await completed(provider(transport, "openai", { timeout_ms: 150 }))).toMatchObject({ error: { kind: "timeout" } });
    const ctrl = new AbortController();
    setTimeout(() => ctrl.abort(), 50);
    expect(await completed(provider(transport), { signal: ctrl.signal })).toMatchObject({ error: { kind: "aborted" } });
    await Bun.sleep(50);
    expect(sim.calls.requests.map((r) => r.aborted)).toEqual([true, true]);
  });
});

/** Failure modes of a function call whose every field must be the same through both transports. */
const FN_PARITY: { name: string; faults: Fault[]; kind?: Kind; attempt?: boolean; sentiment?: unknown }[] = [
  ...PARITY.filter((c) => !c.stream).map((c) => ({ name: c.name, faults: c.faults, kind: c.kind })),
  { name: "an answer", faults: [] },
  { name: "an answer, Groq", faults: [], kind: "groq" },
  { name: "a 200 whose choices are not a list", faults: [{ raw: { body: '{"id":"x","choices":{}}' } }] },
  { name: "a choice without a message", faults: [{ raw: { body: '{"id":"x","model":"m","choices":[{}]}' } }] },
  { name: "an attempt answered", faults: [], attempt: true },
  { name: "an attempt repaired", faults: [{ schemaInvalid: true }], attempt: true },
  { name: "an attempt invalid twice", faults: [{ malformed: true }, { schemaInvalid: true }], attempt: true },
  { name: "an attempt on a 500", faults: [{ status: 500 }], attempt: true },
  { name: "an attempt whose repair is refused", faults: [{ malformed: true }, { status: 429, retryAfter: 1 }], attempt: true },
  // a catalog function: its shared system message (written once, its JSON kept) and the caller's aspects
  { name: "sentiment-analysis", faults: [], attempt: true, sentiment: { text: "Great screen. Poor battery." } },
  {
    name: "sentiment-analysis with aspects, repaired",
    faults: [{ schemaInvalid: true }],
    attempt: true,
    sentiment: { text: "Great screen. Poor battery.", aspects: ["screen", "battery"] },
  },
];

describe("both transports end each function call alike, and send the same body", () => {
  for (const c of FN_PARITY) {
    test(c.name, async () => {
      const outcomes: unknown[] = [];
      const bodies: unknown[] = [];
      for (const transport of TRANSPORTS) {
        sim.reset();
        sim.program(c.faults);
        const p = provider(transport, c.kind ?? "openai");
        const run = c.sentiment
          ? attempted(p, undefined, sentiment, c.sentiment)
          : c.attempt
            ? attempted(p)
            : completed(p, { temperature: 0 });
        outcomes.push(await run);
        bodies.push(sim.calls.requests.map((r) => ({ path: r.path, body: r.body })));
      }
      expect(outcomes[0]).toEqual(outcomes[2]);
      expect(outcomes[1]).toEqual(outcomes[2]);
      expect(bodies[0]).toEqual(bodies[2]);
      expect(bodies[1]).toEqual(bodies[2]);
    });
  }
});
