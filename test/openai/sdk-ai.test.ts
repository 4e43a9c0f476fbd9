import { describe, expect, test } from "bun:test";
import { createOpenAI } from "@ai-sdk/openai";
import { generateObject, generateText, isStepCount, streamText, tool } from "ai";
import { z } from "zod";
import { providerToml, sentBody, useGateway } from "./setup";

const ctx = useGateway();
// a provider without the Responses API: the gateway answers /v1/responses through its chat completions
const chatOnly = useGateway({
  configText: (url) =>
    providerToml("chatonly", url, "model-a").replace(/features = .*/, 'features = ["tools", "structured_output"]'),
});

const provider = (apiKey: string, gw = ctx.gw) => createOpenAI({ apiKey, baseURL: `${gw.url}/v1` });
const Recipe = z.object({ name: z.string(), steps: z.array(z.string()), minutes: z.number() });
const weatherTool = (seen: string[]) =>
  tool({
    description: "weather in a city",
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      seen.push(city);
      return `rainy in ${city}`;
    },
  });

// openai.chat(model) calls Chat Completions; openai(model) the Responses API: both are tested,
// the latter also against a provider that only has Chat Completions.
const MODELS = [
  ["chat completions", ctx, (key: string) => provider(key).chat("model-a"), "/v1/chat/completions"],
  ["responses", ctx, (key: string) => provider(key)("model-a"), "/v1/responses"],
  ["responses, translated", chatOnly, (key: string) => provider(key, chatOnly.gw)("model-a"), "/v1/chat/completions"],
] as const;

describe.each(MODELS)("Vercel AI SDK (%s) against /v1", (_name, ctx, model, path) => {
  test("generateText", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 20 });
    sim.reset();
    const out = await generateText({ model: model(key), prompt: "Say hello to the AI SDK", maxRetries: 0 });
    expect(out.text).toContain("Say hello to the AI SDK");
    expect(out.usage.totalTokens).toBeGreaterThan(0);
    expect(sim.calls.requests.map((r) => [r.path, r.model])).toEqual([[path, "model-a"]]);
  });

  test("streamText with usage", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 20 });
    sim.reset();
    const result = streamText({ model: model(key), prompt: "stream for the AI SDK", maxRetries: 0 });
    let text = "";
    for await (const delta of result.textStream) text += delta;
    expect(text).toContain("stream for the AI SDK");
    const usage = await result.usage;
    expect(usage.totalTokens).toBeGreaterThan(0);
    expect(sim.calls.requests[0]?.stream).toBe(true);
    expect(sim.calls.requests[0]?.path).toBe(path);
    if (path === "/v1/chat/completions") expect(sentBody(sim, 0).stream_options).toEqual({ include_usage: true });
  });

  test("generateObject with a zod schema", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 20 });
    sim.reset();
    const out = await generateObject({ model: model(key), schema: Recipe, prompt: "A pasta recipe", maxRetries: 0 });
    expect(Recipe.safeParse(out.object).success).toBe(true);
    const body = sim.calls.requests[0]?.body ?? {};
    const format = path === "/v1/responses" ? (body.text as { format: { type: string } }).format : body.response_format;
    expect((format as { type: string }).type).toBe("json_schema");
  });

  test("tools with multiple steps", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 20 });
    sim.reset();
    const seen: string[] = [];
    const out = await generateText({
      model: model(key),
      prompt: "What is the weather in Bergen?",
      tools: { weather: weatherTool(seen) },
      stopWhen: isStepCount(3),
      maxRetries: 0,
    });
    expect(seen.length).toBe(1);
    expect(out.steps.length).toBe(2);
    expect(out.text).toBe(`Tool said: rainy in ${seen[0]}`);
    expect(sim.calls.count).toBe(2);
    expect(sim.calls.requests.every((r) => r.path === path)).toBe(true);
  });
});
