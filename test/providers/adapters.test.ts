import { describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import type { ProxyCall } from "../../src/providers/chat";
import {
  buildOpenAILikeProvider as createGroqProvider,
  buildOpenAILikeProvider as createOpenAIProvider,
} from "../../src/providers/index";
import type { ProviderRouter } from "../../src/providers/router";
import { ProviderError } from "../../src/providers/types";
import { mockText } from "../../src/providers/vendors/mock/provider";
import type { Upstream } from "../helpers/upstream";
import { call, makeRouter, rejection, TinyResult, tiny, tinyImage, useUpstreams } from "./fixtures";

let sim: Upstream;
let sim2: Upstream;

useUpstreams(2, ([first, second]) => {
  sim = first as Upstream;
  sim2 = second as Upstream;
});

const input = { text: "Refund my order, the parcel arrived broken" };

describe("json_object fallback", () => {
  test("a server that rejects json_schema gets json_object with the schema in the prompt, remembered per provider", async () => {
    sim.configure({ rejectJsonSchema: true });
    const router = makeRouter({
      providers: [{ name: "ollama", type: "openai-compatible", base_url: `${sim.url}/v1`, default_model: "llama3.1:8b" }],
    });
    const first = await router.run(call(tiny, input));
    expect(first.provider).toBe("ollama");
    expect(first.attempts).toEqual([]);
    expect(Value.Check(TinyResult, first.result)).toBe(true);
    const kinds = sim.calls.requests.map((r) => (r.body.response_format as { type: string }).type);
    expect(kinds).toEqual(["json_schema", "json_object"]);
    const sent = (sim.calls.requests[1]?.body.messages ?? []) as { role: string; content: string }[];
    const system = sent[0];
    expect(system?.role).toBe("system");
    expect(system?.content).toContain('"label"');

    await router.run(call(tiny, input));
    const after = () => sim.calls.requests.map((r) => (r.body.response_format as { type: string }).type);
    expect(after()).toEqual(["json_schema", "json_object", "json_object"]);
    // another model of the same server is asked with json_schema again
    await router.run(call(tiny, input, { model: "qwen2.5:7b" }));
    expect(after().slice(3)).toEqual(["json_schema", "json_object"]);
  });

  test("other 400s are not mistaken for a json_schema rejection", async () => {
    sim.program([{ status: 400 }]);
    const p = createOpenAIProvider({ name: "x", type: "openai", base_url: `${sim.url}/v1` });
    const err = await rejection(
      p.complete({ fn: "tiny", messages: [{ role: "user", content: "hi" }], schema: { name: "tiny", schema: TinyResult } }),
    );
    expect(err).toBeInstanceOf(ProviderError);
    expect(err.code).toBe("http_400");
    expect(sim.calls.count).toBe(1);
    expect(p.supportsJsonSchema("gpt-4o-mini")).toBe(true);
  });
});

describe("groq adapter", () => {
  test("talks to /openai/v1 with its default model and serves as a fallback", async () => {
    sim.program([{ status: 502 }]);
    const router = makeRouter({
      providers: [
        { name: "openai", type: "openai", base_url: `${sim.url}/v1` },
        { name: "groq", type: "groq", base_url: sim2.url, api_key: "gsk_test" },
      ],
    });
    const out = await router.run(call(tiny, input));
    expect(out.provider).toBe("groq");
    expect(out.model).toBe("llama-3.3-70b-versatile");
    expect(out.attempts).toMatchObject([{ provider: "openai", error: "http_502", status: 502 }]);
    expect(sim2.calls.requests[0]?.path).toBe("/openai/v1/chat/completions");
    expect(Value.Check(TinyResult, out.result)).toBe(true);
  });

  test("a base URL ending in /openai/v1 is not doubled", async () => {
    const p = createGroqProvider({ name: "groq", type: "groq", base_url: `${sim.url}/openai/v1` });
    await p.complete({ fn: "x", messages: [{ role: "user", content: "hi" }] });
    expect(sim.calls.requests[0]?.path).toBe("/openai/v1/chat/completions");
  });

  test("maps a 429 with Retry-After", async () => {
    sim.program([{ status: 429, retryAfter: 3 }]);
    const p = createGroqProvider({ name: "groq", type: "groq", base_url: sim.url });
    const err = await rejection(p.complete({ fn: "x", messages: [{ role: "user", content: "hi" }] }));
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).retryAfterMs).toBe(3000);
    expect(sim.calls.count).toBe(1); // maxRetries 0: the router, not the SDK, retries
  });

  test("a per-function model from config", async () => {
    const router = makeRouter({
      providers: [{ name: "groq", type: "groq", base_url: sim.url, models: { tiny: "llama-3.1-8b-instant" } }],
    });
    const out = await router.run(call(tiny, input));
    expect(out.model).toBe("llama-3.1-8b-instant");
    expect(sim.calls.requests[0]?.model).toBe("llama-3.1-8b-instant");
  });
});

