/**
 * The Anthropic Messages API (`POST /v1/messages`) over Chat Completions: a client's request
 * checked and translated into the `chat/completions` body the /v1 pipeline forwards, and the chat
 * answer translated back into Anthropic's message (docs/messages.md says field by field what is
 * translated, dropped and refused). Refusals are `invalid_request` errors naming the field, which
 * the app writes in Anthropic's shape on these paths (http/messages-errors.ts).
 */
import { GatewayError, invalidRequest } from "../errors";
import { isObject } from "../providers/types";

type Json = Record<string, unknown>;

/**
 * The usage name of `/v1/messages` and its count_tokens: its rate-limit bucket (a plan's
 * `rate_limits.messages`), `allowed_functions`, the request log, charges and metrics.
 */
export const MESSAGES_FN = "messages";

/** Fields of a Messages request carried across (or checked and dropped: docs/messages.md); any other is refused. */
const CARRIED = new Set([
  "model",
  "max_tokens",
  "messages",
  "system",
  "stop_sequences",
  "temperature",
  "top_p",
  "stream",
  "metadata",
  "tools",
  "tool_choice",
  "thinking",
  "cache_control",
]);

/** Why a field has no equivalent in an OpenAI-shaped API, for the refusal's message. */
const NO_EQUIVALENT: Record<string, string> = {
  top_k: "Chat Completions has no top-k sampling",
  thinking: "extended thinking has no Chat Completions equivalent",
  service_tier: "Chat Completions' service tiers are not Anthropic's",
};

const refuse = (param: string, why: string) => invalidRequest(`${param}: ${why}`, param);

function notCarried(field: string): Error {
  const why = NO_EQUIVALENT[field] ?? "is not a Messages API field this gateway carries to its providers";
  return refuse(field, `${why}; leave it out (nothing was sent or charged)`);
}

const isNumberIn = (v: unknown, lo: number, hi: number) => typeof v === "number" && Number.isFinite(v) && v >= lo && v <= hi;

function textOfBlocks(blocks: unknown[], param: string): string {
  return blocks
    .map((b, i) => {
      if (!isObject(b) || b.type !== "text" || typeof b.text !== "string")
        throw refuse(`${param}[${i}]`, 'must be a text block ({type: "text", text})');
      return b.text;
    })
    .join("\n");
}

/** `system`: a string or text blocks, as one system message. */
function systemMessage(system: unknown): Json[] {
  if (system === undefined || system === null) return [];
  if (typeof system === "string") return system === "" ? [] : [{ role: "system", content: system }];
  if (!Array.isArray(system)) throw refuse("system", "must be a string or an array of text blocks");
  return system.length === 0 ? [] : [{ role: "system", content: textOfBlocks(system, "system") }];
}

/** An image block's source as a Chat Completions image part (base64 as a data: URL). */
function imagePart(block: Json, param: string): Json {
  const s = block.source;
  if (!isObject(s)) throw refuse(`${param}.source`, "is required");
  if (s.type === "base64") {
    if (typeof s.media_type !== "string" || typeof s.data !== "string")
      throw refuse(`${param}.source`, "a base64 source needs media_type and data");
    return { type: "image_url", image_url: { url: `data:${s.media_type};base64,${s.data}` } };
  }
  if (s.type === "url") {
    if (typeof s.url !== "string") throw refuse(`${param}.source.url`, "must be a string");
    return { type: "image_url", image_url: { url: s.url } };
  }
  throw refuse(`${param}.source.type`, `"${String(s.type)}" images are not carried (base64 and url sources are)`);
}

/** A tool_result's content: text (images in a tool result have no Chat Completions equivalent). */
function toolResultText(content: unknown, param: string): string {
  if (content === undefined || content === null) return "";
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) throw refuse(`${param}.content`, "must be a string or an array of text blocks");
  return content
    .map((b, i) => {
      if (isObject(b) && b.type === "text" && typeof b.text === "string") return b.text;
      throw refuse(
        `${param}.content[${i}]`,
        "only text blocks are carried in a tool_result (Chat Completions' tool messages are text)",
      );
    })
    .join("\n");
}

/** A user turn: its tool results first (each a tool message, as Chat Completions needs them right after the calls), then its text and images. */
function userMessages(content: unknown[], param: string): Json[] {
  const tools: Json[] = [];
  const parts: Json[] = [];
  content.forEach((b, i) => {
    const at = `${param}[${i}]`;
    if (!isObject(b)) throw refuse(at, "must be a content block");
    if (b.type === "text") {
      if (typeof b.text !== "string") throw refuse(`${at}.text`, "must be a string");
      parts.push({ type: "text", text: b.text });
    } else if (b.type === "image") parts.push(imagePart(b, at));
    else if (b.type === "tool_result") {
      if (typeof b.tool_use_id !== "string") throw refuse(`${at}.tool_use_id`, "must be a string");
      tools.push({ role: "tool", tool_call_id: b.tool_use_id, content: toolResultText(b.content, at) });
    } else
      throw refuse(`${at}.type`, `"${String(b.type)}" blocks are not carried in a user turn (text, image and tool_result are)`);
  });
  if (parts.length === 0) return tools;
  const only = parts.length === 1 && parts[0]?.type === "text" ? (parts[0].text as string) : null;
  return [...tools, { role: "user", content: only ?? parts }];
}

