/**
 * OpenAI's Chat Completions body translated to Anthropic's Messages API, and a Message back to a
 * chat completion (docs/providers.md, "anthropic"). What has no equivalent is never dropped
 * silently: `unservable` names the first such field (the provider's `untranslatable`), and the router skips the provider for that
 * request (or answers 400 naming it). The few fields dropped by design are listed in the docs.
 */
import { isObject } from "../../types";

type Json = Record<string, unknown>;

/**
 * `max_tokens` when the request sets none (Anthropic requires one): what Anthropic's own examples
 * send, and below every current model's output limit.
 */
export const DEFAULT_MAX_TOKENS = 4096;

/** The tool a response_format is asked through (forced tool use); its input is the answer's JSON. */
export const FORMAT_TOOL = "json_answer";

/** Fields translated (or read by the gateway itself: stream_options) with nothing lost. */
const TRANSLATED = new Set([
  "model",
  "messages",
  "stream",
  "stream_options",
  "max_tokens",
  "max_completion_tokens",
  "temperature",
  "top_p",
  "stop",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "response_format",
  "user",
  // Anthropic's extended thinking, as Anthropic takes it (an extension of the chat body)
  "thinking",
]);

/**
 * Fields dropped by design, each only with the value that changes nothing on Anthropic's side
 * (docs/providers.md lists them): `seed` (a best-effort hint there is no equivalent of),
 * `metadata` (OpenAI's stored-completion tags), `store: false`, `service_tier` auto or default,
 * `n: 1`, zero penalties, `logprobs: false`.
 */
const NEUTRAL: Record<string, (v: unknown) => boolean> = {
  seed: () => true,
  metadata: () => true,
  store: (v) => v === false || v === null,
  service_tier: (v) => v === "auto" || v === "default" || v === null,
  n: (v) => v === 1 || v === null,
  presence_penalty: (v) => v === 0 || v === null,
  frequency_penalty: (v) => v === 0 || v === null,
  logprobs: (v) => v === false || v === null,
};

const ROLES = new Set(["system", "developer", "user", "assistant", "tool"]);
const MESSAGE_FIELDS = new Set(["role", "content", "tool_calls", "tool_call_id", "refusal"]);
const PART_TYPES = new Set(["text", "image_url"]);
const DATA_URL = /^data:(image\/(?:jpeg|png|gif|webp));base64,(.+)$/s;

const parsesToObject = (text: unknown): boolean => {
  if (typeof text !== "string") return false;
  try {
    return isObject(JSON.parse(text === "" ? "{}" : text));
  } catch {
    return false;
  }
};

/** The first field of a chat body the Messages API cannot express; null when all of it translates. */
export function unservable(body: Json): string | null {
  for (const [key, value] of Object.entries(body)) {
    if (value === undefined || TRANSLATED.has(key)) continue;
    if (!NEUTRAL[key]?.(value)) return key;
  }
  if (typeof body.temperature === "number" && body.temperature > 1) return "temperature";
  const messages = Array.isArray(body.messages) ? body.messages : [];
  for (const [i, m] of messages.entries()) {
    const bad = unservableMessage(m, `messages[${i}]`);
    if (bad) return bad;
  }
  if (Array.isArray(body.tools))
    for (const [i, t] of body.tools.entries())
      if (!isObject(t) || t.type !== "function" || !isObject(t.function)) return `tools[${i}]`;
  const rf = body.response_format;
  if (isObject(rf) && rf.type !== "text") {
    if (body.tools !== undefined || body.tool_choice !== undefined) return "response_format";
    const schema = isObject(rf.json_schema) ? rf.json_schema.schema : undefined;
    if (rf.type === "json_schema" && !(isObject(schema) && (schema.type === "object" || schema.type === undefined)))
      return "response_format";
  }
  return null;
}

function unservableMessage(m: unknown, at: string): string | null {
  if (!isObject(m) || !ROLES.has(String(m.role))) return `${at}.role`;
  for (const k of Object.keys(m)) if (m[k] !== undefined && m[k] !== null && !MESSAGE_FIELDS.has(k)) return `${at}.${k}`;
  if (Array.isArray(m.content))
    for (const p of m.content) {
      if (!isObject(p) || !PART_TYPES.has(String(p.type))) return `${at}.content`;
      if (p.type === "image_url" && (m.role !== "user" || !imageSource(p.image_url))) return `${at}.content`;
    }
  else if (m.content !== undefined && m.content !== null && typeof m.content !== "string") return `${at}.content`;
  if (Array.isArray(m.tool_calls))
    for (const c of m.tool_calls)
      if (!isObject(c) || !isObject(c.function) || !parsesToObject(c.function.arguments)) return `${at}.tool_calls`;
  return null;
}

