/**
 * The Anthropic Messages API on the gateway (`/v1/messages`, `/v1/messages/count_tokens`), driven
 * by Anthropic's official SDK against the real gateway over the OpenAI-shaped upstream simulator:
 * the request translated to Chat Completions, the answer and the stream translated back, Anthropic's
 * error shape, the charge, the request log, the cache, and the guardrails' redact and restore.
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import type { TestGateway } from "../helpers/gateway";
import { simProvider } from "../helpers/upstream";
import { ALL_FEATURES, sentBody, useGateway } from "../openai/setup";
import { PNG, until, WEATHER } from "./fixtures";

const ADMIN_TOKEN = "messages-test-operator-token-0123456789abcdef";
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
const EMAIL = "ann.lee@example.com";

const ctx = useGateway({
  configText: (url) => `
[pricing.models]
"model-a" = { input = 1000, output = 2000 }
${simProvider({ url, name: "sim", model: "model-a", extra: `features = ${ALL_FEATURES.replace("]", ', "remote_urls"]')}` })}

[plans.guarded.guardrails]
redact_pii = ["email"]
restore_pii = true

[plans.slow.rate_limits]
messages = 2
`,
  env: { TEXTAI_ADMIN_TOKEN: ADMIN_TOKEN },
});

const client = (apiKey: string, o: { maxRetries?: number; bearer?: boolean } = {}) =>
  new Anthropic({
    ...(o.bearer ? { authToken: apiKey, apiKey: null } : { apiKey }),
    baseURL: ctx.gw.url,
    maxRetries: o.maxRetries ?? 0,
  });

interface Charge {
  amount: number;
  function: string;
  request_id: string;
}

function charges(gw: TestGateway, accountId: string): Charge[] {
  const db = new Database(gw.dbPath, { readonly: true });
  try {
    return db
      .query<Charge, [string]>(
        "SELECT amount, function, request_id FROM ledger WHERE account_id = ? AND kind = 'charge' ORDER BY id",
      )
      .all(accountId);
  } finally {
    db.close();
  }
}

/** The account's request-log entries, as its key lists them. */
async function logged(key: string): Promise<Record<string, unknown>[]> {
  const res = await ctx.gw.get("/api/v1/account/requests?limit=100", { "x-api-key": key });
  return (res.json.data?.result?.data ?? res.json.data?.result ?? []) as Record<string, unknown>[];
}

