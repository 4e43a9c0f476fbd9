/**
 * OpenAI-compatible upstream simulator for tests, benchmarks and load tests.
 *
 *   const sim = await startUpstream();
 *   sim.program([{ status: 500, times: 2 }, { delayMs: 2000 }]);   // faults, consumed in order, one per call
 *   ... point an SDK at sim.url + "/v1" (Groq SDK: sim.url, it adds /openai/v1) ...
 *   sim.calls.count; sim.calls.requests[0].aborted; sim.reset(); await sim.close();
 *
 * Standalone: bun test/helpers/upstream.ts --port 9000 [--latency-ms N]
 */
import { hashEmbedding } from "../../src/providers/embedding";
import { schemaFromInstruction } from "../../src/providers/structured";
import { synthesize } from "../../src/providers/synthesize";
import type { JsonSchema } from "../../src/providers/types";
import { mockText } from "../../src/providers/vendors/mock/provider";

export interface Fault {
  /** answer this HTTP status with an OpenAI-style error body */
  status?: number;
  /** with status: Retry-After header, in seconds */
  retryAfter?: number;
  /** with status 400: an error naming the context length (code context_length_exceeded) */
  contextLength?: boolean;
  /** wait this long before answering (aborts count as `aborted` in calls) */
  delayMs?: number;
  /** close the connection without an answer */
  drop?: boolean;
  /** answer 200 with model content that is not JSON */
  malformed?: boolean;
  /** answer 200 with JSON content that violates the requested schema */
  schemaInvalid?: boolean;
  /** answer 200 with exactly this model content (chat completions, the Responses API's text): what a model would say */
  content?: string;
  /** streaming: send a couple of chunks, then close the connection */
  streamCut?: boolean;
  /** streaming: cut the text into pieces of this many characters (default: at whitespace) */
  chunkChars?: number;
  /** with status: the error object's fields (default: a server_error without code) */
  errorType?: string;
  errorCode?: string;
  param?: string;
  message?: string;
  /**
   * answer exactly these bytes (default status 200, content type application/json): a malformed
   * body, a text error page, an empty answer, a stream with a broken or an error event
   */
  raw?: { status?: number; contentType?: string; body: string };
  /** answer 200 with a JSON body that never ends (chunked, 1 MiB a piece, until the reader leaves); `sent` counts its bytes */
  endless?: { sent: number };
  /** how many calls this fault applies to (default 1) */
  times?: number;
}

export interface RecordedCall {
  path: string;
  model: string | undefined;
  stream: boolean;
  /** parsed JSON body (tests only: the simulator keeps what it was sent) */
  body: Record<string, unknown>;
  /** the body's bytes as they arrived, as text ("" when not recording) */
  raw: string;
  /** request headers, names in lower case ({} when not recording) */
  headers: Record<string, string>;
  fault?: Fault;
  /** the client went away before the answer was complete */
  aborted: boolean;
  status: number;
  /** when the call arrived (Date.now()) */
  at: number;
}

export interface SimOptions {
  port?: number;
  /** latency added to every answer */
  latencyMs?: number;
  /** answer 400 to response_format json_schema (as many OpenAI-compatible servers do) */
  rejectJsonSchema?: boolean;
  /** standalone/bench mode: keep no call records */
  record?: boolean;
  /** model ids for GET /v1/models and GET /v1/models/{id} */
  models?: string[];
  /** false: no GET /v1/models/{id} route (as vLLM), only the list */
  modelById?: boolean;
  /**
   * "estimate" (default): prompt usage about 4 characters a token of the messages or input;
   * "tokens": the request's real count, as a provider bills it (see requestTokens)
   */
  usage?: "estimate" | "tokens";
  /** with usage "tokens": tokens an image part costs (default 1445: gpt-4o's most, high detail) */
  imageTokens?: number;
}

export interface Upstream {
  url: string;
  port: number;
  calls: { count: number; requests: RecordedCall[] };
  /** the paths of the GET /v1/models... calls since the last reset (not in `calls`) */
  lookups: string[];
  /** queue faults for the next calls (for calls to `model` only, when given) */
  program(faults: Fault[], opts?: { model?: string }): void;
  configure(opts: Pick<SimOptions, "latencyMs" | "rejectJsonSchema" | "usage" | "imageTokens">): void;
  reset(): void;
  close(): Promise<void>;
}