/** An assistant turn: its text, and its tool_use blocks as tool calls; earlier thinking blocks are dropped. */
function assistantMessage(content: unknown[], param: string): Json {
  const texts: string[] = [];
  const calls: Json[] = [];
  content.forEach((b, i) => {
    const at = `${param}[${i}]`;
    if (!isObject(b)) throw refuse(at, "must be a content block");
    if (b.type === "text") {
      if (typeof b.text !== "string") throw refuse(`${at}.text`, "must be a string");
      texts.push(b.text);
    } else if (b.type === "tool_use") {
      if (typeof b.id !== "string" || typeof b.name !== "string") throw refuse(at, "a tool_use block needs id and name");
      calls.push({ id: b.id, type: "function", function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } });
    } else if (b.type !== "thinking" && b.type !== "redacted_thinking")
      throw refuse(`${at}.type`, `"${String(b.type)}" blocks are not carried in an assistant turn (text and tool_use are)`);
  });
  return {
    role: "assistant",
    content: texts.length > 0 ? texts.join("") : null,
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
  };
}

function chatMessages(messages: unknown): Json[] {
  if (!Array.isArray(messages) || messages.length === 0) throw refuse("messages", "must be a non-empty array");
  return messages.flatMap((m, i) => {
    const at = `messages[${i}]`;
    if (!isObject(m) || (m.role !== "user" && m.role !== "assistant"))
      throw refuse(`${at}.role`, 'must be "user" or "assistant"');
    if (typeof m.content === "string") return [{ role: m.role, content: m.content }];
    if (!Array.isArray(m.content)) throw refuse(`${at}.content`, "must be a string or an array of content blocks");
    return m.role === "user" ? userMessages(m.content, `${at}.content`) : [assistantMessage(m.content, `${at}.content`)];
  });
}

/** `tools`: client tools as functions (input_schema is their parameters); Anthropic's server tools are refused. */
function chatTools(tools: unknown): Json[] {
  if (!Array.isArray(tools)) throw refuse("tools", "must be an array");
  return tools.map((t, i) => {
    const at = `tools[${i}]`;
    if (!isObject(t)) throw refuse(at, "must be an object");
    if (t.type !== undefined && t.type !== null && t.type !== "custom")
      throw refuse(`${at}.type`, `"${String(t.type)}" is one of Anthropic's own tools, which no OpenAI-shaped provider runs`);
    if (typeof t.name !== "string" || t.name === "") throw refuse(`${at}.name`, "must be a non-empty string");
    if (!isObject(t.input_schema)) throw refuse(`${at}.input_schema`, "must be a JSON Schema object");
    const fn: Json = { name: t.name, parameters: t.input_schema };
    if (typeof t.description === "string") fn.description = t.description;
    return { type: "function", function: fn };
  });
}

/** `tool_choice`: auto, any (required), tool (that function), none; disable_parallel_tool_use as parallel_tool_calls: false. */
function chatToolChoice(choice: unknown, out: Json, tools: boolean): void {
  if (!isObject(choice)) throw refuse("tool_choice", "must be an object with a type");
  if (choice.type === "auto") out.tool_choice = "auto";
  else if (choice.type === "any") out.tool_choice = "required";
  else if (choice.type === "none") out.tool_choice = "none";
  else if (choice.type === "tool") {
    if (typeof choice.name !== "string") throw refuse("tool_choice.name", "must name the tool");
    out.tool_choice = { type: "function", function: { name: choice.name } };
  } else throw refuse("tool_choice.type", 'must be "auto", "any", "tool" or "none"');
  if (choice.disable_parallel_tool_use === true && choice.type !== "none" && tools) out.parallel_tool_calls = false;
}

/** The sampling and stop fields, checked against Anthropic's ranges. */
function sampling(body: Json, out: Json): void {
  if (body.temperature !== undefined) {
    if (!isNumberIn(body.temperature, 0, 1)) throw refuse("temperature", "must be a number from 0 to 1");
    out.temperature = body.temperature;
  }
  if (body.top_p !== undefined) {
    if (!isNumberIn(body.top_p, 0, 1)) throw refuse("top_p", "must be a number from 0 to 1");
    out.top_p = body.top_p;
  }
  if (body.stop_sequences !== undefined) {
    const s = body.stop_sequences;
    if (!Array.isArray(s) || s.some((x) => typeof x !== "string")) throw refuse("stop_sequences", "must be an array of strings");
    if (s.length > 4) throw refuse("stop_sequences", "at most 4 are carried (Chat Completions takes 4 stop sequences)");
    if (s.length > 0) out.stop = s;
  }
}