/** An image_url's source block: a data: URL as base64, an http(s) URL as `url`; null for anything else. */
function imageSource(imageUrl: unknown): Json | null {
  const url = typeof imageUrl === "string" ? imageUrl : isObject(imageUrl) ? imageUrl.url : undefined;
  if (typeof url !== "string") return null;
  const data = DATA_URL.exec(url.trim());
  if (data) return { type: "base64", media_type: data[1], data: data[2] };
  return /^https?:\/\//i.test(url) ? { type: "url", url } : null;
}

/** Content parts (or a string) as Anthropic blocks; `cache_control` on a part is kept (prompt caching). */
function contentBlocks(content: unknown): Json[] {
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  if (!Array.isArray(content)) return [];
  const out: Json[] = [];
  for (const p of content as Json[]) {
    const cache = p.cache_control !== undefined ? { cache_control: p.cache_control } : {};
    if (p.type === "text" && typeof p.text === "string" && p.text !== "") out.push({ type: "text", text: p.text, ...cache });
    else if (p.type === "image_url") out.push({ type: "image", source: imageSource(p.image_url), ...cache });
  }
  return out;
}

/** One turn's blocks for an OpenAI message (null for a system message: those go to `system`). */
function turnOf(m: Json): { role: "user" | "assistant"; blocks: Json[] } | null {
  if (m.role === "system" || m.role === "developer") return null;
  if (m.role === "tool") {
    const content = typeof m.content === "string" ? m.content : contentBlocks(m.content);
    return { role: "user", blocks: [{ type: "tool_result", tool_use_id: m.tool_call_id, content }] };
  }
  const blocks = contentBlocks(m.content);
  if (m.role === "assistant" && Array.isArray(m.tool_calls))
    for (const c of m.tool_calls as Json[]) {
      const fn = c.function as Json;
      const args = typeof fn.arguments === "string" && fn.arguments !== "" ? fn.arguments : "{}";
      blocks.push({ type: "tool_use", id: c.id, name: fn.name, input: JSON.parse(args) });
    }
  return { role: m.role === "assistant" ? "assistant" : "user", blocks };
}

/**
 * The messages and system prompt: system and developer messages (wherever they are) become the
 * top-level `system`, tool results user turns of `tool_result` blocks, and consecutive turns of
 * one role are merged (a tool's results and the user's next words are one user turn).
 */
function conversation(messages: Json[]): { system: Json[]; messages: Json[] } {
  const system: Json[] = [];
  const turns: { role: string; content: Json[] }[] = [];
  for (const m of messages) {
    const turn = turnOf(m);
    if (!turn) {
      system.push(...contentBlocks(m.content));
      continue;
    }
    // an empty turn (an assistant's "" answer) is one Anthropic refuses: its neighbours merge instead
    if (turn.blocks.length === 0) continue;
    const last = turns[turns.length - 1];
    if (last && last.role === turn.role) last.content.push(...turn.blocks);
    else turns.push({ role: turn.role, content: turn.blocks });
  }
  return { system, messages: turns };
}

function toolsOf(body: Json): { tools?: Json[]; tool_choice?: Json } {
  const rf = body.response_format;
  if (isObject(rf) && (rf.type === "json_schema" || rf.type === "json_object")) {
    const spec = isObject(rf.json_schema) ? rf.json_schema : {};
    const schema = isObject(spec.schema) ? { type: "object", ...spec.schema } : { type: "object" };
    const description = typeof spec.description === "string" ? { description: spec.description } : {};
    return {
      tools: [{ name: FORMAT_TOOL, ...description, input_schema: schema }],
      tool_choice: { type: "tool", name: FORMAT_TOOL },
    };
  }
  const out: { tools?: Json[]; tool_choice?: Json } = {};
  if (Array.isArray(body.tools))
    out.tools = (body.tools as Json[]).map((t) => {
      const fn = t.function as Json;
      return {
        name: fn.name,
        ...(typeof fn.description === "string" ? { description: fn.description } : {}),
        input_schema: isObject(fn.parameters) ? fn.parameters : { type: "object", properties: {} },
      };
    });
  const choice = body.tool_choice;
  let tc: Json | undefined;
  if (choice === "none") tc = { type: "none" };
  else if (choice === "auto") tc = { type: "auto" };
  else if (choice === "required") tc = { type: "any" };
  else if (isObject(choice) && isObject(choice.function)) tc = { type: "tool", name: choice.function.name };
  if (body.parallel_tool_calls === false && out.tools) tc = { ...(tc ?? { type: "auto" }), disable_parallel_tool_use: true };
  if (tc && !(tc.type === "none" && tc.disable_parallel_tool_use)) out.tool_choice = tc;
  return out;
}

