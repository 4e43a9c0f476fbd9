/**
 * The `mistral` provider type against the Mistral simulator (test/helpers/mistral-sim.ts, proven by
 * Mistral's own SDK in mistral-sim.test.ts): what the `/v1` pass-through translates (OpenAI's names
 * to Mistral's, tool call ids both ways, refused and dropped fields), function calls with
 * structured output, embeddings, and the failure modes of the provider contract
 * (transport-contract.test.ts) through both transports.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type { ProviderConfig } from "../../src/config";
import { attemptFunction } from "../../src/providers/attempt";
import { buildOpenAILikeProvider } from "../../src/providers/index";
import type { OpenAILikeProvider } from "../../src/providers/openai-like";
import { ProviderError, type ProxyApi } from "../../src/providers/types";
import { type MistralSim, startMistral } from "../helpers/mistral-sim";
import { tiny } from "./fixtures";

let sim: MistralSim;
beforeAll(async () => {
  sim = await startMistral();
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const TRANSPORTS = ["http", "sdk"] as const;
type Transport = (typeof TRANSPORTS)[number];

function provider(transport: Transport = "http", over: Partial<ProviderConfig> = {}): OpenAILikeProvider {
  return buildOpenAILikeProvider(
    { name: "mistral", type: "mistral", base_url: sim.baseUrl, api_key: sim.apiKey, ...over },
    { transport },
  );
}

async function settle(p: Promise<unknown>): Promise<{ ok: unknown } | { error: Record<string, unknown> }> {
  try {
    return { ok: await p };
  } catch (e) {
    if (!(e instanceof ProviderError)) throw e;
    return { error: { kind: e.kind, message: e.message, status: e.status, retryAfterMs: e.retryAfterMs, upstream: e.upstream } };
  }
}
const signal = () => new AbortController().signal;
const plain = (p: OpenAILikeProvider, body: Record<string, unknown>, api: ProxyApi = "chat/completions") =>
  settle(p.proxy({ api, body, signal: signal() }));
async function drain(events: AsyncIterable<unknown>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const e of events) out.push(e);
  return out;
}
const streamed = (p: OpenAILikeProvider, body: Record<string, unknown>, s = signal()) =>
  settle(drain(p.proxyStream({ api: "chat/completions", body: { ...body, stream: true }, signal: s })));
const chat = (extra: Record<string, unknown> = {}) => ({
  model: "mistral-small-latest",
  messages: [{ role: "user", content: "hello mistral" }],
  ...extra,
});

/** the tool message's tool_call_id of call `i` to the simulator */
const toolCallIdSent = (i: number) =>
  (sim.calls.requests[i]?.body.messages as { tool_call_id?: string }[] | undefined)?.[2]?.tool_call_id;

const weather = {
  type: "function",
  function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
};

