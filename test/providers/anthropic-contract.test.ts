/**
 * The provider contract (test/providers/transport-contract.test.ts) for the `anthropic` type: every
 * failure mode of FAILURE_MODES runs against the Anthropic simulator through both of its transports
 * (the HTTP/1.1 client for an http:// upstream, Bun's fetch as for https://), which must end alike,
 * field by field, and in the same kind, status and Retry-After as an `openai` provider given the
 * same failure; then the timeouts, aborts, cut streams and function calls as the openai suite runs them.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type { ProviderConfig } from "../../src/config";
import { attemptFunction } from "../../src/providers/attempt";
import { type ProxyCall, UpstreamClientError } from "../../src/providers/chat";
import { buildOpenAILikeProvider, buildProvider } from "../../src/providers/index";
import { type Provider, ProviderError, type ProxyRequest } from "../../src/providers/types";
import { mockText } from "../../src/providers/vendors/mock/provider";
import { type AnthropicFault, type AnthropicUpstream, startAnthropicUpstream } from "../helpers/anthropic-upstream";
import type { Upstream } from "../helpers/upstream";
import { FAILURE_MODES } from "./failure-modes";
import { makeRouter, tiny, useUpstreams } from "./fixtures";

let openaiSim: Upstream;
useUpstreams(1, ([first]) => {
  openaiSim = first as Upstream;
});
let sim: AnthropicUpstream;
beforeAll(async () => {
  sim = await startAnthropicUpstream();
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const TRANSPORTS = ["http", "http-fetch"] as const;
type Transport = (typeof TRANSPORTS)[number];

function claude(transport: Transport, over: Partial<ProviderConfig> = {}): Provider {
  const opts = transport === "http-fetch" ? { transport: "http" as const, fetch } : { transport: "http" as const };
  return buildProvider({ name: "c", type: "anthropic", base_url: sim.url, api_key: "sk-ant-contract", ...over }, opts);
}

const chatBody = (extra: Record<string, unknown> = {}) => ({
  model: "claude-sim-1",
  messages: [{ role: "user", content: "hello contract suite" }],
  ...extra,
});

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
const request = (body: Record<string, unknown>, signal?: AbortSignal): ProxyRequest => ({
  api: "chat/completions",
  body,
  signal: signal ?? new AbortController().signal,
});
const plain = (p: Provider, body = chatBody(), signal?: AbortSignal) =>
  settle((p.proxy as (r: ProxyRequest) => Promise<unknown>)(request(body, signal)));
const streamed = (p: Provider, body = chatBody(), signal?: AbortSignal) =>
  settle(drain((p.proxyStream as (r: ProxyRequest) => AsyncIterable<unknown>)(request({ ...body, stream: true }, signal))));

/** What the router decides on: the kind, the status and the Retry-After (or that it answered). */
const verdict = (o: { ok: unknown } | { error: Record<string, unknown> }) =>
  "ok" in o ? "answered" : { kind: o.error.kind, status: o.error.status, retryAfterMs: o.error.retryAfterMs };

describe("each failure mode ends as it does for openai, alike through both transports", () => {
  for (const mode of FAILURE_MODES) {
    test(mode.name, async () => {
      // a self-hosted server's messages are withheld: an anthropic entry behind pass_upstream_messages = false
      const withheld = mode.kind === "openai-compatible" ? { pass_upstream_messages: false } : {};
      openaiSim.program(mode.faults);
      const openai = buildOpenAILikeProvider(
        {
          name: "o",
          type: mode.kind ?? "openai",
          // Groq's base URL is the host (its SDK and transport add /openai/v1)
          base_url: mode.kind === "groq" ? openaiSim.url : `${openaiSim.url}/v1`,
          api_key: "sk-x",
          default_model: "m",
        },
        { transport: "http" },
      );
      const expected = verdict(await (mode.stream ? streamed(openai) : plain(openai)));
      const outcomes: unknown[] = [];
      for (const transport of TRANSPORTS) {
        sim.program((mode.vendors?.anthropic?.faults as AnthropicFault[] | undefined) ?? mode.faults);
        const p = claude(transport, withheld);
        outcomes.push(await (mode.stream ? streamed(p) : plain(p)));
      }
      expect(outcomes[0]).toEqual(outcomes[1]);
      expect(verdict(outcomes[0] as never)).toEqual(expected);
      expect(sim.calls.count).toBe(2);
    });
  }
});