describe("chat completions", () => {
  const messages = [{ role: "user" as const, content: "hello there simulator" }];
  const router = () =>
    makeRouter({
      providers: [
        { name: "a", type: "openai", base_url: `${sim.url}/v1` },
        { name: "b", type: "groq", base_url: sim2.url },
      ],
    });

  const chatCall = (msgs: typeof messages, stream = false): ProxyCall => ({
    api: "chat/completions",
    body: { messages: msgs, ...(stream ? { stream: true } : {}) },
    signal: new AbortController().signal,
    deadlineMs: Date.now() + 5000,
    requestId: "req_test",
  });
  const chat = (r: ProviderRouter, c: ProxyCall) => r.proxy(c, r.proxyTargets(c));
  const chatStream = (r: ProviderRouter, c: ProxyCall) => r.proxyStream(c, r.proxyTargets(c));
  const deltas = async (events: AsyncIterable<unknown>) => {
    let text = "";
    let finish: string | null | undefined;
    for await (const e of events as AsyncIterable<{ choices: { delta: { content?: string }; finish_reason: string | null }[] }>) {
      text += e.choices[0]?.delta.content ?? "";
      finish = e.choices[0]?.finish_reason ?? finish;
    }
    return { text, finish };
  };

  test("plain chat with fallback", async () => {
    sim.program([{ status: 500 }]);
    const out = await chat(router(), chatCall(messages));
    expect(out.provider).toBe("b");
    expect(JSON.parse(out.json).choices[0].message.content).toBe(mockText("hello there simulator"));
    expect(out.attempts).toMatchObject([{ provider: "a", error: "http_500" }]);
  });

  test("streaming: chunks arrive in order and add up to the answer", async () => {
    const out = await chatStream(router(), chatCall(messages, true));
    expect(out.provider).toBe("a");
    const { text, finish } = await deltas(out.events);
    expect(text).toBe(mockText("hello there simulator"));
    expect(finish).toBe("stop");
    expect(sim.calls.requests[0]?.stream).toBe(true);
  });

  test("streaming falls back before the first chunk", async () => {
    sim.program([{ status: 503 }]);
    const out = await chatStream(router(), chatCall(messages, true));
    expect(out.provider).toBe("b");
    expect(out.attempts).toMatchObject([{ provider: "a", error: "http_503" }]);
    const { text } = await deltas(out.events);
    expect(text).toBe(mockText("hello there simulator"));
  });

  test("a stream cut after the first chunk surfaces as an error to the consumer", async () => {
    sim.program([{ streamCut: true }]);
    const out = await chatStream(router(), chatCall(messages, true));
    expect(out.provider).toBe("a");
    const err = await rejection(
      (async () => {
        for await (const _ of out.events) {
          /* drain */
        }
      })(),
    );
    expect(err).toBeInstanceOf(ProviderError);
    expect(sim2.calls.count).toBe(0);
  });

  test("a consumer that stops early aborts the upstream stream", async () => {
    const long = [{ role: "user" as const, content: "one two three four five six seven eight nine ten eleven twelve" }];
    const out = await chatStream(router(), chatCall(long, true));
    for await (const _ of out.events) break;
    await Bun.sleep(50);
    expect(sim.calls.requests[0]?.aborted).toBe(true);
  });

  test("groq passes the Responses API through by default; an openai-compatible server answers it through chat completions", async () => {
    const body = { model: "llama-x", input: "hello groq" };
    const c: ProxyCall = { ...chatCall(messages), api: "responses", body };
    const r = makeRouter({ providers: [{ name: "g", type: "groq", base_url: sim2.url }] });
    const out = await chat(r, c);
    expect(JSON.parse(out.json).object).toBe("response");
    expect(sim2.calls.requests.at(-1)?.path).toBe("/openai/v1/responses");
    expect(sim2.calls.requests.at(-1)?.body).toEqual(body);
    // a self-hosted catalog is closed: it serves the model it names (docs/openai-compatible.md)
    const compat = makeRouter({
      providers: [{ name: "o", type: "openai-compatible", base_url: `${sim.url}/v1`, default_model: "llama-x" }],
    });
    const translated = JSON.parse((await chat(compat, c)).json);
    expect(translated.object).toBe("response");
    expect(translated.output[0].content[0].text).toBe(mockText("hello groq"));
    expect(sim.calls.requests.at(-1)?.path).toBe("/v1/chat/completions");
    expect(() => compat.proxyTargets({ ...c, body: { ...body, previous_response_id: "resp_1" } })).toThrow(
      'o (cannot serve "previous_response_id")',
    );
  });

  test("no remote provider: no_provider 503", async () => {
    const err = await rejection((async () => chat(makeRouter({}), chatCall(messages)))());
    expect(err.code).toBe("no_provider");
    expect(err.message).toContain("OPENAI_API_KEY");
  });
});

