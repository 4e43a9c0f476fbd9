/**
 * What the adapters that translate Chat Completions into another API answering structured output
 * through a forced tool (anthropic, bedrock) share: the checks a chat body passes before they take
 * it (the fields they carry over, those dropped by design, each only with the value that changes
 * nothing, and the shape of a message: a field neither carries nor drops is named, the provider's
 * `untranslatable`, never dropped silently), the format tool, and the chat completion they answer.
 */
import { isObject, type JsonSchema } from "../types";

type Json = Record<string, unknown>;

/** Fields both translate (or the gateway reads itself: stream_options) with nothing lost. */
export const TRANSLATED_CHAT_FIELDS = [
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
  "response_format",
];

/**
 * Fields both drop by design, each only with its neutral value (docs/providers.md lists them):
 * `seed` (a best-effort hint neither API has a field for), `metadata` (OpenAI's stored-completion
 * tags), `store: false`, `service_tier` auto or default, `n: 1`, zero penalties, `logprobs: false`.
 */
export const NEUTRAL_CHAT_FIELDS: Readonly<Record<string, (v: unknown) => boolean>> = {
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

const parsesToObject = (text: unknown): boolean => {
  if (typeof text !== "string") return false;
  try {
    return isObject(JSON.parse(text === "" ? "{}" : text));
  } catch {
    return false;
  }
};

/** An API's side of the checks. */
export interface ChatTranslation {
  /** the fields it carries over */
  translated: ReadonlySet<string>;
  /** the fields it drops, each with the test of its neutral values */
  neutral: Readonly<Record<string, (v: unknown) => boolean>>;
  /** what of a message's content part it cannot take (its `type`, its `image_url`), or null */
  badPart: (part: unknown, role: unknown) => "type" | "image_url" | null;
  /** a refused content part named by its own path (`content[1].type`), else by the message's `content` */
  partPaths: boolean;
}

function untranslatableMessage(m: unknown, at: string, t: ChatTranslation): string | null {
  if (!isObject(m) || !ROLES.has(String(m.role))) return `${at}.role`;
  for (const k of Object.keys(m)) if (m[k] !== undefined && m[k] !== null && !MESSAGE_FIELDS.has(k)) return `${at}.${k}`;
  if (Array.isArray(m.content))
    for (const [j, p] of m.content.entries()) {
      const bad = t.badPart(p, m.role);
      if (bad) return t.partPaths ? `${at}.content[${j}].${bad}` : `${at}.content`;
    }
  else if (m.content !== undefined && m.content !== null && typeof m.content !== "string") return `${at}.content`;
  if (Array.isArray(m.tool_calls))
    for (const c of m.tool_calls)
      if (!isObject(c) || !isObject(c.function) || !parsesToObject(c.function.arguments)) return `${at}.tool_calls`;
  return null;
}

/**
 * The first of a chat body's fields, messages and tools the API cannot express (its path), or
 * null; its tool_choice and response_format are the adapter's to check.
 */
export function untranslatableFields(body: Json, t: ChatTranslation): string | null {
  for (const [key, value] of Object.entries(body)) {
    if (value === undefined || t.translated.has(key)) continue;
    if (!t.neutral[key]?.(value)) return key;
  }
  // Anthropic's temperature and Converse's temperature and topP are 0 to 1
  if (typeof body.temperature === "number" && body.temperature > 1) return "temperature";
  const messages = Array.isArray(body.messages) ? body.messages : [];
  for (const [i, m] of messages.entries()) {
    const bad = untranslatableMessage(m, `messages[${i}]`, t);
    if (bad) return bad;
  }
  if (Array.isArray(body.tools))
    for (const [i, tool] of body.tools.entries())
      if (!isObject(tool) || tool.type !== "function" || !isObject(tool.function)) return `tools[${i}]`;
  return null;
}

/**
 * Whether a JSON response_format can be asked through a forced tool: no tools or tool_choice
 * beside it, and a json_schema's schema an object (the tool's input).
 */
export function formatAsTool(body: Json, rf: Json): boolean {
  if (body.tools !== undefined || body.tool_choice !== undefined) return false;
  const schema = isObject(rf.json_schema) ? rf.json_schema.schema : undefined;
  return !(rf.type === "json_schema" && !(isObject(schema) && (schema.type === "object" || schema.type === undefined)));
}

/** The tool a response_format is asked through (forced tool use); its input is the answer's JSON. */
export const FORMAT_TOOL = "json_answer";

/** Whether a chat body asks for its answer through the format tool (a response_format). */
export const isFormatted = (body: Json): boolean =>
  isObject(body.response_format) && (body.response_format.type === "json_schema" || body.response_format.type === "json_object");

/** A function's result schema as a tool's input schema (an object at the root, else wrapped in `value`). */
export function toolSchema(schema: JsonSchema): { schema: JsonSchema; wrapped: boolean } {
  if (schema.type === "object") return { schema, wrapped: false };
  return { schema: { type: "object", properties: { value: schema }, required: ["value"] }, wrapped: true };
}

/** A tool name as both take it ([a-zA-Z0-9_-]+, at most 64). */
export const toolName = (name: string) => name.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64) || "result";

/**
 * OpenAI's finish_reason for the API's stop reason: a forced format tool's use is a plain stop, the
 * reasons in `filtered` an answer its content filter withheld.
 */
export function finishReasonOf(stop: unknown, formatted: boolean, filtered: readonly string[]): string {
  switch (stop) {
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "tool_use":
      return formatted ? "stop" : "tool_calls";
    default:
      return typeof stop === "string" && filtered.includes(stop) ? "content_filter" : "stop";
  }
}

const count = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0);

/**
 * An answer's usage in OpenAI's fields, from its input tokens, which leave out what was read from
 * or written to the prompt cache, the cache's reads and writes, and its output tokens: OpenAI's
 * `prompt_tokens` counts all of the input, the cached part in `prompt_tokens_details.cached_tokens`
 * and the writes in `cache_write_tokens` (each priced as its kind: providers/usage.ts, docs/pricing.md).
 */
export function cachedPromptUsage(input: unknown, cacheRead: unknown, cacheWrite: unknown, output: unknown): Json {
  const read = count(cacheRead);
  const write = count(cacheWrite);
  const prompt = count(input) + read + write;
  const completion = count(output);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: read, cache_write_tokens: write },
  };
}

/** An answer read (its text, reasoning and tool calls) as a chat completion; reasoning as `reasoning_content`. */
export function chatCompletion(
  read: { text: string; reasoning: string; calls: Json[] },
  head: { id: string; model: unknown },
  finishReason: string,
  usage: Json,
): Json {
  const { text, reasoning, calls } = read;
  const message: Json = { role: "assistant", content: calls.length > 0 && text === "" ? null : text, refusal: null };
  if (calls.length > 0) message.tool_calls = calls;
  if (reasoning) message.reasoning_content = reasoning;
  return {
    id: head.id,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: head.model,
    choices: [{ index: 0, message, finish_reason: finishReason, logprobs: null }],
    usage,
  };
}
