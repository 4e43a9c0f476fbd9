/**
 * A simulator of Amazon Bedrock Runtime, written from AWS's public API reference (Bedrock
 * Runtime: Converse, ConverseStream, InvokeModel; the event stream encoding; Signature Version 4):
 *
 * - `POST /model/{modelId}/converse`: a ConverseResponse (`output.message.content`, `stopReason`,
 *   `usage` with `cacheReadInputTokens` and `cacheWriteInputTokens`, `metrics`);
 * - `POST /model/{modelId}/converse-stream`: `application/vnd.amazon.eventstream`, each event a
 *   binary message (prelude with its CRC32, string headers `:event-type`, `:content-type`,
 *   `:message-type`, a JSON payload, the message CRC32): messageStart, contentBlockStart (tool
 *   uses), contentBlockDelta, contentBlockStop, messageStop, metadata; exceptions as
 *   `:message-type: exception` messages;
 * - `POST /model/{modelId}/invoke` for Titan Text Embeddings (`amazon.titan-embed-text-v2:0`:
 *   `{inputText, dimensions?, normalize?}` answered `{embedding, inputTextTokenCount}`);
 * - every call signed with SigV4: the Authorization header is checked field by field
 *   (`AWS4-HMAC-SHA256 Credential=KEY/DATE/REGION/bedrock/aws4_request, SignedHeaders=...,
 *   Signature=...`) and its signature recomputed with the secret of the key id (`credentials`);
 * - errors as AWS's REST-JSON protocol writes them: the status, `x-amzn-ErrorType:
 *   NameException:...`, a body `{"message": ...}`.
 *
 * Proven by the official `@aws-sdk/client-bedrock-runtime` (test/providers/bedrock-sim.test.ts).
 * It fails on command as the OpenAI simulator does (upstream.ts's Fault, FaultQueue, faultAnswer),
 * plus Bedrock's own ways (BedrockFault).
 *
 *   const sim = await startBedrock();
 *   sim.program([{ exception: "ThrottlingException", retryAfter: 2 }, { stopReason: "guardrail_intervened" }]);
 */
import { createHash, createHmac } from "node:crypto";
import { hashEmbedding } from "../../src/providers/embedding";
import { synthesize } from "../../src/providers/synthesize";
import type { JsonSchema } from "../../src/providers/types";
import { mockText } from "../../src/providers/vendors/mock/provider";
import { applyStop, FaultQueue, faultAnswer, type Fault as OpenAiFault, type RecordedCall, sseStream } from "./upstream";

/** One event stream message the simulator sends as given (a fault's own stream). */
export interface RawEvent {
  headers: Record<string, string>;
  /** JSON text (or anything: a broken payload) */
  payload: string;
}

export interface BedrockFault extends OpenAiFault {
  /** answer this exception (its status from the reference unless `status` says otherwise) */
  exception?: string;
  /** a stream: a few events, then this exception as an exception message (throttlingException, modelStreamErrorException, ...) */
  streamException?: string;
  /** the answer stops with this stopReason (guardrail_intervened and content_filtered without content) */
  stopReason?: string;
  /** usage fields laid over the answer's (cacheReadInputTokens, cacheWriteInputTokens, ...) */
  usage?: Record<string, number>;
  /** a stream of exactly these messages (encoded with correct CRCs unless `badCrc`) */
  events?: RawEvent[];
  /** with `events`: the bytes in pieces of this size (a message split across reads) */
  pieceBytes?: number;
  /** with `events`: the last message's CRC is wrong */
  badCrc?: boolean;
}

export interface BedrockSim {
  url: string;
  port: number;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  calls: { count: number; requests: (RecordedCall & { authorization?: string })[] };
  program(faults: BedrockFault[], opts?: { model?: string }): void;
  /** `sessionToken`: the token every call must carry; `secret`: the key id's secret from now on (a rotated or revoked key) */
  configure(opts: { latencyMs?: number; sessionToken?: string | null; secret?: string }): void;
  reset(): void;
  close(): Promise<void>;
}

/** The exceptions' statuses (the Bedrock Runtime API reference's Errors sections). */
const EXCEPTION_STATUS: Record<string, number> = {
  AccessDeniedException: 403,
  InternalServerException: 500,
  ModelErrorException: 424,
  ModelNotReadyException: 429,
  ModelTimeoutException: 408,
  ResourceNotFoundException: 404,
  ServiceQuotaExceededException: 400,
  ServiceUnavailableException: 503,
  ThrottlingException: 429,
  ValidationException: 400,
  UnrecognizedClientException: 403,
  InvalidSignatureException: 403,
  MissingAuthenticationTokenException: 403,
};

