import { type ChatMessage, isObject, type JsonSchema, type ProxyApi } from "../../types";
import { toGeminiSchema } from "./schema";

/**
 * OpenAI's Chat Completions body as Gemini's `GenerateContentRequest` (docs/providers.md, "gemini":
 * what is translated, and what has no counterpart). `untranslatable` names the first field a body
 * has that cannot be said to Gemini; the routes skip the provider for it (Provider.untranslatable),
 * so `toGenerateContent` never drops a field the client asked for.
 */

type Part = Record<string, unknown>;
interface Content {
  role: "user" | "model";
  parts: Part[];
}

/** Fields that change nothing Gemini does, or that the gateway has already served (stream, stream_options) */
const IGNORED = new Set([
  "model",
  "stream",
  "stream_options",
  "user",
  "metadata",
  "store",
  "service_tier",
  "safety_identifier",
  "prompt_cache_key",
  "parallel_tool_calls",
]);

/** Fields with a Gemini counterpart */
const TRANSLATED = new Set([
  "messages",
  "temperature",
  "top_p",
  "max_tokens",
  "max_completion_tokens",
  "n",
  "stop",
  "presence_penalty",
  "frequency_penalty",
  "seed",
  "response_format",
  "tools",
  "tool_choice",
  "functions",
  "function_call",
  "reasoning_effort",
]);

/** reasoning_effort as a thinking budget, as Google's OpenAI compatibility maps it */
const THINKING_BUDGET: Record<string, number> = { none: 0, minimal: 1024, low: 1024, medium: 8192, high: 24576 };

const ROLES = new Set(["system", "developer", "user", "assistant", "tool", "function"]);
const PARTS = new Set(["text", "image_url", "input_audio", "file"]);

/** The first field of a chat body Gemini has no counterpart for (its path), or null. */
export function untranslatableChat(body: Record<string, unknown>): string | null {
  for (const key of Object.keys(body)) {
    if (body[key] === undefined || body[key] === null || IGNORED.has(key) || TRANSLATED.has(key)) continue;
    // logprobs: false and the like ask for nothing
    if (body[key] === false) continue;
    return key;
  }
  if (Array.isArray(body.tools))
    for (const [i, t] of body.tools.entries()) if (!isObject(t) || t.type !== "function") return `tools[${i}].type`;
  // a named function, or a mode: Gemini's allowedFunctionNames says nothing else (allowed_tools, custom tools)
  const choice = body.tool_choice;
  if (choice !== undefined && !(typeof choice === "string" && ["none", "auto", "required"].includes(choice)))
    if (
      !(isObject(choice) && choice.type === "function" && isObject(choice.function) && typeof choice.function.name === "string")
    )
      return "tool_choice";
  if (body.reasoning_effort !== undefined && !(String(body.reasoning_effort) in THINKING_BUDGET)) return "reasoning_effort";
  const rf = body.response_format;
  if (isObject(rf) && rf.type !== "text" && rf.type !== "json_object" && rf.type !== "json_schema") return "response_format.type";
  const messages = Array.isArray(body.messages) ? body.messages : [];
  for (const [i, m] of messages.entries()) {
    if (!isObject(m) || !ROLES.has(String(m.role))) return `messages[${i}].role`;
    if (!Array.isArray(m.content)) continue;
    for (const [j, p] of m.content.entries()) {
      const at = `messages[${i}].content[${j}]`;
      if (!isObject(p) || !PARTS.has(String(p.type))) return `${at}.type`;
      if (p.type === "image_url" && dataUrl(urlOf(p.image_url)) === null) return `${at}.image_url`;
      if (p.type === "file" && (!isObject(p.file) || dataUrl(p.file.file_data) === null)) return `${at}.file`;
      if (p.type === "input_audio" && (!isObject(p.input_audio) || typeof p.input_audio.data !== "string"))
        return `${at}.input_audio`;
    }
  }
  return null;
}

/** The first field of an embeddings body Gemini cannot take (token ids, a float format other than float or base64). */
export function untranslatableEmbeddings(body: Record<string, unknown>): string | null {
  const input = body.input;
  const texts =
    typeof input === "string" || (Array.isArray(input) && input.length > 0 && input.every((t) => typeof t === "string"));
  if (!texts) return "input";
  const f = body.encoding_format;
  if (f !== undefined && f !== "float" && f !== "base64") return "encoding_format";
  for (const key of Object.keys(body))
    if (!["model", "input", "encoding_format", "dimensions", "user"].includes(key) && body[key] !== undefined) return key;
  return null;
}