describe.each(TRANSPORTS)("%s transport", (transport) => {
  test("the provider's timeout: before the answer, plain and streamed; no retry; the upstream sees both end", async () => {
    sim.program([{ delayMs: 1000 }, { delayMs: 1000 }]);
    const p = claude(transport, { timeout_ms: 150 });
    expect(await plain(p)).toMatchObject({ error: { kind: "timeout" } });
    expect(await streamed(p)).toMatchObject({ error: { kind: "timeout" } });
    await Bun.sleep(50);
    expect(sim.calls.requests.map((r) => r.aborted)).toEqual([true, true]);
  });

  test("the caller's abort before the answer, or a signal aborted already: aborted", async () => {
    sim.program([{ delayMs: 1000 }]);
    const ctrl = new AbortController();
    setTimeout(() => ctrl.abort(), 50);
    expect(await plain(claude(transport), chatBody(), ctrl.signal)).toMatchObject({ error: { kind: "aborted" } });
    await Bun.sleep(50);
    expect(sim.calls.requests[0]?.aborted).toBe(true);
    expect(await plain(claude(transport), chatBody(), AbortSignal.abort())).toMatchObject({ error: { kind: "aborted" } });
  });

  test("the caller's abort mid-stream ends the events and the upstream request", async () => {
    sim.program([{ chunkChars: 2 }]);
    const ctrl = new AbortController();
    let seen = 0;
    const out = await settle(
      (async () => {
        const events = (claude(transport).proxyStream as (r: ProxyRequest) => AsyncIterable<unknown>)(
          request({ ...chatBody(), stream: true }, ctrl.signal),
        );
        for await (const _ of events) if (++seen === 2) ctrl.abort();
      })(),
    );
    expect(seen).toBeLessThan(6);
    expect(out).toMatchObject({ error: { kind: expect.stringMatching(/^(aborted|connection)$/) } });
    await Bun.sleep(50);
    expect(sim.calls.requests[0]?.aborted).toBe(true);
  });

  test("a consumer that stops early aborts the upstream stream; a whole stream is never marked aborted", async () => {
    sim.program([{ chunkChars: 2 }]);
    const events = (claude(transport).proxyStream as (r: ProxyRequest) => AsyncIterable<unknown>)(
      request({ ...chatBody(), stream: true }),
    );
    for await (const _ of events) break;
    const whole = await streamed(claude(transport));
    if (!("ok" in whole)) throw new Error(JSON.stringify(whole));
    const text = (whole.ok as { choices: { delta: { content?: string } }[] }[]).map((c) => c.choices[0]?.delta.content ?? "");
    expect(text.join("")).toBe(mockText("hello contract suite"));
    await Bun.sleep(50);
    expect(sim.calls.requests.map((r) => r.aborted)).toEqual([true, false]);
  });

  test("a connection refused is connection", async () => {
    expect(await plain(claude(transport, { base_url: "http://127.0.0.1:9" }))).toMatchObject({ error: { kind: "connection" } });
  });
});

/** Function calls: what a function attempt ends in, for anthropic as for openai. */
const FN_MODES: { name: string; faults: Parameters<AnthropicUpstream["program"]>[0] }[] = [
  { name: "answered", faults: [] },
  { name: "repaired", faults: [{ schemaInvalid: true }] },
  { name: "invalid twice", faults: [{ malformed: true }, { schemaInvalid: true }] },
  { name: "a 500", faults: [{ status: 500 }] },
  { name: "a 529 overloaded", faults: [{ status: 529 }] },
  { name: "a repair refused with 429", faults: [{ malformed: true }, { status: 429, retryAfter: 1 }] },
  { name: "context length", faults: [{ status: 400, contextLength: true }] },
  { name: "a dropped connection", faults: [{ drop: true }] },
  { name: "a 200 that is not JSON", faults: [{ raw: { contentType: "text/plain", body: "hello" } }] },
];