describe("images and embeddings", () => {
  test("image functions go to provider.image and skip providers without it", async () => {
    const router = makeRouter({
      providers: [
        { name: "groq", type: "groq", base_url: sim2.url },
        { name: "openai", type: "openai", base_url: `${sim.url}/v1` },
      ],
    });
    expect(router.routeFor(tinyImage)).toEqual(["openai"]);
    const out = await router.run(call(tinyImage, { prompt: "a lighthouse at dusk", size: "1536x1024" }));
    expect(out.provider).toBe("openai");
    expect(out.model).toBe("gpt-image-1");
    const result = out.result as { images: { b64_json?: string; format: string }[] };
    expect(result.images[0]?.b64_json?.length).toBeGreaterThan(10);
    expect(sim.calls.requests[0]?.path).toBe("/v1/images/generations");
    expect(sim.calls.requests[0]?.body).toMatchObject({ prompt: "a lighthouse at dusk", size: "1536x1024" });
  });

  test("no image provider: no_provider naming what to set", async () => {
    const err = await rejection(makeRouter({}).run(call(tinyImage, { prompt: "x" })));
    expect(err.code).toBe("no_provider");
    expect(err.message).toContain("OPENAI_API_KEY");
  });

  test("embeddings are deterministic and similar texts are closer", async () => {
    const p = createOpenAIProvider({ name: "openai", type: "openai", base_url: `${sim.url}/v1` });
    const embed = p.embed;
    if (!embed) throw new Error("openai provider must embed");
    const [x, y, z] = await embed(["refund for a broken parcel", "refund for my broken parcel", "quarterly revenue report"]);
    const dot = (u: number[] = [], v: number[] = []) => u.reduce((s, ui, i) => s + ui * (v[i] ?? 0), 0);
    expect(x?.length).toBe(64);
    expect(dot(x, y)).toBeGreaterThan(dot(x, z));
    expect(await embed(["refund for a broken parcel"])).toEqual([x as number[]]);
  });
});

describe("SDK wiring", () => {
  test("an injected fetch sees every call (no SDK retries)", async () => {
    const seen: string[] = [];
    const counting = (input: string | URL | Request, init?: RequestInit) => {
      seen.push(String(input instanceof Request ? input.url : input));
      return fetch(input, init);
    };
    sim.program([{ status: 500 }]);
    const p = createOpenAIProvider({ name: "x", type: "openai", base_url: `${sim.url}/v1` }, { fetch: counting });
    const err = await rejection(p.complete({ fn: "x", messages: [{ role: "user", content: "hi" }] }));
    expect(err.code).toBe("http_500");
    expect(seen).toEqual([`${sim.url}/v1/chat/completions`]);
  });

  test("connection refused maps to connection", async () => {
    const p = createOpenAIProvider({ name: "x", type: "openai", base_url: "http://127.0.0.1:9/v1" });
    const err = await rejection(p.complete({ fn: "x", messages: [{ role: "user", content: "hi" }] }));
    expect(err).toBeInstanceOf(ProviderError);
    expect(err.code).toBe("connection");
  });

  test("buildProviders keeps config order and always has local", () => {
    const router = makeRouter({
      providers: [
        { name: "g", type: "groq", base_url: sim.url },
        { name: "m", type: "mock" },
      ],
    });
    expect(Object.keys(router.status())).toEqual(["g", "m", "local"]);
    expect(router.status().local).toEqual({ type: "local", state: "closed", consecutiveFailures: 0, modelsOpen: 0 });
    expect(router.models()).toEqual(["g/llama-3.3-70b-versatile", "m/mock-1"]);
  });
});

describe("simulator bookkeeping", () => {
  test("completed calls, plain and streamed, are never marked aborted", async () => {
    const p = createOpenAIProvider({ name: "x", type: "openai", base_url: `${sim.url}/v1` });
    await p.complete({ fn: "x", messages: [{ role: "user", content: "hi" }] });
    const body = { model: "m", messages: [{ role: "user", content: "hi there" }], stream: true };
    for await (const _ of p.proxyStream({ api: "chat/completions", body, signal: new AbortController().signal })) {
      /* drain */
    }
    await Bun.sleep(100);
    expect(sim.calls.requests.map((r) => [r.stream, r.aborted])).toEqual([
      [false, false],
      [true, false],
    ]);
  });
});
