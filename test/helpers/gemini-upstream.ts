/**
 * A simulator of Google's Gemini API (the Generative Language API, `v1beta`), written from its
 * public reference: `models/{model}:generateContent`, `:streamGenerateContent` (`?alt=sse`: one
 * `data:` event per GenerateContentResponse, no end marker; without it a JSON array),
 * `:embedContent`, `:batchEmbedContents`, `:countTokens`, `GET models` and `GET models/{model}`
 * (under `/v1beta` and `/v1` alike);
 * the key in `x-goog-api-key` (or `?key=`); errors as `{error:{code,message,status,details}}`.
 * Proven by the official `@google/genai` SDK (test/providers/gemini-simulator.test.ts).
 *
 *   const sim = await startGeminiUpstream();
 *   sim.program([{ status: 429, retryDelay: "2s" }, { blockReason: "SAFETY" }]);   // one per call, in order
 *   ... point the SDK at sim.url (httpOptions.baseUrl), or a `gemini` provider's base_url ...
 *
 * It fails on command as the OpenAI simulator does (upstream.ts's Fault), plus Gemini's own ways:
 * 429 RESOURCE_EXHAUSTED with a RetryInfo detail, a prompt blocked (`promptFeedback.blockReason`),
 * an answer stopped (`finishReason` SAFETY, RECITATION, MAX_TOKENS...), usage with cached and
 * thinking tokens.
 */
import { hashEmbedding } from "../../src/providers/embedding";
import { synthesize } from "../../src/providers/synthesize";
import type { JsonSchema } from "../../src/providers/types";
import { mockText } from "../../src/providers/vendors/mock/provider";
import { applyStop, FaultQueue, faultAnswer, type Fault as OpenAiFault, type RecordedCall, sseStream } from "./upstream";

export interface GeminiFault extends OpenAiFault {
  /** with status 429: a google.rpc.RetryInfo detail with this retryDelay ("2s", "0.5s") */
  retryDelay?: string;
  /** answer 200 with no candidate: the prompt was blocked (promptFeedback.blockReason: SAFETY, OTHER, BLOCKLIST, PROHIBITED_CONTENT) */
  blockReason?: string;
  /** the first candidate stops with this finishReason (SAFETY, RECITATION, MAX_TOKENS, ...); SAFETY and the like without content */
  finishReason?: string;
  /** usageMetadata fields added to the answer's (cachedContentTokenCount, thoughtsTokenCount, ...) */
  usage?: Record<string, number>;
  /** with status 400: the API key is not valid (ErrorInfo reason API_KEY_INVALID) */
  badKey?: boolean;
}

export interface GeminiUpstream {
  url: string;
  port: number;
  calls: { count: number; requests: RecordedCall[] };
  program(faults: GeminiFault[], opts?: { model?: string }): void;
  /** only this key is accepted (else any non-empty key) */
  configure(opts: { apiKey?: string; latencyMs?: number }): void;
  reset(): void;
  close(): Promise<void>;
}

/** google.rpc.Code names by HTTP status, as the API writes them in `error.status`. */
const STATUS_NAME: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  409: "ABORTED",
  413: "INVALID_ARGUMENT",
  429: "RESOURCE_EXHAUSTED",
  499: "CANCELLED",
  500: "INTERNAL",
  501: "NOT_IMPLEMENTED",
  502: "UNAVAILABLE",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

const json = (data: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(data), { status, headers: { "content-type": "application/json; charset=UTF-8", ...headers } });

function googleError(code: number, message: string, details: unknown[] = [], headers: Record<string, string> = {}): Response {
  const error: Record<string, unknown> = { code, message, status: STATUS_NAME[code] ?? "UNKNOWN" };
  if (details.length > 0) error.details = details;
  return json({ error }, code, headers);
}

