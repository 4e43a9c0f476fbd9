/**
 * OpenAI's Chat Completions body translated to Bedrock's Converse request, and a Converse answer
 * back to a chat completion (docs/providers.md, "bedrock"). What Converse cannot express is never
 * dropped silently: `untranslatable` names the first such field (the provider's
 * `untranslatable`), and the routes skip the provider for that request (or answer 400 naming it).
 * The few fields dropped by design, each only with a value that changes nothing, are in the docs.
 */
import { isObject, type JsonSchema, type ProxyApi } from "../../types";
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

/** Titan Text Embeddings V2's output sizes */
export const TITAN_DIMENSIONS = new Set([256, 512, 1024]);

/**
 * Fields Converse drops by design besides the translating adapters' own (vendors/translating.ts), each only
 * with the value that changes nothing: `user` (OpenAI's end-user id), `parallel_tool_calls: true`
 * (what Converse does anyway).
 */
const NEUTRAL: Record<string, (v: unknown) => boolean> = {
  ...NEUTRAL_CHAT_FIELDS,
  user: () => true,
  parallel_tool_calls: (v) => v === true || v === null,
};

/** Converse's image formats, by a data: URL's media type */
const IMAGE_FORMATS: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpeg",
  "image/jpg": "jpeg",
  "image/gif": "gif",
  "image/webp": "webp",
};
const DATA_URL = /^data:([^;,]+);base64,(.+)$/s;

/** What Converse takes of a chat body (vendors/translating.ts). */
const CONVERSE: ChatTranslation = {
  translated: new Set(TRANSLATED_CHAT_FIELDS),
  neutral: NEUTRAL,
  badPart: (p, role) =>
    !isObject(p) || (p.type !== "text" && p.type !== "image_url")
      ? "type"
      : p.type === "image_url" && (role !== "user" || !imageOf(p.image_url))
        ? "image_url"
        : null,
  partPaths: true,
};

/** A data: URL of an image Converse takes as bytes: its format and base64; null for anything else (a URL Bedrock would not fetch). */
function imageOf(imageUrl: unknown): { format: string; bytes: string } | null {
  const url = typeof imageUrl === "string" ? imageUrl : isObject(imageUrl) ? imageUrl.url : undefined;
  if (typeof url !== "string") return null;
  const m = DATA_URL.exec(url.trim());
  const format = m ? IMAGE_FORMATS[(m[1] as string).toLowerCase()] : undefined;
  return m && format ? { format, bytes: m[2] as string } : null;
}

/** The first field of a chat body Converse cannot express (its path), or null. */
export function untranslatableChat(body: Json): string | null {
  const bad = untranslatableFields(body, CONVERSE);
  if (bad) return bad;
  const choice = body.tool_choice;
  // Converse's toolChoice is auto, any or one tool: there is no "none" while tools are given
  if (choice !== undefined && choice !== null) {
    const named = isObject(choice) && isObject(choice.function) && typeof choice.function.name === "string";
    if (!(choice === "auto" || choice === "required" || named)) return "tool_choice";
  }
  const rf = body.response_format;
  if (isObject(rf) && rf.type !== "text") {
    if (rf.type !== "json_object" && rf.type !== "json_schema") return "response_format";
    if (!formatAsTool(body, rf)) return "response_format";
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

/** OpenAI's finish_reason for Converse's stopReason (vendors/translating.ts); its guardrail's and content filter's withhold the answer. */
export const finishReason = (stop: unknown, formatted: boolean): string =>
  finishReasonOf(stop, formatted, ["guardrail_intervened", "content_filtered"]);

/** Converse's usage in OpenAI's fields (vendors/translating.ts): its `inputTokens` leave out the prompt cache's reads and writes. */
export function chatUsage(u: unknown): Json {
  const usage = isObject(u) ? u : {};
  return cachedPromptUsage(usage.inputTokens, usage.cacheReadInputTokens, usage.cacheWriteInputTokens, usage.outputTokens);
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
  return chatCompletion(
    readBlocks(msg.content, formatted),
    { id: `chatcmpl-${crypto.randomUUID()}`, model },
    finishReason(answer.stopReason, formatted),
    chatUsage(answer.usage),
  );
}
