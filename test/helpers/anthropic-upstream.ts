/**
 * An Anthropic Messages API simulator for tests, written from Anthropic's public API reference and
 * the official SDK's types (`@anthropic-ai/sdk`), not from the gateway's adapter, and proven by that
 * SDK talking to it (test/providers/anthropic-simulator.test.ts).
 *
 *   const sim = await startAnthropicUpstream();
 *   sim.program([{ status: 529 }, { status: 429, retryAfter: 2 }]);   // faults, one per call, in order
 *   ... point an Anthropic client at sim.url (no /v1: the SDK adds it) ...
 *   sim.calls.requests[0].body; sim.reset(); await sim.close();
 *
 * What it speaks: `POST /v1/messages` (plain and `stream: true` as server-sent events in Anthropic's
 * order: message_start, content_block_start, ping, content_block_delta, content_block_stop,
 * message_delta, message_stop), `POST /v1/messages/count_tokens`, `GET /v1/models`; the key in
 * `x-api-key` or, as the SDK's 1.x sends it, `Authorization: Bearer` (401 authentication_error
 * without either), the `anthropic-version` header (400 without it; from 2026-10-21 `temperature`,
 * `top_p` and `top_k` are refused, as that version removed them), `request-id` on every answer, `retry-after` on a 429 or 529 when programmed; errors as
 * `{"type":"error","error":{"type","message"},"request_id"}`. It checks what the API checks that a
 * translation can get wrong: `max_tokens` required, roles only user and assistant (a system prompt
 * is the top-level `system`), no empty turn or text block but a final assistant one, every `tool_use` answered by a `tool_result` in the next user turn,
 * image sources (base64 with a supported media type, or a url). It answers with text, a `tool_use`
 * block (the tool `tool_choice` forces, else the first tool unless the last turn returned a tool
 * result), a `thinking` block first when `thinking` is enabled, stop sequences and `max_tokens`
 * honoured (`stop_reason` stop_sequence, max_tokens), and prompt caching: the prefix up to a
 * block's `cache_control` is written to its cache the first time (cache_creation_input_tokens) and
 * read afterwards (cache_read_input_tokens), `input_tokens` being the rest.
 */
import { synthesize } from "../../src/providers/synthesize";
import type { JsonSchema } from "../../src/providers/types";
import { mockText } from "../../src/providers/vendors/mock/provider";
import type { Fault, RecordedCall } from "./upstream";

export interface AnthropicFault extends Fault {
  /** a stream: an `error` event (overloaded_error) after the first events, as the API sends mid-stream */
  streamError?: boolean;
  /** a stop_reason to answer with instead (refusal, pause_turn...) */
  stopReason?: string;
}

export interface AnthropicUpstream {
  url: string;
  /** `requests`: the Messages calls; `counts`: the bodies of the count_tokens calls, `countHeaders` their headers */
  calls: { count: number; requests: RecordedCall[]; counts: Json[]; countHeaders: Record<string, string>[] };
  program(faults: AnthropicFault[]): void;
  reset(): void;
  close(): Promise<void>;
}

export const ANTHROPIC_VERSION = "2023-06-01";

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  504: "timeout_error",
  529: "overloaded_error",
};

const IMAGE_TYPES = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"]);

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const rid = (prefix: string) => `${prefix}${Math.random().toString(36).slice(2, 12)}`;
/** about four characters a token, at least one */
const tokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));

function reply(data: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(data), {
    status,
    headers: { "content-type": "application/json", "request-id": rid("req_sim"), ...headers },
  });
}

