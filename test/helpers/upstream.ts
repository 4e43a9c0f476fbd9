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
import { mockText } from "../../src/providers/mock";
import { schemaFromInstruction } from "../../src/providers/structured";
import { synthesize } from "../../src/providers/synthesize";
import type { JsonSchema } from "../../src/providers/types";

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
  /** streaming: send a couple of chunks, then close the connection */
  streamCut?: boolean;
  /** how many calls this fault applies to (default 1) */
  times?: number;
}

export interface RecordedCall {
  path: string;
  model: string | undefined;
  stream: boolean;
  /** parsed JSON body (tests only: the simulator keeps what it was sent) */
  body: Record<string, unknown>;
  fault?: Fault;
  /** the client went away before the answer was complete */
  aborted: boolean;
  status: number;
}

export interface SimOptions {
  port?: number;
  /** latency added to every answer */
  latencyMs?: number;
  /** answer 400 to response_format json_schema (as many OpenAI-compatible servers do) */
  rejectJsonSchema?: boolean;
  /** standalone/bench mode: keep no call records */
  record?: boolean;
  /** model ids for GET /v1/models */
  models?: string[];
}

export interface Upstream {
  url: string;
  port: number;
  calls: { count: number; requests: RecordedCall[] };
  /** queue faults for the next calls (for calls to `model` only, when given) */
  program(faults: Fault[], opts?: { model?: string }): void;
  configure(opts: Pick<SimOptions, "latencyMs" | "rejectJsonSchema">): void;
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
  return json(
    { error: { message: `simulated upstream error ${status}`, type: "server_error", param: null, code: null } },
    status,
    headers,
  );
}

/** A connection reset: erroring the body stream before any byte makes Bun close the socket without a response. */
function dropped(): Response {
  return new Response(
    new ReadableStream({
      start(c) {
        c.error(undefined);
      },
    }),
  );
}

function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
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

