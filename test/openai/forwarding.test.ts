import { describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { openaiClient, rawPost, sentBody, sseData, useGateway } from "./setup";

const ctx = useGateway({ env: { TEXTAI_ADMIN_TOKEN: "forwarding-admin-0123456789abcdef0123456789" } });

const weather = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Current weather in a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
    strict: true,
  },
};

/** Every documented Chat Completions parameter, plus vendor extensions, in one request. */
const EVERYTHING = {
  model: "model-a",
  messages: [{ role: "user", content: "What is the weather in Paris?" }],
  tools: [weather],
  tool_choice: "auto",
  parallel_tool_calls: false,
  response_format: {
    type: "json_schema",
    json_schema: {
      name: "answer",
      strict: true,
      schema: { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
    },
  },
  n: 1,
  stop: ["\n\n", "END"],
  seed: 1234,
  user: "user-42",
  temperature: 0.3,
  top_p: 0.9,
  presence_penalty: 0.1,
  frequency_penalty: -0.2,
  logit_bias: { "1734": -50 },
  logprobs: true,
  top_logprobs: 2,
  max_tokens: 100,
  max_completion_tokens: 120,
  reasoning_effort: "low",
  metadata: { team: "search" },
  store: false,
  prediction: { type: "content", content: "It is sunny" },
  modalities: ["text"],
  service_tier: "auto",
  // vendor extensions (vLLM, Ollama, OpenRouter, ...)
  top_k: 40,
  repetition_penalty: 1.1,
  chat_template_kwargs: { enable_thinking: false },
  provider: { order: ["x"] },
};

/** Every message role and content part. */
const CONVERSATION = [
  { role: "system", content: "You are terse." },
  { role: "developer", content: [{ type: "text", text: "Answer in English." }] },
  {
    role: "user",
    name: "ann",
    content: [
      { type: "text", text: "Look at these:" },
      { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=", detail: "low" } },
      { type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } },
      { type: "file", file: { filename: "a.pdf", file_data: "data:application/pdf;base64,JVBERi0=" } },
    ],
  },
  {
    role: "assistant",
    content: null,
    tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }],
  },
  { role: "tool", tool_call_id: "call_1", content: "18C and sunny" },
  { role: "assistant", content: null, function_call: { name: "legacy", arguments: "{}" } },
  { role: "function", name: "legacy", content: "legacy result" },
];

describe("requests are forwarded as sent", () => {
  test("every documented parameter and vendor field reaches the provider unchanged; api_key does not", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    const res = await rawPost(gw, "/v1/chat/completions", key, { ...EVERYTHING, api_key: key });
    expect(res.status).toBe(200);
    expect(sim.calls.count).toBe(1);
    const sent = sim.calls.requests[0]?.body ?? {};
    expect(sent).toEqual(EVERYTHING);
    expect(sent.api_key).toBeUndefined();
    const got = (await res.json()) as OpenAI.ChatCompletion;
    const call = got.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === "function" && call.function.name).toBe("get_weather");
  });

  test("every role and content part reaches the provider unchanged", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    const out = await openaiClient(gw, key).chat.completions.create({
      model: "model-a",
      messages: CONVERSATION as OpenAI.ChatCompletionMessageParam[],
    });
    expect(sentBody(sim, 0).messages).toEqual(CONVERSATION);
    // the simulator answers after a tool result with the result's text
    expect(out.choices[0]?.message.content).toBe("Tool said: legacy result");
  });

  test("provider/model picks the provider; the provider sees its own model name", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    const { data, response } = await openaiClient(gw, key)
      .chat.completions.create({ model: "backup/model-b", messages: [{ role: "user", content: "hi" }] })
      .withResponse();
    expect(response.headers.get("x-textai-provider")).toBe("backup");
    expect(sim.calls.requests[0]?.model).toBe("model-b");
    expect(data.model).toBe("model-b");
  });
});