/**
 * A Messages request as the Chat Completions body it is forwarded as. `count` is a count_tokens
 * request (no max_tokens, never a stream).
 */
export function chatFromMessages(body: Json, count = false): Json {
  for (const field of Object.keys(body)) if (!CARRIED.has(field)) throw notCarried(field);
  if (isObject(body.thinking) && body.thinking.type !== "disabled") throw notCarried("thinking");
  if (typeof body.model !== "string" || body.model === "") throw refuse("model", "is required (a string)");
  const out: Json = { model: body.model, messages: [...systemMessage(body.system), ...chatMessages(body.messages)] };
  if (!count) {
    const max = body.max_tokens;
    if (max === undefined) throw refuse("max_tokens", "is required");
    if (typeof max !== "number" || !Number.isInteger(max) || max < 1)
      throw refuse("max_tokens", "must be an integer of at least 1");
    out.max_tokens = max;
  }
  sampling(body, out);
  if (body.stream !== undefined && typeof body.stream !== "boolean") throw refuse("stream", "must be a boolean");
  if (body.stream === true && !count) out.stream = true;
  if (body.metadata !== undefined) {
    if (!isObject(body.metadata)) throw refuse("metadata", "must be an object");
    const user = body.metadata.user_id;
    if (user !== undefined && user !== null && typeof user !== "string") throw refuse("metadata.user_id", "must be a string");
    if (typeof user === "string") out.user = user;
  }
  if (body.tools !== undefined) {
    const tools = chatTools(body.tools);
    if (tools.length > 0) out.tools = tools;
  }
  if (body.tool_choice !== undefined) {
    const choice: Json = {};
    chatToolChoice(body.tool_choice, choice, out.tools !== undefined);
    // Chat Completions refuses a tool_choice without tools, which Anthropic's API takes
    if (out.tools !== undefined) Object.assign(out, choice);
  }
  return out;
}

/** Chat Completions' finish reasons as Anthropic's stop reasons. */
export function stopReason(finish: unknown, stopSequence: string | null): string {
  if (finish === "length") return "max_tokens";
  if (finish === "tool_calls" || finish === "function_call") return "tool_use";
  if (finish === "content_filter") return "refusal";
  return stopSequence === null ? "end_turn" : "stop_sequence";
}

/**
 * The stop sequence that ended an answer, when the provider says which (vLLM's `stop_reason` on
 * a choice); Chat Completions itself does not, and its "stop" is then `end_turn`.
 */
export function stopSequenceOf(choice: Json, asked: unknown): string | null {
  const s = choice.stop_reason;
  return typeof s === "string" && Array.isArray(asked) && asked.includes(s) ? s : null;
}

export interface MessagesUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

/**
 * A chat answer's usage in Anthropic's fields (input_tokens without the cached ones, which are
 * cache_read_input_tokens); without one, the tokens the call was charged on.
 */
export function messagesUsage(usage: unknown, charged?: { input: number; output: number }): MessagesUsage {
  if (!isObject(usage)) {
    return {
      input_tokens: charged?.input ?? 0,
      output_tokens: charged?.output ?? 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    };
  }
  const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0);
  const details = isObject(usage.prompt_tokens_details) ? usage.prompt_tokens_details : {};
  const cached = n(details.cached_tokens);
  return {
    input_tokens: Math.max(0, n(usage.prompt_tokens) - cached),
    output_tokens: n(usage.completion_tokens),
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cached,
  };
}

/** A tool call's arguments as a tool_use block's input (an object; arguments that are not one are kept under `arguments`). */
export function toolInput(args: unknown): Json {
  if (typeof args !== "string" || args === "") return {};
  try {
    const v = JSON.parse(args);
    return isObject(v) ? v : { arguments: v };
  } catch {
    return { arguments: args };
  }
}

/** The message id of a request: `msg_` and its request id's hex. */
export const messageId = (requestId: string) => `msg_${requestId.slice(4).replaceAll("-", "")}`;

