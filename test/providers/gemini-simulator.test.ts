/**
 * The Gemini API simulator (test/helpers/gemini-upstream.ts) proven by Google's own SDK,
 * `@google/genai`, pointed at it with `httpOptions.baseUrl`: what the SDK sends is what the
 * simulator reads, and what the simulator answers is what the SDK understands.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { ApiError, BlockedReason, FinishReason, FunctionCallingConfigMode, GoogleGenAI, Type } from "@google/genai";
import { mockText } from "../../src/providers/vendors/mock/provider";
import { type GeminiUpstream, startGeminiUpstream } from "../helpers/gemini-upstream";

let sim: GeminiUpstream;
beforeAll(async () => {
  sim = await startGeminiUpstream();
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const client = (apiKey = "gm-sdk-key", apiVersion?: string) =>
  new GoogleGenAI({ apiKey, apiVersion, httpOptions: { baseUrl: sim.url } });

describe("@google/genai against the simulator", () => {
  test("generateContent: the path, the key header, a system instruction; text and usageMetadata back", async () => {
    const r = await client().models.generateContent({
      model: "gemini-2.5-flash",
      contents: "hello from the official sdk",
      config: { systemInstruction: "Be brief.", temperature: 0.3, maxOutputTokens: 200 },
    });
    expect(r.text).toBe(mockText("hello from the official sdk"));
    expect(r.candidates?.[0]?.finishReason).toBe(FinishReason.STOP);
    expect(r.usageMetadata?.promptTokenCount).toBeGreaterThan(0);
    expect(r.usageMetadata?.totalTokenCount).toBe(
      (r.usageMetadata?.promptTokenCount ?? 0) + (r.usageMetadata?.candidatesTokenCount ?? 0),
    );
    const rec = sim.calls.requests[0];
    expect(rec?.path).toBe("/v1/models/gemini-2.5-flash:generateContent");
    expect(rec?.headers["x-goog-api-key"]).toBe("gm-sdk-key");
    expect(rec?.body).toMatchObject({
      contents: [{ role: "user", parts: [{ text: "hello from the official sdk" }] }],
      systemInstruction: { parts: [{ text: "Be brief." }] },
      generationConfig: { temperature: 0.3, maxOutputTokens: 200 },
    });
  });

  test("cached and thinking tokens come back in usageMetadata", async () => {
    sim.program([{ usage: { cachedContentTokenCount: 7, thoughtsTokenCount: 11 } }]);
    const r = await client().models.generateContent({ model: "gemini-2.5-pro", contents: "think" });
    expect(r.usageMetadata).toMatchObject({ cachedContentTokenCount: 7, thoughtsTokenCount: 11 });
    const u = r.usageMetadata ?? {};
    expect(u.totalTokenCount).toBe((u.promptTokenCount ?? 0) + (u.candidatesTokenCount ?? 0) + 11);
  });

  test("generateContentStream: alt=sse, the chunks add up to the answer, the last has the finish and the usage", async () => {
    const chunks = [];
    for await (const c of await client().models.generateContentStream({
      model: "gemini-2.5-flash",
      contents: "one two three four five six",
    }))
      chunks.push(c);
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.map((c) => c.text ?? "").join("")).toBe(mockText("one two three four five six"));
    expect(chunks.at(-1)?.candidates?.[0]?.finishReason).toBe(FinishReason.STOP);
    expect(chunks.slice(0, -1).every((c) => c.candidates?.[0]?.finishReason === undefined)).toBe(true);
    expect(chunks.at(-1)?.usageMetadata?.candidatesTokenCount).toBeGreaterThan(0);
    expect(sim.calls.requests[0]?.path).toBe("/v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
  });

  test("a function call round: functionDeclarations and ANY mode, a functionCall back, a functionResponse, then text", async () => {
    const ai = client();
    const tools = [
      {
        functionDeclarations: [
          {
            name: "get_weather",
            description: "The weather in a city",
            parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING } }, required: ["city"] },
          },
        ],
      },
    ];
    const first = await ai.models.generateContent({
      model: "gemini-2.5-flash",
      contents: "weather in Paris?",
      config: { tools, toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY } } },
    });
    const call = first.functionCalls?.[0];
    expect(call?.name).toBe("get_weather");
    expect(typeof call?.args?.city).toBe("string");
    const second = await ai.models.generateContent({
      model: "gemini-2.5-flash",
      contents: [
        { role: "user", parts: [{ text: "weather in Paris?" }] },
        { role: "model", parts: [{ functionCall: call }] },
        { role: "user", parts: [{ functionResponse: { name: "get_weather", response: { temp: 21 } } }] },
      ],
      config: { tools },
    });
    expect(second.text).toBe('Tool said: {"temp":21}');
    expect(sim.calls.requests[0]?.body.toolConfig).toEqual({ functionCallingConfig: { mode: "ANY" } });
  });

  test("structured output: responseMimeType and responseSchema give JSON of that schema", async () => {
    const r = await client().models.generateContent({
      model: "gemini-2.5-flash",
      contents: "classify",
      config: {
        responseMimeType: "application/json",
        responseSchema: {
          type: Type.OBJECT,
          properties: { label: { type: Type.STRING, enum: ["a", "b"] }, score: { type: Type.NUMBER } },
          required: ["label", "score"],
        },
      },
    });
    const value = JSON.parse(r.text ?? "") as { label: string; score: number };
    expect(["a", "b"]).toContain(value.label);
    expect(typeof value.score).toBe("number");
  });

  test("v1beta and responseJsonSchema (plain JSON Schema, as the gateway's adapter sends it)", async () => {
    const r = await client("gm-sdk-key", "v1beta").models.generateContent({
      model: "gemini-2.5-flash",
      contents: "classify",
      config: {
        responseMimeType: "application/json",
        responseJsonSchema: {
          type: "object",
          properties: { tags: { type: "array", items: { type: "string" }, maxItems: 2 } },
          required: ["tags"],
        },
      },
    });
    expect(Array.isArray((JSON.parse(r.text ?? "") as { tags: unknown }).tags)).toBe(true);
    expect(sim.calls.requests[0]?.path).toBe("/v1beta/models/gemini-2.5-flash:generateContent");
    expect(sim.calls.requests[0]?.body.generationConfig).toMatchObject({ responseJsonSchema: { type: "object" } });
  });

  test("embedContent goes through batchEmbedContents: one vector per text", async () => {
    const r = await client().models.embedContent({ model: "text-embedding-004", contents: ["first text", "second text"] });
    expect(r.embeddings).toHaveLength(2);
    expect(r.embeddings?.[0]?.values).toHaveLength(64);
    expect(sim.calls.requests[0]?.path).toBe("/v1/models/text-embedding-004:batchEmbedContents");
  });

  test("errors: 429 RESOURCE_EXHAUSTED with RetryInfo, 503, a bad key, a bad role: ApiError with the status and Google's body", async () => {
    sim.program([{ status: 429, retryDelay: "2s", retryAfter: 2 }, { status: 503 }]);
    const ask = () => client().models.generateContent({ model: "gemini-2.5-flash", contents: "hi" });
    const limited = await ask().catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(ApiError);
    expect((limited as ApiError).status).toBe(429);
    const body = JSON.parse((limited as ApiError).message) as { error: { status: string; details: { retryDelay?: string }[] } };
    expect(body.error.status).toBe("RESOURCE_EXHAUSTED");
    expect(body.error.details.some((d) => d.retryDelay === "2s")).toBe(true);
    expect(((await ask().catch((e: unknown) => e)) as ApiError).status).toBe(503);
    sim.configure({ apiKey: "the-right-key" });
    const badKey = (await ask().catch((e: unknown) => e)) as ApiError;
    expect(badKey.status).toBe(400);
    expect(badKey.message).toContain("API_KEY_INVALID");
    sim.configure({ apiKey: undefined });
    const badRole = (await client()
      .models.generateContent({ model: "gemini-2.5-flash", contents: [{ role: "assistant", parts: [{ text: "x" }] }] })
      .catch((e: unknown) => e)) as ApiError;
    expect(badRole.status).toBe(400);
    expect(badRole.message).toContain("valid role");
  });

  test("safety: a blocked prompt has promptFeedback and no candidate; a withheld answer finishReason SAFETY", async () => {
    sim.program([{ blockReason: "SAFETY" }, { finishReason: "SAFETY" }]);
    const blocked = await client().models.generateContent({ model: "gemini-2.5-flash", contents: "something bad" });
    expect(blocked.promptFeedback?.blockReason).toBe(BlockedReason.SAFETY);
    expect(blocked.candidates).toBeUndefined();
    expect(blocked.text).toBeUndefined();
    const withheld = await client().models.generateContent({ model: "gemini-2.5-flash", contents: "something bad" });
    expect(withheld.candidates?.[0]?.finishReason).toBe(FinishReason.SAFETY);
    expect(withheld.text).toBeUndefined();
  });

  test("a stream cut mid-way fails the SDK's iteration", async () => {
    sim.program([{ streamCut: true, chunkChars: 3 }]);
    const read = async () => {
      for await (const _ of await client().models.generateContentStream({
        model: "gemini-2.5-flash",
        contents: "a long enough answer to cut",
      })) {
        /* drain */
      }
    };
    expect(
      await read().then(
        () => "ended",
        (e: unknown) => e,
      ),
    ).toBeInstanceOf(Error);
  });
});