describe("a body the gateway does not change goes out as the client's bytes; a changed one as its new JSON", () => {
  const ADMIN = "forwarding-admin-0123456789abcdef0123456789";
  /** A body the gateway's own JSON.stringify would write differently: spaces, key order, 1.0, 1e2, \u escapes, a newline. */
  const odd = (model: string, extra = "") =>
    `{ "messages" : [ { "role":"user", "content":"caf\\u00e9 \\n \\"quoted\\" \\\\" } ],\n  "temperature": 1.0, "max_tokens": 1e2, "model":"${model}"${extra} }`;
  const post = (key: string, text: string) =>
    fetch(`${ctx.gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}`, "cache-control": "no-cache" },
      body: text,
    });
  const received = () => ctx.sim.calls.requests.at(-1)?.raw ?? "";

  test("unchanged, plain and streamed with include_usage: the upstream receives exactly the bytes sent", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    const plain = odd("model-a");
    const res = await post(key, plain);
    expect(res.status, await res.text()).toBe(200);
    expect(received()).toBe(plain);
    // the gateway itself would have written it otherwise: the test can tell the two apart
    expect(JSON.stringify(JSON.parse(plain))).not.toBe(plain);

    const streamed = odd("model-a", `, "stream": true, "stream_options": {"include_usage": true}`);
    const s = await post(key, streamed);
    expect(s.status).toBe(200);
    expect(await s.text()).toContain("data: [DONE]");
    expect(received()).toBe(streamed);
  });

  test("changed: the model mapped, include_usage added, api_key removed, a duplicate key, guardrails: the new body as JSON", async () => {
    const { sim, gw } = ctx;
    const k = gw.newKey({ credits: 10 });
    sim.reset();
    const cases: [string, (sent: Record<string, unknown>) => void][] = [
      // provider/model: the provider gets its own name
      [odd("primary/model-a"), (b) => expect(b.model).toBe("model-a")],
      // a charged stream asks for its usage chunk
      [odd("model-a", `, "stream": true`), (b) => expect(b.stream_options).toEqual({ include_usage: true })],
      // a key in the body is not forwarded
      [odd("model-a", `, "api_key": "${k.key}"`), (b) => expect(b.api_key).toBeUndefined()],
      // JSON.parse keeps the last of two keys; another parser might keep the first: the gateway's reading goes
      [
        `{"model":"model-b","messages":[{"role":"user","content":"hi"}],"model":"model-a"}`,
        (b) => expect(b.model).toBe("model-a"),
      ],
      [
        `{"model":"model-a","messages":[{"role":"user","content":"hi","content":"there"}]}`,
        (b) => expect(b.messages).toEqual([{ role: "user", content: "there" }]),
      ],
    ];
    for (const [text, check] of cases) {
      const res = await post(k.key, text);
      expect(res.status, await res.text()).toBe(200);
      const raw = received();
      expect(raw).not.toBe(text);
      const sent = JSON.parse(raw) as Record<string, unknown>;
      expect(raw).toBe(JSON.stringify(sent));
      check(sent);
    }

    // guardrails: what is sent is redacted
    const patched = await fetch(`${gw.url}/admin/v1/keys/${k.id}`, {
      method: "PATCH",
      headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN}` },
      body: JSON.stringify({ policy: { guardrails: { redact_pii: ["email"] } } }),
    });
    expect(patched.status, await patched.text()).toBe(200);
    const guarded = `{ "model": "model-a", "messages": [ {"role":"user","content":"write to ann.lee@example.com"} ] }`;
    const res = await post(k.key, guarded);
    expect(res.status, await res.text()).toBe(200);
    expect(received()).not.toContain("ann.lee@example.com");
    const messages = (JSON.parse(received()) as { messages: { content: string }[] }).messages;
    expect(messages[0]?.content).not.toContain("example.com");
  });
});

describe("answers come back as the provider sent them", () => {
  test("tool_calls, finish_reason, logprobs, n choices, usage details, system_fingerprint, id, created, model", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    const c = openaiClient(gw, key);
    const tools = await c.chat.completions.create({
      model: "model-a",
      messages: [{ role: "user", content: "Weather in Rome?" }],
      tools: [weather as OpenAI.ChatCompletionTool],
    });
    const call = tools.choices[0]?.message.tool_calls?.[0];
    expect(call?.type).toBe("function");
    expect(call?.id).toMatch(/^call_sim_/);
    expect(JSON.parse(call?.type === "function" ? call.function.arguments : "{}")).toHaveProperty("city");
    expect(tools.choices[0]?.finish_reason).toBe("tool_calls");
    expect(tools.id).toMatch(/^chatcmpl-sim-/);
    expect(tools.system_fingerprint).toBe("fp_sim");
    expect(tools.usage?.prompt_tokens_details?.cached_tokens).toBe(0);
    expect(tools.usage?.completion_tokens_details?.reasoning_tokens).toBe(0);
    expect(typeof tools.created).toBe("number");
    expect(sentBody(sim, 0).tools).toEqual([weather]);

    const many = await c.chat.completions.create({
      model: "model-a",
      messages: [{ role: "user", content: "count to ten. END never" }],
      n: 3,
      stop: "END",
      logprobs: true,
    });
    expect(many.choices.map((x) => x.index)).toEqual([0, 1, 2]);
    for (const choice of many.choices) {
      expect(choice.message.content).not.toContain("END");
      expect(choice.logprobs?.content?.length).toBeGreaterThan(0);
      expect(choice.message.refusal).toBeNull();
    }
    expect(sim.calls.requests[1]?.body).toMatchObject({ n: 3, stop: "END", logprobs: true });
  });

  test("streaming passes tool_calls deltas and the usage chunk arrives before [DONE]", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    const res = await rawPost(gw, "/v1/chat/completions", key, {
      model: "model-a",
      messages: [{ role: "user", content: "Weather in Oslo?" }],
      tools: [weather],
      stream: true,
      stream_options: { include_usage: true },
    });
    const text = await res.text();
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    const events = sseData(text) as unknown as OpenAI.ChatCompletionChunk[];
    const toolDeltas = events.flatMap((e) => e.choices.flatMap((ch) => ch.delta?.tool_calls ?? []));
    expect(toolDeltas[0]?.function?.name).toBe("get_weather");
    const args = toolDeltas.map((d) => d.function?.arguments ?? "").join("");
    expect(JSON.parse(args)).toHaveProperty("city");
    expect(toolDeltas.length).toBeGreaterThanOrEqual(3);
    const last = events.at(-1);
    expect(last?.choices).toEqual([]);
    expect(last?.usage?.total_tokens).toBeGreaterThan(0);
    expect(events.some((e) => e.choices[0]?.finish_reason === "tool_calls")).toBe(true);
    expect(sim.calls.requests[0]?.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  test("a stream failing before its first byte goes to the next provider", async () => {
    const { sim, gw } = ctx;
    const { key, accountId } = gw.newKey({ credits: 10 });
    sim.reset();
    sim.program([{ status: 503 }], { model: "model-a" });
    const stream = await openaiClient(gw, key).chat.completions.create({
      model: "",
      messages: [{ role: "user", content: "stream me" }],
      stream: true,
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
    expect(text).toContain("stream me");
    expect(sim.calls.requests.map((r) => [r.model, r.status])).toEqual([
      ["model-a", 503],
      ["model-b", 200],
    ]);
    expect(gw.deps.ledger.balance(accountId)).toBe(9);
  });

  test("a stream cut after its first byte ends with an error event and no [DONE]; nothing charged; no fallback", async () => {
    const { sim, gw } = ctx;
    const { key, accountId } = gw.newKey({ credits: 10 });
    sim.reset();
    sim.program([{ streamCut: true }]);
    const res = await rawPost(gw, "/v1/chat/completions", key, {
      model: "model-a",
      messages: [{ role: "user", content: "one two three four five six" }],
      stream: true,
    });
    const text = await res.text();
    expect(text).not.toContain("[DONE]");
    const events = sseData(text);
    expect(events.length).toBeGreaterThan(1);
    expect(events.at(-1)).toMatchObject({ error: { code: "provider_error" } });
    expect(sim.calls.count).toBe(1);
    expect(gw.deps.ledger.balance(accountId)).toBe(10);
    // the SDK sees the error event as an error
    sim.program([{ streamCut: true }]);
    const stream = await openaiClient(gw, key).chat.completions.create({
      model: "model-a",
      messages: [{ role: "user", content: "one two three four five six" }],
      stream: true,
    });
    const err = await (async () => {
      for await (const _ of stream) {
        /* drain */
      }
    })().catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
  });

  test("a client leaving mid-stream aborts the upstream stream and pays for what it was sent; the rest of its hold is free", async () => {
    const { sim, gw } = ctx;
    const { key, accountId } = gw.newKey({ credits: 2 });
    sim.reset();
    const ac = new AbortController();
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      signal: ac.signal,
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({
        model: "model-a",
        stream: true,
        max_tokens: 100,
        messages: [{ role: "user", content: "one two three four five six seven eight nine ten eleven twelve" }],
      }),
    });
    const reader = res.body?.getReader();
    const first = await reader?.read();
    expect(new TextDecoder().decode(first?.value)).toContain("chat.completion.chunk");
    ac.abort();
    for (let i = 0; i < 40 && !sim.calls.requests[0]?.aborted; i++) await Bun.sleep(50);
    expect(sim.calls.requests[0]?.aborted).toBe(true);
    // a few tokens at the default price (1 credit per 1,000, rounded up): 1 credit
    for (let i = 0; i < 40 && gw.deps.ledger.balance(accountId) === 2; i++) await Bun.sleep(25);
    expect(gw.deps.ledger.balance(accountId)).toBe(1);
    for (let i = 0; i < 40 && !gw.logs.some((l) => l.includes("stream ended early") && l.includes('"status":499')); i++)
      await Bun.sleep(50);
    const metrics = await (
      await fetch(`${gw.url}/metrics`, { headers: { authorization: "Bearer forwarding-admin-0123456789abcdef0123456789" } })
    ).text();
    expect(metrics).toMatch(/textai_streams_total\{[^}]*outcome="client_closed"[^}]*\} 1/);
    // nothing of the abandoned stream's hold is left held
    expect(gw.deps.ledger.held(accountId)).toBe(0);
    const next = await rawPost(gw, "/v1/chat/completions", key, {
      model: "model-a",
      max_tokens: 100,
      messages: [{ role: "user", content: "after" }],
    });
    expect(next.status).toBe(200);
    expect(gw.deps.ledger.balance(accountId)).toBe(0);
  });
});