/** A Chat Completions answer as Anthropic's message. */
export function messageFromChat(
  chat: unknown,
  ctx: { id: string; model: string; stopSequences: unknown; charged?: { input: number; output: number } },
): Json {
  const c = isObject(chat) ? chat : {};
  const choice = Array.isArray(c.choices) && isObject(c.choices[0]) ? c.choices[0] : {};
  const msg = isObject(choice.message) ? choice.message : {};
  const content: Json[] = [];
  const text = typeof msg.content === "string" ? msg.content : typeof msg.refusal === "string" ? msg.refusal : "";
  if (text !== "") content.push({ type: "text", text, citations: null });
  for (const call of Array.isArray(msg.tool_calls) ? msg.tool_calls : []) {
    if (!isObject(call) || !isObject(call.function)) continue;
    const id = typeof call.id === "string" ? call.id : `toolu_${content.length}`;
    content.push({ type: "tool_use", id, name: String(call.function.name ?? ""), input: toolInput(call.function.arguments) });
  }
  const stopSequence = stopSequenceOf(choice, ctx.stopSequences);
  return {
    id: ctx.id,
    type: "message",
    role: "assistant",
    model: typeof c.model === "string" ? c.model : ctx.model,
    content,
    stop_reason: stopReason(choice.finish_reason, stopSequence),
    stop_sequence: stopSequence,
    stop_details: null,
    usage: messagesUsage(c.usage, ctx.charged),
  };
}

/** The element or field a refusal's param names (`tools[1].type` -> tools, 1), to leave it out. */
export function dropAt(body: Json, param: string): boolean {
  // a top-level field the translation does not carry is named as it is (its name may hold "." or "[")
  if (Object.hasOwn(body, param)) {
    delete body[param];
    return true;
  }
  const path = [...param.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((m) => (m[2] !== undefined ? Number(m[2]) : (m[1] as string)));
  // the deepest array element on the path (a block, a tool), else the top-level field
  let cut = path.length > 0 ? 0 : -1;
  for (let i = 0; i < path.length; i++) if (typeof path[i] === "number") cut = i;
  if (cut < 0) return false;
  let parent: unknown = body;
  for (const key of path.slice(0, cut))
    parent = isObject(parent) || Array.isArray(parent) ? (parent as Json)[key as string] : undefined;
  const key = path[cut] as string | number;
  if (Array.isArray(parent) && typeof key === "number" && key < parent.length) {
    const type = isObject(parent[key]) ? parent[key].type : undefined;
    if (typeof type === "string") dropType(body, path.slice(0, cut), type);
    else parent.splice(key, 1);
    return true;
  }
  if (isObject(parent) && typeof key === "string" && key in parent) {
    delete parent[key];
    return true;
  }
  return false;
}

/**
 * Every element of type `type` in the arrays at `at` (its indices read as any: `messages[3].content`
 * is the content of every message of message 3's role), so a body of many blocks of a kind the translation does not carry (a
 * long agent's web search results) is left out of the chat body in one step, not one block a step.
 * What is left out goes nowhere (such a call goes only to a provider that takes the body as sent).
 */
function dropType(body: Json, at: (string | number)[], type: string): void {
  // in a message, only the turns of its role (a block one role may not hold, the other may)
  const held = at[0] === "messages" && typeof at[1] === "number" && Array.isArray(body.messages) ? body.messages[at[1]] : null;
  const role = isObject(held) ? held.role : undefined;
  let arrays: unknown[] = [body];
  for (const [n, step] of at.entries())
    arrays = arrays.flatMap((v) => {
      if (typeof step !== "number") return isObject(v) && step in v ? [v[step]] : [];
      const all = Array.isArray(v) ? v : [];
      return n === 1 && role !== undefined ? all.filter((m) => isObject(m) && m.role === role) : all;
    });
  for (const a of arrays) {
    if (!Array.isArray(a)) continue;
    let kept = 0;
    for (const v of a) if (!(isObject(v) && v.type === type)) a[kept++] = v;
    a.length = kept;
  }
}

/**
 * A Messages request as `chatFromMessages` makes it, for a route that may pass it through to a
 * provider that speaks the Messages API itself: what the translation refuses (top_k, thinking,
 * Anthropic's own tools, document blocks...) is left out of the chat body instead, and the first
 * refusal returned, to be thrown if the call can reach only providers it would be translated for.
 * A refusal of the request as a Messages request (no model, no max_tokens, a bad role) stands.
 */
export function chatForPassThrough(body: Json, count = false): { chat: Json; untranslated: GatewayError | null } {
  try {
    return { chat: chatFromMessages(body, count), untranslated: null };
  } catch (first) {
    if (!(first instanceof GatewayError) || first.param === null || !PASSED.test(first.param)) throw first;
    const copy = structuredClone(body);
    for (let err: unknown = first, i = 0; i < 64; i++) {
      if (!(err instanceof GatewayError) || err.param === null || !PASSED.test(err.param) || !dropAt(copy, err.param))
        throw first;
      try {
        return { chat: chatFromMessages(copy, count), untranslated: first };
      } catch (next) {
        err = next;
      }
    }
    throw first;
  }
}

/** The refusals of fields a Messages API provider takes as sent (never model, max_tokens, messages' roles). */
const PASSED = /^(?!model$|max_tokens$|messages$|messages\[\d+\]\.role$|stream$)/;
