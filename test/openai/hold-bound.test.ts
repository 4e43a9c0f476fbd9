import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { requestTokens, startUpstream, type Upstream } from "../helpers/upstream";
import { ALL_FEATURES, rawPost } from "./setup";

/**
 * Issue 35, finding 3 and the class test: the hold of a /v1 call is an upper bound of what the
 * call can cost. For every field that carries text (Chat Completions, Responses, Embeddings), a
 * large payload in that field goes through a real gateway to the simulator, which reports the
 * request's usage as a provider bills it: a real tokenizer (o200k_base) over every string of the
 * body, one token per number, images at their own cost (test/helpers/upstream.ts, requestTokens).
 * The hold (read from the 402 a key without credits gets for the same body) covers that usage,
 * and the charge is exactly the reported usage: the gateway never undercharges the operator's cost.
 *
 * Prices are 1 credit per token either way, so credits and tokens are the same number.
 */
const ADMIN = "hold-bound-test-operator-token-0123456789abcdef";
const IMAGE_TOKENS = 1445;

let sim: Upstream;
let gw: TestGateway;
beforeAll(async () => {
  sim = await startUpstream({ usage: "tokens", imageTokens: IMAGE_TOKENS });
  const url = `${sim.url}/v1`;
  gw = await startGateway({
    functions: [],
    env: { TEXTAI_ADMIN_TOKEN: ADMIN },
    configText: `
[limits]
max_body_bytes = 4194304

[pricing]
default_max_output_tokens = 1

[pricing.models]
"model-a" = { input = 1000, output = 1000, image_tokens = ${IMAGE_TOKENS} }
"embed-a" = { input = 1000 }
"model-o" = { input = 0, output = 1000 }

[[providers]]
name = "primary"
type = "openai-compatible"
base_url = "${url}"
api_key = "sk-sim"
default_model = "model-a"
embedding_model = "embed-a"
model_patterns = ["model-*"]
features = ${ALL_FEATURES.replace("]", ', "remote_urls"]')}
`,
  });
  // the tokenizer loads once, before the first timed case
  await requestTokens("warm up", 0);
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await sim?.close();
});

/** A JSON schema of `n` properties, each with a description: about 40 bytes a property. */
const bigSchema = (n: number) => ({
  type: "object",
  properties: Object.fromEntries(
    Array.from({ length: n }, (_, i) => [
      `field_${i}`,
      { type: "string", description: `the value number ${i} of the record, as written` },
    ]),
  ),
  additionalProperties: false,
});
const prose = (bytes: number) => "The quick brown fox jumps over the lazy dog. ".repeat(Math.ceil(bytes / 45));
const CJK = "中文字符测试的内容我们是一个".repeat(Math.ceil(90_000 / 14)).slice(0, 90_000);
const user = (content: unknown) => [{ role: "user", content }];

const CASES: [name: string, path: string, body: Record<string, unknown>][] = [
  [
    "chat: response_format.json_schema, about 800 KB",
    "/v1/chat/completions",
    {
      messages: user("fill it"),
      max_tokens: 64,
      response_format: { type: "json_schema", json_schema: { name: "big", schema: bigSchema(12_000) } },
    },
  ],
  [
    "responses: text.format.schema, about 800 KB",
    "/v1/responses",
    {
      input: "fill it",
      max_output_tokens: 64,
      text: { format: { type: "json_schema", name: "big", schema: bigSchema(12_000) } },
    },
  ],
  [
    "chat: prediction.content",
    "/v1/chat/completions",
    { messages: user("edit it"), max_tokens: 64, prediction: { type: "content", content: prose(400_000) } },
  ],
  ["chat: 90,000 CJK characters", "/v1/chat/completions", { messages: user(CJK), max_tokens: 64 }],
  [
    "chat: 500 remote images",
    "/v1/chat/completions",
    {
      max_tokens: 64,
      messages: user(
        Array.from({ length: 500 }, (_, i) => ({ type: "image_url", image_url: { url: `https://93.184.215.14/i/${i}.png` } })),
      ),
    },
  ],
  [
    "chat: an inline image is its image tokens, whatever its size",
    "/v1/chat/completions",
    {
      max_tokens: 64,
      messages: user([{ type: "image_url", image_url: { url: `data:image/png;base64,${"A".repeat(4000)}` } }]),
    },
  ],
  [
    "responses: prompt.variables",
    "/v1/responses",
    { input: "go", max_output_tokens: 64, prompt: { id: "pmpt_1", variables: { city: prose(300_000), topic: CJK } } },
  ],
  [
    "chat: tool definitions",
    "/v1/chat/completions",
    {
      messages: user("call one"),
      max_tokens: 64,
      tool_choice: "none",
      tools: Array.from({ length: 300 }, (_, i) => ({
        type: "function",
        function: { name: `tool_${i}`, description: prose(900), parameters: bigSchema(20) },
      })),
    },
  ],
  [
    "responses: instructions and input items",
    "/v1/responses",
    {
      instructions: prose(200_000),
      max_output_tokens: 64,
      input: [{ role: "user", content: [{ type: "input_text", text: CJK }] }],
    },
  ],
  [
    "embeddings: token-id inputs",
    "/v1/embeddings",
    { input: Array.from({ length: 8 }, (_, j) => Array.from({ length: 20_000 }, (_, i) => (i * 7 + j) % 100_000)) },
  ],
  ["embeddings: CJK text", "/v1/embeddings", { input: [CJK, prose(100_000)] }],
  [
    "chat stream: response_format.json_schema",
    "/v1/chat/completions",
    {
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 64,
      messages: user("fill it"),
      response_format: { type: "json_schema", json_schema: { name: "big", schema: bigSchema(1_500) } },
    },
  ],
];

