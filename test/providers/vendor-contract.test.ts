/**
 * The provider contract across vendors: the failure modes of the transport contract
 * (failure-modes.ts), the timeout and abort cases, function call attempts and the router's
 * fallback, run for each vendor type against its own simulator, `openai` on the OpenAI simulator
 * as the reference. A vendor's adapter must end each failure as `openai` does (kind, status,
 * Retry-After), unless the case says why its API's framing says more.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type { ProviderConfig } from "../../src/config";
import { attemptFunction } from "../../src/providers/attempt";
import type { ProxyCall } from "../../src/providers/chat";
import { buildProvider } from "../../src/providers/index";
import { type Provider, ProviderError } from "../../src/providers/types";
import { type BedrockFault, type BedrockSim, startBedrock } from "../helpers/bedrock-sim";
import { type GeminiFault, type GeminiUpstream, startGeminiUpstream } from "../helpers/gemini-upstream";
import { type Fault, startUpstream, type Upstream } from "../helpers/upstream";
import { FAILURE_MODES } from "./failure-modes";
import { call, makeRouter, tiny } from "./fixtures";

interface Sim {
  url: string;
  calls: { count: number; requests: { aborted: boolean; path: string }[] };
  program(faults: (Fault & GeminiFault & BedrockFault)[]): void;
  reset(): void;
  close(): Promise<void>;
}

let openaiSim: Upstream;
let geminiSim: GeminiUpstream;
let bedrockSim: BedrockSim;
beforeAll(async () => {
  openaiSim = await startUpstream();
  geminiSim = await startGeminiUpstream();
  bedrockSim = await startBedrock();
});
afterAll(async () => {
  await openaiSim.close();
  await geminiSim.close();
  await bedrockSim.close();
});
beforeEach(() => {
  openaiSim.reset();
  geminiSim.reset();
  bedrockSim.reset();
});

/** Each vendor: its simulator, an entry of its type on it, and a model its simulator serves. */
const VENDORS: Record<string, { sim: () => Sim; entry: (over?: Partial<ProviderConfig>) => ProviderConfig }> = {
  openai: {
    sim: () => openaiSim,
    entry: (over) => ({
      name: "v",
      type: "openai",
      base_url: `${openaiSim.url}/v1`,
      api_key: "sk-c",
      default_model: "sim-model",
      ...over,
    }),
  },
  gemini: {
    sim: () => geminiSim,
    entry: (over) => ({ name: "v", type: "gemini", base_url: geminiSim.url, api_key: "gm-c", ...over }),
  },
  bedrock: {
    sim: () => bedrockSim,
    entry: (over) => ({
      name: "v",
      type: "bedrock",
      base_url: bedrockSim.url,
      region: bedrockSim.region,
      aws_access_key_id: bedrockSim.accessKeyId,
      aws_secret_access_key: bedrockSim.secretAccessKey,
      ...over,
    }),
  },
};
const TYPES = Object.keys(VENDORS);

const body = (extra: Record<string, unknown> = {}) => ({
  model: "contract-model",
  messages: [{ role: "user", content: "hello contract suite" }],
  ...extra,
});

type Outcome = { ok: true } | { kind: string; status?: number; retryAfterMs?: number };

async function settle(p: Promise<unknown>): Promise<Outcome> {
  try {
    await p;
    return { ok: true };
  } catch (e) {
    if (!(e instanceof ProviderError)) throw e;
    return { kind: e.kind, status: e.status, retryAfterMs: e.retryAfterMs };
  }
}

async function drain(events: AsyncIterable<unknown>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const e of events) out.push(e);
  return out;
}

const plain = (p: Provider, b: Record<string, unknown>, signal = new AbortController().signal) =>
  (p.proxy as NonNullable<Provider["proxy"]>)({ api: "chat/completions", body: b, signal });
const streamed = (p: Provider, b: Record<string, unknown>, signal = new AbortController().signal) =>
  drain(
    (p.proxyStream as NonNullable<Provider["proxyStream"]>)({ api: "chat/completions", body: { ...b, stream: true }, signal }),
  );

describe("every failure mode ends for each vendor as it does for openai", () => {
  for (const c of FAILURE_MODES) {
    test(c.name, async () => {
      const outcomes: Record<string, Outcome> = {};
      for (const type of TYPES) {
        const v = VENDORS[type] as (typeof VENDORS)[string];
        const own = c.vendors?.[type];
        v.sim().program((own?.faults ?? c.faults) as (Fault & GeminiFault & BedrockFault)[]);
        const p = buildProvider(v.entry(c.over));
        outcomes[type] = await settle(c.stream ? streamed(p, body()) : plain(p, body()));
        expect(v.sim().calls.count).toBe(1);
      }
      const reference = outcomes.openai as Outcome;
      for (const type of TYPES.slice(1)) {
        const expected = c.vendors?.[type]?.expect ?? reference;
        expect({ type, ...outcomes[type] }).toEqual({ type, ...expected });
      }
    });
  }
});

