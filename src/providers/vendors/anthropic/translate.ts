/**
 * OpenAI's Chat Completions body translated to Anthropic's Messages API, and a Message back to a
 * chat completion (docs/providers.md, "anthropic"). What has no equivalent is never dropped
 * silently: `unservable` names the first such field (the provider's `untranslatable`), and the router skips the provider for that
 * request (or answers 400 naming it). The few fields dropped by design are listed in the docs.
 */
import { isObject } from "../../types";
import {
  type ChatTranslation,
  cachedPromptUsage,
  chatCompletion,
  FORMAT_TOOL,
  finishReasonOf,
  formatAsTool,
  NEUTRAL_CHAT_FIELDS,
  TRANSLATED_CHAT_FIELDS,
  untranslatableFields,
} from "../translating";

type Json = Record<string, unknown>;

/**
 * `max_tokens` when the request sets none (Anthropic requires one): what Anthropic's own examples
 * send, and below every current model's output limit.
 */
export const DEFAULT_MAX_TOKENS = 4096;

/** Fields translated with nothing lost: the translating adapters' own (vendors/translating.ts), and these. */
const TRANSLATED = new Set([
  ...TRANSLATED_CHAT_FIELDS,
  "parallel_tool_calls",
  "user",
  // Anthropic's extended thinking, as Anthropic takes it (an extension of the chat body)
  "thinking",
]);

const PART_TYPES = new Set(["text", "image_url"]);
const DATA_URL = /^data:(image\/(?:jpeg|png|gif|webp));base64,(.+)$/s;

/** What the Messages API takes of a chat body (vendors/translating.ts); the fields it drops by design are the translating adapters' own. */
const MESSAGES_API: ChatTranslation = {
  translated: TRANSLATED,
  neutral: NEUTRAL_CHAT_FIELDS,
  badPart: (p, role) =>
    !isObject(p) || !PART_TYPES.has(String(p.type))
      ? "type"
      : p.type === "image_url" && (role !== "user" || !imageSource(p.image_url))
        ? "image_url"
        : null,
  partPaths: false,
};

/** The first field of a chat body the Messages API cannot express; null when all of it translates. */
export function unservable(body: Json): string | null {
  const bad = untranslatableFields(body, MESSAGES_API);
  if (bad) return bad;
  const rf = body.response_format;
  if (isObject(rf) && rf.type !== "text" && !formatAsTool(body, rf)) return "response_format";
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

/** OpenAI's finish_reason for Anthropic's stop_reason (vendors/translating.ts); a refusal is its content filter's. */
export const finishReason = (stop: unknown, formatted: boolean): string => finishReasonOf(stop, formatted, ["refusal"]);

/** Anthropic's usage in OpenAI's fields (vendors/translating.ts): its `input_tokens` leave out the prompt cache's reads and writes. */
export function chatUsage(u: unknown): Json {
  const usage = isObject(u) ? u : {};
  return cachedPromptUsage(
    usage.input_tokens,
    usage.cache_read_input_tokens,
    usage.cache_creation_input_tokens,
    usage.output_tokens,
  );
}

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
  return chatCompletion(
    { text, reasoning, calls },
    { id: typeof msg.id === "string" ? msg.id : "msg", model: msg.model },
    finishReason(msg.stop_reason, formatted),
    chatUsage(msg.usage),
  );
}