function apiError(status: number, message: string, headers: Record<string, string> = {}, type?: string): Response {
  const requestId = rid("req_sim");
  return new Response(
    JSON.stringify({
      type: "error",
      error: { type: type ?? ERROR_TYPES[status] ?? "api_error", message },
      request_id: requestId,
    }),
    { status, headers: { "content-type": "application/json", "request-id": requestId, ...headers } },
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

/** The blocks of a message's content (a string is one text block). */
const blocks = (content: unknown): Json[] =>
  typeof content === "string" ? [{ type: "text", text: content }] : Array.isArray(content) ? content.filter(isObject) : [];

/** What the real API refuses with 400 that a translation could send; null when the request is well formed. */
function invalid(body: Json, version: string): string | null {
  // API version 2026-10-21 removed the sampling parameters (a request with one is a 400)
  if (version >= "2026-10-21")
    for (const f of ["temperature", "top_p", "top_k"])
      if (body[f] !== undefined) return `${f}: Extra inputs are not permitted in API version ${version}`;
  if (typeof body.model !== "string" || body.model === "") return "model: Field required";
  if (typeof body.max_tokens !== "number" || !Number.isInteger(body.max_tokens) || body.max_tokens < 1)
    return "max_tokens: Field required";
  if (!Array.isArray(body.messages) || body.messages.length === 0) return "messages: at least one message is required";
  if (body.system !== undefined && typeof body.system !== "string" && !Array.isArray(body.system))
    return "system: Input should be a valid string or a list of text blocks";
  for (const [i, m] of body.messages.entries()) {
    if (!isObject(m) || (m.role !== "user" && m.role !== "assistant"))
      return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    const final = i === body.messages.length - 1 && m.role === "assistant";
    if (!final && (blocks(m.content).length === 0 || blocks(m.content).some((b) => b.type === "text" && b.text === "")))
      return `messages.${i}: all messages must have non-empty content except for the optional final assistant message`;
    for (const [j, b] of blocks(m.content).entries()) {
      if (b.type === "image") {
        const s = isObject(b.source) ? b.source : {};
        const ok =
          (s.type === "base64" && IMAGE_TYPES.has(String(s.media_type)) && typeof s.data === "string" && s.data.length > 0) ||
          (s.type === "url" && typeof s.url === "string");
        if (!ok) return `messages.${i}.content.${j}.image.source: invalid image source`;
      }
      if (b.type === "tool_result" && m.role !== "user") return `messages.${i}: tool_result blocks belong in user messages`;
      if (b.type === "tool_use" && m.role !== "assistant") return `messages.${i}: tool_use blocks belong in assistant messages`;
    }
    // every tool_use must be answered by a tool_result in the next message
    const uses = blocks(m.content).filter((b) => b.type === "tool_use");
    if (uses.length > 0) {
      const next = body.messages[i + 1];
      const results = new Set(
        blocks(isObject(next) ? next.content : undefined)
          .filter((b) => b.type === "tool_result")
          .map((b) => b.tool_use_id),
      );
      for (const u of uses)
        if (!results.has(u.id))
          return `messages.${i + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${String(u.id)}`;
    }
  }
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return "tools: Input should be a valid list";
    for (const [i, t] of body.tools.entries())
      if (!isObject(t) || typeof t.name !== "string" || !isObject(t.input_schema))
        return `tools.${i}: a custom tool needs name and input_schema`;
  }
  const choice = body.tool_choice;
  if (choice !== undefined) {
    if (!isObject(choice) || !["auto", "any", "tool", "none"].includes(String(choice.type)))
      return "tool_choice: Input should be auto, any, tool or none";
    if (choice.type === "tool" && !(body.tools as Json[] | undefined)?.some((t) => t.name === choice.name))
      return `tool_choice.name: no tool named ${String(choice.name)}`;
  }
  if (isObject(body.thinking) && body.thinking.type === "enabled") {
    const budget = body.thinking.budget_tokens;
    if (typeof budget !== "number" || budget < 1024 || budget >= (body.max_tokens as number))
      return "thinking.budget_tokens: must be at least 1024 and less than max_tokens";
  }
  return null;
}

/** The text of the last user turn (its text blocks), or what its tool results said. */
function lastUserText(messages: Json[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as Json;
    if (m.role !== "user") continue;
    return blocks(m.content)
      .map((b) => (b.type === "text" ? String(b.text) : ""))
      .join("");
  }
  return "";
}

function lastResult(messages: Json[]): Json | undefined {
  const last = messages[messages.length - 1];
  return blocks(isObject(last) ? last.content : undefined).find((b) => b.type === "tool_result");
}

function toolToCall(body: Json, afterResult: boolean): Json | undefined {
  const tools = Array.isArray(body.tools) ? (body.tools as Json[]) : [];
  const choice = isObject(body.tool_choice) ? body.tool_choice : { type: "auto" };
  if (tools.length === 0 || choice.type === "none") return undefined;
  if (choice.type === "tool") return tools.find((t) => t.name === choice.name);
  if (choice.type === "any") return tools[0];
  return afterResult ? undefined : tools[0];
}

/**
 * Prompt caching: the request's prefix (tools, then system, then messages) up to each block that
 * carries `cache_control`, as text; the longest is the cacheable prefix.
 */
function cachedPrefix(body: Json): string | null {
  const parts: unknown[] = [];
  let upTo = -1;
  const add = (v: unknown) => {
    parts.push(v);
    if (isObject(v) && v.cache_control !== undefined) upTo = parts.length;
  };
  for (const t of Array.isArray(body.tools) ? body.tools : []) add(t);
  for (const b of typeof body.system === "string" ? [body.system] : Array.isArray(body.system) ? body.system : []) add(b);
  for (const m of body.messages as Json[]) for (const b of blocks(m.content)) add(b);
  return upTo < 0 ? null : JSON.stringify(parts.slice(0, upTo));
}

/** Cuts `text` at the first stop sequence: the text before it and the sequence, or null. */
function applyStop(text: string, stops: unknown): { text: string; stop: string | null } {
  let at = -1;
  let stop: string | null = null;
  for (const s of Array.isArray(stops) ? stops : []) {
    const i = typeof s === "string" && s ? text.indexOf(s) : -1;
    if (i >= 0 && (at < 0 || i < at)) {
      at = i;
      stop = s as string;
    }
  }
  return at < 0 ? { text, stop: null } : { text: text.slice(0, at), stop };
}

/** `record: false`: calls are counted, not kept (the benchmark's simulator, bench/sim.ts) */
export async function startAnthropicUpstream(
  opts: { port?: number; models?: string[]; record?: boolean } = {},
): Promise<AnthropicUpstream> {
  const calls = { count: 0, requests: [] as RecordedCall[], counts: [] as Json[], countHeaders: [] as Record<string, string>[] };
  const queue: AnthropicFault[] = [];
  const cache = new Set<string>();

  const nextFault = (): AnthropicFault | undefined => {
    const head = queue[0];
    if (!head) return undefined;
    const left = (head.times ?? 1) - 1;
    if (left <= 0) queue.shift();
    else queue[0] = { ...head, times: left };
    return head;
  };

  /** The Message the model writes for `body` (content blocks, stop reason, usage). */
  function message(body: Json, fault: AnthropicFault | undefined): Json {
    const messages = body.messages as Json[];
    const result = lastResult(messages);
    // a fault's text answers even where a tool is forced (what a broken model or proxy might send)
    const tool = fault?.malformed || fault?.content !== undefined ? undefined : toolToCall(body, result !== undefined);
    const seed = JSON.stringify(messages);
    const content: Json[] = [];
    if (isObject(body.thinking) && body.thinking.type === "enabled")
      content.push({ type: "thinking", thinking: "The user wants an answer; answer briefly.", signature: rid("sig_") });
    let stopReason = "end_turn";
    let stopSequence: string | null = null;
    const max = body.max_tokens as number;
    if (tool) {
      const schema = (tool.input_schema ?? { type: "object", properties: {} }) as JsonSchema;
      let input = synthesize(schema, `${seed}${String(tool.name)}`) as Json;
      if (fault?.schemaInvalid) input = Object.fromEntries(Object.keys(input).map((k) => [k, 12345]));
      content.push({ type: "tool_use", id: rid("toolu_sim"), name: tool.name, input });
      stopReason = "tool_use";
    } else {
      let text = fault?.malformed
        ? '{"answer": "cut off in the midd'
        : (fault?.content ??
          (result
            ? `Tool said: ${typeof result.content === "string" ? result.content : JSON.stringify(result.content)}`
            : mockText(lastUserText(messages))));
      const cut = applyStop(text, body.stop_sequences);
      if (cut.stop !== null) {
        text = cut.text;
        stopReason = "stop_sequence";
        stopSequence = cut.stop;
      }
      if (tokens(text) > max) {
        text = text.slice(0, max * 4);
        stopReason = "max_tokens";
        stopSequence = null;
      }
      content.push({ type: "text", text });
    }
    if (fault?.stopReason) stopReason = fault.stopReason;
    const all = tokens(JSON.stringify({ system: body.system ?? "", messages, tools: body.tools ?? [] }));
    const prefix = cachedPrefix(body);
    let cacheRead = 0;
    let cacheWrite = 0;
    if (prefix !== null) {
      const n = Math.min(all, tokens(prefix));
      if (cache.has(prefix)) cacheRead = n;
      else {
        cache.add(prefix);
        cacheWrite = n;
      }
    }
    const output = Math.min(
      max,
      content.reduce((n, b) => n + tokens(String(b.text ?? b.thinking ?? JSON.stringify(b.input ?? ""))), 0),
    );
    return {
      id: rid("msg_sim"),
      type: "message",
      role: "assistant",
      model: body.model,
      content,
      stop_reason: stopReason,
      stop_sequence: stopSequence,
      usage: {
        input_tokens: all - cacheRead - cacheWrite,
        cache_creation_input_tokens: cacheWrite,
        cache_read_input_tokens: cacheRead,
        output_tokens: output,
        service_tier: "standard",
      },
    };
  }

  /** A Message as the stream's events, in the API's order. */
  function frames(msg: Json, chunkChars: number | undefined, streamError: boolean): string[] {
    const out: string[] = [];
    const event = (type: string, data: Json) => out.push(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    const usage = msg.usage as Json;
    event("message_start", {
      message: { ...msg, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } },
    });
    const pieces = (text: string) => {
      if (!chunkChars) return text.split(/(?<=\s)/).filter(Boolean);
      const p: string[] = [];
      for (let i = 0; i < text.length; i += chunkChars) p.push(text.slice(i, i + chunkChars));
      return p;
    };
    (msg.content as Json[]).forEach((b, index) => {
      if (b.type === "text") {
        event("content_block_start", { index, content_block: { type: "text", text: "" } });
        if (index === 0) event("ping", {});
        for (const text of pieces(String(b.text))) event("content_block_delta", { index, delta: { type: "text_delta", text } });
      } else if (b.type === "thinking") {
        event("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } });
        for (const thinking of pieces(String(b.thinking)))
          event("content_block_delta", { index, delta: { type: "thinking_delta", thinking } });
        event("content_block_delta", { index, delta: { type: "signature_delta", signature: b.signature } });
      } else {
        event("content_block_start", { index, content_block: { ...b, input: {} } });
        const json = JSON.stringify(b.input);
        const half = Math.ceil(json.length / 2);
        for (const partial_json of [json.slice(0, half), json.slice(half)])
          event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json } });
      }
      event("content_block_stop", { index });
    });
    if (streamError) {
      out.splice(3, out.length - 3);
      event("error", { error: { type: "overloaded_error", message: "Overloaded" } });
      return out;
    }
    event("message_delta", {
      delta: { stop_reason: msg.stop_reason, stop_sequence: msg.stop_sequence },
      usage: { output_tokens: usage.output_tokens },
    });
    event("message_stop", {});
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
          if (cut && i >= 3) {
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
      { headers: { "content-type": "text/event-stream", "cache-control": "no-cache", "request-id": rid("req_sim") } },
    );
  }

  async function messages(body: Json, rec: RecordedCall, signal: AbortSignal, version: string): Promise<Response> {
    const fault = nextFault();
    rec.fault = fault;
    if (fault?.delayMs && !(await sleep(fault.delayMs, signal))) {
      rec.aborted = true;
      return new Response(null, { status: 499 });
    }
    if (fault?.drop)
      return new Response(
        new ReadableStream({
          start(c) {
            c.error(undefined);
          },
        }),
      );
    if (fault?.raw) {
      const { status = 200, contentType = "application/json", body: text } = fault.raw;
      return new Response(text, { status, headers: { "content-type": contentType } });
    }
    if (fault?.contextLength) return apiError(400, "prompt is too long: 215000 tokens > 200000 maximum");
    if (fault?.status) {
      const headers: Record<string, string> = fault.retryAfter !== undefined ? { "retry-after": String(fault.retryAfter) } : {};
      return apiError(fault.status, fault.message ?? `simulated error ${fault.status}`, headers, fault.errorType);
    }
    const bad = invalid(body, version);
    if (bad) return apiError(400, bad);
    const msg = message(body, fault);
    if (body.stream === true)
      return sse(frames(msg, fault?.chunkChars, fault?.streamError === true), fault?.streamCut === true, signal, () => {
        rec.aborted = true;
      });
    return reply(msg);
  }

  const server = Bun.serve({
    port: opts.port ?? 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      // the key in x-api-key, or (as SDK 1.x sends it) Authorization: Bearer
      if (!req.headers.get("x-api-key") && !/^Bearer \S/.test(req.headers.get("authorization") ?? ""))
        return apiError(401, "x-api-key header is required");
      const version = req.headers.get("anthropic-version");
      if (!version) return apiError(400, "anthropic-version: header is required");
      if (req.method === "GET" && path === "/v1/models") {
        const data = (opts.models ?? ["claude-sim-1"]).map((id) => ({
          type: "model",
          id,
          display_name: id,
          created_at: "2025-01-01T00:00:00Z",
        }));
        return reply({ data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null });
      }
      if (req.method !== "POST") return apiError(404, `${req.method} ${path} not found`);
      let body: Json;
      let raw = "";
      try {
        raw = await req.text();
        const parsed = JSON.parse(raw);
        if (!isObject(parsed)) throw new Error("not an object");
        body = parsed;
      } catch {
        return apiError(400, "There was an issue with your request body: invalid JSON");
      }
      if (path === "/v1/messages/count_tokens") {
        if (opts.record !== false) {
          calls.counts.push(body);
          calls.countHeaders.push(Object.fromEntries(req.headers));
        }
        const bad = invalid({ ...body, max_tokens: 1 }, version);
        if (bad) return apiError(400, bad);
        return reply({ input_tokens: tokens(JSON.stringify({ system: body.system ?? "", messages: body.messages })) });
      }
      if (path !== "/v1/messages") return apiError(404, `${path} not found`);
      calls.count++;
      const rec: RecordedCall = {
        path,
        model: typeof body.model === "string" ? body.model : undefined,
        stream: body.stream === true,
        body,
        raw,
        headers: opts.record === false ? {} : Object.fromEntries(req.headers),
        aborted: false,
        status: 200,
        at: Date.now(),
      };
      if (opts.record !== false) calls.requests.push(rec);
      req.signal.addEventListener("abort", () => (rec.aborted = true), { once: true });
      const res = await messages(body, rec, req.signal, version);
      rec.status = res.status;
      return res;
    },
  });

  const url = `http://127.0.0.1:${server.port}`;
  return {
    url,
    calls,
    program(faults) {
      queue.push(...faults.map((f) => ({ ...f })));
    },
    reset() {
      queue.length = 0;
      calls.count = 0;
      calls.requests.length = 0;
      calls.counts.length = 0;
      calls.countHeaders.length = 0;
      cache.clear();
    },
    async close() {
      await server.stop(true);
    },
  };
}

/** A `[[providers]]` entry of type `anthropic` for the simulator at `url`. */
export function anthropicProvider(opts: { url: string; name?: string; model?: string; extra?: string }): string {
  return [
    "[[providers]]",
    `name = "${opts.name ?? "claude"}"`,
    'type = "anthropic"',
    `base_url = "${opts.url}"`,
    'api_key = "sk-ant-test"',
    `default_model = "${opts.model ?? "claude-sim-1"}"`,
    ...(opts.extra ? [opts.extra] : []),
    "",
  ].join("\n");
}
