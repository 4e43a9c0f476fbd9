/**
 * OpenAI's Chat Completions body translated to Bedrock's Converse request, and a Converse answer
 * back to a chat completion (docs/providers.md, "bedrock"). What Converse cannot express is never
 * dropped silently: `untranslatable` names the first such field (the provider's
 * `untranslatable`), and the routes skip the provider for that request (or answer 400 naming it).
 * The few fields dropped by design, each only with a value that changes nothing, are in the docs.
 */
import { isObject, type JsonSchema, type ProxyApi } from "../../types";

type Json = Record<string, unknown>;

/** The tool a response_format is asked through (forced tool use); its input is the answer's JSON. */
export const FORMAT_TOOL = "json_answer";

/** Titan Text Embeddings V2's output sizes */
export const TITAN_DIMENSIONS = new Set([256, 512, 1024]);

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
  "response_format",
]);

/**
 * Fields dropped by design, each only with the value that changes nothing on Bedrock's side:
 * `seed` (a best-effort hint Converse has no field for), `user` and `metadata` (OpenAI's
 * end-user id and stored-completion tags), `store: false`, `service_tier` auto or default, `n: 1`,
 * zero penalties, `logprobs: false`, `parallel_tool_calls: true` (what Converse does anyway).
 */
const NEUTRAL: Record<string, (v: unknown) => boolean> = {
  seed: () => true,
  user: () => true,
  metadata: () => true,
  store: (v) => v === false || v === null,
  service_tier: (v) => v === "auto" || v === "default" || v === null,
  n: (v) => v === 1 || v === null,
  presence_penalty: (v) => v === 0 || v === null,
  frequency_penalty: (v) => v === 0 || v === null,
  logprobs: (v) => v === false || v === null,
  parallel_tool_calls: (v) => v === true || v === null,
};

const ROLES = new Set(["system", "developer", "user", "assistant", "tool"]);
const MESSAGE_FIELDS = new Set(["role", "content", "tool_calls", "tool_call_id", "refusal"]);
/** Converse's image formats, by a data: URL's media type */
const IMAGE_FORMATS: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpeg",
  "image/jpg": "jpeg",
  "image/gif": "gif",
  "image/webp": "webp",
};
const DATA_URL = /^data:([^;,]+);base64,(.+)$/s;

const parsesToObject = (text: unknown): boolean => {
  if (typeof text !== "string") return false;
  try {
    return isObject(JSON.parse(text === "" ? "{}" : text));
  } catch {
    return false;
  }
};

/** A data: URL of an image Converse takes as bytes: its format and base64; null for anything else (a URL Bedrock would not fetch). */
function imageOf(imageUrl: unknown): { format: string; bytes: string } | null {
  const url = typeof imageUrl === "string" ? imageUrl : isObject(imageUrl) ? imageUrl.url : undefined;
  if (typeof url !== "string") return null;
  const m = DATA_URL.exec(url.trim());
  const format = m ? IMAGE_FORMATS[(m[1] as string).toLowerCase()] : undefined;
  return m && format ? { format, bytes: m[2] as string } : null;
}

function untranslatableMessage(m: unknown, at: string): string | null {
  if (!isObject(m) || !ROLES.has(String(m.role))) return `${at}.role`;
  for (const k of Object.keys(m)) if (m[k] !== undefined && m[k] !== null && !MESSAGE_FIELDS.has(k)) return `${at}.${k}`;
  if (Array.isArray(m.content))
    for (const [j, p] of m.content.entries()) {
      if (!isObject(p) || (p.type !== "text" && p.type !== "image_url")) return `${at}.content[${j}].type`;
      if (p.type === "image_url" && (m.role !== "user" || !imageOf(p.image_url))) return `${at}.content[${j}].image_url`;
    }
  else if (m.content !== undefined && m.content !== null && typeof m.content !== "string") return `${at}.content`;
  if (Array.isArray(m.tool_calls))
    for (const c of m.tool_calls)
      if (!isObject(c) || !isObject(c.function) || !parsesToObject(c.function.arguments)) return `${at}.tool_calls`;
  return null;
}

