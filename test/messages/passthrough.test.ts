/**
 * `/v1/messages` to an `anthropic` provider: the client's request passed through as sent (only
 * `model` the target's), the answer and the events back as Anthropic sent them, driven by
 * Anthropic's official SDK against the real gateway over the Anthropic simulator
 * (test/helpers/anthropic-upstream.ts); a model group that falls back from it to an OpenAI-shaped
 * provider (translated); pricing from Anthropic's usage, its prompt-cache fields included; the
 * guardrails' redaction and restore on Anthropic's own blocks and deltas.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { type AnthropicUpstream, startAnthropicUpstream } from "../helpers/anthropic-upstream";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { type RecordedCall, simProvider, startUpstream, type Upstream } from "../helpers/upstream";
import { PNG, until, WEATHER } from "./fixtures";

const EMAIL = "ann.lee@example.com";
type ApiError = InstanceType<typeof Anthropic.APIError>;
const ctx = {} as { gw: TestGateway; claude: AnthropicUpstream; sim: Upstream };

beforeAll(async () => {
  ctx.claude = await startAnthropicUpstream();
  ctx.sim = await startUpstream();
  ctx.gw = await startGateway({
    functions: [],
    configText: `
[pricing.models]
"claude-*" = { input = 1000, output = 2000, cached_input = 100, cache_write = 1250 }
"model-a" = { input = 1000, output = 2000 }

[[providers]]
name = "claude"
type = "anthropic"
base_url = "${ctx.claude.url}"
api_key = "sk-ant-test"
default_model = "claude-sim-1"

${simProvider({ url: `${ctx.sim.url}/v1`, name: "sim", model: "model-a" })}

[[models]]
name = "mixed"

[[models.deployments]]
provider = "claude"
model = "claude-fb-1"

[[models.deployments]]
provider = "sim"
model = "model-a"

[plans.guarded.guardrails]
redact_pii = ["email"]
restore_pii = true
`,
  });
});

afterAll(async () => {
  await ctx.gw.close();
  await ctx.claude.close();
  await ctx.sim.close();
});

/** An SDK client whose request bodies are kept, as the bytes it sent. */
function client(apiKey: string) {
  const sent: string[] = [];
  const anthropic = new Anthropic({
    apiKey,
    baseURL: ctx.gw.url,
    maxRetries: 0,
    fetch: (async (url: string | URL | Request, init?: RequestInit) => {
      if (typeof init?.body === "string") sent.push(init.body);
      return fetch(url, init);
    }) as typeof fetch,
  });
  return { anthropic, sent };
}

function charges(accountId: string): number[] {
  const db = new Database(ctx.gw.dbPath, { readonly: true });
  try {
    return db
      .query<{ amount: number }, [string]>("SELECT amount FROM ledger WHERE account_id = ? AND kind = 'charge' ORDER BY id")
      .all(accountId)
      .map((r) => -r.amount);
  } finally {
    db.close();
  }
}

/** The credits of an Anthropic usage at claude-*'s prices (per 1,000 tokens), rounded up. */
function priced(u: Anthropic.Usage): number {
  const read = u.cache_read_input_tokens ?? 0;
  const write = u.cache_creation_input_tokens ?? 0;
  return Math.ceil((u.input_tokens * 1000 + read * 100 + write * 1250 + u.output_tokens * 2000) / 1000);
}

