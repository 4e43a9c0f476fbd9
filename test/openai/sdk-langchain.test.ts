import { describe, expect, test } from "bun:test";
import { type AIMessage, HumanMessage, type ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";
import { z } from "zod";
import { sentBody, useGateway } from "./setup";

const ctx = useGateway();

const chat = (apiKey: string, extra: Record<string, unknown> = {}) =>
  new ChatOpenAI({ model: "model-a", apiKey, configuration: { baseURL: `${ctx.gw.url}/v1` }, maxRetries: 0, ...extra });

const weather = tool(async ({ city }: { city: string }) => `windy in ${city}`, {
  name: "get_weather",
  description: "weather in a city",
  schema: z.object({ city: z.string() }),
});

describe("LangChain ChatOpenAI against /v1", () => {
  test("invoke", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 20 });
    sim.reset();
    const out = await chat(key).invoke("Hello from LangChain");
    expect(out.content).toContain("Hello from LangChain");
    expect(out.usage_metadata?.total_tokens).toBeGreaterThan(0);
    expect(sim.calls.requests.map((r) => [r.path, r.model])).toEqual([["/v1/chat/completions", "model-a"]]);
  });

  test("stream, with usage", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 20 });
    sim.reset();
    let text = "";
    let total = 0;
    for await (const chunk of await chat(key, { streamUsage: true }).stream("Stream from LangChain")) {
      text += typeof chunk.content === "string" ? chunk.content : "";
      total += chunk.usage_metadata?.total_tokens ?? 0;
    }
    expect(text).toContain("Stream from LangChain");
    expect(total).toBeGreaterThan(0);
    expect(sim.calls.requests[0]?.stream).toBe(true);
    expect(sentBody(sim, 0).stream_options).toEqual({ include_usage: true });
  });

  test("bindTools round trip: tool call, tool result, final answer", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 20 });
    sim.reset();
    const model = chat(key).bindTools([weather]);
    const question = new HumanMessage("Weather in Hamburg?");
    const first = (await model.invoke([question])) as AIMessage;
    const call = first.tool_calls?.[0];
    expect(call?.name).toBe("get_weather");
    expect(typeof call?.args.city).toBe("string");
    const result = (await weather.invoke(call as Parameters<typeof weather.invoke>[0])) as ToolMessage;
    const final = await model.invoke([question, first, result]);
    expect(final.content).toBe(`Tool said: windy in ${call?.args.city}`);
    const sent = sentBody(sim, 1).messages as { role: string; tool_call_id?: string }[];
    expect(sent.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(sent[2]?.tool_call_id).toBe(call?.id);
    expect((sentBody(sim, 0).tools as { function: { name: string } }[])[0]?.function.name).toBe("get_weather");
  });

  test("withStructuredOutput (json_schema and function calling)", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 20 });
    sim.reset();
    const Movie = z.object({ title: z.string(), year: z.number(), genres: z.array(z.string()) });
    const viaSchema = await chat(key).withStructuredOutput(Movie, { method: "jsonSchema" }).invoke("A movie please");
    expect(Movie.safeParse(viaSchema).success).toBe(true);
    expect((sentBody(sim, 0).response_format as { type: string }).type).toBe("json_schema");
    const viaTools = await chat(key)
      .withStructuredOutput(Movie, { method: "functionCalling", name: "movie" })
      .invoke("Another movie");
    expect(Movie.safeParse(viaTools).success).toBe(true);
    expect(sentBody(sim, 1).tool_choice).toMatchObject({ type: "function", function: { name: "movie" } });
  });
});
