import { isObject, ProviderError, type ProxyApi } from "../../types";

/**
 * Mistral's chat completions and embeddings as OpenAI's (docs/providers.md#mistral), from Mistral's
 * API reference: what a client sends in OpenAI's shape is renamed where Mistral has the same thing
 * under another name, dropped where it only labels the call, refused (400 `unsupported_parameter`
 * naming the field) where it would change the answer and Mistral has no such thing; every other
 * field goes as sent (Mistral's own: `safe_prompt`, `prompt_mode`, `prediction`...). Mistral's
 * answers are OpenAI's but for tool call ids of its own form, argument objects, content chunks and
 * `model_length`.
 */

/** Mistral's form of a tool call id: nine letters or digits (it refuses any other). */
const MISTRAL_ID = /^[A-Za-z0-9]{9}$/;
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** Fields that only label or store the call (OpenAI's): Mistral has none of them, and the answer is the same without. */
const DROPPED_CHAT = ["user", "store", "stream_options"];
/** Fields that change the answer, which Mistral's chat API has not: a value with an effect is refused. */
const REFUSED_CHAT = [
  "logit_bias",
  "logprobs",
  "top_logprobs",
  "audio",
  "modalities",
  "web_search_options",
  "functions",
  "function_call",
];
const DROPPED_EMBEDDINGS = ["user"];

/** The ids of one request: Mistral's form of each client id, and back. */
export class ToolIds {
  private readonly toMistral = new Map<string, string>();
  private readonly back = new Map<string, string>();

  /** `id` in Mistral's form: itself when it has it, else nine characters from its hash, distinct within the request. */
  map(id: string): string {
    if (MISTRAL_ID.test(id)) return id;
    let short = this.toMistral.get(id);
    if (short) return short;
    for (let salt = 0; ; salt++) {
      short = shortId(salt === 0 ? id : `${salt}:${id}`);
      const taken = this.back.get(short);
      if (taken === undefined || taken === id) break;
    }
    this.toMistral.set(id, short);
    this.back.set(short, id);
    return short;
  }

  /** the client's id for an id of Mistral's answer (the one it was given), else the answer's own */
  restore(id: unknown): unknown {
    return typeof id === "string" ? (this.back.get(id) ?? id) : id;
  }

  get empty(): boolean {
    return this.back.size === 0;
  }
}

function shortId(text: string): string {
  let n = BigInt.asUintN(64, BigInt(Bun.hash(text)));
  let out = "";
  for (let i = 0; i < 9; i++) {
    out += ALPHABET[Number(n % 62n)];
    n /= 62n;
  }
  return out;
}

/** A refused field: the client's error, naming it, never sent. */
function refused(field: string): ProviderError {
  const message = `${field} is not supported by Mistral's API; leave it out, or route the request to another provider`;
  return new ProviderError("status", message, 400, undefined, {
    message,
    type: "invalid_request_error",
    code: "unsupported_parameter",
    param: field,
  });
}

/** A value that asks for nothing (null, false, an empty object or list, text-only modalities). */
function noEffect(field: string, value: unknown): boolean {
  if (value === null || value === undefined || value === false) return true;
  if (Array.isArray(value)) return value.length === 0 || (field === "modalities" && value.every((m) => m === "text"));
  return isObject(value) && Object.keys(value).length === 0;
}

export interface Outbound {
  body: Record<string, unknown>;
  /** whether it differs from the client's (then the client's bytes are not sent) */
  changed: boolean;
  ids: ToolIds;
}

/** The client's OpenAI-shaped body as Mistral takes it; throws the 400 of a refused field. */
export function toMistral(api: ProxyApi, body: Record<string, unknown>): Outbound {
  const ids = new ToolIds();
  if (api === "embeddings") return embeddingsBody(body, ids);
  if (api !== "chat/completions") return { body, changed: false, ids };
  let out: Record<string, unknown> | undefined;
  const edit = () => {
    out ??= { ...body };
    return out;
  };
  for (const f of REFUSED_CHAT) {
    if (!(f in body)) continue;
    if (!noEffect(f, body[f])) throw refused(f);
    delete edit()[f];
  }
  for (const f of DROPPED_CHAT) if (f in body) delete edit()[f];
  if ("seed" in body) {
    const o = edit();
    if (o.random_seed === undefined && body.seed !== null) o.random_seed = body.seed;
    delete o.seed;
  }
  if ("max_completion_tokens" in body) {
    const o = edit();
    const a = body.max_completion_tokens;
    const b = body.max_tokens;
    if (typeof a === "number") o.max_tokens = typeof b === "number" ? Math.min(a, b) : a;
    delete o.max_completion_tokens;
  }
  if (body.tool_choice === "required") edit().tool_choice = "any";
  const messages = chatMessages(body.messages, ids);
  if (messages) edit().messages = messages;
  return out ? { body: out, changed: true, ids } : { body, changed: false, ids };
}

/** The messages with OpenAI's `developer` role as `system` and tool call ids in Mistral's form; undefined when none changes. */
function chatMessages(messages: unknown, ids: ToolIds): unknown[] | undefined {
  if (!Array.isArray(messages)) return undefined;
  let changed = false;
  const out = messages.map((m) => {
    if (!isObject(m)) return m;
    let copy: Record<string, unknown> | undefined;
    if (m.role === "developer") copy = { ...m, role: "system" };
    if (typeof m.tool_call_id === "string") {
      const id = ids.map(m.tool_call_id);
      if (id !== m.tool_call_id) copy = { ...(copy ?? m), tool_call_id: id };
    }
    if (Array.isArray(m.tool_calls)) {
      let callsChanged = false;
      const calls = m.tool_calls.map((c) => {
        if (!isObject(c) || typeof c.id !== "string") return c;
        const id = ids.map(c.id);
        if (id === c.id) return c;
        callsChanged = true;
        return { ...c, id };
      });
      if (callsChanged) copy = { ...(copy ?? m), tool_calls: calls };
    }
    if (copy) changed = true;
    return copy ?? m;
  });
  return changed ? out : undefined;
}

function embeddingsBody(body: Record<string, unknown>, ids: ToolIds): Outbound {
  let out: Record<string, unknown> | undefined;
  for (const f of DROPPED_EMBEDDINGS) {
    if (!(f in body)) continue;
    out ??= { ...body };
    delete out[f];
  }
  if ("dimensions" in body) {
    out ??= { ...body };
    if (body.dimensions !== null && out.output_dimension === undefined) out.output_dimension = body.dimensions;
    delete out.dimensions;
  }
  return out ? { body: out, changed: true, ids } : { body, changed: false, ids };
}

/**
 * Mistral's answer or stream chunk in OpenAI's shape, in place: tool call ids it was given back to
 * the client's, argument objects as JSON text, content chunks as their text (thinking chunks are
 * not OpenAI's and go), `model_length` as `length`.
 */
export function fromMistral(answer: unknown, ids: ToolIds): unknown {
  if (!isObject(answer) || !Array.isArray(answer.choices)) return answer;
  for (const choice of answer.choices) {
    if (!isObject(choice)) continue;
    if (choice.finish_reason === "model_length") choice.finish_reason = "length";
    for (const key of ["message", "delta"]) {
      const m = choice[key];
      if (!isObject(m)) continue;
      if (Array.isArray(m.content)) m.content = textOfChunks(m.content);
      if (!Array.isArray(m.tool_calls)) continue;
      for (const call of m.tool_calls) {
        if (!isObject(call)) continue;
        if (!ids.empty && "id" in call) call.id = ids.restore(call.id);
        const fn = call.function;
        if (isObject(fn) && isObject(fn.arguments)) fn.arguments = JSON.stringify(fn.arguments);
      }
    }
  }
  return answer;
}

function textOfChunks(chunks: unknown[]): string {
  let text = "";
  for (const c of chunks) if (isObject(c) && c.type === "text" && typeof c.text === "string") text += c.text;
  return text;
}