function faultError(f: GeminiFault): Response {
  const status = f.status as number;
  const headers: Record<string, string> = {};
  if (f.retryAfter !== undefined) headers["retry-after"] = String(f.retryAfter);
  if (f.contextLength)
    return googleError(400, "The input token count (1048677) exceeds the maximum number of tokens allowed (1048576).");
  if (f.badKey)
    return googleError(400, "API key not valid. Please pass a valid API key.", [
      {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        reason: "API_KEY_INVALID",
        domain: "googleapis.com",
        metadata: { service: "generativelanguage.googleapis.com" },
      },
    ]);
  const details: unknown[] = [];
  if (status === 429) {
    details.push({
      "@type": "type.googleapis.com/google.rpc.QuotaFailure",
      violations: [{ quotaMetric: "generativelanguage.googleapis.com/generate_content_free_tier_requests", quotaId: "sim" }],
    });
    if (f.retryDelay) details.push({ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: f.retryDelay });
  }
  const message =
    f.message ??
    (status === 429
      ? "You exceeded your current quota, please check your plan and billing details."
      : status === 503
        ? "The model is overloaded. Please try again later."
        : `simulated upstream error ${status}`);
  return googleError(status, message, details, headers);
}

type Part = Record<string, unknown>;
interface Content {
  role?: string;
  parts?: Part[];
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The data fields of a Part: exactly one must be set. */
const PART_DATA = ["text", "inlineData", "fileData", "functionCall", "functionResponse", "executableCode", "codeExecutionResult"];

/** What the API refuses with 400 INVALID_ARGUMENT before generating: the reference's required fields and enums. */
function invalid(body: Record<string, unknown>): string | null {
  const contents = body.contents;
  if (!Array.isArray(contents) || contents.length === 0) return "* GenerateContentRequest.contents: contents is not specified";
  for (const [i, c] of contents.entries()) {
    if (!isObj(c)) return `Invalid value at 'contents[${i}]'`;
    if (c.role !== undefined && c.role !== "user" && c.role !== "model")
      return `Please use a valid role: user, model. (contents[${i}].role: ${String(c.role)})`;
    if (!Array.isArray(c.parts) || c.parts.length === 0)
      return `* GenerateContentRequest.contents[${i}].parts: contents.parts must not be empty.`;
    for (const [j, p] of (c.parts as unknown[]).entries()) {
      const set = isObj(p) ? PART_DATA.filter((k) => p[k] !== undefined) : [];
      if (set.length !== 1)
        return `* GenerateContentRequest.contents[${i}].parts[${j}].data: required oneof field 'data' must have one initialized field`;
      const part = p as Part;
      if (isObj(part.inlineData) && (typeof part.inlineData.mimeType !== "string" || typeof part.inlineData.data !== "string"))
        return `* GenerateContentRequest.contents[${i}].parts[${j}].inline_data: mime_type and data are required`;
      if (isObj(part.functionCall) && typeof part.functionCall.name !== "string")
        return `* GenerateContentRequest.contents[${i}].parts[${j}].function_call.name: Name cannot be empty.`;
      if (
        isObj(part.functionResponse) &&
        (typeof part.functionResponse.name !== "string" || !isObj(part.functionResponse.response))
      )
        return `* GenerateContentRequest.contents[${i}].parts[${j}].function_response: name and response are required`;
    }
  }
  const si = body.systemInstruction;
  if (si !== undefined && !(isObj(si) && Array.isArray(si.parts))) return "Invalid value at 'system_instruction'";
  const gc = body.generationConfig;
  if (gc !== undefined) {
    if (!isObj(gc)) return "Invalid value at 'generation_config'";
    const mime = gc.responseMimeType;
    if (mime !== undefined && mime !== "text/plain" && mime !== "application/json" && mime !== "text/x.enum")
      return `* GenerateContentRequest.generation_config.response_mime_type: allowed mimetypes are \`text/plain\`, \`application/json\`, and \`text/x.enum\`.`;
    if (
      (gc.responseSchema !== undefined || gc.responseJsonSchema !== undefined) &&
      mime !== "application/json" &&
      mime !== "text/x.enum"
    )
      return "* GenerateContentRequest.generation_config.response_mime_type: When using response_schema, response_mime_type must be set to application/json or text/x.enum";
    if (gc.responseSchema !== undefined && gc.responseJsonSchema !== undefined)
      return "responseSchema and responseJsonSchema cannot both be set";
    const n = gc.candidateCount;
    if (n !== undefined && (typeof n !== "number" || n < 1 || n > 8))
      return "* GenerateContentRequest.generation_config.candidate_count: must be between 1 and 8";
  }
  const mode =
    isObj(body.toolConfig) && isObj(body.toolConfig.functionCallingConfig)
      ? body.toolConfig.functionCallingConfig.mode
      : undefined;
  if (mode !== undefined && !["AUTO", "ANY", "NONE", "VALIDATED", "MODE_UNSPECIFIED"].includes(String(mode)))
    return `Invalid value at 'tool_config.function_calling_config.mode' (type.googleapis.com/google.ai.generativelanguage.v1beta.FunctionCallingConfig.Mode), "${String(mode)}"`;
  return null;
}

/**
 * The reference's Schema (an OpenAPI 3.0 subset: `type` in capitals or not, `nullable`,
 * `format`, `enum`, `properties`, `required`, `items`, `anyOf`, `propertyOrdering`) as the JSON
 * Schema synthesize() reads.
 */
function fromGeminiSchema(s: unknown): JsonSchema {
  if (!isObj(s)) return {};
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === "type" && typeof v === "string") out.type = v.toLowerCase();
    else if (k === "properties" && isObj(v))
      out.properties = Object.fromEntries(Object.entries(v).map(([name, sub]) => [name, fromGeminiSchema(sub)]));
    else if (k === "items") out.items = fromGeminiSchema(v);
    else if (k === "anyOf" && Array.isArray(v)) out.anyOf = v.map(fromGeminiSchema);
    else if (k !== "nullable" && k !== "propertyOrdering") out[k] = v;
  }
  return out;
}