/** The Messages API body for a chat body that `unservable` passed. */
export function messagesFromChat(body: Json, model: string): Json {
  const { system, messages } = conversation(Array.isArray(body.messages) ? (body.messages as Json[]) : []);
  const cap = body.max_completion_tokens ?? body.max_tokens;
  const out: Json = { model, max_tokens: typeof cap === "number" ? cap : DEFAULT_MAX_TOKENS, messages };
  if (system.length > 0)
    out.system = system.every((b) => b.cache_control === undefined) ? system.map((b) => b.text).join("\n\n") : system;
  if (body.temperature !== undefined && body.temperature !== null) out.temperature = body.temperature;
  if (body.top_p !== undefined && body.top_p !== null) out.top_p = body.top_p;
  const stop = typeof body.stop === "string" ? [body.stop] : Array.isArray(body.stop) ? body.stop : [];
  if (stop.length > 0) out.stop_sequences = stop;
  Object.assign(out, toolsOf(body));
  if (typeof body.user === "string") out.metadata = { user_id: body.user };
  if (body.thinking !== undefined) out.thinking = body.thinking;
  if (body.stream === true) out.stream = true;
  return out;
}

/** OpenAI's finish_reason for Anthropic's stop_reason (a forced format tool's use is a plain stop). */
export function finishReason(stop: unknown, formatted: boolean): string {
  switch (stop) {
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "tool_use":
      return formatted ? "stop" : "tool_calls";
    case "refusal":
      return "content_filter";
    default:
      return "stop";
  }
}

const count = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0);

/**
 * Anthropic's usage in OpenAI's fields: its `input_tokens` leaves out what was read from or
 * written to the prompt cache, OpenAI's `prompt_tokens` counts all of it, with the cached part in
 * `prompt_tokens_details.cached_tokens` and the cache writes in `cache_write_tokens` (each priced
 * as such: docs/pricing.md).
 */
export function chatUsage(u: unknown): Json {
  const usage = isObject(u) ? u : {};
  const read = count(usage.cache_read_input_tokens);
  const write = count(usage.cache_creation_input_tokens);
  const prompt = count(usage.input_tokens) + read + write;
  const completion = count(usage.output_tokens);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: read, cache_write_tokens: write },
  };
}

const seconds = () => Math.floor(Date.now() / 1000);

/** A Message as a chat completion: text, tool calls, thinking as `reasoning_content`, the finish, the usage. */
export function chatFromMessage(msg: Json, formatted: boolean): Json {
  let text = "";
  let reasoning = "";
  const calls: Json[] = [];
  for (const b of Array.isArray(msg.content) ? (msg.content as Json[]) : []) {
    if (b.type === "text" && typeof b.text === "string") text += b.text;
    else if (b.type === "thinking" && typeof b.thinking === "string") reasoning += b.thinking;
    else if (b.type === "tool_use" && formatted && b.name === FORMAT_TOOL) text += JSON.stringify(b.input ?? {});
    else if (b.type === "tool_use")
      calls.push({ id: b.id, type: "function", function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } });
  }
  const message: Json = { role: "assistant", content: calls.length > 0 && text === "" ? null : text, refusal: null };
  if (calls.length > 0) message.tool_calls = calls;
  if (reasoning) message.reasoning_content = reasoning;
  return {
    id: typeof msg.id === "string" ? msg.id : "msg",
    object: "chat.completion",
    created: seconds(),
    model: msg.model,
    choices: [{ index: 0, message, finish_reason: finishReason(msg.stop_reason, formatted), logprobs: null }],
    usage: chatUsage(msg.usage),
  };
}

/** Whether a chat body asks for its answer through the format tool (a response_format). */
export const isFormatted = (body: Json): boolean =>
  isObject(body.response_format) && (body.response_format.type === "json_schema" || body.response_format.type === "json_object");