/** 1x1 PNG for image answers. */
const PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

const json = (data: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(data), { status, headers: { "content-type": "application/json", ...headers } });

function errorBody(status: number, fault: Fault): Response {
  const headers: Record<string, string> = {};
  if (fault.retryAfter !== undefined) headers["retry-after"] = String(fault.retryAfter);
  if (fault.contextLength) {
    return json(
      {
        error: {
          message: "This model's maximum context length is 8192 tokens.",
          type: "invalid_request_error",
          param: "messages",
          code: "context_length_exceeded",
        },
      },
      status,
      headers,
    );
  }
  const error = {
    message: fault.message ?? `simulated upstream error ${status}`,
    type: fault.errorType ?? (status < 500 ? "invalid_request_error" : "server_error"),
    param: fault.param ?? null,
    code: fault.errorCode ?? null,
  };
  return json({ error }, status, headers);
}

/** A connection reset: erroring the body stream before any byte makes Bun close the socket without a response. */
export function dropped(): Response {
  return new Response(
    new ReadableStream({
      start(c) {
        c.error(undefined);
      },
    }),
  );
}

export function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const t = setTimeout(() => resolve(true), ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(t);
        resolve(false);
      },
      { once: true },
    );
  });
}

type Msg = { role?: string; content?: unknown };

function messagesOf(body: Record<string, unknown>): Msg[] {
  return Array.isArray(body.messages) ? (body.messages as Msg[]) : [];
}

/** Text of a message's content: a string, or the text of its parts. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((p) =>
      typeof p === "object" && p !== null && typeof (p as { text?: unknown }).text === "string"
        ? (p as { text: string }).text
        : "",
    )
    .join("");
}

function lastUser(messages: Msg[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role === "user") return textOf(m.content);
  }
  return "";
}

/** The schema the client asked for: json_schema, or (json_object mode) the one written into the system prompt. */
function requestedSchema(body: Record<string, unknown>): JsonSchema | undefined {
  const rf = body.response_format as { type?: string; json_schema?: { schema?: JsonSchema } } | undefined;
  if (rf?.type === "json_schema") return rf.json_schema?.schema;
  if (rf?.type === "json_object") {
    const system = messagesOf(body).find((m) => m.role === "system" && typeof m.content === "string");
    return (system && schemaFromInstruction(system.content as string)) ?? { type: "object", properties: {} };
  }
  return undefined;
}

/** Breaks a valid answer: every top-level value gets the wrong type. */
function invalidate(value: unknown): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { unexpected: true };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = typeof v === "string" ? 12345 : "not-the-right-type";
  return Object.keys(out).length ? out : 42;
}

interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** One choice the simulator answers: text, or a call of one of the request's tools. */
interface Answer {
  content: string | null;
  toolCalls?: ToolCall[];
  finish: "stop" | "tool_calls" | "length";
}

const tokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));

/** o200k_base (gpt-4o's encoding), loaded on first use (a few seconds). */
let o200k: Promise<{ encode(text: string): number[] }> | null = null;
const tokenizer = () => {
  o200k ??= (async () => {
    const { Tiktoken } = await import("js-tiktoken/lite");
    const ranks = (await import("js-tiktoken/ranks/o200k_base")).default;
    return new Tiktoken(ranks);
  })();
  return o200k;
};

const IMAGE_PARTS = new Set(["image_url", "input_image", "image"]);

/**
 * What a provider bills a request's prompt, counted independently of the gateway: every string of
 * the body (keys and values, every field) through a real tokenizer (o200k_base, in pieces of 16
 * characters: js-tiktoken is quadratic on a long run without spaces, and pieces only ever count more),
 * every number one token (embeddings' token ids), every object and array one token of template,
 * every image part `imageTokens` (its data: URL not read as text), plus 16 for the chat template.
 */
