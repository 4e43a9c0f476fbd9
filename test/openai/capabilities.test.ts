import { describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { openaiClient, rawPost, useGateway } from "./setup";

const ctx = useGateway({
  configText: (url) => `
[routes]
"chat-completions" = ["textonly", "mock", "full"]
embeddings = ["textonly", "mock"]
responses = ["textonly", "full"]

[[providers]]
name = "textonly"
type = "openai-compatible"
base_url = "${url}"
default_model = "model-text"
features = []

[[providers]]
name = "mock"
type = "mock"

[[providers]]
name = "full"
type = "openai-compatible"
base_url = "${url}"
default_model = "model-full"
features = ["tools", "images", "structured_output"]
`,
});

const weather = {
  type: "function" as const,
  function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } },
};

describe("a provider lacking a feature the request needs is skipped, never sent a trimmed request", () => {
  test("a plain request goes to the first provider of the route", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    const { response } = await openaiClient(gw, key)
      .chat.completions.create({ model: "", messages: [{ role: "user", content: "plain" }] })
      .withResponse();
    expect(response.headers.get("x-textai-provider")).toBe("textonly");
    expect(sim.calls.requests.map((r) => r.model)).toEqual(["model-text"]);
  });

  test("the built-in mock answers plain chat (and streams it with usage) when asked for", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    const c = openaiClient(gw, key);
    const out = await c.chat.completions.create({ model: "mock/mock-1", messages: [{ role: "user", content: "hello mock" }] });
    expect(out.choices[0]?.message.content).toContain("hello mock");
    const stream = await c.chat.completions.create({
      model: "mock/mock-1",
      messages: [{ role: "user", content: "hello mock" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? "";
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe(out.choices[0]?.message.content ?? "");
    expect(usage?.total_tokens).toBeGreaterThan(0);
    expect(sim.calls.count).toBe(0);
  });

  test("tools skip the text-only provider and the mock; the capable one serves", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    const { data, response } = await openaiClient(gw, key)
      .chat.completions.create({ model: "", messages: [{ role: "user", content: "weather?" }], tools: [weather] })
      .withResponse();
    expect(response.headers.get("x-textai-provider")).toBe("full");
    expect(data.choices[0]?.message.tool_calls?.length).toBe(1);
    expect(sim.calls.requests.map((r) => [r.model, (r.body.tools as unknown[]).length])).toEqual([["model-full", 1]]);
  });

  test("a model named whose providers all lack the feature: 400 naming it, never another provider's model", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    const err = await openaiClient(gw, key)
      .chat.completions.create({ model: "mock/mock-1", messages: [{ role: "user", content: "weather?" }], tools: [weather] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.message).toContain('no provider in the route can serve "tools"; tried mock (no tools support)');
    expect(sim.calls.count).toBe(0);
  });

  test("no provider can serve: 400 naming the field and the providers tried; no provider reached, nothing charged", async () => {
    const { sim, gw } = ctx;
    const { key, accountId } = gw.newKey({ credits: 10 });
    sim.reset();
    const audio = await rawPost(gw, "/v1/chat/completions", key, {
      messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } }] }],
    });
    expect(audio.status).toBe(400);
    const body = (await audio.json()) as { error: { message: string; param: string; type: string } };
    expect(body.error.param).toBe("messages[0].content");
    for (const part of ["textonly (no audio support)", "mock (no audio support)", "full (no audio support)"])
      expect(body.error.message).toContain(part);

    const err = await openaiClient(gw, key)
      .embeddings.create({ model: "", input: "hello" })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    // an openai-compatible entry serves embeddings once it names a model: the answer says so; the mock can never
    expect(err.message).toContain("textonly (no embeddings support: give its [[providers]] entry an embedding_model)");
    expect(err.message).toContain("mock (no embeddings support)");

    // neither has the Responses API and reasoning settings cannot be translated to chat completions
    const responses = await openaiClient(gw, key)
      .responses.create({ model: "", input: "hello", reasoning: { effort: "low" } })
      .catch((e) => e);
    expect(responses).toBeInstanceOf(OpenAI.BadRequestError);
    expect(responses.message).toContain('full (cannot serve "reasoning")');
    expect(responses.message).toContain('textonly (cannot serve "reasoning")');
    expect(sim.calls.count).toBe(0);
    expect(gw.deps.ledger.balance(accountId)).toBe(10);
  });
});