/** An exception for a bare status (the OpenAI simulator's `status` faults) */
function exceptionFor(status: number): string {
  const exact: Record<number, string> = {
    400: "ValidationException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    408: "ModelTimeoutException",
    424: "ModelErrorException",
    429: "ThrottlingException",
    500: "InternalServerException",
    503: "ServiceUnavailableException",
  };
  return exact[status] ?? (status < 500 ? "ValidationException" : "InternalServerException");
}

const DEFAULT_MESSAGES: Record<string, string> = {
  ThrottlingException: "Too many requests, please wait before trying again.",
  ServiceUnavailableException: "Bedrock is unable to process your request.",
  ModelNotReadyException: "Model is not ready for inference. Wait and try your request again.",
  InternalServerException: "The server encountered an error processing your request.",
  ModelTimeoutException: "Model has timed out in processing the request. Try your request again.",
  AccessDeniedException: "You don't have access to the model with the specified model ID.",
  ResourceNotFoundException: "The provided model identifier is invalid.",
};

const requestId = () => crypto.randomUUID();

const json = (data: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(data), {
    status,
    headers: { "content-type": "application/json", "x-amzn-requestid": requestId(), ...headers },
  });

function awsError(name: string, message: string, status = EXCEPTION_STATUS[name] ?? 400, headers: Record<string, string> = {}) {
  return json({ message }, status, {
    "x-amzn-errortype": `${name}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
    ...headers,
  });
}

function faultError(f: BedrockFault): Response {
  const name = f.exception ?? exceptionFor(f.status as number);
  const status = f.status ?? EXCEPTION_STATUS[name] ?? 400;
  const headers: Record<string, string> = {};
  if (f.retryAfter !== undefined) headers["retry-after"] = String(f.retryAfter);
  if (f.contextLength) return awsError("ValidationException", "Input is too long for requested model.", 400, headers);
  return awsError(name, f.message ?? DEFAULT_MESSAGES[name] ?? `simulated upstream error ${status}`, status, headers);
}

// ---- the event stream encoding ----

const enc = new TextEncoder();
const crc = (b: Uint8Array) => Bun.hash.crc32(b) >>> 0;

/** One message: headers (all strings: value type 7), payload, both CRCs. */
export function eventMessage(headers: Record<string, string>, payload: string | Uint8Array, badCrc = false): Uint8Array {
  const head: number[] = [];
  for (const [name, value] of Object.entries(headers)) {
    const n = enc.encode(name);
    const v = enc.encode(value);
    head.push(n.length, ...n, 7, v.length >> 8, v.length & 0xff, ...v);
  }
  const body = typeof payload === "string" ? enc.encode(payload) : payload;
  const total = 16 + head.length + body.length;
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  view.setUint32(0, total);
  view.setUint32(4, head.length);
  view.setUint32(8, crc(out.subarray(0, 8)));
  out.set(head, 12);
  out.set(body, 12 + head.length);
  view.setUint32(total - 4, (crc(out.subarray(0, total - 4)) ^ (badCrc ? 1 : 0)) >>> 0);
  return out;
}

/** Bedrock pads each event's payload with `p` (letters), so that lengths do not tell the content */
const pad = () => "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ".slice(0, 1 + Math.floor(Math.random() * 30));

const event = (type: string, payload: Record<string, unknown>) =>
  eventMessage(
    { ":event-type": type, ":content-type": "application/json", ":message-type": "event" },
    JSON.stringify({ ...payload, p: pad() }),
  );

const exceptionMessage = (type: string, message: string) =>
  eventMessage(
    { ":exception-type": type, ":content-type": "application/json", ":message-type": "exception" },
    JSON.stringify({ message }),
  );

// ---- SigV4 ----

const sha256 = (data: string | Uint8Array) => createHash("sha256").update(data).digest("hex");
const hmac = (key: string | Buffer, data: string) => createHmac("sha256", key).update(data).digest();

/** RFC 3986 encoding of every byte but the unreserved ones, as SigV4's canonical forms want */
const rfc3986 = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

const AUTH =
  /^AWS4-HMAC-SHA256 Credential=([^/\s,]+)\/(\d{8})\/([a-z0-9-]+)\/([a-z0-9-]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/;

/** What is wrong with a request's signature (an exception and its message), or null. */
function checkSignature(
  req: Request,
  url: URL,
  raw: string,
  opts: { region: string; secrets: Map<string, string>; sessionToken: string | null },
): { name: string; message: string } | null {
  const auth = req.headers.get("authorization");
  if (!auth) return { name: "MissingAuthenticationTokenException", message: "Missing Authentication Token" };
  const m = AUTH.exec(auth);
  if (!m)
    return {
      name: "IncompleteSignatureException",
      message: "Authorization header requires 'Credential', 'Signature' and 'SignedHeaders' parameters.",
    };
  const [, keyId, day, region, service, signedHeaders, signature] = m as unknown as string[];
  const secret = opts.secrets.get(keyId as string);
  if (!secret) return { name: "UnrecognizedClientException", message: "The security token included in the request is invalid." };
  if (service !== "bedrock" || region !== opts.region)
    return {
      name: "InvalidSignatureException",
      message: `Credential should be scoped to a valid region and service 'bedrock' (${region}/${service}).`,
    };
  const amzDate = req.headers.get("x-amz-date");
  if (!amzDate || !/^\d{8}T\d{6}Z$/.test(amzDate) || amzDate.slice(0, 8) !== day)
    return {
      name: "IncompleteSignatureException",
      message: "Date must be in ISO-8601 'basic format' and match the credential scope.",
    };
  const skew = Math.abs(
    Date.parse(
      `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`,
    ) - Date.now(),
  );
  if (skew > 5 * 60 * 1000) return { name: "InvalidSignatureException", message: "Signature expired." };
  const names = (signedHeaders as string).split(";");
  if (!names.includes("host") || !names.includes("x-amz-date"))
    return { name: "InvalidSignatureException", message: "'Host' and 'X-Amz-Date' must be signed headers." };
  if (opts.sessionToken !== null) {
    if (req.headers.get("x-amz-security-token") !== opts.sessionToken || !names.includes("x-amz-security-token"))
      return { name: "UnrecognizedClientException", message: "The security token included in the request is invalid." };
  }
  const canonicalHeaders = names.map((n) => `${n}:${(req.headers.get(n) ?? "").trim().replace(/\s+/g, " ")}\n`).join("");
  // every path segment encoded twice (the path on the wire is encoded once): not S3, so no single encoding
  const canonicalUri = url.pathname
    .split("/")
    .map((seg) => rfc3986(seg))
    .join("/");
  const query = [...url.searchParams]
    .map(([k, v]) => [rfc3986(k), rfc3986(v)])
    .sort(([a], [b]) => ((a as string) < (b as string) ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join("&");
  const canonical = [req.method, canonicalUri, query, canonicalHeaders, signedHeaders, sha256(raw)].join("\n");
  const scope = `${day}/${region}/bedrock/aws4_request`;
  const toSign = ["AWS4-HMAC-SHA256", amzDate, scope, sha256(canonical)].join("\n");
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, day as string), region as string), "bedrock"), "aws4_request");
  const expected = createHmac("sha256", key).update(toSign).digest("hex");
  if (expected !== signature)
    return {
      name: "InvalidSignatureException",
      message:
        "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.",
    };
  return null;
}

// ---- Converse ----

type Block = Record<string, unknown>;
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The ContentBlock members a request may carry (exactly one each) */
const BLOCK_KINDS = [
  "text",
  "image",
  "document",
  "video",
  "toolUse",
  "toolResult",
  "guardContent",
  "cachePoint",
  "reasoningContent",
];
const IMAGE_FORMATS = new Set(["png", "jpeg", "gif", "webp"]);

/** What Converse refuses with a ValidationException before generating (the reference's required fields and enums). */
function invalid(body: Record<string, unknown>): string | null {
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) return "The messages field is required and must not be empty.";
  let usesTools = false;
  let last: string | null = null;
  for (const [i, m] of messages.entries()) {
    if (!isObj(m) || (m.role !== "user" && m.role !== "assistant"))
      return `1 validation error detected: Value at 'messages.${i + 1}.member.role' failed to satisfy constraint: Member must satisfy enum value set: [user, assistant]`;
    if (i === 0 && m.role !== "user")
      return "A conversation must start with a user message. Try again with a conversation that starts with a user message.";
    if (m.role === last)
      return "A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.";
    last = m.role as string;
    if (!Array.isArray(m.content) || m.content.length === 0)
      return `The content field in the Message object at messages.${i}.content is empty. Add a ContentBlock object to the content field and try again.`;
    for (const [j, b] of (m.content as unknown[]).entries()) {
      const kinds = isObj(b) ? BLOCK_KINDS.filter((k) => b[k] !== undefined) : [];
      if (kinds.length !== 1) return `messages.${i}.content.${j}: a ContentBlock must have exactly one member set`;
      const block = b as Block;
      if (typeof block.text === "string" && block.text.trim() === "")
        return `The text field in the ContentBlock object at messages.${i}.content.${j} is blank. Add text to the text field, and try again.`;
      if (isObj(block.image)) {
        const img = block.image;
        if (!IMAGE_FORMATS.has(String(img.format)))
          return `messages.${i}.content.${j}.image.format: Member must satisfy enum value set: [png, jpeg, gif, webp]`;
        if (!isObj(img.source) || typeof img.source.bytes !== "string" || !/^[A-Za-z0-9+/]+=*$/.test(img.source.bytes))
          return `messages.${i}.content.${j}.image.source: bytes must be base64`;
      }
      if (isObj(block.toolUse)) {
        usesTools = true;
        if (typeof block.toolUse.toolUseId !== "string" || typeof block.toolUse.name !== "string" || !isObj(block.toolUse.input))
          return `messages.${i}.content.${j}.toolUse: toolUseId, name and input are required`;
      }
      if (isObj(block.toolResult)) {
        usesTools = true;
        if (typeof block.toolResult.toolUseId !== "string" || !Array.isArray(block.toolResult.content))
          return `messages.${i}.content.${j}.toolResult: toolUseId and content are required`;
      }
    }
  }
  if (
    body.system !== undefined &&
    !(
      Array.isArray(body.system) &&
      body.system.every(
        (s) => isObj(s) && (typeof s.text === "string" || s.cachePoint !== undefined || s.guardContent !== undefined),
      )
    )
  )
    return "system: a list of SystemContentBlock";
  const ic = body.inferenceConfig;
  if (ic !== undefined) {
    if (!isObj(ic)) return "inferenceConfig: an object";
    if (ic.maxTokens !== undefined && !(Number.isInteger(ic.maxTokens) && (ic.maxTokens as number) >= 1))
      return "1 validation error detected: Value at 'inferenceConfig.maxTokens' failed to satisfy constraint: Member must have value greater than or equal to 1";
    for (const k of ["temperature", "topP"])
      if (ic[k] !== undefined && !(typeof ic[k] === "number" && (ic[k] as number) >= 0 && (ic[k] as number) <= 1))
        return `1 validation error detected: Value at 'inferenceConfig.${k}' failed to satisfy constraint: Member must have value less than or equal to 1`;
    const stops = ic.stopSequences;
    if (
      stops !== undefined &&
      !(Array.isArray(stops) && stops.length <= 2500 && stops.every((x) => typeof x === "string" && x !== ""))
    )
      return "1 validation error detected: Value at 'inferenceConfig.stopSequences' failed to satisfy constraint: at most 2500 items, each at least 1 character long";
  }
  const tc = body.toolConfig;
  if (usesTools && !isObj(tc)) return "The toolConfig field must be defined when using toolUse and toolResult content blocks.";
  if (tc !== undefined) {
    if (!isObj(tc) || !Array.isArray(tc.tools) || tc.tools.length === 0)
      return "toolConfig.tools: Member must have length greater than or equal to 1";
    for (const [i, t] of tc.tools.entries()) {
      const spec = isObj(t) && isObj(t.toolSpec) ? t.toolSpec : null;
      if (
        !spec ||
        typeof spec.name !== "string" ||
        !/^[a-zA-Z0-9_-]{1,64}$/.test(spec.name) ||
        !isObj(spec.inputSchema) ||
        !isObj(spec.inputSchema.json)
      )
        return `toolConfig.tools.${i}.toolSpec: name ([a-zA-Z0-9_-]+) and inputSchema.json are required`;
    }
    const choice = tc.toolChoice;
    if (choice !== undefined) {
      const set = isObj(choice) ? ["auto", "any", "tool"].filter((k) => choice[k] !== undefined) : [];
      if (set.length !== 1 || Object.keys(choice as object).length !== 1)
        return "toolConfig.toolChoice: exactly one of auto, any, tool";
      const named = (choice as Record<string, unknown>).tool;
      if (named !== undefined && !(isObj(named) && (tc.tools as Block[]).some((t) => (t.toolSpec as Block).name === named.name)))
        return "toolConfig.toolChoice.tool.name: the tool is not in toolConfig.tools";
    }
  }
  return null;
}

interface Spec {
  name: string;
  schema: JsonSchema;
}

function toolToUse(body: Record<string, unknown>, afterResult: boolean): Spec | undefined {
  const tc = isObj(body.toolConfig) ? body.toolConfig : null;
  if (!tc) return undefined;
  const specs = (tc.tools as Block[]).map((t) => {
    const s = t.toolSpec as Block;
    return { name: s.name as string, schema: (s.inputSchema as Block).json as JsonSchema };
  });
  const choice = isObj(tc.toolChoice) ? tc.toolChoice : { auto: {} };
  if (isObj(choice.tool)) return specs.find((s) => s.name === (choice.tool as Block).name);
  if (choice.any !== undefined) return specs[0];
  return afterResult ? undefined : specs[0];
}

const tokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));
const textOf = (blocks: unknown) =>
  Array.isArray(blocks) ? blocks.map((b) => (isObj(b) && typeof b.text === "string" ? b.text : "")).join("") : "";

interface Answer {
  content: Block[];
  stopReason: string;
  usage: Record<string, number>;
}

function answer(body: Record<string, unknown>, fault: BedrockFault | undefined): Answer {
  const messages = body.messages as Block[];
  const last = messages.at(-1) as Block;
  const lastBlocks = last.content as Block[];
  const afterResult = lastBlocks.some((b) => isObj(b.toolResult));
  const ic = (isObj(body.inferenceConfig) ? body.inferenceConfig : {}) as Record<string, unknown>;
  const seed = JSON.stringify(messages);
  const tool = fault?.malformed || fault?.content !== undefined ? undefined : toolToUse(body, afterResult);
  let content: Block[];
  let stopReason = "end_turn";
  if (tool) {
    const input = fault?.schemaInvalid ? { unexpected: true } : synthesize(tool.schema, `${seed}${tool.name}`);
    content = [{ toolUse: { toolUseId: `tooluse_${Math.random().toString(36).slice(2, 14)}`, name: tool.name, input } }];
    stopReason = "tool_use";
  } else {
    let text: string;
    if (fault?.malformed) text = '{"answer": "cut off in the midd';
    else if (fault?.content !== undefined) text = fault.content;
    else if (afterResult) {
      const r = lastBlocks.find((b) => isObj(b.toolResult))?.toolResult as Block;
      text = `Tool said: ${JSON.stringify(r.content)}`;
    } else {
      const user = [...messages].reverse().find((m) => m.role === "user");
      const images = ((user?.content ?? []) as Block[]).filter((b) => isObj(b.image)).length;
      text = mockText(textOf(user?.content)) + (images ? ` (${images} image${images > 1 ? "s" : ""} seen)` : "");
    }
    const stop = Array.isArray(ic.stopSequences) ? ic.stopSequences : [];
    const cut = applyStop(text, stop);
    if (cut !== text) stopReason = "stop_sequence";
    text = cut;
    const cap = typeof ic.maxTokens === "number" ? ic.maxTokens : undefined;
    if (cap !== undefined && tokens(text) > cap) {
      text = text.slice(0, cap * 4);
      stopReason = "max_tokens";
    }
    content = text === "" ? [] : [{ text }];
  }
  if (fault?.stopReason) {
    stopReason = fault.stopReason;
    if (stopReason === "guardrail_intervened" || stopReason === "content_filtered")
      content = [{ text: "Sorry, the model cannot answer this question." }];
  }
  const input = tokens(JSON.stringify([body.system ?? null, messages, body.toolConfig ?? null]));
  const output = tokens(JSON.stringify(content));
  const usage: Record<string, number> = { inputTokens: input, outputTokens: output, ...fault?.usage };
  usage.totalTokens =
    (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0) + (usage.cacheReadInputTokens ?? 0) + (usage.cacheWriteInputTokens ?? 0);
  return { content, stopReason, usage };
}

function chop(text: string, chars?: number): string[] {
  if (!chars) return text.split(/(?<=\s)/);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += chars) out.push(text.slice(i, i + chars));
  return out;
}

/** The event stream of an answer: messageStart, each block's events, messageStop, metadata (and an exception when the fault says so). */
function streamMessages(a: Answer, fault: BedrockFault | undefined): Uint8Array[] {
  const out = [event("messageStart", { role: "assistant" })];
  a.content.forEach((b, index) => {
    if (typeof b.text === "string") {
      for (const piece of chop(b.text, fault?.chunkChars))
        if (piece) out.push(event("contentBlockDelta", { contentBlockIndex: index, delta: { text: piece } }));
    } else if (isObj(b.toolUse)) {
      const use = b.toolUse;
      out.push(
        event("contentBlockStart", {
          contentBlockIndex: index,
          start: { toolUse: { toolUseId: use.toolUseId, name: use.name } },
        }),
      );
      const args = JSON.stringify(use.input);
      const half = Math.ceil(args.length / 2);
      for (const piece of [args.slice(0, half), args.slice(half)])
        if (piece) out.push(event("contentBlockDelta", { contentBlockIndex: index, delta: { toolUse: { input: piece } } }));
    }
    out.push(event("contentBlockStop", { contentBlockIndex: index }));
  });
  if (fault?.streamException) {
    const name = fault.streamException;
    return [
      ...out.slice(0, 2),
      exceptionMessage(name, DEFAULT_MESSAGES[name.charAt(0).toUpperCase() + name.slice(1)] ?? "The stream failed."),
    ];
  }
  out.push(event("messageStop", { stopReason: a.stopReason }));
  out.push(event("metadata", { usage: a.usage, metrics: { latencyMs: 12 } }));
  return out;
}

/** Bytes in pieces of `size` (a message split across reads). */
function pieces(messages: Uint8Array[], size: number): Uint8Array[] {
  const all = Buffer.concat(messages);
  const out: Uint8Array[] = [];
  for (let i = 0; i < all.length; i += size) out.push(all.subarray(i, i + size));
  return out;
}

const EMBED_DIMS = new Set([256, 512, 1024]);

export async function startBedrock(opts: { port?: number; region?: string } = {}): Promise<BedrockSim> {
  const region = opts.region ?? "us-east-1";
  const accessKeyId = "AKIASIMULATOR0000001";
  const secretAccessKey = "sim/secret+key/0000000000000000000000000";
  const secrets = new Map([[accessKeyId, secretAccessKey]]);
  let latencyMs = 0;
  let sessionToken: string | null = null;
  const calls = { count: 0, requests: [] as BedrockSim["calls"]["requests"] };
  const faults = new FaultQueue<BedrockFault>();

  async function converse(body: Record<string, unknown>, rec: RecordedCall, signal: AbortSignal) {
    const fault = faults.next(rec.model);
    rec.fault = fault;
    const early = await faultAnswer(fault, rec, signal, latencyMs, faultError);
    if (early) return early;
    if (fault?.exception) return faultError(fault);
    const bad = invalid(body);
    if (bad) return awsError("ValidationException", bad);
    if (fault?.events) {
      const messages = fault.events.map((e, i) =>
        eventMessage(e.headers, e.payload, fault.badCrc === true && i === (fault.events as RawEvent[]).length - 1),
      );
      return eventStream(fault.pieceBytes ? pieces(messages, fault.pieceBytes) : messages, false, signal, rec);
    }
    const a = answer(body, fault);
    if (!rec.stream)
      return json({
        output: { message: { role: "assistant", content: a.content } },
        stopReason: a.stopReason,
        usage: a.usage,
        metrics: { latencyMs: 12 },
      });
    return eventStream(streamMessages(a, fault), fault?.streamCut === true, signal, rec);
  }

  async function invoke(model: string, body: Record<string, unknown>, rec: RecordedCall, signal: AbortSignal) {
    const fault = faults.next(rec.model);
    rec.fault = fault;
    const early = await faultAnswer(fault, rec, signal, latencyMs, faultError);
    if (early) return early;
    if (fault?.exception) return faultError(fault);
    if (!model.startsWith("amazon.titan-embed-text"))
      return awsError("ValidationException", "The provided model identifier is invalid.");
    const extra = Object.keys(body).filter((k) => !["inputText", "dimensions", "normalize", "embeddingTypes"].includes(k));
    if (extra.length > 0)
      return awsError(
        "ValidationException",
        `Malformed input request: extraneous key [${extra[0]}] is not permitted, please reformat your input and try again.`,
      );
    if (typeof body.inputText !== "string" || body.inputText === "")
      return awsError(
        "ValidationException",
        "Malformed input request: #: required key [inputText] not found, please reformat your input and try again.",
      );
    const dims = body.dimensions ?? 1024;
    if (!EMBED_DIMS.has(dims as number))
      return awsError(
        "ValidationException",
        "Malformed input request: #/dimensions: 8 is not a valid enum value, please reformat your input and try again.",
      );
    const embedding = hashEmbedding(body.inputText, dims as number);
    return json({ embedding, embeddingsByType: { float: embedding }, inputTextTokenCount: tokens(body.inputText) }, 200, {
      "x-amzn-bedrock-input-token-count": String(tokens(body.inputText)),
    });
  }

  function eventStream(messages: Uint8Array[], cut: boolean, signal: AbortSignal, rec: RecordedCall): Response {
    const res = sseStream(messages, cut, signal, () => (rec.aborted = true), "application/vnd.amazon.eventstream");
    res.headers.set("x-amzn-requestid", requestId());
    return res;
  }

  const server = Bun.serve({
    port: opts.port ?? 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const raw = await req.text();
      const m = /^\/model\/([^/]+)\/(converse|converse-stream|invoke)$/.exec(url.pathname);
      const signed = checkSignature(req, url, raw, { region, secrets, sessionToken });
      if (signed) return awsError(signed.name, signed.message, 403);
      if (req.method !== "POST" || !m)
        return json({ message: `Unknown operation ${req.method} ${url.pathname}` }, 404, {
          "x-amzn-errortype": "UnknownOperationException",
        });
      let body: Record<string, unknown>;
      try {
        const parsed: unknown = JSON.parse(raw);
        if (!isObj(parsed)) throw new Error("not an object");
        body = parsed;
      } catch {
        return awsError("ValidationException", "Malformed input request, please reformat your input and try again.");
      }
      const model = decodeURIComponent(m[1] as string);
      const action = m[2] as string;
      calls.count++;
      const rec: BedrockSim["calls"]["requests"][number] = {
        path: url.pathname,
        model,
        stream: action === "converse-stream",
        body,
        raw,
        headers: Object.fromEntries(req.headers),
        authorization: req.headers.get("authorization") ?? undefined,
        aborted: false,
        status: 200,
        at: Date.now(),
      };
      calls.requests.push(rec);
      req.signal.addEventListener("abort", () => (rec.aborted = true), { once: true });
      const res = action === "invoke" ? await invoke(model, body, rec, req.signal) : await converse(body, rec, req.signal);
      rec.status = res.status;
      return res;
    },
  });

  const port = server.port as number;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    region,
    accessKeyId,
    secretAccessKey,
    calls,
    program(list, scope) {
      faults.program(list, scope?.model);
    },
    configure(o) {
      if (o.latencyMs !== undefined) latencyMs = o.latencyMs;
      if (o.sessionToken !== undefined) sessionToken = o.sessionToken;
      if (o.secret !== undefined) secrets.set(accessKeyId, o.secret);
    },
    reset() {
      faults.clear();
      calls.count = 0;
      calls.requests.length = 0;
      latencyMs = 0;
      sessionToken = null;
      secrets.set(accessKeyId, secretAccessKey);
    },
    async close() {
      await server.stop(true);
    },
  };
}

/** A `[[providers]]` entry of type `bedrock` for the simulator. */
export function bedrockProvider(sim: BedrockSim, opts: { name?: string; model?: string; extra?: string } = {}): string {
  return [
    "[[providers]]",
    `name = "${opts.name ?? "bedrock"}"`,
    'type = "bedrock"',
    `base_url = "${sim.url}"`,
    `region = "${sim.region}"`,
    `aws_access_key_id = "${sim.accessKeyId}"`,
    `aws_secret_access_key = "${sim.secretAccessKey}"`,
    ...(opts.model ? [`default_model = "${opts.model}"`] : []),
    ...(opts.extra ? [opts.extra] : []),
    "",
  ].join("\n");
}