/** The first field of a chat body Converse cannot express (its path), or null. */
export function untranslatableChat(body: Json): string | null {
  for (const [key, value] of Object.entries(body)) {
    if (value === undefined || TRANSLATED.has(key)) continue;
    if (!NEUTRAL[key]?.(value)) return key;
  }
  // Converse's temperature and topP are 0 to 1 (InferenceConfiguration)
  if (typeof body.temperature === "number" && body.temperature > 1) return "temperature";
  const messages = Array.isArray(body.messages) ? body.messages : [];
  for (const [i, m] of messages.entries()) {
    const bad = untranslatableMessage(m, `messages[${i}]`);
    if (bad) return bad;
  }
  if (Array.isArray(body.tools))
    for (const [i, t] of body.tools.entries())
      if (!isObject(t) || t.type !== "function" || !isObject(t.function)) return `tools[${i}]`;
  const choice = body.tool_choice;
  // Converse's toolChoice is auto, any or one tool: there is no "none" while tools are given
  if (choice !== undefined && choice !== null) {
    const named = isObject(choice) && isObject(choice.function) && typeof choice.function.name === "string";
    if (!(choice === "auto" || choice === "required" || named)) return "tool_choice";
  }
  const rf = body.response_format;
  if (isObject(rf) && rf.type !== "text") {
    if (rf.type !== "json_object" && rf.type !== "json_schema") return "response_format";
    if (body.tools !== undefined || body.tool_choice !== undefined) return "response_format";
    const schema = isObject(rf.json_schema) ? rf.json_schema.schema : undefined;
    if (rf.type === "json_schema" && !(isObject(schema) && (schema.type === "object" || schema.type === undefined)))
      return "response_format";
  }
  return null;
}

/** The first field of an embeddings body Titan Text Embeddings cannot take, or null. */
export function untranslatableEmbeddings(body: Json): string | null {
  const input = body.input;
  const texts =
    (typeof input === "string" && input !== "") ||
    (Array.isArray(input) && input.length > 0 && input.every((t) => typeof t === "string" && t !== ""));
  if (!texts) return "input";
  const f = body.encoding_format;
  if (f !== undefined && f !== "float" && f !== "base64") return "encoding_format";
  if (body.dimensions !== undefined && !TITAN_DIMENSIONS.has(body.dimensions as number)) return "dimensions";
  for (const key of Object.keys(body))
    if (!["model", "input", "encoding_format", "dimensions", "user"].includes(key) && body[key] !== undefined) return key;
  return null;
}

export function untranslatable(api: ProxyApi, body: Json): string | null {
  if (api === "embeddings") return untranslatableEmbeddings(body);
  if (api === "chat/completions") return untranslatableChat(body);
  return "input";
}

const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((p) => (isObject(p) && typeof p.text === "string" ? p.text : "")).join("")
      : "";

/** Converse's prompt cache checkpoint: what comes before it is cached (Anthropic's `cache_control` on the part before) */
const CACHE_POINT = { cachePoint: { type: "default" } };

/**
 * Content parts (or a string) as Converse content blocks: text, and images as bytes; a part with
 * `cache_control` (Anthropic's prompt caching, as the `anthropic` type keeps it) is followed by a
 * `cachePoint` block, Converse's way of saying the same.
 */
function blocksOf(content: unknown): Json[] {
  if (typeof content === "string") return content === "" ? [] : [{ text: content }];
  if (!Array.isArray(content)) return [];
  const out: Json[] = [];
  for (const p of content) {
    if (!isObject(p)) continue;
    if (p.type === "text" && typeof p.text === "string" && p.text !== "") out.push({ text: p.text });
    else if (p.type === "image_url") {
      const image = imageOf(p.image_url);
      if (image) out.push({ image: { format: image.format, source: { bytes: image.bytes } } });
    } else continue;
    if (p.cache_control !== undefined && p.cache_control !== null) out.push(CACHE_POINT);
  }
  return out;
}