export async function requestTokens(body: unknown, imageTokens: number): Promise<number> {
  const enc = await tokenizer();
  const text = (s: string) => {
    let n = 0;
    for (let i = 0; i < s.length; i += 16) n += enc.encode(s.slice(i, i + 16)).length;
    return n;
  };
  const walk = (v: unknown): number => {
    if (typeof v === "string") return text(v);
    if (typeof v === "number" || typeof v === "boolean") return 1;
    if (Array.isArray(v)) return v.reduce((n: number, c) => n + walk(c), 1);
    if (v === null || typeof v !== "object") return 0;
    const o = v as Record<string, unknown>;
    let n = 1;
    if (typeof o.type === "string" ? IMAGE_PARTS.has(o.type) : "image_url" in o) n += imageTokens;
    for (const [k, c] of Object.entries(o)) {
      const url = typeof c === "string" ? c : c && typeof c === "object" ? (c as { url?: unknown }).url : undefined;
      if (k === "image_url" && typeof url === "string" && url.startsWith("data:")) continue;
      n += text(k) + walk(c);
    }
    return n;
  };
  return 16 + walk(body);
}

/**
 * The output cap a request sets (max_completion_tokens, max_tokens, max_output_tokens), per choice:
 * in "tokens" usage mode the simulator bills no more than it, as a provider stops there.
 */
function outputCap(body: Record<string, unknown>): number {
  const cap = body.max_completion_tokens ?? body.max_tokens ?? body.max_output_tokens;
  return typeof cap === "number" && cap > 0 ? cap : Number.POSITIVE_INFINITY;
}

