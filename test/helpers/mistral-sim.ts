/**
 * A Mistral API simulator (La Plateforme: `POST /v1/chat/completions`, plain and streamed,
 * `POST /v1/embeddings`, `GET /v1/models[/{id}]`), written from Mistral's API reference and the
 * request and response types of its official SDK (@mistralai/mistralai), not from the gateway's
 * adapter; test/providers/mistral-sim.test.ts proves it with that SDK.
 *
 * What it holds a client to, as Mistral does: `Authorization: Bearer <key>` (else 401); only the
 * fields of Mistral's request types (another, such as OpenAI's `seed`, `user` or `logit_bias`, is a
 * 422 `extra_forbidden`); roles system, user, assistant, tool; `tool_choice` auto, none, any,
 * required or a named function; tool call ids of nine letters or digits, in an assistant's
 * `tool_calls` and a tool message's `tool_call_id` alike (else 400). Its answers: Mistral's chat
 * completion (tool calls with ids of that form, usage), a stream whose last chunk carries the
 * finish and the usage, then `[DONE]`; embeddings of the input. It fails on command as the OpenAI
 * simulator does (upstream.ts's `Fault`: status with Retry-After, context length, delay, drop,
 * raw bytes, a stream cut, malformed or schema-invalid content), with Mistral's error bodies
 * (`{"object":"error","message","type","param","code"}`; 422s `{"detail":[...]}`).
 */
import { hashEmbedding } from "../../src/providers/embedding";
import { synthesize } from "../../src/providers/synthesize";
import type { JsonSchema } from "../../src/providers/types";
import { mockText } from "../../src/providers/vendors/mock/provider";
import type { Fault, RecordedCall } from "./upstream";

export interface MistralSim {
  url: string;
  /** the base URL as the gateway's `base_url` takes it (with /v1); Mistral's SDK takes `url` */
  baseUrl: string;
  apiKey: string;
  calls: { count: number; requests: RecordedCall[] };
  program(faults: Fault[]): void;
  reset(): void;
  close(): Promise<void>;
}

/** The fields of Mistral's ChatCompletionRequest (and ChatCompletionStreamRequest). */
const CHAT_FIELDS = new Set([
  "model",
  "temperature",
  "top_p",
  "max_tokens",
  "stream",
  "stop",
  "random_seed",
  "metadata",
  "messages",
  "response_format",
  "tools",
  "tool_choice",
  "presence_penalty",
  "frequency_penalty",
  "n",
  "prediction",
  "parallel_tool_calls",
  "reasoning_effort",
  "prompt_mode",
  "guardrails",
  "prompt_cache_key",
  "service_tier",
  "safe_prompt",
]);
/** The fields of Mistral's EmbeddingRequest. */
const EMBEDDING_FIELDS = new Set(["model", "metadata", "input", "output_dimension", "output_dtype", "encoding_format"]);
const ROLES = new Set(["system", "user", "assistant", "tool"]);
const TOOL_CHOICES = new Set(["auto", "none", "any", "required"]);
const TOOL_ID = /^[A-Za-z0-9]{9}$/;
const ID_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

const json = (data: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(data), { status, headers: { "content-type": "application/json", ...headers } });

/** Mistral's error body (4xx and 5xx but 422). */
const mistralError = (status: number, message: string, type: string, code: string | null = null, headers = {}) =>
  json({ object: "error", message, type, param: null, code }, status, headers);

/** A 422 of request validation, as Mistral's API answers it. */
const invalid = (loc: (string | number)[], msg: string, type: string, input?: unknown) =>
  json({ detail: [{ type, loc: ["body", ...loc], msg, input }] }, 422);

const toolId = () => Array.from({ length: 9 }, () => ID_CHARS[Math.floor(Math.random() * 62)]).join("");
const tokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));

