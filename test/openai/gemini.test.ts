/**
 * A `gemini` provider through the whole gateway: a real server on a real port and SQLite file, the
 * official `openai` SDK as the client of `/v1`, the Gemini simulator (proven by @google/genai) as
 * the upstream. Chat completions plain and streamed, tools, an image, embeddings, the Responses
 * API, a function call with native structured output, Gemini's failures as the gateway's errors,
 * and the ledger priced from usageMetadata per kind of token.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { mockText } from "../../src/providers/vendors/mock/provider";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { type GeminiUpstream, geminiProvider, startGeminiUpstream } from "../helpers/gemini-upstream";
import { openaiClient, rawPost, sseData } from "./setup";

let sim: GeminiUpstream;
let gw: TestGateway;

// a price for each kind, so a charge names every count: input 1, cached input 0.25, output 2, reasoning 3 credits a token
const PRICES = { input: 1000, cached: 250, output: 2000, reasoning: 3000 };

beforeAll(async () => {
  sim = await startGeminiUpstream();
  gw = await startGateway({
    configText: `
[pricing]
refuse_unpriced = true
default_max_output_tokens = 400

[pricing.models]
"gemini-*" = { input = ${PRICES.input}, output = ${PRICES.output}, cached_input = ${PRICES.cached}, reasoning = ${PRICES.reasoning} }

${geminiProvider({ url: sim.url, name: "gem", model: "gemini-2.5-flash" })}

[plans.guarded.guardrails]
redact_pii = ["email", "name"]
restore_pii = true
`,
  });
});
afterAll(async () => {
  await gw.close();
  await sim.close();
});
beforeEach(() => sim.reset());

interface Row {
  amount: number;
  function: string;
  input_tokens: number | null;
  output_tokens: number | null;
}

function charges(accountId: string): Row[] {
  const db = new Database(gw.dbPath, { readonly: true });
  try {
    return db
      .query<Row, [string]>(
        "SELECT amount, function, input_tokens, output_tokens FROM ledger WHERE account_id = ? AND kind = 'charge' ORDER BY id",
      )
      .all(accountId);
  } finally {
    db.close();
  }
}

async function until<T>(what: () => T, ok: (v: T) => boolean): Promise<T> {
  let v = what();
  for (let i = 0; i < 100 && !ok(v); i++) {
    await Bun.sleep(20);
    v = what();
  }
  return v;
}

/** What `[pricing]` says a call costs, from Gemini's counts: the cached part of the prompt and the thoughts at their own prices. */
function priced(u: { prompt: number; cached: number; candidates: number; thoughts: number }): number {
  const thousandths =
    (u.prompt - u.cached) * PRICES.input +
    u.cached * PRICES.cached +
    u.candidates * PRICES.output +
    u.thoughts * PRICES.reasoning;
  return Math.ceil(thousandths / 1000);
}