describe.each(TYPES)("%s: the contract's cases beyond the failure modes", (type) => {
  const v = VENDORS[type] as (typeof VENDORS)[string];
  const provider = (over?: Partial<ProviderConfig>) => buildProvider(v.entry(over));

  test("an answer, plain and streamed, with the usage when asked", async () => {
    const answer = (await plain(provider(), body())) as { object: string; choices: { message: { content: string } }[] };
    expect(answer.object).toBe("chat.completion");
    expect(answer.choices[0]?.message.content).toContain("hello contract suite");
    const chunks = (await streamed(provider(), body({ stream_options: { include_usage: true } }))) as {
      choices: { delta: { content?: string } }[];
      usage?: unknown;
    }[];
    expect(chunks.map((e) => e.choices[0]?.delta.content ?? "").join("")).toBe(answer.choices[0]?.message.content as string);
    expect(chunks.at(-1)?.usage).toBeDefined();
  });

  test("the provider's timeout, plain and streamed: timeout, and the upstream sees the call end", async () => {
    v.sim().program([{ delayMs: 1000 }, { delayMs: 1000 }]);
    const p = provider({ timeout_ms: 150 });
    expect(await settle(plain(p, body()))).toMatchObject({ kind: "timeout" });
    expect(await settle(streamed(p, body()))).toMatchObject({ kind: "timeout" });
    await Bun.sleep(50);
    expect(v.sim().calls.requests.map((r) => r.aborted)).toEqual([true, true]);
  });

  test("the caller's abort before the answer is aborted; mid-stream it ends the upstream request", async () => {
    v.sim().program([{ delayMs: 1000 }, { chunkChars: 2 }]);
    const ctrl = new AbortController();
    setTimeout(() => ctrl.abort(), 50);
    expect(await settle(plain(provider(), body(), ctrl.signal))).toMatchObject({ kind: "aborted" });
    const mid = new AbortController();
    const events = (provider().proxyStream as NonNullable<Provider["proxyStream"]>)({
      api: "chat/completions",
      body: body({ stream: true }),
      signal: mid.signal,
    });
    let seen = 0;
    const out = await settle(
      (async () => {
        for await (const _ of events) if (++seen === 2) mid.abort();
      })(),
    );
    expect(seen).toBeLessThan(6);
    expect(out).toMatchObject({ kind: expect.stringMatching(/^(aborted|connection)$/) });
    await Bun.sleep(50);
    expect(v.sim().calls.requests.map((r) => r.aborted)).toEqual([true, true]);
  });

  test("a consumer that stops early aborts the upstream stream; a refused connection is connection", async () => {
    v.sim().program([{ chunkChars: 2 }]);
    for await (const _ of (provider().proxyStream as NonNullable<Provider["proxyStream"]>)({
      api: "chat/completions",
      body: body({ stream: true }),
      signal: new AbortController().signal,
    }))
      break;
    await Bun.sleep(50);
    expect(v.sim().calls.requests[0]?.aborted).toBe(true);
    expect(await settle(plain(provider({ base_url: "http://127.0.0.1:9" }), body()))).toMatchObject({ kind: "connection" });
  });

  test.each([
    ["answered", [], { ok: true }, 1],
    ["repaired", [{ schemaInvalid: true }], { ok: true }, 2],
    ["invalid twice", [{ malformed: true }, { schemaInvalid: true }], { kind: "invalid_output" }, 2],
    ["a 500", [{ status: 500 }], { kind: "status", status: 500 }, 1],
    ["a repair refused with 429", [{ malformed: true }, { status: 429, retryAfter: 1 }], { kind: "status", status: 429 }, 2],
  ] as [string, Fault[], Outcome, number][])("a function call attempt: %s", async (_name, faults, expected, calls) => {
    v.sim().program(faults);
    const out = await settle(
      attemptFunction({
        def: tiny,
        request: { text: "a fine day" },
        accountId: "acct_c",
        provider: provider(),
        signal: new AbortController().signal,
      }),
    );
    expect(out).toMatchObject(expected);
    expect(v.sim().calls.count).toBe(calls);
  });
});

describe("fallback between vendors", () => {
  const proxyCall = (stream = false): ProxyCall => ({
    api: "chat/completions",
    body: body(stream ? { stream: true } : {}),
    signal: new AbortController().signal,
    deadlineMs: Date.now() + 5000,
    requestId: "req_contract",
  });
  const both = (first: string, second: string) =>
    makeRouter({
      providers: [
        { ...(VENDORS[first] as (typeof VENDORS)[string]).entry(), name: first },
        { ...(VENDORS[second] as (typeof VENDORS)[string]).entry(), name: second },
      ],
    });

  test.each([
    ["gemini", "openai"],
    ["openai", "gemini"],
    ["bedrock", "openai"],
    ["openai", "bedrock"],
  ])("%s answering 503 falls back to %s, plain and before a stream's first event", async (first, second) => {
    const sims = {
      first: (VENDORS[first] as (typeof VENDORS)[string]).sim(),
      second: (VENDORS[second] as (typeof VENDORS)[string]).sim(),
    };
    sims.first.program([{ status: 503 }, { status: 503 }]);
    const r = both(first, second);
    const c = proxyCall();
    const out = await r.proxy(c, r.proxyTargets(c));
    expect(out.provider).toBe(second);
    expect(out.attempts).toMatchObject([{ provider: first, error: "http_503" }]);
    const s = proxyCall(true);
    const streamedOut = await r.proxyStream(s, r.proxyTargets(s));
    expect(streamedOut.provider).toBe(second);
    expect((await drain(streamedOut.events)).length).toBeGreaterThan(1);
  });

  test("a function call falls back from gemini's 429 to openai, and the 429's delay pauses gemini", async () => {
    geminiSim.program([{ status: 429, retryDelay: "2s" }]);
    const r = both("gemini", "openai");
    const out = await r.run(call(tiny, { text: "fine" }));
    expect(out.provider).toBe("openai");
    expect(out.attempts).toMatchObject([{ provider: "gemini", error: "http_429", status: 429 }]);
    const again = await r.run(call(tiny, { text: "fine again" }));
    expect(again.attempts).toMatchObject([{ provider: "gemini", error: "paused", status: 429 }]);
    expect(geminiSim.calls.count).toBe(1);
  });
});