describe("/v1/messages passed through to an anthropic provider", () => {
  test("create: the simulator gets the client's bytes, the client gets the simulator's message, charged on its usage", async () => {
    const { gw, claude } = ctx;
    const { key, accountId } = gw.newKey({ credits: 100_000 });
    claude.reset();
    const { anthropic, sent } = client(key);
    const { data, response } = await anthropic.messages
      .create({
        model: "claude-sim-1",
        max_tokens: 300,
        system: [{ type: "text", text: "Be brief." }],
        messages: [{ role: "user", content: [{ type: "text", text: "Say hello" }] }],
        metadata: { user_id: "user-42" },
      })
      .withResponse();
    expect(claude.calls.requests.map((r) => r.raw)).toEqual(sent);
    // the simulator's own message: its id, its usage fields, service_tier included
    expect(data.id).toStartWith("msg_sim");
    expect((data.usage as unknown as Record<string, unknown>).service_tier).toBe("standard");
    expect(data.model).toBe("claude-sim-1");
    expect(response.headers.get("x-textai-provider")).toBe("claude");
    expect(response.headers.get("request-id")).toStartWith("req_");
    expect(
      await until(
        () => charges(accountId),
        (c) => c.length === 1,
      ),
    ).toEqual([priced(data.usage)]);
  });

  test("a body of many blocks no translation carries (70 documents) goes as sent: the gateway leaves them out of its chat form in one step", async () => {
    const { gw, claude } = ctx;
    const { key } = gw.newKey({ credits: 100_000 });
    claude.reset();
    const { anthropic, sent } = client(key);
    const documents = Array.from({ length: 70 }, (_, i) => ({
      type: "document" as const,
      source: { type: "text" as const, media_type: "text/plain" as const, data: `Note ${i}: the meeting moved.` },
    }));
    const answer = await anthropic.messages.create({
      model: "claude-sim-1",
      max_tokens: 50,
      messages: [{ role: "user", content: [...documents, { type: "text", text: "Summarise the notes." }] }],
    });
    expect(answer.id).toStartWith("msg_sim");
    expect(claude.calls.requests.map((r) => r.raw)).toEqual(sent);
  });

  test("the model of a group's deployment replaces the client's; every other byte as sent", async () => {
    const { gw, claude } = ctx;
    const { key } = gw.newKey({ credits: 100_000 });
    claude.reset();
    const { anthropic, sent } = client(key);
    await anthropic.messages.create({ model: "mixed", max_tokens: 50, messages: [{ role: "user", content: "Hi" }] });
    const raw = claude.calls.requests[0]?.raw ?? "";
    expect(JSON.parse(raw)).toEqual({ ...JSON.parse(sent[0] ?? "{}"), model: "claude-fb-1" });
    expect(Object.keys(JSON.parse(raw))).toEqual(Object.keys(JSON.parse(sent[0] ?? "{}")));
  });

  test("stream() and finalMessage(): Anthropic's events as sent, usage merged from message_start and message_delta, charged once", async () => {
    const { gw, claude } = ctx;
    const { key, accountId } = gw.newKey({ credits: 100_000 });
    claude.reset();
    const { anthropic, sent } = client(key);
    const stream = anthropic.messages.stream({
      model: "claude-sim-1",
      max_tokens: 300,
      messages: [{ role: "user", content: "Tell me a story about a lighthouse keeper" }],
    });
    const types: string[] = [];
    stream.on("streamEvent", (e) => types.push(e.type));
    const final = await stream.finalMessage();
    expect(claude.calls.requests.map((r) => r.raw)).toEqual(sent);
    expect(final.id).toStartWith("msg_sim");
    expect(types[0]).toBe("message_start");
    expect(types.at(-1)).toBe("message_stop");
    const input = final.usage.input_tokens;
    expect(input).toBeGreaterThan(0);
    expect(final.usage.output_tokens).toBeGreaterThan(1);
    expect(
      await until(
        () => charges(accountId),
        (c) => c.length === 1,
      ),
    ).toEqual([priced(final.usage)]);
  });

  test("a stream Anthropic cuts with an error event ends with that event as it sent it (overloaded_error, its message), not charged", async () => {
    const { gw, claude } = ctx;
    const { key, accountId } = gw.newKey({ credits: 100_000 });
    claude.reset();
    claude.program([{ streamError: true }]);
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key, "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "claude-sim-1", max_tokens: 50, stream: true, messages: [{ role: "user", content: "Hi" }] }),
    });
    const text = await res.text();
    const events = [...text.matchAll(/^event: (\S+)$/gm)].map((m) => m[1]);
    expect(events[0]).toBe("message_start");
    expect(events.filter((e) => e === "error")).toEqual(["error"]);
    expect(events.at(-1)).toBe("error");
    // the simulator's own message_start, passed through, and its own error event
    expect(text).toContain('"id":"msg_sim');
    expect(text.trimEnd().split("\n").at(-1)).toBe(
      'data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
    );
    await Bun.sleep(50);
    expect(charges(accountId)).toEqual([]);
    // what the gateway records names an upstream error, never a broken connection
    const id = res.headers.get("request-id") ?? "none";
    const line = gw.logs.find((l) => l.includes("stream ended early") && l.includes(id));
    expect(line).toContain('"error":"upstream_error"');
    // the SDK tells an overload (retryable) from other errors by the event's type
    claude.program([{ streamError: true }]);
    const err = await client(key)
      .anthropic.messages.stream({ model: "claude-sim-1", max_tokens: 50, messages: [{ role: "user", content: "Hi" }] })
      .finalMessage()
      .catch((e: unknown) => e as ApiError);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect((err as ApiError).type).toBe("overloaded_error");
    expect((err as ApiError).error).toEqual({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } });
  });

  test("a /v1/chat/completions stream an anthropic provider cuts with an error event ends with its type and message, in OpenAI's shape", async () => {
    const { gw, claude } = ctx;
    const { key } = gw.newKey({ credits: 100_000 });
    claude.reset();
    claude.program([{ streamError: true }]);
    const openai = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const err = await (async () => {
      const stream = await openai.chat.completions.create({
        model: "claude-sim-1",
        stream: true,
        messages: [{ role: "user", content: "Hi" }],
      });
      for await (const _ of stream) {
        // read to the end
      }
    })().catch((e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    const e = err as InstanceType<typeof OpenAI.APIError>;
    expect(e.type).toBe("overloaded_error");
    expect(e.code).toBe("provider_error");
    expect(e.message).toBe("upstream stream failed (upstream_error overloaded_error): Overloaded");
  });

  test("a tool round trip: the simulator's tool_use back as sent, the tool_result forwarded as written", async () => {
    const { gw, claude } = ctx;
    const { key } = gw.newKey({ credits: 100_000 });
    claude.reset();
    const { anthropic, sent } = client(key);
    const question: Anthropic.MessageParam = { role: "user", content: "Weather in Paris?" };
    const first = await anthropic.messages.create({
      model: "claude-sim-1",
      max_tokens: 200,
      tools: [WEATHER],
      tool_choice: { type: "tool", name: "get_weather", disable_parallel_tool_use: true },
      messages: [question],
    });
    const use = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === "tool_use");
    expect(use?.id).toStartWith("toolu_sim");
    expect(first.stop_reason).toBe("tool_use");
    const second = await anthropic.messages.create({
      model: "claude-sim-1",
      max_tokens: 200,
      tools: [WEATHER],
      messages: [
        question,
        { role: "assistant", content: first.content },
        {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: use?.id ?? "", content: [{ type: "text", text: "Sunny, 21C" }] }],
        },
      ],
    });
    expect(second.content[0]?.type).toBe("text");
    expect(claude.calls.requests.map((r) => r.raw)).toEqual(sent);
  });

  test("an image block goes as the client wrote it", async () => {
    const { gw, claude } = ctx;
    const { key } = gw.newKey({ credits: 100_000 });
    claude.reset();
    const { anthropic, sent } = client(key);
    const data = await anthropic.messages.create({
      model: "claude-sim-1",
      max_tokens: 100,
      messages: [
        {
          role: "user",
          content: [
            { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
            { type: "text", text: "What is this?" },
          ],
        },
      ],
    });
    expect(data.id).toStartWith("msg_sim");
    expect(claude.calls.requests.map((r) => r.raw)).toEqual(sent);
  });

  // (a route with no anthropic provider refuses them by name: sdk-anthropic.test.ts)
  test("fields no translation carries (top_k, thinking) go as sent to an anthropic provider; a provider that would translate is skipped", async () => {
    const { gw, claude, sim } = ctx;
    const { key, accountId } = gw.newKey({ credits: 100_000 });
    claude.reset();
    sim.reset();
    const { anthropic, sent } = client(key);
    const body = {
      model: "claude-sim-1",
      max_tokens: 2000,
      top_k: 5,
      thinking: { type: "enabled" as const, budget_tokens: 1024 },
      messages: [{ role: "user" as const, content: "Think, then answer: why is the sky blue?" }],
    };
    const data = await anthropic.messages.create(body);
    expect(data.content[0]?.type).toBe("thinking");
    expect(claude.calls.requests.map((r) => r.raw)).toEqual(sent);
    // model-a's route: the OpenAI-shaped provider first (skipped: it would lose top_k), then claude
    const { response } = await anthropic.messages.create({ ...body, model: "model-a" }).withResponse();
    expect(response.headers.get("x-textai-provider")).toBe("claude");
    expect(sim.calls.count).toBe(0);
    const costs = await until(
      () => charges(accountId),
      (c) => c.length === 2,
    );
    expect(costs[0]).toBe(priced(data.usage));
  });

  test("countTokens: Anthropic's own count when the route's first provider is anthropic, free", async () => {
    const { gw, claude } = ctx;
    const { key, accountId } = gw.newKey({ credits: 100_000 });
    const body: Anthropic.MessageCountTokensParams = {
      model: "claude-sim-1",
      system: "You are a careful assistant who answers in full sentences.",
      messages: [{ role: "user", content: "How many tokens is this question, counted by the provider itself?" }],
    };
    const direct = await new Anthropic({ apiKey: "sk-ant-test", baseURL: claude.url, maxRetries: 0 }).messages.countTokens(body);
    const viaGateway = await client(key).anthropic.messages.countTokens(body);
    expect(viaGateway.input_tokens).toBe(direct.input_tokens);
    // an OpenAI-shaped first provider: the gateway's own bound, which is larger
    const bound = await client(key).anthropic.messages.countTokens({ ...body, model: "model-a" });
    expect(bound.input_tokens).toBeGreaterThan(direct.input_tokens);
    await Bun.sleep(50);
    expect(charges(accountId)).toEqual([]);
  });

  // 2026-12-06, a walkthrough: the client's anthropic-beta header never reached the provider, so a
  // body "as sent" that needs a beta feature was refused or done without it upstream
  test("the client's anthropic-beta header goes with the body to an anthropic provider (create, stream, count), never to a translation", async () => {
    const { gw, claude, sim } = ctx;
    const { key } = gw.newKey({ credits: 100_000 });
    claude.reset();
    sim.reset();
    const { anthropic } = client(key);
    const betas = ["interleaved-thinking-2025-05-14", "mcp-client-2025-04-04"];
    const body = { model: "claude-sim-1", max_tokens: 200, messages: [{ role: "user" as const, content: "Beta please" }] };
    await anthropic.beta.messages.create({ ...body, betas });
    await anthropic.beta.messages.stream({ ...body, betas }).finalMessage();
    await anthropic.beta.messages.countTokens({ model: body.model, messages: body.messages, betas });
    const seen = [...claude.calls.requests.map((r) => r.headers["anthropic-beta"])];
    expect(seen).toEqual([betas.join(","), betas.join(",")]);
    // (the SDK adds its own token-counting beta to a count)
    expect(claude.calls.countHeaders.map((h) => h["anthropic-beta"]?.startsWith(betas.join(",")))).toEqual([true]);
    // the same body with other betas is another call, not the first one's cached answer
    const other = await anthropic.beta.messages.create({ ...body, betas: ["files-api-2025-04-14"] });
    expect(other.id).toBeTruthy();
    expect(claude.calls.requests.at(-1)?.headers["anthropic-beta"]).toBe("files-api-2025-04-14");
    // without the header nothing is added
    await anthropic.messages.create({ ...body, messages: [{ role: "user", content: "No beta" }] });
    expect(claude.calls.requests.at(-1)?.headers["anthropic-beta"]).toBeUndefined();
    // a translation (the OpenAI-shaped provider) is never sent it
    await anthropic.beta.messages.create({ ...body, model: "model-a", betas });
    expect(sim.calls.requests.at(-1)?.headers?.["anthropic-beta"]).toBeUndefined();
    // a header that is no list of feature names is refused before any provider, in Anthropic's shape
    const calls = claude.calls.count;
    const bad = await fetch(`${gw.url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json", "anthropic-beta": "a b, c\td" },
      body: JSON.stringify(body),
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toContain("anthropic-beta");
    expect(claude.calls.count).toBe(calls);
  });

  test("a prompt-cached call is priced with its cache write, then its cache read, to the credit", async () => {
    const { gw, claude } = ctx;
    const { key, accountId } = gw.newKey({ credits: 100_000 });
    claude.reset();
    const { anthropic, sent } = client(key);
    const long = `You are a librarian. ${"Catalogue every book by its author, title and year. ".repeat(40)}`;
    const ask = (q: string) =>
      anthropic.messages.create({
        model: "claude-sim-1",
        max_tokens: 100,
        system: [{ type: "text", text: long, cache_control: { type: "ephemeral" } }],
        messages: [{ role: "user", content: q }],
      });
    const written = await ask("First question about the catalogue?");
    const read = await ask("A second question, about the same catalogue?");
    expect(written.usage.cache_creation_input_tokens).toBeGreaterThan(100);
    expect(read.usage.cache_read_input_tokens).toBe(written.usage.cache_creation_input_tokens);
    expect(claude.calls.requests.map((r) => r.raw)).toEqual(sent);
    expect(
      await until(
        () => charges(accountId),
        (c) => c.length === 2,
      ),
    ).toEqual([priced(written.usage), priced(read.usage)]);
  });
});

describe("/v1/messages pass-through errors and fallback", () => {
  const ask = { model: "claude-sim-1", max_tokens: 50, messages: [{ role: "user" as const, content: "Hi" }] };

  test("fallback: anthropic overloaded (529), then the OpenAI-shaped deployment answers translated; charged once", async () => {
    const { gw, claude, sim } = ctx;
    const { key, accountId } = gw.newKey({ credits: 100_000 });
    claude.reset();
    sim.reset();
    claude.program([{ status: 529 }]);
    sim.program([{ content: "Answered by the backup." }]);
    const { anthropic, sent } = client(key);
    const { data, response } = await anthropic.messages.create({ ...ask, model: "mixed" }).withResponse();
    expect(response.headers.get("x-textai-provider")).toBe("sim");
    expect(data.content as unknown).toEqual([{ type: "text", text: "Answered by the backup.", citations: null }]);
    expect(data.id).toStartWith("msg_");
    expect(data.id).not.toStartWith("msg_sim");
    // each attempt in its own form: Anthropic's body to the anthropic one, a chat body to the other
    expect(JSON.parse(claude.calls.requests[0]?.raw ?? "{}")).toEqual({ ...JSON.parse(sent[0] ?? "{}"), model: "claude-fb-1" });
    expect(sim.calls.requests[0]?.body.messages).toEqual([{ role: "user", content: "Hi" }]);
    expect(
      await until(
        () => charges(accountId),
        (c) => c.length === 1,
      ),
    ).toHaveLength(1);
  });

  test("a streamed fallback: the anthropic deployment fails, the translated events follow in Anthropic's order", async () => {
    const { gw, claude, sim } = ctx;
    const { key, accountId } = gw.newKey({ credits: 100_000 });
    claude.reset();
    sim.reset();
    claude.program([{ status: 529 }]);
    sim.program([{ content: "Streamed by the backup." }]);
    const { anthropic, sent } = client(key);
    const final = await anthropic.messages.stream({ ...ask, model: "mixed" }).finalMessage();
    expect(final.content as unknown).toEqual([{ type: "text", text: "Streamed by the backup.", citations: null }]);
    expect(JSON.parse(claude.calls.requests[0]?.raw ?? "{}")).toEqual({ ...JSON.parse(sent[0] ?? "{}"), model: "claude-fb-1" });
    expect(sim.calls.requests[0]?.body.stream).toBe(true);
    expect(
      await until(
        () => charges(accountId),
        (c) => c.length === 1,
      ),
    ).toHaveLength(1);
  });
});

describe("/v1/messages pass-through under the guardrails", () => {
  const request = (text: string): Anthropic.MessageCreateParamsNonStreaming => ({
    model: "claude-sim-1",
    max_tokens: 100,
    system: [{ type: "text", text: `The customer is ${EMAIL}.` }],
    messages: [{ role: "user", content: [{ type: "text", text }] }],
  });

  test("on: the simulator never sees the email; the answer and the stream (a placeholder cut across deltas) restored", async () => {
    const { gw, claude } = ctx;
    const { key } = gw.newKey({ credits: 100_000, plan: "guarded" });
    claude.reset();
    claude.program([{ content: "Sent to [EMAIL_1] just now." }, { content: "Sent to [EMAIL_1] just now.", chunkChars: 3 }]);
    const { anthropic } = client(key);
    const plain = await anthropic.messages.create(request(`Write to ${EMAIL}`));
    expect(plain.id).toStartWith("msg_sim");
    expect(plain.content[0]).toMatchObject({ type: "text", text: `Sent to ${EMAIL} just now.` });
    const stream = anthropic.messages.stream({ ...request(`Write to ${EMAIL} again`), stream: true });
    const deltas: string[] = [];
    stream.on("text", (t) => deltas.push(t));
    const final = await stream.finalMessage();
    expect(final.id).toStartWith("msg_sim");
    expect(final.content[0]).toMatchObject({ type: "text", text: `Sent to ${EMAIL} just now.` });
    expect(deltas.join("")).toBe(`Sent to ${EMAIL} just now.`);
    expect(deltas.some((d) => d.includes("[") || d.includes("]"))).toBe(false);
    const raws = claude.calls.requests.map((r) => r.raw);
    expect(raws).toHaveLength(2);
    for (const raw of raws) {
      expect(raw).not.toContain(EMAIL);
      expect(raw).toContain("[EMAIL_1]");
      // Anthropic's body, not a translation of it
      expect(JSON.parse(raw).system).toEqual([{ type: "text", text: "The customer is [EMAIL_1]." }]);
    }
  });

  test("on: an email as metadata.user_id (an id the client makes up) reaches the simulator as a placeholder", async () => {
    const { gw, claude } = ctx;
    const { key } = gw.newKey({ credits: 100_000, plan: "guarded" });
    claude.reset();
    const { anthropic } = client(key);
    await anthropic.messages.create({ ...request("Hello"), metadata: { user_id: EMAIL } });
    const raw = claude.calls.requests[0]?.raw ?? "";
    expect(raw).not.toContain(EMAIL);
    expect(JSON.parse(raw).metadata).toEqual({ user_id: "[EMAIL_1]" });
  });

  test("on: a tool_use input holding a placeholder is restored, in the message and across streamed input_json_delta pieces", async () => {
    const { gw, claude } = ctx;
    const { key } = gw.newKey({ credits: 100_000, plan: "guarded" });
    claude.reset();
    // the simulator fills a `const` as given: the model writes the placeholder it was sent
    const tool: Anthropic.Tool = {
      name: "send_mail",
      input_schema: { type: "object", properties: { to: { type: "string", const: "[EMAIL_1]" } }, required: ["to"] },
    };
    const body: Anthropic.MessageCreateParamsNonStreaming = {
      model: "claude-sim-1",
      max_tokens: 100,
      tools: [tool],
      tool_choice: { type: "tool", name: "send_mail" },
      messages: [{ role: "user", content: `Mail ${EMAIL} the report` }],
    };
    const { anthropic } = client(key);
    const plain = await anthropic.messages.create(body);
    expect(plain.id).toStartWith("msg_sim");
    expect(plain.content.find((b) => b.type === "tool_use")).toMatchObject({ input: { to: EMAIL } });
    const pieces: string[] = [];
    const stream = anthropic.messages.stream(body);
    stream.on("inputJson", (piece) => pieces.push(piece));
    const final = await stream.finalMessage();
    expect(final.id).toStartWith("msg_sim");
    expect(final.content.find((b) => b.type === "tool_use")).toMatchObject({ input: { to: EMAIL } });
    expect(pieces.join("")).toBe(JSON.stringify({ to: EMAIL }));
    for (const r of claude.calls.requests) expect(r.raw).not.toContain(EMAIL);
  });

  test("on: a document's plain-text source is text and redacted; an image's base64 source is a payload, sent as it is", async () => {
    const { gw, claude } = ctx;
    const { key } = gw.newKey({ credits: 100_000, plan: "guarded" });
    claude.reset();
    const { anthropic } = client(key);
    await anthropic.messages.create({
      model: "claude-sim-1",
      max_tokens: 100,
      messages: [
        {
          role: "user",
          content: [
            { type: "document", source: { type: "text", media_type: "text/plain", data: `Contact: ${EMAIL}` } },
            { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
            { type: "text", text: "Summarise both." },
          ],
        },
      ],
    });
    expect(claude.calls.requests).toHaveLength(1);
    const sent = claude.calls.requests[0] as RecordedCall;
    expect(sent.raw).not.toContain(EMAIL);
    const [message] = sent.body.messages as { content: { source?: { data: string } }[] }[];
    expect(message?.content.map((b) => b.source?.data)).toEqual(["Contact: [EMAIL_1]", PNG, undefined]);
  });

  test("off: the same request reaches the simulator as written, the placeholder-like text answered as is", async () => {
    const { gw, claude } = ctx;
    const { key } = gw.newKey({ credits: 100_000 });
    claude.reset();
    claude.program([{ content: "Sent to [EMAIL_1] just now." }]);
    const { anthropic, sent } = client(key);
    const plain = await anthropic.messages.create(request(`Write to ${EMAIL}`));
    expect(plain.content[0]).toMatchObject({ type: "text", text: "Sent to [EMAIL_1] just now." });
    expect(claude.calls.requests.map((r) => r.raw)).toEqual(sent);
  });
});

// last: the rate limits cool the providers down for the retry-after
describe("/v1/messages pass-through: a provider's errors", () => {
  const ask = { max_tokens: 50, messages: [{ role: "user" as const, content: "Hi" }] };

  test("a wrong gateway key's 401, a provider's own 400, then 429 with retry-after, in Anthropic's shape; the body went as sent; free", async () => {
    const { gw, claude, sim } = ctx;
    const { key, accountId } = gw.newKey({ credits: 100_000 });
    claude.reset();
    const denied = await client("tk_wrong_key")
      .anthropic.messages.create({ ...ask, model: "claude-err-1" })
      .catch((e: unknown) => e as ApiError);
    expect(denied).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((denied as ApiError).error).toMatchObject({ type: "error", error: { type: "authentication_error" } });
    expect(claude.calls.count).toBe(0);
    sim.reset();
    claude.program([{ status: 400 }, { status: 429, retryAfter: 3 }]);
    // every provider of the route rate-limited (the OpenAI-shaped one is the route's fallback)
    sim.program([{ status: 429, retryAfter: 3 }]);
    const { anthropic, sent } = client(key);
    const call = () => anthropic.messages.create({ ...ask, model: "claude-err-1" }).catch((e: unknown) => e as ApiError);
    const bad = await call();
    expect(bad).toBeInstanceOf(Anthropic.BadRequestError);
    expect((bad as ApiError).error).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    const limited = await call();
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
    expect((limited as ApiError).headers?.get("retry-after")).toBe("3");
    expect((limited as ApiError).error).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });
    expect(claude.calls.requests.map((r) => r.raw)).toEqual(sent);
    await Bun.sleep(50);
    expect(charges(accountId)).toEqual([]);
  });
});