function lastUser(messages: Msg[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role === "user" && typeof m.content === "string") return m.content;
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

function completion(model: string, content: string) {
  return {
    id: `chatcmpl-sim-${Math.random().toString(36).slice(2, 10)}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: "assistant", content, refusal: null }, finish_reason: "stop", logprobs: null }],
    usage: {
      prompt_tokens: 10,
      completion_tokens: Math.max(1, Math.ceil(content.length / 4)),
      total_tokens: 10 + Math.ceil(content.length / 4),
    },
  };
}

function chunk(id: string, model: string, delta: Record<string, unknown>, finish: string | null) {
  return `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
}

function sseStream(model: string, content: string, cut: boolean, signal: AbortSignal, onAbort: () => void): Response {
  const id = `chatcmpl-sim-${Math.random().toString(36).slice(2, 10)}`;
  const pieces = content.split(/(?<=\s)/);
  const enc = new TextEncoder();
  let i = -1;
  return new Response(
    new ReadableStream({
      async pull(c) {
        if (signal.aborted) {
          onAbort();
          c.close();
          return;
        }
        if (i === -1) c.enqueue(enc.encode(chunk(id, model, { role: "assistant", content: "" }, null)));
        else if (i < pieces.length) {
          if (cut && i >= 2) {
            c.error(undefined);
            return;
          }
          c.enqueue(enc.encode(chunk(id, model, { content: pieces[i] }, null)));
        } else {
          c.enqueue(enc.encode(`${chunk(id, model, {}, "stop")}data: [DONE]\n\n`));
          c.close();
          return;
        }
        i++;
        // A little pacing so a client can disconnect mid-stream in tests.
        await Bun.sleep(2);
      },
      cancel() {
        onAbort();
      },
    }),
    { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } },
  );
}

function encodeBase64Floats(v: number[]): string {
  return Buffer.from(new Float32Array(v).buffer).toString("base64");
}

export async function startUpstream(opts: SimOptions = {}): Promise<Upstream> {
  let latencyMs = opts.latencyMs ?? 0;
  let rejectJsonSchema = opts.rejectJsonSchema ?? false;
  const record = opts.record ?? true;
  const calls = { count: 0, requests: [] as RecordedCall[] };
  // Faults per model scope; "" is the queue for any model.
  const queues = new Map<string, Fault[]>();
  const answerCache = new Map<string, string>();

  const nextFault = (model: string | undefined): Fault | undefined => {
    const scoped = model !== undefined ? queues.get(model) : undefined;
    const queue = scoped?.length ? scoped : queues.get("");
    const head = queue?.[0];
    if (!queue || !head) return undefined;
    const left = (head.times ?? 1) - 1;
    if (left <= 0) queue.shift();
    else queue[0] = { ...head, times: left };
    return head;
  };

  async function chat(body: Record<string, unknown>, rec: RecordedCall, signal: AbortSignal): Promise<Response> {
    const fault = nextFault(rec.model);
    rec.fault = fault;
    const delay = latencyMs + (fault?.delayMs ?? 0);
    if (delay > 0 && !(await sleep(delay, signal))) {
      rec.aborted = true;
      return new Response(null, { status: 499 });
    }
    if (fault?.drop) return dropped();
    if (fault?.status) return errorBody(fault.status, fault);
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
    const schema = requestedSchema(body);
    let content: string;
    if (fault?.malformed) content = '{"answer": "cut off in the midd';
    else if (schema) {
      const seed = JSON.stringify(body.messages ?? "");
      const name = (rf as { json_schema?: { name?: string } } | undefined)?.json_schema?.name;
      const key = record ? "" : (name ?? JSON.stringify(schema));
      // Bench mode: one synthesis per schema, since the answer's content does not matter there.
      const cached = key ? answerCache.get(key) : undefined;
      const value = cached ?? JSON.stringify(synthesize(schema, seed));
      if (key && !cached && answerCache.size < 1000) answerCache.set(key, value);
      content = fault?.schemaInvalid ? JSON.stringify(invalidate(JSON.parse(value))) : value;
    } else content = mockText(lastUser(messagesOf(body)));
    if (rec.stream) return sseStream(model, content, fault?.streamCut === true, signal, () => (rec.aborted = true));
    return json(completion(model, content));
  }

  function images(body: Record<string, unknown>, base: string): Response {
    const n = typeof body.n === "number" ? body.n : 1;
    const b64 = body.response_format === "b64_json" || String(body.model ?? "gpt-image-1").startsWith("gpt-image");
    const data = Array.from({ length: n }, (_, i) => (b64 ? { b64_json: PNG_B64 } : { url: `${base}/files/image-${i}.png` }));
    return json({ created: Math.floor(Date.now() / 1000), data, output_format: "png" });
  }

  function embeddings(body: Record<string, unknown>): Response {
    const input = Array.isArray(body.input) ? body.input.map(String) : [String(body.input ?? "")];
    const base64 = body.encoding_format === "base64";
    const data = input.map((text, index) => {
      const v = hashEmbedding(text, 64);
      return { object: "embedding", index, embedding: base64 ? encodeBase64Floats(v) : v };
    });
    return json({
      object: "list",
      data,
      model: body.model ?? "sim-embed",
      usage: { prompt_tokens: input.length, total_tokens: input.length },
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
      if (req.method === "GET" && path === "/v1/models") {
        const ids = opts.models ?? ["sim-model", "sim-model-2"];
        return json({ object: "list", data: ids.map((id) => ({ id, object: "model", created: 0, owned_by: "simulator" })) });
      }
      if (req.method === "GET" && path.startsWith("/files/"))
        return new Response(Buffer.from(PNG_B64, "base64"), { headers: { "content-type": "image/png" } });
      if (req.method !== "POST") return json({ error: { message: "not found" } }, 404);
      let body: Record<string, unknown>;
      try {
        body = (await req.json()) as Record<string, unknown>;
      } catch {
        return json({ error: { message: "invalid JSON body", type: "invalid_request_error" } }, 400);
      }
      calls.count++;
      const rec: RecordedCall = {
        path: url.pathname,
        model: typeof body.model === "string" ? body.model : undefined,
        stream: body.stream === true,
        body: record ? body : {},
        aborted: false,
        status: 200,
      };
      if (record) calls.requests.push(rec);
      req.signal.addEventListener("abort", () => (rec.aborted = true), { once: true });
      let res: Response;
      if (path === "/v1/chat/completions") res = await chat(body, rec, req.signal);
      else if (path === "/v1/images/generations") res = images(body, `http://127.0.0.1:${server.port}`);
      else if (path === "/v1/embeddings") res = embeddings(body);
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
    program(faults, scope) {
      const key = scope?.model ?? "";
      queues.set(key, [...(queues.get(key) ?? []), ...faults.map((f) => ({ ...f }))]);
    },
    configure(o) {
      if (o.latencyMs !== undefined) latencyMs = o.latencyMs;
      if (o.rejectJsonSchema !== undefined) rejectJsonSchema = o.rejectJsonSchema;
    },
    reset() {
      queues.clear();
      calls.count = 0;
      calls.requests.length = 0;
      latencyMs = opts.latencyMs ?? 0;
      rejectJsonSchema = opts.rejectJsonSchema ?? false;
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