interface Decl {
  name: string;
  parameters?: JsonSchema;
}

function declarations(body: Record<string, unknown>): Decl[] {
  const tools = Array.isArray(body.tools) ? body.tools : [];
  return tools.flatMap((t) =>
    isObj(t) && Array.isArray(t.functionDeclarations)
      ? (t.functionDeclarations as Record<string, unknown>[])
          .filter((d) => typeof d.name === "string")
          .map((d) => ({
            name: d.name as string,
            parameters:
              d.parametersJsonSchema !== undefined ? (d.parametersJsonSchema as JsonSchema) : fromGeminiSchema(d.parameters),
          }))
      : [],
  );
}

/** The function the model calls: none in mode NONE; in mode ANY one of the allowed; in AUTO the first unless a function response just came back. */
function toCall(body: Record<string, unknown>, afterResponse: boolean): Decl | undefined {
  const decls = declarations(body);
  const cfg = isObj(body.toolConfig) && isObj(body.toolConfig.functionCallingConfig) ? body.toolConfig.functionCallingConfig : {};
  if (decls.length === 0 || cfg.mode === "NONE") return undefined;
  if (cfg.mode === "ANY") {
    const allowed = Array.isArray(cfg.allowedFunctionNames) ? (cfg.allowedFunctionNames as string[]) : [];
    return decls.find((d) => allowed.length === 0 || allowed.includes(d.name));
  }
  return afterResponse ? undefined : decls[0];
}

const textOfParts = (parts: Part[] | undefined) => (parts ?? []).map((p) => (typeof p.text === "string" ? p.text : "")).join("");

const tokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));

interface Candidate {
  parts: Part[];
  finishReason: string;
}

const SAFETY_RATINGS = (blocked: boolean) => [
  { category: "HARM_CATEGORY_HARASSMENT", probability: blocked ? "HIGH" : "NEGLIGIBLE", ...(blocked ? { blocked: true } : {}) },
  { category: "HARM_CATEGORY_HATE_SPEECH", probability: "NEGLIGIBLE" },
  { category: "HARM_CATEGORY_SEXUALLY_EXPLICIT", probability: "NEGLIGIBLE" },
  { category: "HARM_CATEGORY_DANGEROUS_CONTENT", probability: "NEGLIGIBLE" },
];

/** finishReasons that come without content: the answer was withheld */
const WITHHELD = new Set(["SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"]);

const callId = () => Math.random().toString(36).slice(2, 10);