/** The hold of a 402: its credits and the token bound it names (old and new wording). */
function holdOf(message: string): { credits: number; input: number; output: number } {
  const m = /holds up to (\d+) credits? \((?:about|at most) (\d+) input and at most (\d+) output tokens\)/.exec(message);
  if (!m) throw new Error(`no hold in: ${message}`);
  return { credits: Number(m[1]), input: Number(m[2]), output: Number(m[3]) };
}

/** The usage an answer reports (a JSON answer, or the last usage of an SSE stream). */
function usageOf(text: string): { input: number; output: number } {
  const read = (u: Record<string, number>) => ({
    input: u.prompt_tokens ?? u.input_tokens ?? 0,
    output: u.completion_tokens ?? u.output_tokens ?? 0,
  });
  if (!text.startsWith("data:") && !text.startsWith("event:")) return read(JSON.parse(text).usage);
  let found: { input: number; output: number } | null = null;
  for (const line of text.split("\n")) {
    if (!line.startsWith("data: {")) continue;
    const event = JSON.parse(line.slice(6));
    const u = event.usage ?? event.response?.usage;
    if (u) found = read(u);
  }
  if (!found) throw new Error("the stream reported no usage");
  return found;
}

const overHoldCount = async () => {
  const res = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } });
  const text = await res.text();
  let n = 0;
  for (const line of text.split("\n")) if (line.startsWith("textai_usage_over_hold_total")) n += Number(line.split(" ").at(-1));
  return n;
};

describe("the hold is an upper bound of what a /v1 call can cost (issue 35.3)", () => {
  for (const [name, path, extra] of CASES) {
    test(name, async () => {
      const body = { model: path === "/v1/embeddings" ? "embed-a" : "model-a", ...extra };
      const poor = gw.newKey({ credits: 0 });
      sim.reset();
      sim.configure({ usage: "tokens", imageTokens: IMAGE_TOKENS });
      // a streamed answer in deltas of 4 KiB rather than a word each (3,700 frames, paced 2 ms
      // apart, took 9 s): what it costs is its usage chunk either way
      if (extra.stream === true) sim.program([{ chunkChars: 4096 }]);
      const refused = await rawPost(gw, path, poor.key, body);
      expect(refused.status).toBe(402);
      const hold = holdOf(((await refused.json()) as { error: { message: string } }).error.message);
      expect(sim.calls.count).toBe(0);

      const rich = gw.newKey({ credits: 100_000_000 });
      const over = await overHoldCount();
      const res = await rawPost(gw, path, rich.key, body);
      const text = await res.text();
      expect(res.status, text.slice(0, 300)).toBe(200);
      const usage = usageOf(text);
      const cost = usage.input + usage.output;
      // what the provider counted is within what was held
      expect(hold.input).toBeGreaterThanOrEqual(usage.input);
      expect(hold.output).toBeGreaterThanOrEqual(usage.output);
      expect(hold.credits).toBeGreaterThanOrEqual(cost);
      // and exactly that is charged: never capped below it
      await Bun.sleep(50);
      const charged = 100_000_000 - (await gw.deps.ledger.balance(rich.accountId));
      expect(charged).toBe(cost);
      expect(charged).toBeLessThanOrEqual(hold.credits);
      expect(await overHoldCount()).toBe(over);
    }, 120_000);
  }

  test("a reported usage above the hold is charged the hold and counted in /metrics", async () => {
    // no cap in the request: default_max_output_tokens (1) is held, and the simulator writes more;
    // model-o prices output only, so the input bound's margin does not cover it
    const rich = gw.newKey({ credits: 1_000_000 });
    sim.reset();
    sim.configure({ usage: "tokens", imageTokens: IMAGE_TOKENS });
    const before = await overHoldCount();
    const res = await rawPost(gw, "/v1/chat/completions", rich.key, {
      model: "model-o",
      messages: user("write a long story about a secret-word-xyzzy"),
    });
    expect(res.status).toBe(200);
    const usage = usageOf(await res.text());
    expect(usage.output).toBeGreaterThan(1);
    expect(await overHoldCount()).toBe(before + 1);
    await Bun.sleep(50);
    // the hold: 1 output token at 1 credit
    expect(1_000_000 - (await gw.deps.ledger.balance(rich.accountId))).toBe(1);
  }, 60_000);
});