function faultAnswer(fault: Fault): Response | undefined {
  if (fault.raw) {
    const { status = 200, contentType = "application/json", body } = fault.raw;
    return new Response(body, { status, headers: { "content-type": contentType } });
  }
  if (!fault.status) return undefined;
  const headers: Record<string, string> = {};
  if (fault.retryAfter !== undefined) headers["retry-after"] = String(fault.retryAfter);
  if (fault.contextLength)
    return mistralError(
      fault.status,
      "Prompt contains 40321 tokens and 0 draft tokens, too large for model with 32768 maximum context length",
      "invalid_request_error",
      null,
      headers,
    );
  if (fault.status === 429)
    return mistralError(429, fault.message ?? "Requests rate limit exceeded", "rate_limited", fault.errorCode ?? "1300", headers);
  const type = fault.errorType ?? (fault.status < 500 ? "invalid_request_error" : "internal_server_error");
  return mistralError(
    fault.status,
    fault.message ?? `simulated Mistral error ${fault.status}`,
    type,
    fault.errorCode ?? null,
    headers,
  );
}

const dropped = () =>
  new Response(
    new ReadableStream({
      start(c) {
        c.error(undefined);
      },
    }),
  );

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

type Msg = Record<string, unknown>;

/** Mistral's checks of a chat request: the first refusal, or undefined. */
function checkChat(body: Record<string, unknown>): Response | undefined {
  for (const k of Object.keys(body))
    if (!CHAT_FIELDS.has(k)) return invalid([k], "Extra inputs are not permitted", "extra_forbidden", body[k]);
  if (typeof body.model !== "string") return invalid(["model"], "Field required", "missing");
  if (!Array.isArray(body.messages) || body.messages.length === 0) return invalid(["messages"], "Field required", "missing");
  for (const [i, m] of (body.messages as Msg[]).entries()) {
    if (typeof m !== "object" || m === null || !ROLES.has(String(m.role)))
      return invalid(
        ["messages", i, "role"],
        "Input tag does not match any of the expected tags: 'assistant', 'system', 'tool', 'user'",
        "union_tag_invalid",
        m?.role,
      );
    const ids: unknown[] = [];
    if (m.role === "tool") ids.push(m.tool_call_id);
    if (m.role === "assistant" && Array.isArray(m.tool_calls)) for (const c of m.tool_calls as Msg[]) ids.push(c?.id);
    for (const id of ids)
      if (typeof id !== "string" || !TOOL_ID.test(id))
        return mistralError(
          400,
          `Tool call id was ${String(id)} but must be a-z, A-Z, 0-9, with a length of 9.`,
          "invalid_request_error",
        );
  }
  const choice = body.tool_choice;
  if (
    choice !== undefined &&
    !(typeof choice === "string" ? TOOL_CHOICES.has(choice) : typeof choice === "object" && choice !== null)
  )
    return invalid(["tool_choice"], "Input should be 'auto', 'none', 'any' or 'required'", "enum", choice);
  if (body.random_seed !== undefined && body.random_seed !== null && !Number.isInteger(body.random_seed))
    return invalid(["random_seed"], "Input should be a valid integer", "int_type", body.random_seed);
  if (body.safe_prompt !== undefined && typeof body.safe_prompt !== "boolean")
    return invalid(["safe_prompt"], "Input should be a valid boolean", "bool_type", body.safe_prompt);
  return undefined;
}

type Tool = { name: string; parameters?: JsonSchema };

function toolsOf(body: Record<string, unknown>): Tool[] {
  const tools = Array.isArray(body.tools) ? (body.tools as Msg[]) : [];
  return tools.map((t) => t.function as Tool).filter((f) => typeof f?.name === "string");
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((c) => (typeof c?.text === "string" ? c.text : "")).join("");
}

interface Answer {
  content: string;
  toolCalls?: { id: string; type: "function"; function: { name: string; arguments: string }; index: number }[];
  finish: "stop" | "tool_calls";
}