export async function startGeminiUpstream(opts: { port?: number } = {}): Promise<GeminiUpstream> {
  let apiKey: string | undefined;
  let latencyMs = 0;
  const calls = { count: 0, requests: [] as RecordedCall[] };
  const faults = new FaultQueue<GeminiFault>();

  async function applyFault(rec: RecordedCall, signal: AbortSignal): Promise<{ fault?: GeminiFault; early?: Response }> {
    const fault = faults.next(rec.model);
    rec.fault = fault;
    return { fault, early: await faultAnswer(fault, rec, signal, latencyMs, faultError) };
  }

  /** The candidates of one request: a function call, JSON for a response schema, or text. */
  function answer(body: Record<string, unknown>, fault: GeminiFault | undefined): Candidate[] {
    const contents = body.contents as Content[];
    const last = contents[contents.length - 1];
    const afterResponse = (last?.parts ?? []).some((p) => isObj(p.functionResponse));
    const gc = (isObj(body.generationConfig) ? body.generationConfig : {}) as Record<string, unknown>;
    const seed = JSON.stringify(contents);
    const decl = fault?.malformed || fault?.content !== undefined ? undefined : toCall(body, afterResponse);
    const n = typeof gc.candidateCount === "number" ? gc.candidateCount : 1;
    const out: Candidate[] = [];
    for (let i = 0; i < n; i++) {
      if (decl) {
        const args = synthesize(decl.parameters ?? { type: "object", properties: {} }, `${seed}${decl.name}`);
        out.push({ parts: [{ functionCall: { name: decl.name, args } }], finishReason: "STOP" });
        continue;
      }
      const schema =
        gc.responseMimeType === "application/json"
          ? gc.responseJsonSchema !== undefined
            ? (gc.responseJsonSchema as JsonSchema)
            : gc.responseSchema !== undefined
              ? fromGeminiSchema(gc.responseSchema)
              : { type: "object", properties: {} }
          : undefined;
      let text: string;
      if (fault?.malformed) text = '{"answer": "cut off in the midd';
      else if (fault?.content !== undefined) text = fault.content;
      else if (schema) {
        const value = synthesize(schema, seed);
        text = JSON.stringify(fault?.schemaInvalid ? { unexpected: true } : value);
      } else if (afterResponse) {
        const fr = (last?.parts ?? []).find((p) => isObj(p.functionResponse))?.functionResponse as Record<string, unknown>;
        text = `Tool said: ${JSON.stringify(fr.response)}`;
      } else {
        const user = [...contents].reverse().find((c) => c.role !== "model");
        text = mockText(textOfParts(user?.parts));
      }
      if (n > 1) text = `${text} (${i + 1})`;
      text = applyStop(text, gc.stopSequences);
      let finishReason = "STOP";
      const cap = typeof gc.maxOutputTokens === "number" ? gc.maxOutputTokens : undefined;
      if (cap !== undefined && tokens(text) > cap) {
        text = text.slice(0, cap * 4);
        finishReason = "MAX_TOKENS";
      }
      if (i === 0 && fault?.finishReason) finishReason = fault.finishReason;
      out.push({ parts: WITHHELD.has(finishReason) ? [] : [{ text }], finishReason });
    }
    return out;
  }

  function usage(body: Record<string, unknown>, cands: Candidate[], fault: GeminiFault | undefined) {
    const prompt = tokens(JSON.stringify([body.contents, body.systemInstruction ?? null, body.tools ?? null]));
    const out = cands.reduce((s, c) => s + (c.parts.length ? tokens(JSON.stringify(c.parts)) : 0), 0);
    const u: Record<string, unknown> = { promptTokenCount: prompt, candidatesTokenCount: out, ...fault?.usage };
    const thoughts = typeof u.thoughtsTokenCount === "number" ? u.thoughtsTokenCount : 0;
    u.totalTokenCount = (u.promptTokenCount as number) + (u.candidatesTokenCount as number) + thoughts;
    u.promptTokensDetails = [{ modality: "TEXT", tokenCount: u.promptTokenCount }];
    return u;
  }

  const responseId = () => `sim-${callId()}`;

  function candidateJson(c: Candidate, index: number, parts = c.parts, finish: string | null = c.finishReason) {
    const blocked = WITHHELD.has(c.finishReason);
    return {
      content: { role: "model", parts },
      ...(finish ? { finishReason: finish } : {}),
      index,
      ...(finish ? { safetyRatings: SAFETY_RATINGS(blocked) } : {}),
    };
  }

  async function generate(model: string, body: Record<string, unknown>, rec: RecordedCall, signal: AbortSignal, sse: boolean) {
    const { fault, early } = await applyFault(rec, signal);
    if (early) return early;
    const bad = invalid(body);
    if (bad) return googleError(400, bad);
    const head = { modelVersion: model, responseId: responseId() };
    if (fault?.blockReason) {
      const blocked = {
        promptFeedback: { blockReason: fault.blockReason, safetyRatings: SAFETY_RATINGS(true) },
        usageMetadata: usage(body, [], fault),
        ...head,
      };
      if (!rec.stream) return json(blocked);
      return chunkStream([blocked], false, signal, () => (rec.aborted = true), sse);
    }
    const cands = answer(body, fault);
    const u = usage(body, cands, fault);
    if (!rec.stream) return json({ candidates: cands.map((c, i) => candidateJson(c, i)), usageMetadata: u, ...head });
    const chunks: unknown[] = [];
    const promptOnly = { promptTokenCount: u.promptTokenCount, totalTokenCount: u.promptTokenCount };
    cands.forEach((c, index) => {
      const text = c.parts.length === 1 && typeof c.parts[0]?.text === "string" ? (c.parts[0].text as string) : undefined;
      const pieces = text === undefined ? [] : fault?.chunkChars ? chop(text, fault.chunkChars) : text.split(/(?<=\s)/);
      if (text === undefined) {
        // a function call comes whole, in one chunk; a withheld answer has only its finishReason
        if (c.parts.length > 0)
          chunks.push({ candidates: [candidateJson(c, index, c.parts, null)], usageMetadata: promptOnly, ...head });
      } else
        for (const piece of pieces.slice(0, -1))
          chunks.push({
            candidates: [candidateJson(c, index, [{ text: piece }], null)],
            usageMetadata: promptOnly,
            ...head,
          });
      const lastPiece = pieces.at(-1);
      const finalParts = lastPiece !== undefined ? [{ text: lastPiece }] : [];
      const final = index === cands.length - 1;
      chunks.push({
        candidates: [candidateJson(c, index, finalParts.length ? finalParts : text === undefined ? [] : [{ text: "" }])],
        usageMetadata: final ? u : promptOnly,
        ...head,
      });
    });
    return chunkStream(chunks, fault?.streamCut === true, signal, () => (rec.aborted = true), sse);
  }

  async function embed(model: string, body: Record<string, unknown>, rec: RecordedCall, signal: AbortSignal, batch: boolean) {
    const { early } = await applyFault(rec, signal);
    if (early) return early;
    const one = (req: unknown, at: string): number[] | string => {
      const content = isObj(req) ? req.content : undefined;
      if (!isObj(content) || !Array.isArray(content.parts)) return `* ${at}.content: content is not specified`;
      const dims = isObj(req) && typeof req.outputDimensionality === "number" ? req.outputDimensionality : 64;
      return hashEmbedding(textOfParts(content.parts as Part[]), dims);
    };
    if (!batch) {
      const v = one(body, "EmbedContentRequest");
      return typeof v === "string" ? googleError(400, v) : json({ embedding: { values: v } });
    }
    const requests = Array.isArray(body.requests) ? body.requests : [];
    if (requests.length === 0) return googleError(400, "* BatchEmbedContentsRequest.requests: requests is not specified");
    if (requests.length > 100)
      return googleError(400, "* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch");
    const out: { values: number[] }[] = [];
    for (const [i, r] of requests.entries()) {
      const m = isObj(r) ? r.model : undefined;
      if (m !== `models/${model}`)
        return googleError(
          400,
          `* BatchEmbedContentsRequest.requests[${i}].model: model must be models/${model}, got ${String(m)}`,
        );
      const v = one(r, `BatchEmbedContentsRequest.requests[${i}]`);
      if (typeof v === "string") return googleError(400, v);
      out.push({ values: v });
    }
    return json({ embeddings: out });
  }

  const server = Bun.serve({
    port: opts.port ?? 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const key = req.headers.get("x-goog-api-key") ?? url.searchParams.get("key");
      if (!key)
        return googleError(
          403,
          "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
        );
      if (apiKey !== undefined && key !== apiKey) return faultError({ status: 400, badKey: true });
      // v1beta has every feature; v1 (the SDK's default since 1.x) the same methods
      const m = /^\/v1(?:beta)?\/models\/([^/:]+)(?::([A-Za-z]+))?$/.exec(url.pathname);
      if (req.method === "GET" && /^\/v1(beta)?\/models$/.test(url.pathname))
        return json({ models: ["gemini-2.5-flash", "text-embedding-004"].map((id) => ({ name: `models/${id}` })) });
      if (req.method === "GET" && m && !m[2]) return json({ name: `models/${decodeURIComponent(m[1] as string)}` });
      if (req.method !== "POST" || !m?.[2]) return googleError(404, `Method not found: ${req.method} ${url.pathname}`);
      const model = decodeURIComponent(m[1] as string);
      const method = m[2];
      let body: Record<string, unknown>;
      let raw = "";
      try {
        raw = await req.text();
        const parsed: unknown = JSON.parse(raw);
        if (!isObj(parsed)) throw new Error("not an object");
        body = parsed;
      } catch {
        return googleError(400, "Invalid JSON payload received.");
      }
      calls.count++;
      const stream = method === "streamGenerateContent";
      const rec: RecordedCall = {
        path: `${url.pathname}${url.search}`,
        model,
        stream,
        body,
        raw,
        headers: Object.fromEntries(req.headers),
        aborted: false,
        status: 200,
        at: Date.now(),
      };
      calls.requests.push(rec);
      req.signal.addEventListener("abort", () => (rec.aborted = true), { once: true });
      let res: Response;
      if (method === "generateContent" || stream)
        res = await generate(model, body, rec, req.signal, url.searchParams.get("alt") === "sse");
      else if (method === "embedContent" || method === "batchEmbedContents")
        res = await embed(model, body, rec, req.signal, method === "batchEmbedContents");
      else if (method === "countTokens") res = json({ totalTokens: tokens(JSON.stringify(body.contents ?? "")) });
      else res = googleError(404, `Method not found: ${method}`);
      rec.status = res.status;
      return res;
    },
  });

  const port = server.port as number;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    calls,
    program(list, scope) {
      faults.program(list, scope?.model);
    },
    configure(o) {
      if ("apiKey" in o) apiKey = o.apiKey;
      if (o.latencyMs !== undefined) latencyMs = o.latencyMs;
    },
    reset() {
      faults.clear();
      calls.count = 0;
      calls.requests.length = 0;
      apiKey = undefined;
      latencyMs = 0;
    },
    async close() {
      await server.stop(true);
    },
  };
}

