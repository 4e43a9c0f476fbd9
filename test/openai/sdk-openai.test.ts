import { describe, expect, test } from "bun:test";
import { zodResponseFormat, zodTextFormat } from "openai/helpers/zod";
import { z } from "zod";
import { openaiClient, sentBody, useGateway } from "./setup";

const ctx = useGateway();

const Person = z.object({ name: z.string(), age: z.number(), tags: z.array(z.string()) });

describe("the official openai SDK against /v1", () => {
  test("chat.completions.parse with a zod schema", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    const out = await openaiClient(gw, key).chat.completions.parse({
      model: "model-a",
      messages: [{ role: "user", content: "Invent a person" }],
      response_format: zodResponseFormat(Person, "person"),
    });
    const parsed = out.choices[0]?.message.parsed;
    expect(Person.safeParse(parsed).success).toBe(true);
    const rf = sentBody(sim, 0).response_format as { type: string; json_schema: { name: string; strict: boolean } };
    expect(rf.type).toBe("json_schema");
    expect(rf.json_schema.name).toBe("person");
    expect(rf.json_schema.strict).toBe(true);
  });

  test("runTools: the SDK calls our function with the model's arguments and sends the result back", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    const seen: { city: string }[] = [];
    const runner = openaiClient(gw, key).chat.completions.runTools({
      model: "model-a",
      messages: [{ role: "user", content: "How is the weather in Lisbon?" }],
      tools: [
        {
          type: "function",
          function: {
            name: "get_weather",
            description: "weather in a city",
            parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
            parse: JSON.parse,
            function: (args: { city: string }) => {
              seen.push(args);
              return `sunny in ${args.city}`;
            },
          },
        },
      ],
    });
    const final = await runner.finalContent();
    expect(seen.length).toBe(1);
    expect(final).toBe(`Tool said: sunny in ${seen[0]?.city}`);
    expect(sim.calls.count).toBe(2);
    const second = sentBody(sim, 1).messages as { role: string; tool_call_id?: string; tool_calls?: unknown[] }[];
    expect(second.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(second[1]?.tool_calls?.length).toBe(1);
    expect(second[2]?.tool_call_id).toMatch(/^call_sim_/);
  });

  test("stream() with include_usage: deltas, then the final completion with usage", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    const stream = openaiClient(gw, key).chat.completions.stream({
      model: "model-a",
      messages: [{ role: "user", content: "stream with usage" }],
      stream_options: { include_usage: true },
    });
    let text = "";
    stream.on("content", (delta) => {
      text += delta;
    });
    const final = await stream.finalChatCompletion();
    expect(text).toContain("stream with usage");
    expect(final.choices[0]?.message.content).toBe(text);
    expect(final.usage?.total_tokens).toBeGreaterThan(0);
    expect(sentBody(sim, 0).stream_options).toEqual({ include_usage: true });
  });

  test("responses.parse with a zod text format", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    const out = await openaiClient(gw, key).responses.parse({
      model: "model-a",
      input: "Invent a person",
      text: { format: zodTextFormat(Person, "person") },
    });
    expect(Person.safeParse(out.output_parsed).success).toBe(true);
    expect((sentBody(sim, 0).text as { format: { type: string } }).format.type).toBe("json_schema");
  });
});