function usageOf(body: Record<string, unknown>, answers: Answer[], counted?: number) {
  const prompt = counted ?? tokens(JSON.stringify(body.messages ?? body.input ?? ""));
  const cap = counted === undefined ? Number.POSITIVE_INFINITY : outputCap(body);
  const completion = answers.reduce((n, a) => n + Math.min(cap, tokens(a.content ?? JSON.stringify(a.toolCalls ?? ""))), 0);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

function logprobsOf(content: string | null) {
  return {
    content: (content ?? "")
      .split(/(?<=\s)/)
      .filter(Boolean)
      .map((token) => ({ token, logprob: -0.25, bytes: [...Buffer.from(token)], top_logprobs: [] })),
    refusal: null,
  };
}

function completion(model: string, body: Record<string, unknown>, answers: Answer[], counted?: number) {
  return {
    id: `chatcmpl-sim-${Math.random().toString(36).slice(2, 10)}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    system_fingerprint: "fp_sim",
    service_tier: typeof body.service_tier === "string" ? body.service_tier : "default",
    choices: answers.map((a, index) => ({
      index,
      message: {
        role: "assistant",
        content: a.content,
        refusal: null,
        annotations: [],
        ...(a.toolCalls ? { tool_calls: a.toolCalls } : {}),
      },
      finish_reason: a.finish,
      logprobs: body.logprobs === true ? logprobsOf(a.content) : null,
    })),
    usage: usageOf(body, answers, counted),
  };
}

/** The SSE frames of a streamed answer: role, content or tool-call argument deltas, finish, usage chunk when asked. */
/** A streamed text's deltas: after each whitespace, or every `chars` characters (a word cut in two). */
function pieces(text: string, chars?: number): string[] {
  if (!chars) return text.split(/(?<=\s)/);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += chars) out.push(text.slice(i, i + chars));
  return out;
}

function chunkFrames(
  model: string,
  body: Record<string, unknown>,
  answers: Answer[],
  chunkChars?: number,
  counted?: number,
): string[] {
  const id = `chatcmpl-sim-${Math.random().toString(36).slice(2, 10)}`;
  const created = Math.floor(Date.now() / 1000);
  const withUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
  const frame = (choices: unknown[], usage?: unknown) =>
    `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, system_fingerprint: "fp_sim", choices, ...(withUsage ? { usage: usage ?? null } : {}) })}\n\n`;
  const frames: string[] = [];
  answers.forEach((a, index) => {
    const delta = (d: Record<string, unknown>, finish: string | null = null) =>
      frame([{ index, delta: d, finish_reason: finish, logprobs: null }]);
    frames.push(delta({ role: "assistant", content: a.toolCalls ? null : "", refusal: null }));
    if (a.toolCalls) {
      a.toolCalls.forEach((call, i) => {
        frames.push(
          delta({
            tool_calls: [{ index: i, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }],
          }),
        );
        const args = call.function.arguments;
        const half = Math.ceil(args.length / 2);
        for (const piece of [args.slice(0, half), args.slice(half)])
          if (piece) frames.push(delta({ tool_calls: [{ index: i, function: { arguments: piece } }] }));
      });
    } else for (const piece of pieces(a.content ?? "", chunkChars)) if (piece) frames.push(delta({ content: piece }));
    frames.push(delta({}, a.finish));
  });
  if (withUsage) frames.push(frame([], usageOf(body, answers, counted)));
  frames.push("data: [DONE]\n\n");
  return frames;
}

/** Paced SSE (so a client can disconnect mid-stream); `cut` errors the body after a few frames. The Gemini simulator's too, and the Bedrock simulator's binary event stream messages. */
export function sseStream(
  /** text frames, or bytes (the Bedrock simulator's binary event stream messages) */
  frames: (string | Uint8Array)[],
  cut: boolean,
  signal: AbortSignal,
  onAbort: () => void,
  contentType = "text/event-stream",
): Response {
  const enc = new TextEncoder();
  let i = 0;
  return new Response(
    new ReadableStream({
      async pull(c) {
        if (signal.aborted) {
          onAbort();
          c.close();
          return;
        }
        if (cut && i >= 3) {
          c.error(undefined);
          return;
        }
        const f = frames[i++];
        if (f === undefined) {
          c.close();
          return;
        }
        c.enqueue(typeof f === "string" ? enc.encode(f) : f);
        // The last frame closes the body at once, so a client that stops reading after it is not an abort.
        if (i === frames.length) {
          c.close();
          return;
        }
        // A little pacing so a client can disconnect mid-stream in tests.
        await Bun.sleep(2);
      },
      cancel() {
        onAbort();
      },
    }),
    { headers: { "content-type": contentType, "cache-control": "no-cache" } },
  );
}

/** Cuts `text` at the first of the request's stop sequences. */
export function applyStop(text: string, stop: unknown): string {
  const list = typeof stop === "string" ? [stop] : Array.isArray(stop) ? stop.filter((s) => typeof s === "string") : [];
  let end = text.length;
  for (const s of list) {
    const at = text.indexOf(s);
    if (s && at >= 0 && at < end) end = at;
  }
  return text.slice(0, end);
}

type ToolDef = { name: string; parameters?: JsonSchema };

/** Chat tools ({type:"function", function:{...}}) and Responses tools ({type:"function", name, ...}) alike. */
function toolsOf(body: Record<string, unknown>): ToolDef[] {
  const tools = Array.isArray(body.tools) ? (body.tools as Record<string, unknown>[]) : [];
  return tools
    .map((t) => (t.function ?? t) as { name?: unknown; parameters?: JsonSchema })
    .filter((f) => typeof f.name === "string")
    .map((f) => ({ name: f.name as string, parameters: f.parameters }));
}

/**
 * The tool the simulator calls, if any: the one tool_choice forces, else the first tool unless
 * the conversation just returned a tool result (then it answers in text, ending an agent loop).
 */
function toolToCall(body: Record<string, unknown>, afterToolResult: boolean): ToolDef | undefined {
  const tools = toolsOf(body);
  const choice = body.tool_choice as string | { function?: { name?: string }; name?: string } | undefined;
  if (tools.length === 0 || choice === "none") return undefined;
  if (typeof choice === "object" && choice !== null) {
    const name = choice.function?.name ?? choice.name;
    return tools.find((t) => t.name === name) ?? tools[0];
  }
  if (choice === "required") return tools[0];
  return afterToolResult ? undefined : tools[0];
}

const callId = () => `call_sim_${Math.random().toString(36).slice(2, 10)}`;

function encodeBase64Floats(v: number[]): string {
  return Buffer.from(new Float32Array(v).buffer).toString("base64");
}

/** Faults per model scope ("" for any model), consumed in order, one per call (`times` repeats one). The Gemini simulator's too. */
export class FaultQueue<F extends Fault> {
  private readonly queues = new Map<string, F[]>();

  program(faults: F[], model = ""): void {
    this.queues.set(model, [...(this.queues.get(model) ?? []), ...faults.map((f) => ({ ...f }))]);
  }

  next(model: string | undefined): F | undefined {
    const scoped = model !== undefined ? this.queues.get(model) : undefined;
    const queue = scoped?.length ? scoped : this.queues.get("");
    const head = queue?.[0];
    if (!queue || !head) return undefined;
    const left = (head.times ?? 1) - 1;
    if (left <= 0) queue.shift();
    else queue[0] = { ...head, times: left };
    return head;
  }

  clear(): void {
    this.queues.clear();
  }
}

/**
 * What a fault answers by itself, after the call's delay: a client gone during it (499), a dropped
 * connection, an endless body, raw bytes, or an error status in the vendor's own shape (`error`);
 * undefined when the simulator is to answer. Both simulators' faults mean the same.
 */
export async function faultAnswer<F extends Fault>(
  fault: F | undefined,
  rec: RecordedCall,
  signal: AbortSignal,
  latencyMs: number,
  error: (fault: F) => Response,
): Promise<Response | undefined> {
  const delay = latencyMs + (fault?.delayMs ?? 0);
  if (delay > 0 && !(await sleep(delay, signal))) {
    rec.aborted = true;
    return new Response(null, { status: 499 });
  }
  if (fault?.drop) return dropped();
  if (fault?.endless) {
    const tally = fault.endless;
    const piece = new TextEncoder().encode(" ".repeat(1024 * 1024));
    const body = new ReadableStream<Uint8Array>({
      start: (ctrl) => ctrl.enqueue(new TextEncoder().encode('{"id":"')),
      pull: async (ctrl) => {
        await Bun.sleep(0);
        tally.sent += piece.length;
        ctrl.enqueue(piece);
      },
    });
    return new Response(body, { headers: { "content-type": "application/json" } });
  }
  if (fault?.raw) {
    const { status = 200, contentType = "application/json", body } = fault.raw;
    return new Response(body, { status, headers: { "content-type": contentType } });
  }
  if (fault?.status) return error(fault);
  return undefined;
}

export async function startUpstream(opts: SimOptions = {}): Promise<Upstream> {
  let latencyMs = opts.latencyMs ?? 0;
  let rejectJsonSchema = opts.rejectJsonSchema ?? false;
  let usageMode = opts.usage ?? "estimate";
  let imageTokens = opts.imageTokens ?? 1445;
  /** the prompt's billed tokens in "tokens" mode; undefined: the estimate */
  const counted = async (body: unknown) => (usageMode === "tokens" ? await requestTokens(body, imageTokens) : undefined);
  const record = opts.record ?? true;
  const calls = { count: 0, requests: [] as RecordedCall[] };
  const lookups: string[] = [];
  const faults = new FaultQueue<Fault>();
  const answerCache = new Map<string, string>();

  /** The next fault for this call, after its delay; `early` is the answer when the fault is the whole answer. */
  async function applyFault(rec: RecordedCall, signal: AbortSignal): Promise<{ fault?: Fault; early?: Response }> {
    const fault = faults.next(rec.model);
    rec.fault = fault;
    return { fault, early: await faultAnswer(fault, rec, signal, latencyMs, (f) => errorBody(f.status as number, f)) };
  }

  async function chat(body: Record<string, unknown>, rec: RecordedCall, signal: AbortSignal): Promise<Response> {
    const { fault, early } = await applyFault(rec, signal);
    if (early) return early;
    const rf = body.response_format as { type?: string } | undefined;
    if (rejectJsonSchema && rf?.type === "json_schema") {
      return json(
        {
          error: {
            message: "response_format json_schema is not supported for this model",
            type: "invalid_request_error",
            param: "response_format",
            code: null,
          },
        },
        400,
      );
    }
    const model = rec.model ?? "sim-model";
    const messages = messagesOf(body);
    const last = messages[messages.length - 1];
    const afterTool = last?.role === "tool" || last?.role === "function";
    const tool = fault?.malformed ? undefined : toolToCall(body, afterTool);
    const seed = JSON.stringify(body.messages ?? "");
    let content: string;
    let toolCalls: ToolCall[] | undefined;
    const schema = requestedSchema(body);
    if (tool) {
      const args = JSON.stringify(synthesize(tool.parameters ?? { type: "object", properties: {} }, `${seed}${tool.name}`));
      toolCalls = [{ id: callId(), type: "function", function: { name: tool.name, arguments: args } }];
      content = "";
    } else if (fault?.malformed) content = '{"answer": "cut off in the midd';
    else if (fault?.content !== undefined) content = fault.content;
    else if (schema) {
      const name = (rf as { json_schema?: { name?: string } } | undefined)?.json_schema?.name;
      const key = record ? "" : (name ?? JSON.stringify(schema));
      // Bench mode: one synthesis per schema, since the answer's content does not matter there.
      const cached = key ? answerCache.get(key) : undefined;
      const value = cached ?? JSON.stringify(synthesize(schema, seed));
      if (key && !cached && answerCache.size < 1000) answerCache.set(key, value);
      content = fault?.schemaInvalid ? JSON.stringify(invalidate(JSON.parse(value))) : value;
    } else if (afterTool) content = `Tool said: ${textOf(last?.content)}`;
    else content = mockText(lastUser(messages));
    const n = typeof body.n === "number" && body.n > 1 ? Math.min(body.n, 8) : 1;
    const answers: Answer[] = Array.from({ length: n }, (_, i) =>
      toolCalls
        ? { content: null, toolCalls, finish: "tool_calls" }
        : { content: applyStop(n > 1 ? `${content} (${i + 1})` : content, body.stop), finish: "stop" },
    );
    const prompt = await counted(body);
    if (rec.stream)
      return sseStream(
        chunkFrames(model, body, answers, fault?.chunkChars, prompt),
        fault?.streamCut === true,
        signal,
        () => (rec.aborted = true),
      );
    return json(completion(model, body, answers, prompt));
  }

  /** The Responses API: text, a function_call of one of its tools, or JSON for text.format json_schema; streamed as named events. */
  async function responses(body: Record<string, unknown>, rec: RecordedCall, signal: AbortSignal): Promise<Response> {
    const { fault, early } = await applyFault(rec, signal);
    if (early) return early;
    const model = rec.model ?? "sim-model";
    const items: Record<string, unknown>[] =
      typeof body.input === "string" ? [{ role: "user", content: body.input }] : Array.isArray(body.input) ? body.input : [];
    const last = items[items.length - 1];
    const afterTool = last?.type === "function_call_output";
    const userText = textOf([...items].reverse().find((i) => i.role === "user")?.content);
    const tool = toolToCall(body, afterTool);
    const format = (body.text as { format?: { type?: string; schema?: JsonSchema } } | undefined)?.format;
    const seed = JSON.stringify(body.input ?? "");
    const rid = Math.random().toString(36).slice(2, 10);
    let item: Record<string, unknown>;
    if (tool) {
      const args = JSON.stringify(synthesize(tool.parameters ?? { type: "object", properties: {} }, `${seed}${tool.name}`));
      item = {
        type: "function_call",
        id: `fc_sim_${rid}`,
        call_id: callId(),
        name: tool.name,
        arguments: args,
        status: "completed",
      };
    } else {
      const text =
        format?.type === "json_schema" && format.schema
          ? JSON.stringify(synthesize(format.schema, seed))
          : fault?.content !== undefined
            ? fault.content
            : afterTool
              ? `Tool said: ${String(last?.output ?? "")}`
              : mockText(userText);
      item = {
        type: "message",
        id: `msg_sim_${rid}`,
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text, annotations: [], logprobs: [] }],
      };
    }
    const inCounted = await counted(body);
    const inTokens = inCounted ?? tokens(seed);
    const outTokens = Math.min(
      inCounted === undefined ? Number.POSITIVE_INFINITY : outputCap(body),
      tokens(JSON.stringify(item)),
    );
    const response = (status: string, output: unknown[]) => ({
      id: `resp_sim_${rid}`,
      object: "response",
      created_at: Math.floor(Date.now() / 1000),
      status,
      error: null,
      incomplete_details: null,
      instructions: body.instructions ?? null,
      max_output_tokens: body.max_output_tokens ?? null,
      model,
      output,
      parallel_tool_calls: true,
      previous_response_id: body.previous_response_id ?? null,
      reasoning: { effort: null, summary: null },
      store: body.store ?? true,
      temperature: body.temperature ?? 1,
      text: body.text ?? { format: { type: "text" } },
      tool_choice: body.tool_choice ?? "auto",
      tools: body.tools ?? [],
      top_p: body.top_p ?? 1,
      truncation: "disabled",
      usage:
        status === "completed"
          ? {
              input_tokens: inTokens,
              input_tokens_details: { cached_tokens: 0 },
              output_tokens: outTokens,
              output_tokens_details: { reasoning_tokens: 0 },
              total_tokens: inTokens + outTokens,
            }
          : null,
      user: body.user ?? null,
      metadata: body.metadata ?? {},
    });
    if (!rec.stream) return json(response("completed", [item]));
    let seq = 0;
    const frames: string[] = [];
    const event = (type: string, data: Record<string, unknown>) =>
      frames.push(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`);
    event("response.created", { response: response("in_progress", []) });
    event("response.in_progress", { response: response("in_progress", []) });
    const ids = { item_id: item.id, output_index: 0 };
    if (item.type === "function_call") {
      event("response.output_item.added", { output_index: 0, item: { ...item, arguments: "", status: "in_progress" } });
      const args = item.arguments as string;
      const half = Math.ceil(args.length / 2);
      for (const delta of [args.slice(0, half), args.slice(half)])
        if (delta) event("response.function_call_arguments.delta", { ...ids, delta });
      event("response.function_call_arguments.done", { ...ids, arguments: args });
    } else {
      const text = ((item.content as { text: string }[])[0] as { text: string }).text;
      event("response.output_item.added", { output_index: 0, item: { ...item, status: "in_progress", content: [] } });
      const part = { type: "output_text", text: "", annotations: [], logprobs: [] };
      event("response.content_part.added", { ...ids, content_index: 0, part });
      for (const delta of pieces(text, fault?.chunkChars))
        if (delta) event("response.output_text.delta", { ...ids, content_index: 0, delta, logprobs: [] });
      event("response.output_text.done", { ...ids, content_index: 0, text, logprobs: [] });
      event("response.content_part.done", { ...ids, content_index: 0, part: { ...part, text } });
    }
    event("response.output_item.done", { output_index: 0, item });
    event("response.completed", { response: response("completed", [item]) });
    return sseStream(frames, fault?.streamCut === true, signal, () => (rec.aborted = true));
  }

  function images(body: Record<string, unknown>, base: string): Response {
    const n = typeof body.n === "number" ? body.n : 1;
    const b64 = body.response_format === "b64_json" || String(body.model ?? "gpt-image-1").startsWith("gpt-image");
    const data = Array.from({ length: n }, (_, i) => (b64 ? { b64_json: PNG_B64 } : { url: `${base}/files/image-${i}.png` }));
    return json({ created: Math.floor(Date.now() / 1000), data, output_format: "png" });
  }

  async function embeddings(body: Record<string, unknown>, rec: RecordedCall, signal: AbortSignal): Promise<Response> {
    const { early } = await applyFault(rec, signal);
    if (early) return early;
    const input = Array.isArray(body.input) ? body.input.map(String) : [String(body.input ?? "")];
    const base64 = body.encoding_format === "base64";
    const data = input.map((text, index) => {
      const v = hashEmbedding(text, 64);
      return { object: "embedding", index, embedding: base64 ? encodeBase64Floats(v) : v };
    });
    const prompt = (await counted(body.input)) ?? input.length;
    return json({
      object: "list",
      data,
      model: body.model ?? "sim-embed",
      usage: { prompt_tokens: prompt, total_tokens: prompt },
    });
  }

  const server = Bun.serve({
    port: opts.port ?? 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    async fetch(req) {
      const url = new URL(req.url);
      // Groq's SDK talks to /openai/v1/..., everyone else to /v1/...
      const path = url.pathname.replace(/^\/openai\/v1\//, "/v1/");
      const ids = opts.models ?? ["sim-model", "sim-model-2"];
      if (req.method === "GET" && path.startsWith("/v1/models")) lookups.push(path);
      if (req.method === "GET" && path === "/v1/models")
        return json({ object: "list", data: ids.map((id) => ({ id, object: "model", created: 0, owned_by: "simulator" })) });
      if (req.method === "GET" && path.startsWith("/v1/models/") && opts.modelById !== false) {
        const id = decodeURIComponent(path.slice("/v1/models/".length));
        if (ids.includes(id)) return json({ id, object: "model", created: 0, owned_by: "simulator" });
        const message = `The model \`${id}\` does not exist or you do not have access to it.`;
        return json({ error: { message, type: "invalid_request_error", param: null, code: "model_not_found" } }, 404);
      }
      if (req.method === "GET" && path.startsWith("/files/"))
        return new Response(Buffer.from(PNG_B64, "base64"), { headers: { "content-type": "image/png" } });
      if (req.method !== "POST") return json({ error: { message: "not found" } }, 404);
      let body: Record<string, unknown>;
      let raw = "";
      try {
        raw = await req.text();
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        return json({ error: { message: "invalid JSON body", type: "invalid_request_error" } }, 400);
      }
      calls.count++;
      const rec: RecordedCall = {
        path: url.pathname,
        model: typeof body.model === "string" ? body.model : undefined,
        stream: body.stream === true,
        body: record ? body : {},
        raw: record ? raw : "",
        headers: record ? Object.fromEntries(req.headers) : {},
        aborted: false,
        status: 200,
        at: Date.now(),
      };
      if (record) calls.requests.push(rec);
      req.signal.addEventListener("abort", () => (rec.aborted = true), { once: true });
      let res: Response;
      if (path === "/v1/chat/completions") res = await chat(body, rec, req.signal);
      else if (path === "/v1/images/generations") res = images(body, `http://127.0.0.1:${server.port}`);
      else if (path === "/v1/embeddings") res = await embeddings(body, rec, req.signal);
      else if (path === "/v1/responses") res = await responses(body, rec, req.signal);
      else res = json({ error: { message: "not found" } }, 404);
      rec.status = res.status;
      return res;
    },
  });

  const port = server.port as number;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    calls,
    lookups,
    program(list, scope) {
      faults.program(list, scope?.model);
    },
    configure(o) {
      if (o.latencyMs !== undefined) latencyMs = o.latencyMs;
      if (o.rejectJsonSchema !== undefined) rejectJsonSchema = o.rejectJsonSchema;
      if (o.usage !== undefined) usageMode = o.usage;
      if (o.imageTokens !== undefined) imageTokens = o.imageTokens;
    },
    reset() {
      faults.clear();
      lookups.length = 0;
      calls.count = 0;
      calls.requests.length = 0;
      latencyMs = opts.latencyMs ?? 0;
      rejectJsonSchema = opts.rejectJsonSchema ?? false;
      usageMode = opts.usage ?? "estimate";
      imageTokens = opts.imageTokens ?? 1445;
    },
    async close() {
      await server.stop(true);
    },
  };
}

function argValue(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const port = Number(argValue(args, "--port") ?? 9000);
  const latencyMs = Number(argValue(args, "--latency-ms") ?? 0);
  const sim = await startUpstream({ port, latencyMs, record: false });
  console.log(
    `upstream simulator on ${sim.url} (OpenAI base URL ${sim.url}/v1, Groq base URL ${sim.url}), latency ${latencyMs} ms`,
  );
}

/**
 * A `[[providers]]` entry for the simulator at `url` (its `/v1` base): openai-compatible unless
 * `type` says otherwise, `model` as its default model, `extra` lines appended (models, features).
 */
export function simProvider(opts: { url: string; name?: string; type?: string; model?: string; extra?: string }): string {
  return [
    "[[providers]]",
    `name = "${opts.name ?? "sim"}"`,
    `type = "${opts.type ?? "openai-compatible"}"`,
    `base_url = "${opts.url}"`,
    'api_key = "sk-sim"',
    ...(opts.model ? [`default_model = "${opts.model}"`] : []),
    ...(opts.extra ? [opts.extra] : []),
    "",
  ].join("\n");
}