function chop(text: string, chars: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += chars) out.push(text.slice(i, i + chars));
  return out;
}

/**
 * `alt=sse`: each response a `data:` event ended by CRLF CRLF (as the API frames them), closed
 * after the last with no end marker; without it, a JSON array of the responses.
 */
function chunkStream(chunks: unknown[], cut: boolean, signal: AbortSignal, onAbort: () => void, sse: boolean): Response {
  const frames = sse
    ? chunks.map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`)
    : chunks.map((c, i) => `${i === 0 ? "[" : ",\r\n"}${JSON.stringify(c)}${i === chunks.length - 1 ? "]" : ""}`);
  return sseStream(frames, cut, signal, onAbort, sse ? "text/event-stream" : "application/json");
}

/** A `[[providers]]` entry of type `gemini` for the simulator at `url`. */
export function geminiProvider(opts: { url: string; name?: string; model?: string; extra?: string }): string {
  return [
    "[[providers]]",
    `name = "${opts.name ?? "gem"}"`,
    'type = "gemini"',
    `base_url = "${opts.url}"`,
    'api_key = "gm-sim-key"',
    ...(opts.model ? [`default_model = "${opts.model}"`] : []),
    ...(opts.extra ? [opts.extra] : []),
    "",
  ].join("\n");
}