describe("/v1/messages through the Anthropic SDK, translated to an OpenAI-shaped provider", () => {
  test("messages.create: the request translated field by field, the answer in Anthropic's shape, charged once, logged", async () => {
    const { gw, sim } = ctx;
    const { key, accountId } = gw.newKey({ credits: 100_000 });
    sim.reset();
    sim.program([{ content: "Hello from the simulator." }]);
    const { data, response } = await client(key)
      .messages.create({
        model: "model-a",
        max_tokens: 200,
        system: [{ type: "text", text: "Be brief." }],
        messages: [{ role: "user", content: [{ type: "text", text: "Say hello" }] }],
        stop_sequences: ["END"],
        temperature: 0.5,
        top_p: 0.9,
        metadata: { user_id: "user-42" },
        // the sampling fields of Anthropic's API before the SDK's current types dropped them
      } as Anthropic.MessageCreateParamsNonStreaming)
      .withResponse();
    expect(data.type).toBe("message");
    expect(data.role).toBe("assistant");
    expect(data.id).toStartWith("msg_");
    expect(data.content as unknown).toEqual([{ type: "text", text: "Hello from the simulator.", citations: null }]);
    expect(data.stop_reason).toBe("end_turn");
    expect(data.stop_sequence).toBeNull();
    expect(data.model).toBe("model-a");
    expect(data.usage.input_tokens).toBeGreaterThan(0);
    expect(data.usage.output_tokens).toBeGreaterThan(0);
    expect(data.usage.cache_read_input_tokens).toBe(0);
    // the SDK reads Anthropic's request-id header
    expect(response.headers.get("request-id")).toStartWith("req_");
    expect(sim.calls.count).toBe(1);
    const sent = sentBody(sim, 0);
    expect(sim.calls.requests[0]?.path).toBe("/v1/chat/completions");
    expect(sent).toMatchObject({
      model: "model-a",
      max_tokens: 200,
      stop: ["END"],
      temperature: 0.5,
      top_p: 0.9,
      user: "user-42",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Say hello" },
      ],
    });
    // charged once, under the usage name messages, on the usage reported
    const cost = data.usage.input_tokens * 1 + data.usage.output_tokens * 2;
    expect(response.headers.get("x-textai-credits-deducted")).toBe(String(cost));
    const rows = await until(
      () => charges(gw, accountId),
      (r) => r.length > 0,
    );
    expect(rows).toEqual([{ amount: -cost, function: "messages", request_id: response.headers.get("request-id") as string }]);
    const entries = await until(
      () => logged(key),
      (e) => e.length > 0,
    );
    expect(entries[0]).toMatchObject({ path: "/v1/messages", function: "messages", status: 200, credits: cost, provider: "sim" });
  });

  test("Authorization: Bearer authenticates too, and anthropic-version is taken as sent; a repeat is a cache hit", async () => {
    const { gw, sim } = ctx;
    const { key } = gw.newKey({ credits: 100_000 });
    sim.reset();
    const ask = () =>
      client(key, { bearer: true })
        .messages.create({ model: "model-a", max_tokens: 50, messages: [{ role: "user", content: "Cache me" }] })
        .withResponse();
    const first = await ask();
    expect(first.response.headers.get("x-cache")).toBe("MISS");
    const again = await ask();
    expect(again.response.headers.get("x-cache")).toBe("HIT");
    expect(again.data.content).toEqual(first.data.content);
    expect(sim.calls.count).toBe(1);
    const old = await fetch(`${gw.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key, "anthropic-version": "1999-01-01" },
      body: JSON.stringify({ model: "model-a", max_tokens: 50, messages: [{ role: "user", content: "Cache me" }] }),
    });
    expect(old.status).toBe(200);
  });

  test("messages.stream(): Anthropic's events in order, finalMessage() whole, usage in message_delta, charged once", async () => {
    const { gw, sim } = ctx;
    const { key, accountId } = gw.newKey({ credits: 100_000 });
    sim.reset();
    sim.program([{ content: "One two three four five.", chunkChars: 4 }]);
    const stream = client(key).messages.stream({
      model: "model-a",
      max_tokens: 100,
      messages: [{ role: "user", content: "Count to five" }],
    });
    const types: string[] = [];
    let started = 0;
    stream.on("streamEvent", (e) => {
      types.push(e.type);
      if (e.type === "message_start") started = e.message.usage.input_tokens;
    });
    const message = await stream.finalMessage();
    expect(message.content as unknown).toEqual([{ type: "text", text: "One two three four five.", citations: null }]);
    expect(message.stop_reason).toBe("end_turn");
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    expect(types[0]).toBe("message_start");
    // message_start has the gateway's estimate; message_delta the provider's count, which finalMessage() keeps
    expect(started).toBeGreaterThan(0);
    expect(types.slice(-3)).toEqual(["content_block_stop", "message_delta", "message_stop"]);
    expect(types.filter((t) => t === "content_block_delta").length).toBeGreaterThan(3);
    expect(types.filter((t) => t === "content_block_start")).toEqual(["content_block_start"]);
    // the upstream was asked for its usage chunk (the charge reads it); the client saw none of OpenAI's frames
    expect((sentBody(sim, 0).stream_options as { include_usage?: boolean }).include_usage).toBe(true);
    const rows = await until(
      () => charges(gw, accountId),
      (r) => r.length > 0,
    );
    expect(rows.length).toBe(1);
    expect(rows[0]?.amount).toBe(-(message.usage.input_tokens + 2 * message.usage.output_tokens));
    expect(rows[0]?.function).toBe("messages");
  });

  test("the raw stream: event lines with data lines, no [DONE], ping allowed", async () => {
    const { gw } = ctx;
    const { key } = gw.newKey({ credits: 100_000 });
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key },
      body: JSON.stringify({ model: "model-a", max_tokens: 50, stream: true, messages: [{ role: "user", content: "Hi" }] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/event-stream");
    expect(res.headers.get("request-id")).toStartWith("req_");
    const text = await res.text();
    expect(text).not.toContain("[DONE]");
    const frames = text.trim().split("\n\n");
    for (const f of frames) {
      const [ev, data] = f.split("\n");
      const type = ev?.slice("event: ".length);
      expect(JSON.parse(data?.slice("data: ".length) ?? "").type).toBe(type);
    }
    const order = frames.map((f) => f.split("\n")[0]?.slice(7));
    expect(order.slice(0, 3)).toEqual(["message_start", "ping", "content_block_start"]);
    expect(order.at(-1)).toBe("message_stop");
  });

  test("a tool round trip: tools and tool_choice translated, tool_use back, tool_result forwarded as a tool message", async () => {
    const { gw, sim } = ctx;
    const { key } = gw.newKey({ credits: 100_000 });
    sim.reset();
    const anthropic = client(key);
    const question: Anthropic.MessageParam = { role: "user", content: "What is the weather in Paris?" };
    const first = await anthropic.messages.create({
      model: "model-a",
      max_tokens: 200,
      tools: [WEATHER],
      tool_choice: { type: "tool", name: "get_weather", disable_parallel_tool_use: true },
      messages: [question],
    });
    expect(first.stop_reason).toBe("tool_use");
    const use = first.content.find((b) => b.type === "tool_use");
    if (use?.type !== "tool_use") throw new Error(`no tool_use: ${JSON.stringify(first.content)}`);
    expect(use.name).toBe("get_weather");
    expect(typeof (use.input as { city?: unknown }).city).toBe("string");
    expect(sentBody(sim, 0)).toMatchObject({
      tools: [
        {
          type: "function",
          function: { name: "get_weather", description: "The weather in a city", parameters: WEATHER.input_schema },
        },
      ],
      tool_choice: { type: "function", function: { name: "get_weather" } },
      parallel_tool_calls: false,
    });
    const second = await anthropic.messages.create({
      model: "model-a",
      max_tokens: 200,
      tools: [WEATHER],
      messages: [
        question,
        { role: "assistant", content: first.content },
        {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: use.id, content: [{ type: "text", text: "Sunny, 21 C" }] }],
        },
      ],
    });
    expect(second.stop_reason).toBe("end_turn");
    expect(second.content[0]?.type).toBe("text");
    const sent = sentBody(sim, 1).messages as Record<string, unknown>[];
    expect(sent.slice(1)).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: use.id, type: "function", function: { name: "get_weather", arguments: JSON.stringify(use.input) } }],
      },
      { role: "tool", tool_call_id: use.id, content: "Sunny, 21 C" },
    ]);
  });

  test("a streamed tool call: input_json_delta pieces make the tool_use input of finalMessage()", async () => {
    const { gw } = ctx;
    const { key } = gw.newKey({ credits: 100_000 });
    const message = await client(key)
      .messages.stream({
        model: "model-a",
        max_tokens: 200,
        tools: [WEATHER],
        tool_choice: { type: "any" },
        messages: [{ role: "user", content: "Weather in Oslo?" }],
      })
      .finalMessage();
    expect(message.stop_reason).toBe("tool_use");
    const use = message.content.find((b) => b.type === "tool_use");
    expect(use?.type === "tool_use" && typeof (use.input as { city?: unknown }).city).toBe("string");
  });

  test("images: a base64 source as a data: URL, a url source as the URL; a tool_choice without tools is dropped", async () => {
    const { gw, sim } = ctx;
    const { key } = gw.newKey({ credits: 100_000 });
    sim.reset();
    const answer = await client(key).messages.create({
      model: "model-a",
      max_tokens: 50,
      tool_choice: { type: "auto" },
      messages: [
        {
          role: "user",
          content: [
            { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
            { type: "image", source: { type: "url", url: "https://93.184.215.14/cat.png" } },
            { type: "text", text: "What is this?" },
          ],
        },
      ],
    });
    expect(answer.content[0]?.type).toBe("text");
    const [user] = sentBody(sim, 0).messages as { content: unknown }[];
    expect(user?.content).toEqual([
      { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } },
      { type: "image_url", image_url: { url: "https://93.184.215.14/cat.png" } },
      { type: "text", text: "What is this?" },
    ]);
    expect(sentBody(sim, 0).tool_choice).toBeUndefined();
  });

  test("finish reasons, the stop sequence a provider names, cached tokens and a refusal, as Anthropic's fields", async () => {
    const { gw, sim } = ctx;
    const { key } = gw.newKey({ credits: 100_000 });
    const chat = (choice: Record<string, unknown>, usage: Record<string, unknown>) => ({
      raw: {
        body: JSON.stringify({
          id: "chatcmpl-raw",
          object: "chat.completion",
          created: 1,
          model: "model-a",
          choices: [{ index: 0, logprobs: null, ...choice }],
          usage,
        }),
      },
    });
    const usage = { prompt_tokens: 100, completion_tokens: 7, total_tokens: 107, prompt_tokens_details: { cached_tokens: 40 } };
    sim.reset();
    sim.program([
      chat({ message: { role: "assistant", content: "cut sh" }, finish_reason: "length" }, usage),
      chat({ message: { role: "assistant", content: "up to here" }, finish_reason: "stop", stop_reason: "END" }, usage),
      chat(
        { message: { role: "assistant", content: null, refusal: "I can't help with that." }, finish_reason: "content_filter" },
        usage,
      ),
      chat(
        {
          message: {
            role: "assistant",
            content: null,
            tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: "[1,2]" } }],
          },
          finish_reason: "tool_calls",
        },
        usage,
      ),
    ]);
    const ask = (text: string) =>
      client(key).messages.create({
        model: "model-a",
        max_tokens: 5,
        stop_sequences: ["END"],
        tools: [WEATHER],
        messages: [{ role: "user", content: text }],
      });
    const length = await ask("one");
    expect([length.stop_reason, length.stop_sequence]).toEqual(["max_tokens", null]);
    expect(length.usage).toMatchObject({
      input_tokens: 60,
      cache_read_input_tokens: 40,
      cache_creation_input_tokens: 0,
      output_tokens: 7,
    });
    const stopped = await ask("two");
    expect([stopped.stop_reason, stopped.stop_sequence]).toEqual(["stop_sequence", "END"]);
    const refused = await ask("three");
    expect(refused.stop_reason).toBe("refusal");
    expect(refused.content as unknown).toEqual([{ type: "text", text: "I can't help with that.", citations: null }]);
    const odd = await ask("four");
    expect(odd.stop_reason).toBe("tool_use");
    expect(odd.content).toMatchObject([{ type: "tool_use", id: "call_1", name: "get_weather", input: { arguments: [1, 2] } }]);
  });

  test("countTokens: the hold's input bound, no provider called, nothing charged; an image counts its tokens", async () => {
    const { gw, sim } = ctx;
    const { key, accountId } = gw.newKey({ credits: 1000 });
    sim.reset();
    const anthropic = client(key);
    const text = await anthropic.messages.countTokens({ model: "model-a", messages: [{ role: "user", content: "Hello there" }] });
    const longer = await anthropic.messages.countTokens({
      model: "model-a",
      system: "You answer questions about the weather in a few words.",
      messages: [{ role: "user", content: "Hello there" }],
      tools: [WEATHER],
    });
    const image = await anthropic.messages.countTokens({
      model: "model-a",
      messages: [
        {
          role: "user",
          content: [
            { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
            { type: "text", text: "Hello there" },
          ],
        },
      ],
    });
    expect(text.input_tokens).toBeGreaterThan(0);
    expect(longer.input_tokens).toBeGreaterThan(text.input_tokens + 50);
    expect(image.input_tokens).toBeGreaterThan(text.input_tokens + 100);
    expect(sim.calls.count).toBe(0);
    expect(gw.deps.ledger.balance(accountId)).toBe(1000);
    // never below what the provider bills the same prompt
    const call = await anthropic.messages.create({
      model: "model-a",
      max_tokens: 20,
      messages: [{ role: "user", content: "Hello there" }],
    });
    expect(text.input_tokens).toBeGreaterThanOrEqual(call.usage.input_tokens);
    const bad = await anthropic.messages.countTokens({ model: "model-a", messages: [] }).catch((e) => e);
    expect(bad).toBeInstanceOf(Anthropic.BadRequestError);
  });
});

describe("/v1/messages errors in Anthropic's shape", () => {
  test("401: a wrong key is authentication_error with request-id; no key either", async () => {
    const err = await client("tai_live_not-a-key-at-all-0000000000000000000000")
      .messages.create({ model: "model-a", max_tokens: 10, messages: [{ role: "user", content: "x" }] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(err.error).toEqual({ type: "error", error: { type: "authentication_error", message: "the API key is not valid" } });
    expect(err.headers.get("request-id")).toStartWith("req_");
    const none = await fetch(`${ctx.gw.url}/v1/messages/count_tokens`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(none.status).toBe(401);
    expect(((await none.json()) as { error: { type: string } }).error.type).toBe("authentication_error");
  });

  test("400: max_tokens missing, top_k and an unknown field refused by name, unsent and free", async () => {
    const { gw, sim } = ctx;
    const { key, accountId } = gw.newKey({ credits: 1000 });
    sim.reset();
    const anthropic = client(key);
    const asks: [Record<string, unknown>, string][] = [
      [{ model: "model-a", messages: [{ role: "user", content: "x" }] }, "max_tokens: is required"],
      [{ model: "model-a", max_tokens: 10, top_k: 5, messages: [{ role: "user", content: "x" }] }, "top_k"],
      [{ model: "model-a", max_tokens: 10, temperature: 1.5, messages: [{ role: "user", content: "x" }] }, "temperature"],
      [
        {
          model: "model-a",
          max_tokens: 10,
          thinking: { type: "enabled", budget_tokens: 1024 },
          messages: [{ role: "user", content: "x" }],
        },
        "thinking",
      ],
      [{ model: "model-a", max_tokens: 10, messages: [{ role: "system", content: "x" }] }, "messages[0].role"],
      [
        {
          model: "model-a",
          max_tokens: 10,
          stop_sequences: ["a", "b", "c", "d", "e"],
          messages: [{ role: "user", content: "x" }],
        },
        "stop_sequences",
      ],
      [
        {
          model: "model-a",
          max_tokens: 10,
          tools: [{ type: "web_search_20250305", name: "web_search" }],
          messages: [{ role: "user", content: "x" }],
        },
        "tools[0].type",
      ],
    ];
    for (const [body, names] of asks) {
      const err = await anthropic.messages.create(body as never).catch((e) => e);
      expect(err, JSON.stringify(body)).toBeInstanceOf(Anthropic.BadRequestError);
      expect(err.error.type).toBe("error");
      expect(err.error.error.type).toBe("invalid_request_error");
      expect(err.error.error.message).toContain(names);
    }
    expect(sim.calls.count).toBe(0);
    expect(gw.deps.ledger.balance(accountId)).toBe(1000);
  });

  test("404 not_found_error for a model no provider serves; 403 permission_error for a key without messages", async () => {
    const { gw } = ctx;
    const { key } = gw.newKey({ credits: 1000 });
    const missing = await client(key)
      .messages.create({ model: "no-such-model", max_tokens: 10, messages: [{ role: "user", content: "x" }] })
      .catch((e) => e);
    expect(missing).toBeInstanceOf(Anthropic.NotFoundError);
    expect(missing.error.error.type).toBe("not_found_error");
    const acc = await gw.post("/admin/v1/accounts", { credits: 100 }, ADMIN);
    const made = await gw.post(
      "/admin/v1/keys",
      { label: "chat only", account_id: acc.json.data.result.id, policy: { allowed_functions: ["chat-completions"] } },
      ADMIN,
    );
    expect(made.status, JSON.stringify(made.json)).toBe(201);
    const denied = await client(made.json.data.result.key)
      .messages.create({ model: "model-a", max_tokens: 10, messages: [{ role: "user", content: "x" }] })
      .catch((e) => e);
    expect(denied).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect(denied.error.error).toEqual({ type: "permission_error", message: expect.stringContaining("messages") });
  });

  test("429 rate_limit_error with retry-after on the messages bucket; a provider's 429 is retried by the SDK after its retry-after, charged once", async () => {
    const { gw, sim } = ctx;
    const slow = gw.newKey({ credits: 100_000, plan: "slow" });
    const ask = (key: string, maxRetries = 0) =>
      client(key, { maxRetries }).messages.create({
        model: "model-a",
        max_tokens: 10,
        messages: [{ role: "user", content: "x" }],
      });
    await ask(slow.key);
    await ask(slow.key);
    const limited = await ask(slow.key).catch((e) => e);
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
    expect(limited.error.error.type).toBe("rate_limit_error");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    // the upstream's own 429: every provider limited, the gateway's 429 says when; the SDK waits and retries
    const { key, accountId } = gw.newKey({ credits: 100_000 });
    sim.reset();
    sim.program([{ status: 429, retryAfter: 1 }]);
    const started = Date.now();
    const answer = await ask(key, 1);
    expect(answer.type).toBe("message");
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(sim.calls.count).toBe(2);
    const rows = await until(
      () => charges(gw, accountId),
      (r) => r.length > 0,
    );
    expect(rows.length).toBe(1);
  });

  test("a provider's own 400 keeps its status, in Anthropic's shape", async () => {
    const { gw, sim } = ctx;
    const { key, accountId } = gw.newKey({ credits: 1000 });
    sim.reset();
    sim.program([
      { status: 400, message: "messages: this conversation is too long for the model", errorType: "invalid_request_error" },
    ]);
    const err = await client(key)
      .messages.create({ model: "model-a", max_tokens: 10, messages: [{ role: "user", content: "x" }] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(err.error).toEqual({
      type: "error",
      // the provider's own words only with pass_upstream_messages (docs/openai-compatible.md), as on /v1
      error: { type: "invalid_request_error", message: 'provider "sim" rejected the request (400)' },
    });
    expect(err.headers.get("request-id")).toStartWith("req_");
    expect(gw.deps.ledger.balance(accountId)).toBe(1000);
  });

  test("5xx: a provider's failure is api_error; a stream cut after its first byte ends with an error event", async () => {
    const { gw, sim } = ctx;
    const { key, accountId } = gw.newKey({ credits: 100_000 });
    sim.reset();
    sim.program([{ status: 500, times: 3 }]);
    const err = await client(key)
      .messages.create({ model: "model-a", max_tokens: 10, messages: [{ role: "user", content: "x" }] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.InternalServerError);
    expect(err.error.error.type).toBe("api_error");
    sim.reset();
    sim.program([{ streamCut: true, content: "a long answer that will be cut before it ends, word after word after word" }]);
    const cut = await client(key)
      .messages.stream({ model: "model-a", max_tokens: 100, messages: [{ role: "user", content: "x" }] })
      .finalMessage()
      .catch((e) => e);
    expect(cut).toBeInstanceOf(Anthropic.APIError);
    expect(cut.error?.error?.type ?? cut.error?.type).toBe("api_error");
    expect(charges(gw, accountId)).toEqual([]);
  });

  test("a provider's error inside its stream ends it with Anthropic's type for what it said, never a broken connection", async () => {
    const { gw, sim } = ctx;
    const { key, accountId } = gw.newKey({ credits: 100_000 });
    const chunk = {
      id: "chatcmpl-1",
      object: "chat.completion.chunk",
      created: 1,
      model: "model-a",
      choices: [{ index: 0, delta: { role: "assistant", content: "Hel" }, finish_reason: null }],
    };
    const failing = (error: Record<string, unknown>) => ({
      raw: { contentType: "text/event-stream", body: `data: ${JSON.stringify(chunk)}\n\ndata: ${JSON.stringify({ error })}\n\n` },
    });
    sim.reset();
    sim.program([
      failing({ message: "Rate limit reached for tokens", type: "tokens", param: null, code: "rate_limit_exceeded" }),
      failing({ message: "The server had an error", type: "server_error", param: null, code: null }),
    ]);
    const ask = () =>
      client(key)
        .messages.stream({ model: "model-a", max_tokens: 100, messages: [{ role: "user", content: "x" }] })
        .finalMessage()
        .catch((e) => e);
    const limited = await ask();
    expect(limited).toBeInstanceOf(Anthropic.APIError);
    expect(limited.type).toBe("rate_limit_error");
    // sim's messages are withheld (an openai-compatible provider's): its type and code still say what it was
    expect(limited.error.error.message).toBe(
      'upstream stream failed (upstream_error tokens): provider "sim" sent an error event (tokens rate_limit_exceeded)',
    );
    const failed = await ask();
    expect(failed.type).toBe("api_error");
    expect(failed.error.error.message).toContain("(upstream_error server_error)");
    expect(failed.error.error.message).not.toContain("connection");
    expect(charges(gw, accountId)).toEqual([]);
  });
});

describe("/v1/messages under the guardrails (a plan that redacts emails and restores them)", () => {
  const request = (content: string): Anthropic.MessageCreateParamsNonStreaming => ({
    model: "model-a",
    max_tokens: 100,
    system: [{ type: "text", text: `The customer is ${EMAIL}.` }],
    messages: [
      { role: "user", content: [{ type: "text", text: `Write to ${EMAIL}` }] },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "lookup", input: { email: EMAIL } }] },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: `found ${EMAIL}` },
          { type: "text", text: content },
        ],
      },
    ],
    tools: [{ name: "lookup", input_schema: { type: "object", properties: { email: { type: "string" } } } }],
    tool_choice: { type: "none" },
  });

  test("guardrails on: the provider sees placeholders in every block; the answer and the streamed deltas are restored", async () => {
    const { gw, sim } = ctx;
    const { key } = gw.newKey({ credits: 100_000, plan: "guarded" });
    sim.reset();
    sim.program([{ content: "Sent to [EMAIL_1] just now." }, { content: "Sent to [EMAIL_1] just now.", chunkChars: 3 }]);
    const anthropic = client(key);
    const plain = await anthropic.messages.create(request("Go"));
    expect(plain.content as unknown).toEqual([{ type: "text", text: `Sent to ${EMAIL} just now.`, citations: null }]);
    const streamed = await anthropic.messages.stream({ ...request("Go on"), stream: true }).finalMessage();
    expect(streamed.content as unknown).toEqual([{ type: "text", text: `Sent to ${EMAIL} just now.`, citations: null }]);
    const sent = JSON.stringify(sim.calls.requests.map((r) => r.body));
    expect(sent).not.toContain(EMAIL);
    expect(sent).toContain("[EMAIL_1]");
  });

  test("guardrails off: the same request reaches the provider as written", async () => {
    const { gw, sim } = ctx;
    const { key } = gw.newKey({ credits: 100_000 });
    sim.reset();
    sim.program([{ content: "Sent to [EMAIL_1] just now." }]);
    const plain = await client(key).messages.create(request("Go"));
    expect(plain.content as unknown).toEqual([{ type: "text", text: "Sent to [EMAIL_1] just now.", citations: null }]);
    // a turn's tool results go first, as tool messages right after the calls, then its text
    expect((sentBody(sim, 0).messages as { role: string; content: unknown }[]).map((m) => [m.role, m.content])).toEqual([
      ["system", `The customer is ${EMAIL}.`],
      ["user", `Write to ${EMAIL}`],
      ["assistant", null],
      ["tool", `found ${EMAIL}`],
      ["user", "Go"],
    ]);
    expect(sentBody(sim, 0).tool_choice).toBe("none");
  });
});