/** What the model says: a tool call (forced by tool_choice, or the first tool before a tool result), JSON for a schema, or text. */
function answerOf(body: Record<string, unknown>, fault: Fault | undefined): Answer {
  const messages = body.messages as Msg[];
  const last = messages[messages.length - 1];
  const tools = toolsOf(body);
  const choice = body.tool_choice as string | { function?: { name?: string } } | undefined;
  const seed = JSON.stringify(messages);
  let tool: Tool | undefined;
  if (tools.length > 0 && choice !== "none" && !fault?.malformed) {
    if (typeof choice === "object") tool = tools.find((t) => t.name === choice.function?.name) ?? tools[0];
    else if (choice === "any" || choice === "required" || last?.role !== "tool") tool = tools[0];
  }
  if (tool) {
    const args = JSON.stringify(synthesize(tool.parameters ?? { type: "object", properties: {} }, `${seed}${tool.name}`));
    return {
      content: "",
      finish: "tool_calls",
      toolCalls: [{ id: toolId(), type: "function", function: { name: tool.name, arguments: args }, index: 0 }],
    };
  }
  if (fault?.malformed) return { content: '{"answer": "cut off in the midd', finish: "stop" };
  if (fault?.content !== undefined) return { content: fault.content, finish: "stop" };
  const rf = body.response_format as { type?: string; json_schema?: { schema?: JsonSchema } } | undefined;
  if (rf?.type === "json_schema" && rf.json_schema?.schema) {
    const value = synthesize(rf.json_schema.schema, seed);
    if (fault?.schemaInvalid && typeof value === "object" && value !== null)
      return { content: JSON.stringify(Object.fromEntries(Object.keys(value).map((k) => [k, 12345]))), finish: "stop" };
    return { content: JSON.stringify(value), finish: "stop" };
  }
  if (rf?.type === "json_object") return { content: JSON.stringify({ answer: mockText(textOf(last?.content)) }), finish: "stop" };
  if (last?.role === "tool") return { content: `Tool said: ${textOf(last.content)}`, finish: "stop" };
  const user = [...messages].reverse().find((m) => m.role === "user");
  return { content: mockText(textOf(user?.content)), finish: "stop" };
}

function usage(body: Record<string, unknown>, answer: Answer) {
  const prompt = tokens(JSON.stringify(body.messages));
  const completion = tokens(answer.content || JSON.stringify(answer.toolCalls ?? ""));
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

const completionId = () =>
  Math.random().toString(16).slice(2, 18).padEnd(16, "0") + Math.random().toString(16).slice(2, 18).padEnd(16, "0");

/** The frames of a streamed answer, as Mistral sends them: the role, the text or the whole tool call, the finish with the usage, [DONE]. */
function frames(model: string, body: Record<string, unknown>, answer: Answer, chunkChars?: number): string[] {
  const id = completionId();
  const created = Math.floor(Date.now() / 1000);
  const frame = (delta: Record<string, unknown>, finish: string | null = null, withUsage = false) =>
    `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: finish }], ...(withUsage ? { usage: usage(body, answer) } : {}) })}\n\n`;
  const out = [frame({ role: "assistant", content: "" })];
  if (answer.toolCalls) out.push(frame({ tool_calls: answer.toolCalls }));
  else {
    const text = answer.content;
    const pieces = chunkChars
      ? Array.from({ length: Math.ceil(text.length / chunkChars) }, (_, i) => text.slice(i * chunkChars, (i + 1) * chunkChars))
      : text.split(/(?<=\s)/);
    for (const p of pieces) if (p) out.push(frame({ content: p }));
  }
  out.push(frame({ content: "" }, answer.finish, true));
  out.push("data: [DONE]\n\n");
  return out;
}

function sse(list: string[], cut: boolean, signal: AbortSignal, onAbort: () => void): Response {
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
        if (cut && i >= 2) {
          c.error(undefined);
          return;
        }
        const f = list[i++];
        if (f === undefined) return c.close();
        c.enqueue(enc.encode(f));
        if (i === list.length) return c.close();
        await Bun.sleep(2);
      },
      cancel: onAbort,
    }),
    { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } },
  );
}