export function untranslatable(api: ProxyApi, body: Record<string, unknown>): string | null {
  if (api === "embeddings") return untranslatableEmbeddings(body);
  if (api === "chat/completions") return untranslatableChat(body);
  return "input";
}

const urlOf = (v: unknown): unknown => (isObject(v) ? v.url : v);

/** A `data:` URL's media type and base64 payload; null for anything else (an http(s) URL Gemini would not fetch). */
export function dataUrl(v: unknown): { mimeType: string; data: string } | null {
  if (typeof v !== "string") return null;
  const m = /^data:([^;,]+)(?:;[^;,=]+=[^;,]+)*;base64,(.*)$/s.exec(v.trim());
  return m ? { mimeType: (m[1] as string).toLowerCase(), data: m[2] as string } : null;
}

const AUDIO_TYPES: Record<string, string> = { wav: "audio/wav", mp3: "audio/mp3", flac: "audio/flac", ogg: "audio/ogg" };

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((p) => (isObject(p) && typeof p.text === "string" ? p.text : "")).join("");
}

function partsOf(content: unknown): Part[] {
  if (typeof content === "string") return content === "" ? [] : [{ text: content }];
  if (!Array.isArray(content)) return [];
  const out: Part[] = [];
  for (const p of content) {
    if (!isObject(p)) continue;
    if (p.type === "text" && typeof p.text === "string") out.push({ text: p.text });
    else if (p.type === "image_url") {
      const d = dataUrl(urlOf(p.image_url));
      if (d) out.push({ inlineData: d });
    } else if (p.type === "file" && isObject(p.file)) {
      const d = dataUrl(p.file.file_data);
      if (d) out.push({ inlineData: d });
    } else if (p.type === "input_audio" && isObject(p.input_audio) && typeof p.input_audio.data === "string") {
      const format = String(p.input_audio.format ?? "wav");
      out.push({ inlineData: { mimeType: AUDIO_TYPES[format] ?? `audio/${format}`, data: p.input_audio.data } });
    }
  }
  return out;
}

const parseArgs = (text: unknown): Record<string, unknown> => {
  if (typeof text !== "string" || text.trim() === "") return {};
  try {
    const v: unknown = JSON.parse(text);
    return isObject(v) ? v : { value: v };
  } catch {
    // a model's broken arguments, sent back as they were
    return { arguments: text };
  }
};

/** A tool result as the object `functionResponse.response` must be: a JSON object as it is, anything else under `result`. */
function responseOf(content: unknown): Record<string, unknown> {
  const text = textOf(content);
  try {
    const v: unknown = JSON.parse(text);
    if (isObject(v)) return v;
    return { result: v };
  } catch {
    return { result: text };
  }
}

/** Appends a turn, merged into the last when it has the same role (Gemini alternates user and model turns). */
function push(contents: Content[], role: Content["role"], parts: Part[]): void {
  if (parts.length === 0) return;
  const last = contents.at(-1);
  if (last?.role === role) last.parts.push(...parts);
  else contents.push({ role, parts });
}

/** `systemInstruction` and `contents` from chat messages (system and developer messages, wherever they are, become the instruction). */
export function contentsOf(messages: unknown[]): { systemInstruction?: { parts: Part[] }; contents: Content[] } {
  const system: Part[] = [];
  const contents: Content[] = [];
  /** tool_call_id -> the function's name, from the assistant turns before */
  const callNames = new Map<string, string>();
  for (const m of messages) {
    if (!isObject(m)) continue;
    if (m.role === "system" || m.role === "developer") {
      const text = textOf(m.content);
      if (text) system.push({ text });
    } else if (m.role === "user") push(contents, "user", partsOf(m.content));
    else if (m.role === "assistant") {
      const parts = partsOf(m.content);
      const calls = Array.isArray(m.tool_calls) ? m.tool_calls : isObject(m.function_call) ? [{ function: m.function_call }] : [];
      for (const c of calls) {
        const fn = isObject(c) && isObject(c.function) ? c.function : null;
        if (!fn || typeof fn.name !== "string") continue;
        if (isObject(c) && typeof c.id === "string") callNames.set(c.id, fn.name);
        parts.push({ functionCall: { name: fn.name, args: parseArgs(fn.arguments) } });
      }
      push(contents, "model", parts);
    } else if (m.role === "tool" || m.role === "function") {
      const name = m.role === "function" ? String(m.name ?? "") : (callNames.get(String(m.tool_call_id)) ?? String(m.name ?? ""));
      push(contents, "user", [{ functionResponse: { name, response: responseOf(m.content) } }]);
    }
  }
  return { ...(system.length ? { systemInstruction: { parts: system } } : {}), contents };
}