describe("/v1/chat/completions through gemini, with the openai SDK", () => {
  test("plain: the answer, usage with cached and reasoning tokens, and the ledger charged per kind to the credit", async () => {
    const { key, accountId } = gw.newKey({ credits: 100_000 });
    sim.program([{ usage: { cachedContentTokenCount: 6, thoughtsTokenCount: 9 } }]);
    const { data, response } = await openaiClient(gw, key)
      .chat.completions.create({
        model: "gemini-2.5-flash",
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "tell me about the gemini adapter please" },
        ],
        max_tokens: 200,
      })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe(mockText("tell me about the gemini adapter please"));
    expect(data.choices[0]?.finish_reason).toBe("stop");
    const usage = data.usage as OpenAI.CompletionUsage;
    expect(usage.prompt_tokens_details?.cached_tokens).toBe(6);
    expect(usage.completion_tokens_details?.reasoning_tokens).toBe(9);
    const cost = priced({ prompt: usage.prompt_tokens, cached: 6, candidates: usage.completion_tokens - 9, thoughts: 9 });
    // the cheaper cache and the dearer thoughts both show: not the plain input/output price
    expect(cost).not.toBe(Math.ceil(usage.prompt_tokens + usage.completion_tokens * 2));
    expect(response.headers.get("x-textai-credits-deducted")).toBe(String(cost));
    expect(gw.deps.ledger.balance(accountId)).toBe(100_000 - cost);
    expect(charges(accountId)).toEqual([
      { amount: -cost, function: "chat-completions", input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens },
    ]);
    const sent = sim.calls.requests[0];
    expect(sent?.path).toBe("/v1beta/models/gemini-2.5-flash:generateContent");
    expect(sent?.headers["x-goog-api-key"]).toBe("gm-sim-key");
    expect(sent?.body).toMatchObject({
      systemInstruction: { parts: [{ text: "Be brief." }] },
      generationConfig: { maxOutputTokens: 200 },
    });
  });

  test("streamed: the chunks add up, and the stream is charged per kind from the last usageMetadata", async () => {
    const { key, accountId } = gw.newKey({ credits: 100_000 });
    sim.program([{ usage: { cachedContentTokenCount: 3, thoughtsTokenCount: 5 } }]);
    const stream = await openaiClient(gw, key).chat.completions.create({
      model: "gemini-2.5-flash",
      messages: [{ role: "user", content: "stream me a short answer now" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let usage: OpenAI.CompletionUsage | undefined;
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe(mockText("stream me a short answer now"));
    expect(finish).toBe("stop");
    if (!usage) throw new Error("no usage chunk");
    expect(sim.calls.requests[0]?.path).toBe("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
    const cost = priced({ prompt: usage.prompt_tokens, cached: 3, candidates: usage.completion_tokens - 5, thoughts: 5 });
    const rows = await until(
      () => charges(accountId),
      (r) => r.length > 0,
    );
    expect(rows).toEqual([
      { amount: -cost, function: "chat-completions", input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens },
    ]);
  });

  test("tools: a function call, then its result, answered in text", async () => {
    const { key } = gw.newKey({ credits: 100_000 });
    const client = openaiClient(gw, key);
    const tools: OpenAI.ChatCompletionTool[] = [
      {
        type: "function",
        function: {
          name: "get_order",
          parameters: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
        },
      },
    ];
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "where is my order?" }];
    const first = await client.chat.completions.create({ model: "gemini-2.5-flash", messages, tools, tool_choice: "required" });
    const call = first.choices[0]?.message.tool_calls?.[0];
    if (call?.type !== "function") throw new Error(`no function call: ${JSON.stringify(first)}`);
    expect(first.choices[0]?.finish_reason).toBe("tool_calls");
    expect(call.function.name).toBe("get_order");
    const second = await client.chat.completions.create({
      model: "gemini-2.5-flash",
      messages: [
        ...messages,
        { role: "assistant", content: null, tool_calls: [call] },
        { role: "tool", tool_call_id: call.id, content: '{"status":"shipped"}' },
      ],
      tools,
    });
    expect(second.choices[0]?.message.content).toBe('Tool said: {"status":"shipped"}');
    expect(sim.calls.requests[1]?.body.contents).toEqual([
      { role: "user", parts: [{ text: "where is my order?" }] },
      { role: "model", parts: [{ functionCall: { name: "get_order", args: JSON.parse(call.function.arguments) } }] },
      { role: "user", parts: [{ functionResponse: { name: "get_order", response: { status: "shipped" } } }] },
    ]);
  });

  test("an image as a data: URL goes inline; a remote URL or logprobs is refused before any call, uncharged", async () => {
    const { key, accountId } = gw.newKey({ credits: 100_000 });
    const client = openaiClient(gw, key);
    const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";
    const image = (url: string): OpenAI.ChatCompletionMessageParam[] => [
      {
        role: "user",
        content: [
          { type: "text", text: "describe this" },
          { type: "image_url", image_url: { url } },
        ],
      },
    ];
    const ok = await client.chat.completions.create({
      model: "gemini-2.5-flash",
      messages: image(`data:image/png;base64,${png}`),
    });
    expect(ok.choices[0]?.message.content).toBe(mockText("describe this"));
    expect(sim.calls.requests[0]?.body.contents).toEqual([
      { role: "user", parts: [{ text: "describe this" }, { inlineData: { mimeType: "image/png", data: png } }] },
    ]);
    const spent = 100_000 - (await gw.deps.ledger.balance(accountId));
    const remote = await client.chat.completions
      .create({ model: "gemini-2.5-flash", messages: image("https://example.com/cat.png") })
      .catch((e: unknown) => e);
    expect(remote).toBeInstanceOf(OpenAI.BadRequestError);
    expect((remote as InstanceType<typeof OpenAI.APIError>).message).toContain("gem (no remote_urls support)");
    const logprobs = await client.chat.completions
      .create({ model: "gemini-2.5-flash", messages: [{ role: "user", content: "hi" }], logprobs: true })
      .catch((e: unknown) => e);
    expect(logprobs).toBeInstanceOf(OpenAI.BadRequestError);
    expect((logprobs as InstanceType<typeof OpenAI.APIError>).message).toContain('gem (cannot serve "logprobs")');
    expect((logprobs as InstanceType<typeof OpenAI.APIError>).param).toBe("logprobs");
    expect(sim.calls.count).toBe(1);
    expect(await gw.deps.ledger.balance(accountId)).toBe(100_000 - spent);
  });
});

describe("/v1/embeddings and /v1/responses through gemini", () => {
  test("embeddings: one vector per input through batchEmbedContents", async () => {
    const { key } = gw.newKey({ credits: 100_000 });
    const r = await openaiClient(gw, key).embeddings.create({ model: "gemini-embedding-001", input: ["one text", "another"] });
    expect(r.data.map((d) => d.embedding.length)).toEqual([64, 64]);
    expect(sim.calls.requests[0]?.path).toBe("/v1beta/models/gemini-embedding-001:batchEmbedContents");
  });

  test("the Responses API: answered through generateContent, plain and streamed", async () => {
    const { key } = gw.newKey({ credits: 100_000 });
    const client = openaiClient(gw, key);
    const r = await client.responses.create({ model: "gemini-2.5-flash", input: "hello responses api" });
    expect(r.output_text).toBe(mockText("hello responses api"));
    expect(sim.calls.requests[0]?.path).toBe("/v1beta/models/gemini-2.5-flash:generateContent");
    const events: string[] = [];
    let text = "";
    for await (const e of await client.responses.create({
      model: "gemini-2.5-flash",
      input: "stream the responses",
      stream: true,
    })) {
      events.push(e.type);
      if (e.type === "response.output_text.delta") text += e.delta;
    }
    expect(text).toBe(mockText("stream the responses"));
    expect(events.at(-1)).toBe("response.completed");
    expect(sim.calls.requests[1]?.path).toBe("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
  });

  test("GET /v1/models lists the provider's configured models", async () => {
    const { key } = gw.newKey({ credits: 10 });
    const ids = (await openaiClient(gw, key).models.list()).data.map((m) => m.id);
    expect(ids).toContain("gem/gemini-2.5-flash");
    expect(ids).toContain("gem/gemini-embedding-001");
  });
});

describe("a function call through gemini: native structured output", () => {
  test("email-analyze: its result schema as responseJsonSchema (a free-form map), the answer valid; sentiment-analysis as responseSchema", async () => {
    const { key } = gw.newKey({ credits: 100 });
    const r = await gw.post(
      "/api/v1/ai/email-analyze",
      { email_content: "I was charged twice for my order, please refund me.", allowed_categories: ["billing", "other"] },
      { authorization: `Bearer ${key}` },
    );
    expect(r.status).toBe(200);
    expect(r.json.meta).toMatchObject({ provider: "gem", model: "gemini-2.5-flash" });
    expect(["billing", "other"]).toContain(r.json.data.result.category);
    const config = sim.calls.requests[0]?.body.generationConfig as Record<string, unknown>;
    expect(config.responseMimeType).toBe("application/json");
    expect(config.responseJsonSchema).toMatchObject({ type: "object" });
    const s = await gw.post("/api/v1/ai/sentiment-analysis", { text: "What a lovely day." }, { authorization: `Bearer ${key}` });
    expect(s.status).toBe(200);
    expect(s.json.meta.provider).toBe("gem");
    const second = sim.calls.requests[1]?.body.generationConfig as Record<string, unknown> | undefined;
    expect(second?.responseSchema).toMatchObject({ type: "object" });
  });
});

describe("Gemini's failures as the gateway's errors", () => {
  test("429 RESOURCE_EXHAUSTED with RetryInfo: 429 rate_limited with its Retry-After, nothing charged", async () => {
    const { key, accountId } = gw.newKey({ credits: 100_000 });
    sim.program([{ status: 429, retryDelay: "3s" }]);
    // a model of its own: the 429 pauses this provider and model for its Retry-After
    const res = await rawPost(gw, "/v1/chat/completions", key, {
      model: "gemini-2.5-flash-lite",
      messages: [{ role: "user", content: "hi" }],
    });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("3");
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("rate_limited");
    expect(gw.deps.ledger.balance(accountId)).toBe(100_000);
  });

  test("a blocked prompt: 422 content_filtered, uncharged; a withheld answer: finish_reason content_filter", async () => {
    const { key, accountId } = gw.newKey({ credits: 100_000 });
    sim.program([{ blockReason: "SAFETY" }, { finishReason: "SAFETY" }]);
    const client = openaiClient(gw, key);
    const ask = () => client.chat.completions.create({ model: "gemini-2.5-flash", messages: [{ role: "user", content: "bad" }] });
    const blocked = (await ask().catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(blocked).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    expect(blocked.code).toBe("content_filtered");
    expect(gw.deps.ledger.balance(accountId)).toBe(100_000);
    const withheld = await ask();
    expect(withheld.choices[0]?.finish_reason).toBe("content_filter");
    const fn = await gw.post("/api/v1/ai/sentiment-analysis", { text: "x" }, { authorization: `Bearer ${key}` });
    // a function call with the filter's refusal: only the offline engine is left, which answers
    expect(fn.status).toBe(200);
  });

  test("a key Google refuses is a 502 provider_error, never the client's 400 with Google's words; context length is 400 naming messages", async () => {
    const { key } = gw.newKey({ credits: 100_000 });
    sim.configure({ apiKey: "another-key" });
    const res = await rawPost(gw, "/v1/chat/completions", key, {
      model: "gemini-2.5-flash",
      messages: [{ role: "user", content: "hi" }],
    });
    const text = await res.text();
    expect(res.status).toBe(502);
    expect(text).not.toContain("API key not valid");
    sim.configure({ apiKey: undefined });
    sim.program([{ status: 400, contextLength: true }]);
    const long = await openaiClient(gw, key)
      .chat.completions.create({ model: "gemini-2.5-flash", messages: [{ role: "user", content: "long" }] })
      .catch((e: unknown) => e);
    expect(long).toBeInstanceOf(OpenAI.BadRequestError);
    expect((long as InstanceType<typeof OpenAI.APIError>).code).toBe("context_length_exceeded");
    expect((long as InstanceType<typeof OpenAI.APIError>).param).toBe("messages");
  });
});

describe("guardrails through gemini: redacted before the translation, restored after it", () => {
  const EMAIL = "maria.garcia@example.com";
  const NAME = "Maria Garcia";

  test("plain and streamed (placeholders cut between Gemini's chunks): Gemini never sees the values, the client gets them back", async () => {
    const { key } = gw.newKey({ plan: "guarded", credits: 100_000 });
    const answer = "Reply sent to [EMAIL_1] for [NAME_1].";
    sim.program([{ content: answer }, { content: answer, chunkChars: 3 }]);
    const body = {
      model: "gemini-2.5-flash",
      messages: [
        { role: "system", content: `The customer is ${NAME}.` },
        { role: "user", content: `Write to ${EMAIL} please.` },
      ],
    };
    const plain = await rawPost(gw, "/v1/chat/completions", key, body);
    expect(plain.status).toBe(200);
    const restored = `Reply sent to ${EMAIL} for ${NAME}.`;
    expect(((await plain.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content).toBe(restored);
    const streamed = await rawPost(gw, "/v1/chat/completions", key, { ...body, stream: true });
    const chunks = sseData(await streamed.text()) as { choices: { delta: { content?: string } }[] }[];
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe(restored);
    const sent = JSON.stringify(sim.calls.requests.map((r) => r.body));
    expect(sent).not.toContain(EMAIL);
    expect(sent).not.toContain("Garcia");
    expect(sent).toContain("[EMAIL_1]");
    expect(sim.calls.requests[0]?.body.systemInstruction).toEqual({ parts: [{ text: "The customer is [NAME_1]." }] });
  });
});
