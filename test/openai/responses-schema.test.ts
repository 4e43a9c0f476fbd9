import { describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { mapSdkError, type SdkErrorClasses } from "../../src/providers/openai-like";
import { usageViolations, violations } from "./openapi-schemas";
import { providerToml, rawPost, sseData, useGateway } from "./setup";

// No provider with the Responses API: every /v1/responses answer here is the gateway's own translation.
const ctx = useGateway({
  configText: (url) =>
    `${providerToml("chatonly", url, "model-a").replace(/features = .*/, 'features = ["tools", "images", "structured_output"]')}
[[providers]]
name = "mock"
type = "mock"
`,
});

const EVENT_SCHEMA: Record<string, string> = {
  "response.created": "ResponseCreatedEvent",
  "response.in_progress": "ResponseInProgressEvent",
  "response.completed": "ResponseCompletedEvent",
  "response.incomplete": "ResponseIncompleteEvent",
  "response.output_item.added": "ResponseOutputItemAddedEvent",
  "response.output_item.done": "ResponseOutputItemDoneEvent",
  "response.content_part.added": "ResponseContentPartAddedEvent",
  "response.content_part.done": "ResponseContentPartDoneEvent",
  "response.output_text.delta": "ResponseTextDeltaEvent",
  "response.output_text.done": "ResponseTextDoneEvent",
  "response.function_call_arguments.delta": "ResponseFunctionCallArgumentsDeltaEvent",
  "response.function_call_arguments.done": "ResponseFunctionCallArgumentsDoneEvent",
  error: "ResponseErrorEvent",
};

/** Every event of a stream against its component schema: the ones that fail, with their errors. */
function badEvents(events: Record<string, unknown>[]) {
  return events
    .map((e) => ({
      type: String(e.type),
      errors: EVENT_SCHEMA[String(e.type)]
        ? violations(EVENT_SCHEMA[String(e.type)] as string, e)
        : ["no schema for this event type"],
    }))
    .filter((e) => e.errors.length > 0);
}

const lookup = {
  type: "function",
  name: "lookup",
  parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"], additionalProperties: false },
};

describe("synthesised /v1/responses answers and events meet OpenAI's published component schemas", () => {
  test("a plain answer and a function call: Response, with ResponseUsage (both schema versions); no user: null", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    for (const body of [
      { model: "model-a", input: "plain answer please" },
      { model: "model-a", input: "find it", tools: [lookup] },
      { model: "model-a", input: "with a user", user: "u-7", metadata: { k: "v" } },
    ]) {
      const res = await rawPost(gw, "/v1/responses", key, body);
      const json = (await res.json()) as Record<string, unknown>;
      expect({ status: res.status, errors: violations("Response", json) }).toEqual({ status: 200, errors: [] });
      expect(usageViolations(json.usage)).toEqual([]);
      if (body.user === undefined) expect(json).not.toHaveProperty("user");
      else expect(json.user).toBe(body.user);
    }
    expect(sim.calls.count).toBe(3);
  });

  test("a streamed answer: every event validates; created and in_progress carry no usage: null", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    const res = await rawPost(gw, "/v1/responses", key, { model: "model-a", input: "stream these words", stream: true });
    const events = sseData(await res.text());
    expect(events.map((e) => e.type)).toContain("response.completed");
    expect(badEvents(events)).toEqual([]);
    const completed = events.find((e) => e.type === "response.completed") as { response: { usage: unknown } };
    expect(usageViolations(completed.response.usage)).toEqual([]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const envelopes = events.flatMap((e) => (e.response ? [e.response as { id: string; created_at: number }] : []));
    expect(new Set(envelopes.map((r) => `${r.id} ${r.created_at}`)).size).toBe(1);
  });

  test("a streamed function call: response.function_call_arguments.done names the function", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    const res = await rawPost(gw, "/v1/responses", key, { model: "model-a", input: "find it", tools: [lookup], stream: true });
    const events = sseData(await res.text());
    const done = events.find((e) => e.type === "response.function_call_arguments.done");
    expect(done?.name).toBe("lookup");
    expect(badEvents(events)).toEqual([]);
  });

  test("a cut stream ends with an error event numbered after the last event, naming no internal class", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    sim.program([{ streamCut: true }]);
    const res = await rawPost(gw, "/v1/responses", key, { model: "model-a", input: "one two three four five six", stream: true });
    const events = sseData(await res.text());
    const last = events.at(-1) as Record<string, unknown>;
    expect(last.type).toBe("error");
    expect(badEvents(events)).toEqual([]);
    expect(last.sequence_number).toBe((events.at(-2)?.sequence_number as number) + 1);
    expect(last.message).toBe("upstream stream failed (connection)");
  });

  test("a socket error while reading an upstream body is told without the runtime's class name", () => {
    const classes: SdkErrorClasses = {
      APIError: OpenAI.APIError,
      APIConnectionError: OpenAI.APIConnectionError,
      APIConnectionTimeoutError: OpenAI.APIConnectionTimeoutError,
      APIUserAbortError: OpenAI.APIUserAbortError,
    };
    const e = mapSdkError(new TypeError("terminated"), classes);
    expect(e.message).toBe("upstream connection failed");
  });
});

describe("chat completions the gateway writes itself (a provider without an OpenAI-style API) meet OpenAI's schemas", () => {
  test("the answer and every chunk, with the usage chunk", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    const ask = { model: "mock/mock-1", messages: [{ role: "user", content: "write a few words" }] };
    const plain = await rawPost(gw, "/v1/chat/completions", key, ask);
    expect(violations("CreateChatCompletionResponse", await plain.json())).toEqual([]);
    const streamed = await rawPost(gw, "/v1/chat/completions", key, {
      ...ask,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = sseData(await streamed.text());
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.flatMap((c) => violations("CreateChatCompletionStreamResponse", c))).toEqual([]);
    expect(sim.calls.count).toBe(0);
  });
});