/** A JSON Schema as the field Gemini takes it in: its Schema when the subset says it, else the JSON Schema itself. */
export function schemaField(schema: JsonSchema, asSchema: string, asJson: string): Record<string, unknown> {
  const converted = toGeminiSchema(schema);
  return converted ? { [asSchema]: converted } : { [asJson]: schema };
}

function toolsOf(body: Record<string, unknown>): Record<string, unknown> {
  const defs = Array.isArray(body.tools)
    ? body.tools.map((t) => (isObject(t) ? t.function : undefined))
    : Array.isArray(body.functions)
      ? body.functions
      : [];
  const declarations = defs.filter(isObject).map((f) => ({
    name: f.name,
    ...(typeof f.description === "string" ? { description: f.description } : {}),
    ...(isObject(f.parameters) ? schemaField(f.parameters, "parameters", "parametersJsonSchema") : {}),
  }));
  if (declarations.length === 0) return {};
  const out: Record<string, unknown> = { tools: [{ functionDeclarations: declarations }] };
  const choice = body.tool_choice ?? body.function_call;
  let config: Record<string, unknown> | undefined;
  if (choice === "none") config = { mode: "NONE" };
  else if (choice === "auto") config = { mode: "AUTO" };
  else if (choice === "required") config = { mode: "ANY" };
  else if (isObject(choice)) {
    const name = isObject(choice.function) ? choice.function.name : choice.name;
    if (typeof name === "string") config = { mode: "ANY", allowedFunctionNames: [name] };
  }
  if (config) out.toolConfig = { functionCallingConfig: config };
  return out;
}

function generationConfig(body: Record<string, unknown>): Record<string, unknown> {
  const g: Record<string, unknown> = {};
  const num = (v: unknown) => (typeof v === "number" ? v : undefined);
  const set = (key: string, v: unknown) => {
    if (v !== undefined) g[key] = v;
  };
  set("temperature", num(body.temperature));
  set("topP", num(body.top_p));
  set("maxOutputTokens", num(body.max_completion_tokens) ?? num(body.max_tokens));
  set("candidateCount", num(body.n));
  set("presencePenalty", num(body.presence_penalty));
  set("frequencyPenalty", num(body.frequency_penalty));
  set("seed", num(body.seed));
  const stop = typeof body.stop === "string" ? [body.stop] : Array.isArray(body.stop) ? body.stop : undefined;
  if (stop?.length) g.stopSequences = stop;
  const rf = body.response_format;
  if (isObject(rf) && (rf.type === "json_object" || rf.type === "json_schema")) {
    g.responseMimeType = "application/json";
    const schema = isObject(rf.json_schema) && isObject(rf.json_schema.schema) ? rf.json_schema.schema : undefined;
    if (schema) Object.assign(g, schemaField(schema, "responseSchema", "responseJsonSchema"));
  }
  const budget = typeof body.reasoning_effort === "string" ? THINKING_BUDGET[body.reasoning_effort] : undefined;
  if (budget !== undefined) g.thinkingConfig = { thinkingBudget: budget };
  return g;
}

/** A chat body (untranslatable(body) null) as a GenerateContentRequest. */
export function toGenerateContent(body: Record<string, unknown>): Record<string, unknown> {
  const { systemInstruction, contents } = contentsOf(Array.isArray(body.messages) ? body.messages : []);
  const config = generationConfig(body);
  return {
    contents,
    ...(systemInstruction ? { systemInstruction } : {}),
    ...toolsOf(body),
    ...(Object.keys(config).length ? { generationConfig: config } : {}),
  };
}

/** A function call's messages, options and result schema as a GenerateContentRequest with native structured output. */
export function functionRequest(
  messages: ChatMessage[],
  opts: { temperature?: number; maxTokens?: number; schema?: JsonSchema },
): Record<string, unknown> {
  const { systemInstruction, contents } = contentsOf(messages);
  const config: Record<string, unknown> = {};
  if (opts.temperature !== undefined) config.temperature = opts.temperature;
  if (opts.maxTokens !== undefined) config.maxOutputTokens = opts.maxTokens;
  if (opts.schema) {
    config.responseMimeType = "application/json";
    Object.assign(config, schemaField(opts.schema, "responseSchema", "responseJsonSchema"));
  }
  return {
    contents,
    ...(systemInstruction ? { systemInstruction } : {}),
    ...(Object.keys(config).length ? { generationConfig: config } : {}),
  };
}
