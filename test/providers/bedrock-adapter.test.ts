/**
 * The `bedrock` adapter (src/providers/vendors/bedrock/) against the Bedrock Runtime simulator:
 * its configuration (credentials from the entry or the AWS SDKs' variables, refused when missing),
 * what it refuses to translate, the signature the simulator recomputes (session tokens, inference
 * profile ARNs in the path), and Bedrock's exceptions as the gateway's ProviderError.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { ConfigError, loadConfig, type ProviderConfig } from "../../src/config";
import { buildProvider, buildProviders } from "../../src/providers/index";
import { type Provider, ProviderError } from "../../src/providers/types";
import { eventMessages } from "../../src/providers/vendors/bedrock/eventstream";
import { type BedrockSim, eventMessage, startBedrock } from "../helpers/bedrock-sim";
import { tiny } from "./fixtures";

let sim: BedrockSim;
beforeAll(async () => {
  sim = await startBedrock();
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const entry = (over: Partial<ProviderConfig> = {}): ProviderConfig => ({
  name: "br",
  type: "bedrock",
  base_url: sim.url,
  region: sim.region,
  aws_access_key_id: sim.accessKeyId,
  aws_secret_access_key: sim.secretAccessKey,
  ...over,
});
const chat = (p: Provider, body: Record<string, unknown>) =>
  (p.proxy as NonNullable<Provider["proxy"]>)({
    api: "chat/completions",
    body: { model: "us.anthropic.claude-sim-v1:0", messages: [{ role: "user", content: "hello" }], ...body },
    signal: new AbortController().signal,
  });
async function failure(p: Promise<unknown>): Promise<ProviderError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  if (!(e instanceof ProviderError)) throw new Error(`expected a ProviderError, got ${String(e)}`);
  return e;
}

describe("configuration", () => {
  test("credentials and region from the AWS SDKs' variables when the entry names none; they enable nothing alone", async () => {
    const env = { AWS_ACCESS_KEY_ID: sim.accessKeyId, AWS_SECRET_ACCESS_KEY: sim.secretAccessKey, AWS_REGION: sim.region };
    expect(loadConfig(env).providers.map((p) => p.type)).not.toContain("bedrock");
    const config = loadConfig(env, `[[providers]]\nname = "br"\ntype = "bedrock"\nbase_url = "${sim.url}"\n`);
    const p = buildProviders(config).get("br") as Provider;
    expect(await chat(p, {})).toMatchObject({ object: "chat.completion" });
    expect(sim.calls.requests[0]?.authorization).toContain(`Credential=${sim.accessKeyId}/`);
  });

  test("an entry without region or credentials, with half of them, or with an api_key is refused at start", () => {
    const base = loadConfig({});
    const build = (p: Partial<ProviderConfig>) => () =>
      buildProviders({ ...base, providers: [{ name: "br", type: "bedrock", ...p } as ProviderConfig] });
    expect(build({ aws_access_key_id: "a", aws_secret_access_key: "b" })).toThrow(/region: required for type bedrock/);
    expect(build({ region: "us-east-1" })).toThrow(/aws_access_key_id: type bedrock signs with an access key id/);
    expect(build({ region: "us-east-1", aws_access_key_id: "a" })).toThrow(/aws_secret_access_key: give both/);
    expect(build({ region: "us-east-1", api_key: "k" })).toThrow(ConfigError);
    // the AWS keys are bedrock's own
    expect(() => buildProvider({ name: "o", type: "openai", api_key: "k", region: "us-east-1" })).toThrow(
      /region: only for type bedrock, not openai/,
    );
  });

  test("a session token is signed (x-amz-security-token); without it the simulator refuses: the gateway's own failure", async () => {
    sim.configure({ sessionToken: "session-123" });
    expect(await chat(buildProvider(entry({ aws_session_token: "session-123" })), {})).toMatchObject({
      object: "chat.completion",
    });
    const e = await failure(chat(buildProvider(entry()), {}));
    expect(e).toMatchObject({ kind: "status", status: 403, upstream: undefined });
    expect(e.message).toContain('provider "br" refused the gateway\'s AWS credentials (403 UnrecognizedClientException)');
  });

  test("a wrong secret: 403, AWS's words kept from the client (no upstream error to pass on)", async () => {
    const e = await failure(chat(buildProvider(entry({ aws_secret_access_key: "wrong" })), {}));
    expect(e).toMatchObject({ kind: "status", status: 403, upstream: undefined });
    expect(e.message).not.toContain("signature we calculated");
  });

  test("an inference profile ARN as the model: encoded in the path, signed as AWS does", async () => {
    const arn = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sim-v1:0";
    await chat(buildProvider(entry()), { model: arn });
    expect(sim.calls.requests[0]?.path).toBe(`/model/${encodeURIComponent(arn)}/converse`);
    expect(sim.calls.requests[0]?.model).toBe(arn);
  });
});

describe("what Converse cannot express skips the provider", () => {
  test.each([
    [{ n: 2 }, "n"],
    [{ temperature: 1.5 }, "temperature"],
    [{ messages: [{ role: "user", content: "hi", name: "ann" }] }, "messages[0].name"],
    [{ logprobs: true }, "logprobs"],
    [{ parallel_tool_calls: false }, "parallel_tool_calls"],
    [{ tools: [{ type: "function", function: { name: "f" } }], tool_choice: "none" }, "tool_choice"],
    [
      { messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://example.com/a.png" } }] }] },
      "messages[0].content[0].image_url",
    ],
    [
      { messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: "x" } }] }] },
      "messages[0].content[0].type",
    ],
  ])("%j -> %s", (extra, field) => {
    const p = buildProvider(entry());
    const body = { model: "m", messages: [{ role: "user", content: "hi" }], ...extra };
    expect(p.untranslatable?.("chat/completions", body)).toBe(field);
  });

  test("neutral values pass; embeddings take 256, 512 or 1024 dimensions only; no Responses API", () => {
    const p = buildProvider(entry());
    const ok = { model: "m", messages: [{ role: "user", content: "hi" }], n: 1, seed: 4, user: "u", logprobs: false };
    expect(p.untranslatable?.("chat/completions", ok)).toBeNull();
    expect(p.untranslatable?.("embeddings", { model: "m", input: "x", dimensions: 512 })).toBeNull();
    expect(p.untranslatable?.("embeddings", { model: "m", input: "x", dimensions: 8 })).toBe("dimensions");
    expect(p.untranslatable?.("embeddings", { model: "m", input: [1, 2] })).toBe("input");
    expect(p.untranslatable?.("responses", { model: "m", input: "x" })).not.toBeNull();
  });
});

describe("Bedrock's exceptions as ProviderError", () => {
  test.each([
    [
      "ThrottlingException, Retry-After",
      { exception: "ThrottlingException", retryAfter: 4 },
      { kind: "status", status: 429, retryAfterMs: 4000 },
    ],
    ["ModelNotReadyException", { exception: "ModelNotReadyException" }, { kind: "status", status: 429 }],
    ["ServiceUnavailableException", { exception: "ServiceUnavailableException" }, { kind: "status", status: 503 }],
    ["InternalServerException", { exception: "InternalServerException" }, { kind: "status", status: 500 }],
    ["ModelTimeoutException", { exception: "ModelTimeoutException" }, { kind: "status", status: 408 }],
    ["AccessDeniedException", { exception: "AccessDeniedException" }, { kind: "status", status: 403, upstream: undefined }],
    [
      "a ValidationException",
      { exception: "ValidationException", message: "bad field" },
      { kind: "status", status: 400, upstream: { code: "ValidationException", message: "bad field" } },
    ],
    [
      "a context too long",
      { status: 400, contextLength: true },
      { kind: "context_length", status: 400, upstream: { param: "messages", code: "context_length_exceeded" } },
    ],
    [
      "ResourceNotFoundException",
      { exception: "ResourceNotFoundException" },
      { kind: "status", status: 404, upstream: { code: "model_not_found", param: "model" } },
    ],
    [
      "the type in the body's __type (no x-amzn-ErrorType)",
      { raw: { status: 429, body: '{"__type":"com.amazon.bedrock#ThrottlingException","message":"slow down"}' } },
      { kind: "status", status: 429, upstream: { code: "ThrottlingException", type: "rate_limit_error" } },
    ],
    ["an exception inside the stream", { streamException: "throttlingException", stream: true }, { kind: "status", status: 429 }],
  ] as [string, Record<string, unknown>, Record<string, unknown>][])("%s", async (_name, fault, expected) => {
    const { stream, ...f } = fault;
    sim.program([f]);
    const p = buildProvider(entry());
    const run = stream
      ? (async () => {
          for await (const _ of (p.proxyStream as NonNullable<Provider["proxyStream"]>)({
            api: "chat/completions",
            body: { model: "m", messages: [{ role: "user", content: "a b c d" }], stream: true },
            signal: new AbortController().signal,
          }));
        })()
      : chat(p, {});
    expect(await failure(run)).toMatchObject(expected);
  });

  test("a function call whose result is not an object: its schema wrapped in `value` for the tool, unwrapped in the answer", async () => {
    const p = buildProvider(entry());
    const schema = { type: "array", items: { type: "string" }, minItems: 1 };
    const r = await p.complete({
      fn: "tags",
      messages: [{ role: "user", content: "tags please" }],
      schema: { name: "tags", schema },
    });
    const config = sim.calls.requests[0]?.body.toolConfig as
      | { tools: { toolSpec: { inputSchema: { json: unknown } } }[] }
      | undefined;
    const tool = config?.tools[0];
    expect(tool?.toolSpec.inputSchema.json).toEqual({ type: "object", properties: { value: schema }, required: ["value"] });
    const value = JSON.parse(r.text) as unknown;
    expect(Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === "string")).toBe(true);
    expect(r.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(r.finishReason).toBe("stop");
  });

  test("a function call whose answer a guardrail withheld: content_filter (422 content_filtered)", async () => {
    sim.program([{ stopReason: "guardrail_intervened" }]);
    const p = buildProvider(entry());
    const e = await failure(
      p.complete({
        fn: "tiny",
        messages: [{ role: "user", content: "x" }],
        schema: { name: "tiny", schema: tiny.result as unknown as Record<string, unknown> },
      }),
    );
    expect(e).toMatchObject({ kind: "content_filter", status: 422, upstream: { code: "content_filtered" } });
  });

  test("a message with a broken CRC is a malformed stream (connection), never read as events", async () => {
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
    const p = buildProvider(entry());
    const e = await failure(
      (async () => {
        for await (const _ of (p.proxyStream as NonNullable<Provider["proxyStream"]>)({
          api: "chat/completions",
          body: { model: "m", messages: [{ role: "user", content: "x" }], stream: true },
          signal: new AbortController().signal,
        }));
      })(),
    );
    expect(e).toMatchObject({ kind: "connection" });
    expect(e.message).toContain("checksum");
  });
});

describe("the event stream reader", () => {
  const body = (bytes: Uint8Array, piece: number) =>
    new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < bytes.length; i += piece) c.enqueue(bytes.subarray(i, i + piece));
        c.close();
      },
    });
  const read = async (bytes: Uint8Array, piece: number, max: number) => {
    const out: string[] = [];
    for await (const m of eventMessages(body(bytes, piece), max))
      out.push(`${m.headers[":event-type"]}:${new TextDecoder().decode(m.payload)}`);
    return out;
  };
  const two = Buffer.concat([
    eventMessage({ ":event-type": "a", ":message-type": "event" }, '{"x":1}'),
    eventMessage({ ":event-type": "b", ":message-type": "event" }, "y".repeat(300)),
  ]);

  test("messages read whole however the bytes arrive (one at a time, or all at once)", async () => {
    const expected = ['a:{"x":1}', `b:${"y".repeat(300)}`];
    expect(await read(two, 1, 1024)).toEqual(expected);
    expect(await read(two, two.length, 1024)).toEqual(expected);
  });

  test("a message over the bound is refused from its prelude; a stream ending inside a message is cut", async () => {
    await expect(read(two, 5, 200)).rejects.toThrow("upstream answer larger than 200 bytes");
    await expect(read(two.subarray(0, two.length - 3), 64, 1024)).rejects.toThrow("upstream stream ended early");
  });
});
