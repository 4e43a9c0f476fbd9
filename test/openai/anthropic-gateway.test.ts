/**
 * An `anthropic` provider behind the real gateway: a function call (`email-analyze`, its structured
 * answer by forced tool use) and `/v1/chat/completions` and `/v1/responses` from the official
 * openai SDK, plain and streamed, with tools and an image; a prompt-cached call charged exactly what
 * `[pricing]` says of its cache reads and writes; a fallback from anthropic (529) to openai that
 * answers once and charges once. Upstreams: the Anthropic simulator (proven by @anthropic-ai/sdk)
 * and the OpenAI one.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type OpenAI from "openai";
import emailAnalyze from "../../src/functions/email-analyze";
import { mockText } from "../../src/providers/vendors/mock/provider";
import { type AnthropicUpstream, startAnthropicUpstream } from "../helpers/anthropic-upstream";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { startUpstream, type Upstream } from "../helpers/upstream";
import { openaiClient } from "./setup";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";
// credits per 1,000 tokens: a call's charge names its tokens; a cache read a tenth of input, a write 1.25 times
const PRICE = { input: 1000, output: 2000, cachedInput: 100, cacheWrite: 1250 };

let claude: AnthropicUpstream;
let openaiSim: Upstream;
let gw: TestGateway;

beforeAll(async () => {
  claude = await startAnthropicUpstream();
  openaiSim = await startUpstream();
  gw = await startGateway({
    functions: [emailAnalyze],
    configText: `
[routes]
"email-analyze" = ["claude", "openai"]
"chat-completions" = ["claude", "openai"]
"responses" = ["claude"]

[pricing]
refuse_unpriced = true
[pricing.models]
"claude-sim-*" = { input = ${PRICE.input}, output = ${PRICE.output}, cached_input = ${PRICE.cachedInput}, cache_write = ${PRICE.cacheWrite} }

[[providers]]
name = "claude"
type = "anthropic"
base_url = "${claude.url}"
api_key = "sk-ant-gateway"
default_model = "claude-sim-1"

[[providers]]
name = "openai"
type = "openai"
base_url = "${openaiSim.url}/v1"
api_key = "sk-openai-gateway"
default_model = "claude-sim-2"
# an OpenAI-shaped endpoint serving the same models (a proxy): an openai entry's default patterns take no claude-* id
model_patterns = ["claude-sim-*"]
`,
  });
});
afterAll(async () => {
  await gw.close();
  await claude.close();
  await openaiSim.close();
});
beforeEach(() => {
  claude.reset();
  openaiSim.reset();
});

// biome-ignore lint/suspicious/noExplicitAny: the bodies the simulator was sent, read field by field
type Sent = Record<string, any>;

interface Charge {
  amount: number;
  function: string;
  input_tokens: number | null;
  output_tokens: number | null;
}
function charges(accountId: string): Charge[] {
  const db = new Database(gw.dbPath, { readonly: true });
  try {
    return db
      .query<Charge, [string]>(
        "SELECT amount, function, input_tokens, output_tokens FROM ledger WHERE account_id = ? AND kind = 'charge' ORDER BY id",
      )
      .all(accountId);
  } finally {
    db.close();
  }
}

const email = {
  email_content: "Hello, I was charged twice for invoice INV-2291. Please refund the duplicate $49.",
  subject: "Double charge",
};

describe("a function call through anthropic", () => {
  test("email-analyze: the result schema is a forced tool, the answer its input; charged the function's cost", async () => {
    const { key, accountId } = gw.newKey({ credits: 100 });
    const res = await gw.post("/api/v1/ai/email-analyze", email, { authorization: `Bearer ${key}` });
    expect(res.status).toBe(200);
    expect(res.json.meta.provider).toBe("claude");
    expect(typeof res.json.data.result.category).toBe("string");
    expect(typeof res.json.data.result.summary).toBe("string");
    const sent = claude.calls.requests[0]?.body as Sent;
    expect(sent.tool_choice).toEqual({ type: "tool", name: "email-analyze" });
    expect(sent.tools[0].name).toBe("email-analyze");
    expect(sent.tools[0].input_schema.type).toBe("object");
    expect(typeof sent.system).toBe("string");
    expect(sent.messages.every((m: { role: string }) => m.role === "user" || m.role === "assistant")).toBe(true);
    expect(claude.calls.requests[0]?.headers["x-api-key"]).toBe("sk-ant-gateway");
    expect(gw.deps.ledger.balance(accountId)).toBe(100 - emailAnalyze.cost);
    expect(openaiSim.calls.count).toBe(0);
  });

  test("529 overloaded from anthropic: openai answers, the call is charged once", async () => {
    const { key, accountId } = gw.newKey({ credits: 100 });
    claude.program([{ status: 529 }]);
    const res = await gw.post("/api/v1/ai/email-analyze", email, { authorization: `Bearer ${key}` });
    expect(res.status).toBe(200);
    expect(res.json.meta.provider).toBe("openai");
    expect(claude.calls.count).toBe(1);
    expect(openaiSim.calls.count).toBe(1);
    expect(gw.deps.ledger.balance(accountId)).toBe(100 - emailAnalyze.cost);
    expect(charges(accountId)).toHaveLength(1);
  });
});

describe("/v1/chat/completions through anthropic, from the openai SDK", () => {
  test("plain: translated both ways, charged its reported usage at its price", async () => {
    const { key, accountId } = gw.newKey({ credits: 100_000 });
    const { data, response } = await openaiClient(gw, key)
      .chat.completions.create({
        model: "claude-sim-1",
        max_tokens: 200,
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "hello gateway claude" },
        ],
      })
      .withResponse();
    expect(response.headers.get("x-textai-provider")).toBe("claude");
    expect(data.choices[0]?.message.content).toBe(mockText("hello gateway claude"));
    expect(data.choices[0]?.finish_reason).toBe("stop");
    const sent = claude.calls.requests[0]?.body as Sent;
    expect(sent.system).toBe("Be brief.");
    expect(sent.max_tokens).toBe(200);
    const u = data.usage as OpenAI.CompletionUsage;
    const cost = u.prompt_tokens * 1 + u.completion_tokens * 2;
    expect(response.headers.get("x-textai-credits-deducted")).toBe(String(cost));
    expect(gw.deps.ledger.balance(accountId)).toBe(100_000 - cost);
  });

  test("streamed: the chunks add up to the answer; the usage the client did not ask for is not sent, but charged", async () => {
    const { key, accountId } = gw.newKey({ credits: 100_000 });
    const stream = await openaiClient(gw, key).chat.completions.create({
      model: "claude-sim-1",
      stream: true,
      messages: [{ role: "user", content: "stream through the gateway" }],
    });
    let text = "";
    let finish: string | null = null;
    let usageSeen = false;
    for await (const c of stream) {
      text += c.choices[0]?.delta.content ?? "";
      finish = c.choices[0]?.finish_reason ?? finish;
      if (c.usage) usageSeen = true;
    }
    expect(text).toBe(mockText("stream through the gateway"));
    expect(finish).toBe("stop");
    expect(usageSeen).toBe(false);
    expect(claude.calls.requests[0]?.body.stream).toBe(true);
    let rows = charges(accountId);
    for (let i = 0; i < 50 && rows.length === 0; i++) {
      await Bun.sleep(20);
      rows = charges(accountId);
    }
    expect(rows).toHaveLength(1);
    const row = rows[0] as Charge;
    expect(row.amount).toBe(-((row.input_tokens ?? 0) * 1 + (row.output_tokens ?? 0) * 2));
    expect(row.input_tokens).toBeGreaterThan(0);
  });

  test("tools: a tool call and its result, round trip", async () => {
    const { key } = gw.newKey({ credits: 100_000 });
    const c = openaiClient(gw, key);
    const tools: OpenAI.ChatCompletionTool[] = [
      {
        type: "function",
        function: {
          name: "lookup_order",
          parameters: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] },
        },
      },
    ];
    const first = await c.chat.completions.create({
      model: "claude-sim-1",
      tools,
      messages: [{ role: "user", content: "where is order 7?" }],
    });
    const call = first.choices[0]?.message.tool_calls?.[0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(first.choices[0]?.finish_reason).toBe("tool_calls");
    expect(call.function.name).toBe("lookup_order");
    const second = await c.chat.completions.create({
      model: "claude-sim-1",
      tools,
      messages: [
        { role: "user", content: "where is order 7?" },
        { role: "assistant", content: null, tool_calls: [call] },
        { role: "tool", tool_call_id: call.id, content: "shipped" },
      ],
    });
    expect(second.choices[0]?.message.content).toBe("Tool said: shipped");
    const sent = claude.calls.requests[1]?.body as Sent;
    expect(sent.messages[2].content[0]).toEqual({ type: "tool_result", tool_use_id: call.id, content: "shipped" });
  });

  test("an image: the data: URL reaches Anthropic as a base64 image block", async () => {
    const { key } = gw.newKey({ credits: 100_000 });
    const answer = await openaiClient(gw, key).chat.completions.create({
      model: "claude-sim-1",
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "what is this" },
            { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } },
          ],
        },
      ],
    });
    expect(answer.choices[0]?.message.content).toBe(mockText("what is this"));
    const sent = claude.calls.requests[0]?.body as Sent;
    expect(sent.messages[0].content[1]).toEqual({
      type: "image",
      source: { type: "base64", media_type: "image/png", data: PNG },
    });
  });

  test("n > 1 is not served by anthropic: the next provider that can serves it; a 400 naming it when none can", async () => {
    const { key } = gw.newKey({ credits: 100_000 });
    const res = await openaiClient(gw, key)
      .chat.completions.create({ model: "claude-sim-1", n: 2, messages: [{ role: "user", content: "two" }] })
      .withResponse();
    expect(res.response.headers.get("x-textai-provider")).toBe("openai");
    expect(res.data.choices).toHaveLength(2);
    expect(claude.calls.count).toBe(0);
    // /v1/responses is routed to claude alone: a request it cannot express is a 400, nothing charged
    const refused = await openaiClient(gw, key)
      .responses.create({ model: "claude-sim-1", input: "hi", reasoning: { effort: "high" } })
      .catch((e: unknown) => e);
    expect((refused as { status?: number }).status).toBe(400);
    expect(claude.calls.count).toBe(0);
  });

  test("a 529 then openai: one answer, one charge", async () => {
    const { key, accountId } = gw.newKey({ credits: 100_000 });
    claude.program([{ status: 529 }]);
    const { data, response } = await openaiClient(gw, key)
      .chat.completions.create({ model: "claude-sim-1", messages: [{ role: "user", content: "fall back please" }] })
      .withResponse();
    expect(response.headers.get("x-textai-provider")).toBe("openai");
    expect(data.choices[0]?.message.content).toBe(mockText("fall back please"));
    expect(claude.calls.count).toBe(1);
    expect(openaiSim.calls.count).toBe(1);
    expect(charges(accountId)).toHaveLength(1);
  });

  test("a prompt-cached call: the ledger matches [pricing]'s cached_input and cache_write to the credit", async () => {
    const { key, accountId } = gw.newKey({ credits: 1_000_000 });
    const long = "These instructions stay the same from call to call. ".repeat(60);
    // the same cached system prompt, another question each time (the same request twice would be the gateway's cache hit)
    const body = (question: string) =>
      ({
        model: "claude-sim-1",
        max_tokens: 100,
        messages: [
          { role: "system", content: [{ type: "text", text: long, cache_control: { type: "ephemeral" } }] },
          { role: "user", content: question },
        ],
      }) as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming;
    const c = openaiClient(gw, key);
    let balance = 1_000_000;
    for (const round of ["write", "read"]) {
      const { data, response } = await c.chat.completions.create(body(`${round} question`)).withResponse();
      const u = data.usage as OpenAI.CompletionUsage & { prompt_tokens_details: { cache_write_tokens: number } };
      const read = u.prompt_tokens_details.cached_tokens ?? 0;
      const write = u.prompt_tokens_details.cache_write_tokens;
      if (round === "write") expect([read, write > 100]).toEqual([0, true]);
      else expect([read > 100, write]).toEqual([true, 0]);
      const plain = u.prompt_tokens - read - write;
      const expected = Math.ceil(
        (plain * PRICE.input + read * PRICE.cachedInput + write * PRICE.cacheWrite + u.completion_tokens * PRICE.output) / 1000,
      );
      expect(response.headers.get("x-textai-credits-deducted")).toBe(String(expected));
      balance -= expected;
      expect(gw.deps.ledger.balance(accountId)).toBe(balance);
    }
    expect(claude.calls.count).toBe(2);
    const rows = charges(accountId);
    expect(rows).toHaveLength(2);
    // the read costs less than the write
    expect(-(rows[1] as Charge).amount).toBeLessThan(-(rows[0] as Charge).amount);
  });
});

describe("/v1/responses through anthropic (the chat translation)", () => {
  test("plain and streamed", async () => {
    const { key } = gw.newKey({ credits: 100_000 });
    const c = openaiClient(gw, key);
    const r = await c.responses.create({ model: "claude-sim-1", instructions: "Be brief.", input: "hello responses" });
    expect(r.output_text).toBe(mockText("hello responses"));
    expect(claude.calls.requests[0]?.body.system).toBe("Be brief.");
    const stream = await c.responses.create({ model: "claude-sim-1", input: "stream responses", stream: true });
    let text = "";
    let done = false;
    for await (const e of stream) {
      if (e.type === "response.output_text.delta") text += e.delta;
      if (e.type === "response.completed") done = true;
    }
    expect(text).toBe(mockText("stream responses"));
    expect(done).toBe(true);
  });
});