describe.each(TRANSPORTS)("%s transport", (transport) => {
  test("OpenAI's names become Mistral's: seed, max_completion_tokens, tool_choice required, the developer role; safe_prompt passes", async () => {
    const out = await plain(
      provider(transport),
      chat({
        seed: 42,
        max_completion_tokens: 64,
        user: "end-user-7",
        store: false,
        stream_options: null,
        logprobs: false,
        safe_prompt: true,
        tools: [weather],
        tool_choice: "required",
        messages: [
          { role: "developer", content: "be brief" },
          { role: "user", content: "weather in Lyon?" },
        ],
      }),
    );
    if (!("ok" in out)) throw new Error(JSON.stringify(out));
    const sent = sim.calls.requests[0]?.body as Record<string, unknown>;
    expect(sent).toEqual({
      model: "mistral-small-latest",
      random_seed: 42,
      max_tokens: 64,
      safe_prompt: true,
      tools: [weather],
      tool_choice: "any",
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: "weather in Lyon?" },
      ],
    });
    expect(sim.calls.requests[0]?.headers.authorization).toBe(`Bearer ${sim.apiKey}`);
    const answer = out.ok as { choices: { message: { tool_calls: { id: string; function: { arguments: string } }[] } }[] };
    expect(answer.choices[0]?.message.tool_calls[0]?.id).toMatch(/^[A-Za-z0-9]{9}$/);
    expect(JSON.parse(answer.choices[0]?.message.tool_calls[0]?.function.arguments ?? "")).toHaveProperty("city");
  });

  test("a multi-turn tool conversation with another provider's ids: mapped to Mistral's form, the same id the same in both places", async () => {
    const history = (id: string) => [
      { role: "user", content: "weather in Lyon?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id, type: "function", function: { name: "get_weather", arguments: '{"city":"Lyon"}' } }],
      },
      { role: "tool", tool_call_id: id, content: "rain" },
    ];
    const out = await plain(provider(transport), chat({ tools: [weather], messages: history("call_Xk2mQp9aZ81nTq4WcB7y") }));
    if (!("ok" in out)) throw new Error(JSON.stringify(out));
    expect((out.ok as { choices: { message: { content: string } }[] }).choices[0]?.message.content).toBe("Tool said: rain");
    const sent = sim.calls.requests[0]?.body.messages as { tool_calls?: { id: string }[]; tool_call_id?: string }[];
    const mapped = sent[1]?.tool_calls?.[0]?.id;
    expect(mapped).toMatch(/^[A-Za-z0-9]{9}$/);
    expect(sent[2]?.tool_call_id).toBe(mapped as string);
    // an id already of Mistral's form goes as it is; a second call maps the same id the same way
    await plain(provider(transport), chat({ tools: [weather], messages: history("Ab3De6Gh9") }));
    expect(toolCallIdSent(1)).toBe("Ab3De6Gh9");
    await plain(provider(transport), chat({ tools: [weather], messages: history("call_Xk2mQp9aZ81nTq4WcB7y") }));
    expect(toolCallIdSent(2)).toBe(mapped as string);
  });

  test("a field that would change the answer and Mistral has not is refused, naming it, and never sent", async () => {
    for (const [field, value] of [
      ["logit_bias", { "50256": -100 }],
      ["logprobs", true],
      ["top_logprobs", 3],
      ["modalities", ["text", "audio"]],
    ] as const) {
      const out = await plain(provider(transport), chat({ [field]: value }));
      expect(out).toMatchObject({
        error: { kind: "status", status: 400, upstream: { code: "unsupported_parameter", param: field } },
      });
    }
    expect(sim.calls.count).toBe(0);
  });

  test("a stream: events in OpenAI's shape, usage on the last; a streamed tool call's id of Mistral's form", async () => {
    const out = await streamed(provider(transport), chat({ seed: 1 }));
    if (!("ok" in out)) throw new Error(JSON.stringify(out));
    const chunks = out.ok as { choices: { delta: { content?: string }; finish_reason: string | null }[]; usage?: unknown }[];
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("").length).toBeGreaterThan(0);
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe("stop");
    expect(chunks.at(-1)?.usage).toMatchObject({ prompt_tokens: expect.any(Number) });
    expect(sim.calls.requests[0]?.body).toMatchObject({ random_seed: 1, stream: true });
    const tools = await streamed(provider(transport), chat({ tools: [weather], tool_choice: "required" }));
    if (!("ok" in tools)) throw new Error(JSON.stringify(tools));
    const call = (tools.ok as { choices: { delta: { tool_calls?: { id: string }[] } }[] }[]).find(
      (c) => c.choices[0]?.delta.tool_calls,
    );
    expect(call?.choices[0]?.delta.tool_calls?.[0]?.id).toMatch(/^[A-Za-z0-9]{9}$/);
  });

  test("embeddings: dimensions as output_dimension, user dropped; the provider's own embeddings with mistral-embed", async () => {
    const out = await plain(
      provider(transport),
      { model: "mistral-embed", input: ["a", "b"], dimensions: 256, user: "u" },
      "embeddings",
    );
    if (!("ok" in out)) throw new Error(JSON.stringify(out));
    expect((out.ok as { data: { embedding: number[] }[] }).data[1]?.embedding).toHaveLength(256);
    expect(sim.calls.requests[0]?.body).toEqual({ model: "mistral-embed", input: ["a", "b"], output_dimension: 256 });
    const vectors = await provider(transport).embed?.(["x", "y", "z"]);
    expect(vectors).toHaveLength(3);
    expect(sim.calls.requests[1]?.body.model).toBe("mistral-embed");
  });

  test("a function call: structured output by json_schema, the answer valid", async () => {
    const out = await settle(
      attemptFunction({
        def: tiny,
        request: { text: "a fine day" },
        accountId: "acct_m",
        provider: provider(transport),
        signal: signal(),
      }),
    );
    expect(out).toMatchObject({ ok: { model: "mistral-small-latest", result: { label: expect.any(String) } } });
    expect(sim.calls.requests[0]?.body.response_format).toMatchObject({ type: "json_schema", json_schema: { name: "tiny" } });
  });

  test("errors: 429 with Retry-After, 5xx, a context-length 400, 401, a dropped connection, a cut stream, the timeout, the caller's abort", async () => {
    const p = provider(transport, { timeout_ms: 300 });
    sim.program([
      { status: 429, retryAfter: 3 },
      { status: 503 },
      { status: 400, contextLength: true },
      { drop: true },
      { streamCut: true },
      { delayMs: 1000 },
    ]);
    expect(await plain(p, chat())).toMatchObject({ error: { kind: "status", status: 429, retryAfterMs: 3000 } });
    expect(await plain(p, chat())).toMatchObject({ error: { kind: "status", status: 503 } });
    expect(await plain(p, chat())).toMatchObject({ error: { kind: "context_length", status: 400 } });
    expect(await plain(p, chat())).toMatchObject({ error: { kind: "connection" } });
    expect(await streamed(p, chat())).toMatchObject({ error: { kind: "connection" } });
    expect(await plain(p, chat())).toMatchObject({ error: { kind: "timeout" } });
    const wrongKey = provider(transport, { api_key: "wrong" });
    expect(await plain(wrongKey, chat())).toMatchObject({ error: { kind: "status", status: 401 } });
    sim.program([{ delayMs: 1000 }]);
    const ctrl = new AbortController();
    setTimeout(() => ctrl.abort(), 50);
    expect(await settle(p.proxy({ api: "chat/completions", body: chat(), signal: ctrl.signal }))).toMatchObject({
      error: { kind: "aborted" },
    });
    await Bun.sleep(50);
    expect(sim.calls.requests.at(-1)?.aborted).toBe(true);
  });
});

test("the two transports end each failure mode alike", async () => {
  const faults = [
    { status: 429, retryAfter: 2 },
    { status: 500 },
    { status: 400, contextLength: true },
    {
      raw: {
        status: 422,
        body: '{"detail":[{"type":"extra_forbidden","loc":["body","x"],"msg":"Extra inputs are not permitted"}]}',
      },
    },
    { raw: { body: '{"id":"x","choices":[' } },
  ];
  for (const fault of faults) {
    const outcomes: unknown[] = [];
    for (const transport of TRANSPORTS) {
      sim.program([fault]);
      outcomes.push(await plain(provider(transport), chat({ seed: 3 })));
    }
    expect(outcomes[0]).toEqual(outcomes[1]);
  }
});
