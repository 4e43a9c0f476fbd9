/**
 * The Bedrock Runtime simulator (test/helpers/bedrock-sim.ts) proven by AWS's own SDK,
 * `@aws-sdk/client-bedrock-runtime`, pointed at it with `endpoint` and static credentials: the
 * SDK's SigV4 signature is recomputed and accepted, its event stream decoder reads the
 * simulator's binary frames (CRCs included), and its typed exceptions come from the simulator's
 * errors.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import {
  BedrockRuntimeClient,
  ConverseCommand,
  ConverseStreamCommand,
  InvokeModelCommand,
  ThrottlingException,
  ValidationException,
} from "@aws-sdk/client-bedrock-runtime";
import { NodeHttpHandler } from "@smithy/node-http-handler";
import { mockText } from "../../src/providers/vendors/mock/provider";
import { type BedrockSim, startBedrock } from "../helpers/bedrock-sim";

let sim: BedrockSim;
beforeAll(async () => {
  sim = await startBedrock();
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const client = (secret = sim.secretAccessKey, sessionToken?: string) =>
  new BedrockRuntimeClient({
    region: sim.region,
    endpoint: sim.url,
    credentials: { accessKeyId: sim.accessKeyId, secretAccessKey: secret, ...(sessionToken ? { sessionToken } : {}) },
    maxAttempts: 1,
    // HTTP/1.1 (the client's default handler is HTTP/2, for its bidirectional streams; the simulator speaks 1.1 as Bedrock does too)
    requestHandler: new NodeHttpHandler(),
  });

const PROFILE = "us.anthropic.claude-haiku-4-5-20251001-v1:0";

describe("@aws-sdk/client-bedrock-runtime against the simulator", () => {
  test("Converse: the signed request, the path with the inference profile id, text and usage back", async () => {
    const r = await client().send(
      new ConverseCommand({
        modelId: PROFILE,
        system: [{ text: "Be brief." }],
        messages: [{ role: "user", content: [{ text: "hello from the aws sdk" }] }],
        inferenceConfig: { maxTokens: 200, temperature: 0.2 },
      }),
    );
    expect(r.output?.message?.content?.[0]?.text).toBe(mockText("hello from the aws sdk"));
    expect(r.stopReason).toBe("end_turn");
    expect(r.usage?.totalTokens).toBe((r.usage?.inputTokens ?? 0) + (r.usage?.outputTokens ?? 0));
    const rec = sim.calls.requests[0];
    // the SDK encodes the model id's ":" in the path, as the gateway does
    expect(rec?.path).toBe("/model/us.anthropic.claude-haiku-4-5-20251001-v1%3A0/converse");
    expect(rec?.model).toBe(PROFILE);
    expect(rec?.authorization).toMatch(
      new RegExp(
        `^AWS4-HMAC-SHA256 Credential=${sim.accessKeyId}/\\d{8}/us-east-1/bedrock/aws4_request, ?SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*, ?Signature=[0-9a-f]{64}$`,
      ),
    );
    expect(rec?.body).toMatchObject({ system: [{ text: "Be brief." }], inferenceConfig: { maxTokens: 200, temperature: 0.2 } });
  });

  test("a wrong secret or a missing session token: the SDK's typed 403 (the simulator recomputes the signature)", async () => {
    const bad = await client("not-the-secret")
      .send(new ConverseCommand({ modelId: PROFILE, messages: [{ role: "user", content: [{ text: "x" }] }] }))
      .catch((e: unknown) => e);
    expect(bad).toMatchObject({ name: "InvalidSignatureException", $metadata: { httpStatusCode: 403 } });
    sim.configure({ sessionToken: "tok-1" });
    const ok = await client(undefined, "tok-1").send(
      new ConverseCommand({ modelId: PROFILE, messages: [{ role: "user", content: [{ text: "x" }] }] }),
    );
    expect(ok.stopReason).toBe("end_turn");
    const none = await client()
      .send(new ConverseCommand({ modelId: PROFILE, messages: [{ role: "user", content: [{ text: "x" }] }] }))
      .catch((e: unknown) => e);
    expect(none).toMatchObject({ name: "UnrecognizedClientException" });
  });

  test("Converse with a forced tool: toolUse with input matching the schema, stopReason tool_use; cache usage", async () => {
    sim.program([{ usage: { cacheReadInputTokens: 120, cacheWriteInputTokens: 30 } }]);
    const r = await client().send(
      new ConverseCommand({
        modelId: PROFILE,
        messages: [{ role: "user", content: [{ text: "weather in Paris?" }] }],
        toolConfig: {
          tools: [
            {
              toolSpec: {
                name: "get_weather",
                inputSchema: {
                  json: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
                },
              },
            },
          ],
          toolChoice: { tool: { name: "get_weather" } },
        },
      }),
    );
    const use = r.output?.message?.content?.[0]?.toolUse;
    expect(use?.name).toBe("get_weather");
    expect(typeof (use?.input as { city?: unknown } | undefined)?.city).toBe("string");
    expect(r.stopReason).toBe("tool_use");
    expect(r.usage).toMatchObject({ cacheReadInputTokens: 120, cacheWriteInputTokens: 30 });
    expect(r.usage?.totalTokens).toBe((r.usage?.inputTokens ?? 0) + (r.usage?.outputTokens ?? 0) + 150);
  });

  test("ConverseStream: the SDK decodes the event stream (CRCs checked) into the answer and the metadata", async () => {
    const r = await client().send(
      new ConverseStreamCommand({
        modelId: PROFILE,
        messages: [{ role: "user", content: [{ text: "one two three four five six" }] }],
      }),
    );
    const kinds: string[] = [];
    let text = "";
    let usage: unknown;
    let stop: string | undefined;
    for await (const e of r.stream ?? []) {
      kinds.push(Object.keys(e).find((k) => (e as unknown as Record<string, unknown>)[k] !== undefined) as string);
      text += e.contentBlockDelta?.delta?.text ?? "";
      if (e.messageStop) stop = e.messageStop.stopReason;
      if (e.metadata) usage = e.metadata.usage;
    }
    expect(text).toBe(mockText("one two three four five six"));
    expect(kinds[0]).toBe("messageStart");
    expect(kinds.slice(-3)).toEqual(["contentBlockStop", "messageStop", "metadata"]);
    expect(stop).toBe("end_turn");
    expect(usage).toMatchObject({ inputTokens: expect.any(Number), outputTokens: expect.any(Number) });
    expect(sim.calls.requests[0]?.path).toBe("/model/us.anthropic.claude-haiku-4-5-20251001-v1%3A0/converse-stream");
  });

  test("ConverseStream with a tool: contentBlockStart names it, the input comes in pieces", async () => {
    const r = await client().send(
      new ConverseStreamCommand({
        modelId: PROFILE,
        messages: [{ role: "user", content: [{ text: "look it up" }] }],
        toolConfig: {
          tools: [
            { toolSpec: { name: "lookup", inputSchema: { json: { type: "object", properties: { q: { type: "string" } } } } } },
          ],
          toolChoice: { any: {} },
        },
      }),
    );
    let name: string | undefined;
    let input = "";
    for await (const e of r.stream ?? []) {
      name ??= e.contentBlockStart?.start?.toolUse?.name;
      input += e.contentBlockDelta?.delta?.toolUse?.input ?? "";
    }
    expect(name).toBe("lookup");
    expect(JSON.parse(input)).toMatchObject({ q: expect.any(String) });
  });

  test("an exception inside the stream is the SDK's typed exception; a bad CRC is refused by the SDK", async () => {
    sim.program([{ streamException: "throttlingException" }]);
    const r = await client().send(
      new ConverseStreamCommand({ modelId: PROFILE, messages: [{ role: "user", content: [{ text: "a b c d" }] }] }),
    );
    const err = await (async () => {
      for await (const _ of r.stream ?? []);
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ThrottlingException);
    sim.program([
      {
        events: [
          {
            headers: { ":event-type": "messageStart", ":content-type": "application/json", ":message-type": "event" },
            payload: '{"role":"assistant"}',
          },
        ],
        badCrc: true,
      },
    ]);
    const crcErr = await (async () => {
      const bad = await client().send(
        new ConverseStreamCommand({ modelId: PROFILE, messages: [{ role: "user", content: [{ text: "a" }] }] }),
      );
      for await (const _ of bad.stream ?? []);
    })().catch((e: unknown) => e);
    expect(String(crcErr)).toMatch(/checksum|crc/i);
  });

  test("a ThrottlingException (429, Retry-After) and a ValidationException are the SDK's typed errors", async () => {
    sim.program([{ exception: "ThrottlingException", retryAfter: 2 }]);
    const err = await client()
      .send(new ConverseCommand({ modelId: PROFILE, messages: [{ role: "user", content: [{ text: "x" }] }] }))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ThrottlingException);
    expect((err as ThrottlingException).$metadata.httpStatusCode).toBe(429);
    expect((err as ThrottlingException).message).toMatch(/Too many requests/);
    const invalid = await client()
      .send(new ConverseCommand({ modelId: PROFILE, messages: [{ role: "assistant", content: [{ text: "x" }] }] }))
      .catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(ValidationException);
  });

  test("InvokeModel: Titan text embeddings v2, one input, the dimensions asked for", async () => {
    const r = await client().send(
      new InvokeModelCommand({
        modelId: "amazon.titan-embed-text-v2:0",
        contentType: "application/json",
        accept: "application/json",
        body: JSON.stringify({ inputText: "embed me", dimensions: 256, normalize: true }),
      }),
    );
    const out = JSON.parse(new TextDecoder().decode(r.body)) as { embedding: number[]; inputTextTokenCount: number };
    expect(out.embedding).toHaveLength(256);
    expect(out.inputTextTokenCount).toBeGreaterThan(0);
    expect(sim.calls.requests[0]?.path).toBe("/model/amazon.titan-embed-text-v2%3A0/invoke");
  });
});