/** A tool's result as toolResult content: a JSON object as `json`, anything else as text. */
function resultContent(content: unknown): Json[] {
  const text = textOf(content);
  try {
    const v: unknown = JSON.parse(text);
    if (isObject(v)) return [{ json: v }];
  } catch {
    // text
  }
  return [{ text }];
}

/**
 * `system` and `messages`: system and developer messages (wherever they are) become the system
 * blocks, tool results user turns of toolResult blocks, and turns of one role in a row are merged
 * (Converse alternates user and assistant).
 */
export function conversation(messages: unknown[]): { system: Json[]; messages: Json[] } {
  const system: Json[] = [];
  const turns: { role: string; content: Json[] }[] = [];
  const push = (role: string, blocks: Json[]) => {
    if (blocks.length === 0) return;
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  };
  for (const m of messages) {
    if (!isObject(m)) continue;
    if (m.role === "system" || m.role === "developer") system.push(...blocksOf(m.content));
    else if (m.role === "tool") push("user", [{ toolResult: { toolUseId: m.tool_call_id, content: resultContent(m.content) } }]);
    else if (m.role === "assistant") {
      const blocks = blocksOf(m.content);
      if (Array.isArray(m.tool_calls))
        for (const c of m.tool_calls as Json[]) {
          const fn = c.function as Json;
          const args = typeof fn.arguments === "string" && fn.arguments !== "" ? fn.arguments : "{}";
          blocks.push({ toolUse: { toolUseId: c.id, name: fn.name, input: JSON.parse(args) } });
        }
      push("assistant", blocks);
    } else push("user", blocksOf(m.content));
  }
  return { system, messages: turns };
}

/** A schema as a tool's inputSchema (an object at the root, else wrapped in `value`). */
export function toolSchema(schema: JsonSchema): { schema: JsonSchema; wrapped: boolean } {
  if (schema.type === "object") return { schema, wrapped: false };
  return { schema: { type: "object", properties: { value: schema }, required: ["value"] }, wrapped: true };
}

/** A tool name as Converse takes it ([a-zA-Z0-9_-]+, at most 64). */
export const toolName = (name: string) => name.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64) || "result";

/** The forced tool of a structured answer: toolConfig with one tool and toolChoice naming it. */
export function forcedTool(name: string, schema: JsonSchema, description?: string): Json {
  return {
    tools: [{ toolSpec: { name, ...(description ? { description } : {}), inputSchema: { json: schema } } }],
    toolChoice: { tool: { name } },
  };
}

function toolConfigOf(body: Json): Json | undefined {
  const rf = body.response_format;
  if (isObject(rf) && (rf.type === "json_schema" || rf.type === "json_object")) {
    const spec = isObject(rf.json_schema) ? rf.json_schema : {};
    const schema = isObject(spec.schema) ? { type: "object", ...spec.schema } : { type: "object" };
    return forcedTool(FORMAT_TOOL, schema, typeof spec.description === "string" ? spec.description : undefined);
  }
  if (!Array.isArray(body.tools) || body.tools.length === 0) return undefined;
  const tools = (body.tools as Json[]).map((t) => {
    const fn = t.function as Json;
    return {
      toolSpec: {
        name: fn.name,
        ...(typeof fn.description === "string" ? { description: fn.description } : {}),
        inputSchema: { json: isObject(fn.parameters) ? fn.parameters : { type: "object", properties: {} } },
      },
    };
  });
  const choice = body.tool_choice;
  const toolChoice =
    choice === "required"
      ? { any: {} }
      : isObject(choice) && isObject(choice.function)
        ? { tool: { name: choice.function.name } }
        : choice === "auto"
          ? { auto: {} }
          : undefined;
  return { tools, ...(toolChoice ? { toolChoice } : {}) };
}

