import { describe, expect, test } from "bun:test";
import type OpenAI from "openai";
import { openaiClient, providerToml, rawPost, sentBody, sseData, useGateway } from "./setup";

// No provider with the Responses API: /v1/responses is answered through chat completions.
const ctx = useGateway({
  configText: (url) =>
    providerToml("chatonly", url, "model-a").replace(/features = .*/, 'features = ["tools", "images", "structured_output"]'),
});

const lookup: OpenAI.Responses.FunctionTool = {
  type: "function",
  name: "lookup",
  description: "look a thing up",
  strict: true,
  parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"], additionalProperties: false },
};

describe("/v1/responses translated to chat completions for a provider without the Responses API", () => {
  test("the request maps field by field; the answer is a Response", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    const out = await openaiClient(gw, key).responses.create({
      model: "model-a",
      instructions: "be brief",
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "what is this?" },
            { type: "input_image", image_url: "data:image/png;base64,AAAA", detail: "low" },
          ],
        },
      ],
      temperature: 0.2,
      max_output_tokens: 40,
      user: "u7",
    });
    expect(sim.calls.requests[0]?.path).toBe("/v1/chat/completions");
    expect(sentBody(sim, 0)).toEqual({
      model: "model-a",
      messages: [
        { role: "system", content: "be brief" },
        {
          role: "user",
          content: [
            { type: "text", text: "what is this?" },
            { type: "image_url", image_url: { url: "data:image/png;base64,AAAA", detail: "low" } },
          ],
        },
      ],
      temperature: 0.2,
      user: "u7",
      max_tokens: 40,
    });
    expect(out.object).toBe("response");
    expect(out.status).toBe("completed");
    expect(out.output_text).toContain("what is this?");
    expect(out.usage?.total_tokens).toBeGreaterThan(0);
  });

  test("function tools: call, result, final text; json_schema output", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    const c = openaiClient(gw, key);
    const first = await c.responses.create({ model: "model-a", input: "find it", tools: [lookup] });
    const call = first.output.find((o) => o.type === "function_call");
    if (call?.type !== "function_call") throw new Error(`no function call in ${JSON.stringify(first.output)}`);
    expect(call.name).toBe("lookup");
    expect(JSON.parse(call.arguments)).toHaveProperty("q");
    expect(sentBody(sim, 0).tools).toEqual([
      {
        type: "function",
        function: { name: "lookup", description: "look a thing up", parameters: lookup.parameters, strict: true },
      },
    ]);
    const second = await c.responses.create({
      model: "model-a",
      tools: [lookup],
      input: [
        { role: "user", content: "find it" },
        call,
        { type: "function_call_output", call_id: call.call_id, output: "found: 42" },
      ],
    });
    expect(second.output_text).toBe("Tool said: found: 42");
    const messages = sentBody(sim, 1).messages as { role: string; tool_calls?: { id: string }[]; tool_call_id?: string }[];
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(messages[1]?.tool_calls?.[0]?.id).toBe(call.call_id);
    expect(messages[2]?.tool_call_id).toBe(call.call_id);

    const structured = await c.responses.create({
      model: "model-a",
      input: "a person",
      text: {
        format: {
          type: "json_schema",
          name: "person",
          strict: true,
          schema: { type: "object", properties: { name: { type: "string" } }, required: ["name"], additionalProperties: false },
        },
      },
    });
    expect(typeof JSON.parse(structured.output_text).name).toBe("string");
    expect(sentBody(sim, 2).response_format).toMatchObject({
      type: "json_schema",
      json_schema: { name: "person", strict: true },
    });
  });

  test("streaming: named events ending with response.completed and its usage; a cut stream ends with an error event", async () => {
    const { sim, gw } = ctx;
    const { key, accountId } = gw.newKey({ credits: 10 });
    sim.reset();
    const stream = await openaiClient(gw, key).responses.create({
      model: "model-a",
      input: "stream this through chat",
      stream: true,
    });
    let text = "";
    const types: string[] = [];
    let done: OpenAI.Responses.Response | undefined;
    for await (const e of stream) {
      types.push(e.type);
      if (e.type === "response.output_text.delta") text += e.delta;
      if (e.type === "response.completed") done = e.response;
    }
    expect(text).toContain("stream this through chat");
    expect(types[0]).toBe("response.created");
    expect(types.at(-1)).toBe("response.completed");
    expect(done?.usage?.total_tokens).toBeGreaterThan(0);
    expect(sentBody(sim, 0)).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(gw.deps.ledger.balance(accountId)).toBe(9);

    sim.program([{ streamCut: true }]);
    const res = await rawPost(gw, "/v1/responses", key, { model: "model-a", input: "one two three four five", stream: true });
    const body = await res.text();
    expect(body).toContain("event: error\n");
    expect(body).not.toContain("response.completed");
    expect(sseData(body).at(-1)).toMatchObject({ type: "error", code: "provider_error" });
    expect(gw.deps.ledger.balance(accountId)).toBe(9);
  });

  test("what chat completions cannot express is a 400 naming the field, reaching no provider", async () => {
    const { sim, gw } = ctx;
    const { key, accountId } = gw.newKey({ credits: 10 });
    sim.reset();
    for (const [extra, field] of [
      [{ tools: [{ type: "web_search" }] }, "tools"],
      [{ reasoning: { effort: "low" } }, "reasoning"],
      [{ include: ["reasoning.encrypted_content"] }, "include"],
    ] as const) {
      const res = await rawPost(gw, "/v1/responses", key, { model: "model-a", input: "x", ...extra });
      const got = (await res.json()) as { error: { message: string; param: string } };
      expect({ field, status: res.status, param: got.error.param }).toEqual({ field, status: 400, param: field });
      expect(got.error.message).toContain(`chatonly (cannot serve "${field}")`);
    }
    expect(sim.calls.count).toBe(0);
    expect(gw.deps.ledger.balance(accountId)).toBe(10);
  });
});