describe("function calls end alike through both transports, and as openai's", () => {
  for (const mode of FN_MODES) {
    test(mode.name, async () => {
      const outcomes: unknown[] = [];
      for (const transport of TRANSPORTS) {
        sim.reset();
        sim.program(mode.faults);
        const p = claude(transport);
        outcomes.push(
          await settle(
            attemptFunction({
              def: tiny,
              request: { text: "a fine day" },
              accountId: "a",
              provider: p,
              signal: AbortSignal.timeout(5000),
            }),
          ),
        );
      }
      expect(outcomes[0]).toEqual(outcomes[1]);
      // openai, given the same failure (a 529 is the OpenAI simulator's 529 too)
      openaiSim.program(mode.faults);
      const openai = buildOpenAILikeProvider({ name: "o", type: "openai", base_url: `${openaiSim.url}/v1`, api_key: "sk" });
      const expected = await settle(
        attemptFunction({
          def: tiny,
          request: { text: "a fine day" },
          accountId: "a",
          provider: openai,
          signal: AbortSignal.timeout(5000),
        }),
      );
      const kindOf = (o: unknown) =>
        "ok" in (o as object)
          ? "answered"
          : { kind: (o as { error: { kind: string } }).error.kind, status: (o as { error: { status?: number } }).error.status };
      expect(kindOf(outcomes[0])).toEqual(kindOf(expected));
    });
  }
});

/** The router's fallback over anthropic, as adapters.test.ts runs it over openai and groq. */
describe("the router over anthropic", () => {
  const router = () =>
    makeRouter({
      providers: [
        { name: "c", type: "anthropic", base_url: sim.url, api_key: "sk-ant" },
        // an OpenAI-shaped endpoint that serves the same models (a proxy): its entry says so, since an
        // openai entry's default patterns take no claude-* id (providers/vendors: families)
        { name: "o", type: "openai", base_url: `${openaiSim.url}/v1`, model_patterns: ["claude-sim-*"] },
      ],
    });
  const call = (stream = false): ProxyCall => ({
    api: "chat/completions",
    body: { model: "claude-sim-1", messages: [{ role: "user", content: "hello router" }], ...(stream ? { stream: true } : {}) },
    signal: new AbortController().signal,
    deadlineMs: Date.now() + 5000,
    requestId: "req_test",
  });
  const text = async (events: AsyncIterable<unknown>) => {
    let out = "";
    for await (const e of events as AsyncIterable<{ choices: { delta: { content?: string } }[] }>)
      out += e.choices[0]?.delta.content ?? "";
    return out;
  };

  test("plain: a 529 falls back to the next provider", async () => {
    sim.program([{ status: 529 }]);
    const r = router();
    const out = await r.proxy(call(), r.proxyTargets(call()));
    expect(out.provider).toBe("o");
    expect(out.attempts).toMatchObject([{ provider: "c", error: "http_529", status: 529 }]);
  });

  test("streamed: falls back before the first event, not after", async () => {
    sim.program([{ status: 529 }]);
    const r = router();
    const first = await r.proxyStream(call(true), r.proxyTargets(call(true)));
    expect(first.provider).toBe("o");
    expect(await text(first.events)).toBe(mockText("hello router"));
    sim.program([{ streamCut: true }]);
    const cut = await r.proxyStream(call(true), r.proxyTargets(call(true)));
    expect(cut.provider).toBe("c");
    expect(await settle(text(cut.events))).toMatchObject({ error: { kind: "connection" } });
    expect(openaiSim.calls.count).toBe(1);
  });

  test("a 400 from anthropic is the client's, passed on without trying the next provider", async () => {
    sim.program([{ status: 400, message: "messages: bad" }]);
    const r = router();
    const err = await r.proxy(call(), r.proxyTargets(call())).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamClientError);
    expect((err as UpstreamClientError).error).toMatchObject({ message: "messages: bad", type: "invalid_request_error" });
    expect(openaiSim.calls.count).toBe(0);
  });

  test("a 401 from anthropic is never the client's: the next provider answers", async () => {
    sim.program([{ status: 401 }]);
    const r = router();
    const out = await r.proxy(call(), r.proxyTargets(call()));
    expect(out.provider).toBe("o");
  });
});