export async function startMistral(opts: { apiKey?: string; models?: string[] } = {}): Promise<MistralSim> {
  const apiKey = opts.apiKey ?? "mistral-sim-key";
  const models = opts.models ?? ["mistral-small-latest", "mistral-large-latest", "mistral-embed"];
  const calls = { count: 0, requests: [] as RecordedCall[] };
  const queue: Fault[] = [];
  const next = (): Fault | undefined => {
    const head = queue[0];
    if (!head) return undefined;
    if ((head.times ?? 1) <= 1) queue.shift();
    else queue[0] = { ...head, times: (head.times ?? 1) - 1 };
    return head;
  };

  async function chat(body: Record<string, unknown>, rec: RecordedCall, fault: Fault | undefined, signal: AbortSignal) {
    const refusal = checkChat(body);
    if (refusal) return refusal;
    const answer = answerOf(body, fault);
    const model = body.model as string;
    if (rec.stream)
      return sse(frames(model, body, answer, fault?.chunkChars), fault?.streamCut === true, signal, () => (rec.aborted = true));
    return json({
      id: completionId(),
      object: "chat.completion",
      model,
      created: Math.floor(Date.now() / 1000),
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: answer.content, tool_calls: answer.toolCalls ?? null, prefix: false },
          finish_reason: answer.finish,
        },
      ],
      usage: usage(body, answer),
    });
  }

  function embeddings(body: Record<string, unknown>) {
    for (const k of Object.keys(body))
      if (!EMBEDDING_FIELDS.has(k)) return invalid([k], "Extra inputs are not permitted", "extra_forbidden", body[k]);
    if (typeof body.model !== "string") return invalid(["model"], "Field required", "missing");
    const input = typeof body.input === "string" ? [body.input] : Array.isArray(body.input) ? body.input.map(String) : undefined;
    if (!input) return invalid(["input"], "Field required", "missing");
    const dims = typeof body.output_dimension === "number" ? body.output_dimension : 1024;
    const data = input.map((text, index) => ({ object: "embedding", embedding: hashEmbedding(text, dims), index }));
    const prompt = input.reduce((n, t) => n + tokens(t), 0);
    return json({
      id: completionId(),
      object: "list",
      model: body.model,
      data,
      usage: { prompt_tokens: prompt, completion_tokens: 0, total_tokens: prompt },
    });
  }

  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    async fetch(req) {
      const url = new URL(req.url);
      if (req.headers.get("authorization") !== `Bearer ${apiKey}`)
        return json({ message: "Unauthorized", request_id: completionId() }, 401);
      if (req.method === "GET" && url.pathname === "/v1/models")
        return json({ object: "list", data: models.map((id) => ({ id, object: "model", created: 0, owned_by: "mistralai" })) });
      if (req.method === "GET" && url.pathname.startsWith("/v1/models/")) {
        const id = decodeURIComponent(url.pathname.slice("/v1/models/".length));
        if (models.includes(id)) return json({ id, object: "model", created: 0, owned_by: "mistralai" });
        return mistralError(404, `Invalid model: ${id}`, "invalid_model", "1500");
      }
      if (req.method !== "POST") return json({ detail: "Not Found" }, 404);
      const raw = await req.text();
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(raw);
      } catch {
        return invalid([], "JSON decode error", "json_invalid");
      }
      calls.count++;
      const rec: RecordedCall = {
        path: url.pathname,
        model: typeof body.model === "string" ? body.model : undefined,
        stream: body.stream === true,
        body,
        raw,
        headers: Object.fromEntries(req.headers),
        aborted: false,
        status: 200,
        at: Date.now(),
      };
      calls.requests.push(rec);
      req.signal.addEventListener("abort", () => (rec.aborted = true), { once: true });
      const fault = next();
      rec.fault = fault;
      if (fault?.delayMs && !(await sleep(fault.delayMs, req.signal))) {
        rec.aborted = true;
        return new Response(null, { status: 499 });
      }
      let res: Response;
      if (fault?.drop) res = dropped();
      else
        res =
          (fault && faultAnswer(fault)) ??
          (url.pathname === "/v1/chat/completions"
            ? await chat(body, rec, fault, req.signal)
            : url.pathname === "/v1/embeddings"
              ? embeddings(body)
              : json({ detail: "Not Found" }, 404));
      rec.status = res.status;
      return res;
    },
  });
  const url = `http://127.0.0.1:${server.port}`;
  return {
    url,
    baseUrl: `${url}/v1`,
    apiKey,
    calls,
    program: (faults) => queue.push(...faults.map((f) => ({ ...f }))),
    reset() {
      queue.length = 0;
      calls.count = 0;
      calls.requests.length = 0;
    },
    close: () => server.stop(true),
  };
}