/** The Converse body (the model goes in the URL) for a chat body that `untranslatableChat` passed. */
export function converseFromChat(body: Json): Json {
  const { system, messages } = conversation(Array.isArray(body.messages) ? body.messages : []);
  const out: Json = { messages };
  if (system.length > 0) out.system = system;
  const inference: Json = {};
  const cap = body.max_completion_tokens ?? body.max_tokens;
  if (typeof cap === "number") inference.maxTokens = cap;
  if (typeof body.temperature === "number") inference.temperature = body.temperature;
  if (typeof body.top_p === "number") inference.topP = body.top_p;
  // an empty stop sequence stops nothing (Converse refuses one)
  const stop = (typeof body.stop === "string" ? [body.stop] : Array.isArray(body.stop) ? body.stop : []).filter((x) => x !== "");
  if (stop.length > 0) inference.stopSequences = stop;
  if (Object.keys(inference).length > 0) out.inferenceConfig = inference;
  const toolConfig = toolConfigOf(body);
  if (toolConfig) out.toolConfig = toolConfig;
  return out;
}

/** OpenAI's finish_reason for Converse's stopReason (a forced format tool's use is a plain stop). */
export function finishReason(stop: unknown, formatted: boolean): string {
  switch (stop) {
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "tool_use":
      return formatted ? "stop" : "tool_calls";
    case "guardrail_intervened":
    case "content_filtered":
      return "content_filter";
    default:
      return "stop";
  }
}

const count = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0);

/**
 * Converse's usage in OpenAI's fields: its `inputTokens` leaves out what was read from or
 * written to the prompt cache (`cacheReadInputTokens`, `cacheWriteInputTokens`), OpenAI's
 * `prompt_tokens` counts all of it, the cached part in `prompt_tokens_details.cached_tokens` and
 * the writes in `cache_write_tokens` (each priced as its kind: providers/usage.ts, docs/pricing.md).
 */
export function chatUsage(u: unknown): Json {
  const usage = isObject(u) ? u : {};
  const read = count(usage.cacheReadInputTokens);
  const write = count(usage.cacheWriteInputTokens);
  const prompt = count(usage.inputTokens) + read + write;
  const completion = count(usage.outputTokens);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: read, cache_write_tokens: write },
  };
}

/** A Converse answer's content blocks, read: its text, reasoning, tool uses (the format tool's input as text when `formatted`). */
export function readBlocks(blocks: unknown, formatted: boolean): { text: string; reasoning: string; calls: Json[] } {
  let text = "";
  let reasoning = "";
  const calls: Json[] = [];
  for (const b of Array.isArray(blocks) ? blocks : []) {
    if (!isObject(b)) continue;
    if (typeof b.text === "string") text += b.text;
    else if (isObject(b.reasoningContent) && isObject(b.reasoningContent.reasoningText))
      reasoning += String(b.reasoningContent.reasoningText.text ?? "");
    else if (isObject(b.toolUse)) {
      const use = b.toolUse;
      if (formatted && use.name === FORMAT_TOOL) text += JSON.stringify(use.input ?? {});
      else
        calls.push({
          id: use.toolUseId,
          type: "function",
          function: { name: use.name, arguments: JSON.stringify(use.input ?? {}) },
        });
    }
  }
  return { text, reasoning, calls };
}

/** A Converse answer as a chat completion: text, tool calls, reasoning as `reasoning_content`, the finish, the usage. */
export function chatFromConverse(answer: Json, model: string, formatted: boolean): Json {
  const output = isObject(answer.output) ? answer.output : {};
  const msg = isObject(output.message) ? output.message : {};
  const { text, reasoning, calls } = readBlocks(msg.content, formatted);
  const message: Json = { role: "assistant", content: calls.length > 0 && text === "" ? null : text, refusal: null };
  if (calls.length > 0) message.tool_calls = calls;
  if (reasoning) message.reasoning_content = reasoning;
  return {
    id: `chatcmpl-${crypto.randomUUID()}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message, finish_reason: finishReason(answer.stopReason, formatted), logprobs: null }],
    usage: chatUsage(answer.usage),
  };
}

/** Whether a chat body asks for its answer through the format tool (a response_format). */
export const isFormatted = (body: Json): boolean =>
  isObject(body.response_format) && (body.response_format.type === "json_schema" || body.response_format.type === "json_object");
