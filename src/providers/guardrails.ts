/**
 * Guardrails (CONTRACT section 14, docs/guardrails.md): what a request may carry to a provider
 * outside the gateway. One `RequestGuard` per guarded request: it inspects the client's texts once
 * (refusing kinds the plan blocks), replaces the PII kinds to redact by numbered placeholders
 * (`[EMAIL_1]`: the same value gets the same placeholder within the request) for every attempt at
 * a provider outside the gateway, and puts the values back into the answer when the plan restores.
 * The offline engine runs inside the gateway: its attempts get the request as sent.
 */

import { type GuardrailPiiKind, type GuardrailSettings, parseGuardrails } from "../config";
import { GatewayError } from "../errors";
import { moderate } from "../offline-engine/moderation";
import { detectPii, type PiiType } from "../offline-engine/pii";
import { isObject, type ProxyApi } from "./types";

/** A key's guardrails as its policy stores them (the same fields as the plan's table). */
export interface KeyGuardrails {
  redact_pii?: string[];
  restore_pii?: boolean;
  block_pii?: string[];
  block_moderation?: string[];
}

/**
 * The guardrails of one request: its plan's, plus its key's. A key can only add protection: its
 * lists are added to the plan's, and its `restore_pii`, when set, wins. Null when nothing is guarded.
 */
export function mergeGuardrails(plan: GuardrailSettings | undefined, key?: KeyGuardrails | null): GuardrailSettings | null {
  // the usual guarded request: the plan's settings as they are (parseGuardrails left no duplicates), read-only
  if (!key) return plan && plan.redactPii.length + plan.blockPii.length + plan.blockModeration.length > 0 ? plan : null;
  const own = key ? parseGuardrails("policy.guardrails", key) : undefined;
  const union = <T>(a: T[] = [], b: T[] = []) => [...new Set([...a, ...b])];
  const merged: GuardrailSettings = {
    redactPii: union(plan?.redactPii, own?.redactPii),
    restorePii: key?.restore_pii ?? plan?.restorePii ?? false,
    blockPii: union(plan?.blockPii, own?.blockPii),
    blockModeration: union(plan?.blockModeration, own?.blockModeration),
  };
  const active = merged.redactPii.length + merged.blockPii.length + merged.blockModeration.length > 0;
  return active ? merged : null;
}

const TO_PII: Record<GuardrailPiiKind, PiiType> = {
  email: "email",
  phone: "phone_number",
  credit_card: "credit_card",
  ssn: "ssn",
  ip_address: "ip_address",
  name: "name",
  address: "address",
  date_of_birth: "date_of_birth",
};
const FROM_PII = Object.fromEntries(Object.entries(TO_PII).map(([k, v]) => [v, k])) as Record<PiiType, GuardrailPiiKind>;
/** A kind's placeholder label ("EMAIL" in `[EMAIL_1]`). */
const LABEL = Object.fromEntries(Object.keys(TO_PII).map((k) => [k, k.toUpperCase()])) as Record<GuardrailPiiKind, string>;

/**
 * `[LABEL_n]`, the n-th placeholder of a kind: the first ones are made once per process and
 * reused (their hash is kept with them, where a fresh string would be built and hashed per value).
 */
function placeholderString(kind: GuardrailPiiKind, n: number): string {
  if (n > PLACEHOLDERS_KEPT) return `[${LABEL[kind]}_${n}]`;
  let made = PLACEHOLDERS[kind];
  if (made === undefined) {
    made = [];
    PLACEHOLDERS[kind] = made;
  }
  let p = made[n];
  if (p === undefined) {
    p = `[${LABEL[kind]}_${n}]`;
    made[n] = p;
  }
  return p;
}
const PLACEHOLDERS_KEPT = 64;
const PLACEHOLDERS: Partial<Record<GuardrailPiiKind, string[]>> = {};

/** A placeholder as the gateway writes it, and the start of one cut at a chunk's end. */
const PLACEHOLDER = /\[[A-Z_]+_\d+\]/g;
const PARTIAL_AT_END = /\[[A-Z0-9_]*$/;

export type GuardCounts = Record<string, number>;

/**
 * What reads as something else (CONTRACT section 14: the provider never receives the values):
 * fullwidth forms (`４１１１`, `＠`, as Japanese and Chinese keyboards type them), other scripts'
 * decimal digits (`٤١١١`, `𝟒`), Unicode dashes and spaces, invisible characters (a zero-width
 * space inside a number), and the escapes of JSON text
 * (`Zo\u00eb \u0141ukasiewicz`, as Python's json.dumps writes every non-ASCII letter, and `\n`).
 * The recognizer is given the text with these read; what is replaced is the client's own text.
 */
const FOLDABLE =
  /[\u00a0\u00ad\u2000-\u200d\u202f\u205f\u2060\u3000\ufeff\u2010-\u2015\u2212\ufe58\ufe63\uff01-\uff5e]|(?![0-9])\p{Nd}|\\(?:u[0-9a-fA-F]{4}|[nrt])/u;
const ESCAPE = /^\\(?:u([0-9a-fA-F]{4})|([nrt]))/;
const ESCAPED: Record<string, string> = { n: "\n", r: "\r", t: "\t" };
const DIGIT = /^\p{Nd}$/u;

function foldChar(cp: number): string | null {
  if (cp >= 0xff01 && cp <= 0xff5e) return String.fromCharCode(cp - 0xfee0);
  // invisible: zero-width space, joiners, word joiner, byte-order mark, soft hyphen
  if ((cp >= 0x200b && cp <= 0x200d) || cp === 0x2060 || cp === 0xfeff || cp === 0xad) return "";
  if (cp === 0xa0 || (cp >= 0x2000 && cp <= 0x200a) || cp === 0x202f || cp === 0x205f || cp === 0x3000) return " ";
  if ((cp >= 0x2010 && cp <= 0x2015) || cp === 0x2212 || cp === 0xfe58 || cp === 0xfe63) return "-";
  if (cp < 0x80 || !DIGIT.test(String.fromCodePoint(cp))) return null;
  // mathematical digits: five runs of ten in a row
  if (cp >= 0x1d7ce && cp <= 0x1d7ff) return String((cp - 0x1d7ce) % 10);
  // every other script's digits are a run of ten from its zero
  let zero = cp;
  while (zero > cp - 9 && DIGIT.test(String.fromCodePoint(zero - 1))) zero--;
  return String(cp - zero);
}

/**
 * Whether FOLDABLE may match: only a non-ASCII character or a backslash can start a match, and
 * most prompts are ASCII without one. A scan for such a code unit costs a fraction of the
 * Unicode pattern's.
 */
function mayFold(text: string): boolean {
  return NOT_PLAIN.test(text) && FOLDABLE.test(text);
}
/** a code unit outside ASCII, or a backslash (a scan by this class, not Unicode-aware, costs less than a loop) */
const NOT_PLAIN = /[\x80-\uffff\\]/;

/**
 * The kinds of `types` in `text`, found in its folded reading. Spans are `text`'s own (what is
 * replaced is what the client wrote); a value is the client's text with JSON escapes read, so
 * `Zo\u00eb` in a tool's JSON and `Zoë` in a message are one value, restored as `Zoë`.
 */
function detect(text: string, types: PiiType[]): Found[] {
  if (!mayFold(text))
    return detectPii(text, { types }).map((e) => ({ kind: FROM_PII[e.type], start: e.start, end: e.end, text: e.text }));
  let view = "";
  let decoded = "";
  // for the view's i-th code unit: where it comes from in `text` and in `decoded` (one past the end at the end)
  const at: number[] = [];
  const inDecoded: number[] = [];
  for (let i = 0; i < text.length; ) {
    const esc = text.charCodeAt(i) === 0x5c ? ESCAPE.exec(text.slice(i, i + 6)) : null;
    const original = esc
      ? esc[1] !== undefined
        ? String.fromCharCode(Number.parseInt(esc[1], 16))
        : (ESCAPED[esc[2] as string] as string)
      : text.slice(i, i + ((text.codePointAt(i) as number) > 0xffff ? 2 : 1));
    const n = esc ? esc[0].length : original.length;
    const folded = foldChar(original.codePointAt(0) as number);
    const piece = folded ?? original;
    for (let j = 0; j < piece.length; j++) {
      at.push(folded === null && !esc ? i + j : i);
      inDecoded.push(folded === null ? decoded.length + j : decoded.length);
    }
    view += piece;
    decoded += original;
    i += n;
  }
  at.push(text.length);
  inDecoded.push(decoded.length);
  return detectPii(view, { types }).map((e) => ({
    kind: FROM_PII[e.type],
    start: at[e.start] as number,
    end: at[e.end] as number,
    text: decoded.slice(inDecoded[e.start], inDecoded[e.end]),
  }));
}

interface Found {
  kind: GuardrailPiiKind;
  start: number;
  end: number;
  text: string;
}

export class RequestGuard {
  /** redactions per kind, counted when the request is first redacted */
  readonly redacted: GuardCounts = {};
  /** a redacted request went to a provider outside the gateway */
  used = false;
  private readonly found = new Map<string, Found[]>();
  private readonly texts: string[] = [];
  private readonly byValue = new Map<string, string>();
  private readonly byPlaceholder = new Map<string, string>();
  private readonly next: Partial<Record<GuardrailPiiKind, number>> = {};
  private readonly redactKinds: Set<GuardrailPiiKind>;
  private memo: { request: unknown; sent: unknown } | null = null;
  /** the placeholders the request's texts hold themselves (found once, when the first is given out) */
  private written: Set<string> | null = null;

  constructor(readonly settings: GuardrailSettings) {
    this.redactKinds = new Set(settings.redactPii);
  }

  get restores(): boolean {
    return this.settings.restorePii;
  }

  /**
   * Looks at every text of the request once: the kinds to block or redact are found, and the
   * moderation categories to block are checked. Returns what blocks it (counts per kind), or null.
   */
  inspect(texts: Iterable<string>): GuardCounts | null {
    const { blockPii, blockModeration } = this.settings;
    const kinds = [...new Set([...this.settings.redactPii, ...blockPii])];
    const types = kinds.map((k) => TO_PII[k]);
    const blocked: GuardCounts = {};
    for (const text of texts) {
      if (text.length === 0) continue;
      this.texts.push(text);
      this.written = null;
      if (types.length > 0 && !this.found.has(text)) {
        const found = detect(text, types);
        this.found.set(text, found);
        for (const f of found) if (blockPii.includes(f.kind)) blocked[f.kind] = (blocked[f.kind] ?? 0) + 1;
      }
      if (blockModeration.length > 0) {
        for (const c of moderate(text).flaggedCategories) if (blockModeration.includes(c)) blocked[c] = (blocked[c] ?? 0) + 1;
      }
    }
    return Object.keys(blocked).length > 0 ? blocked : null;
  }

  /** `text` with the kinds to redact replaced by their placeholders. */
  redact(text: string): string {
    if (this.redactKinds.size === 0 || text.length === 0) return text;
    let found = this.found.get(text);
    if (!found) {
      // a text inspect did not see (it should not happen): found now, the same way
      found = detect(
        text,
        this.settings.redactPii.map((k) => TO_PII[k]),
      );
      this.found.set(text, found);
    }
    let out = "";
    let at = 0;
    for (const f of found) {
      if (!this.redactKinds.has(f.kind)) continue;
      out += text.slice(at, f.start) + this.placeholderFor(f);
      at = f.end;
      this.redacted[f.kind] = (this.redacted[f.kind] ?? 0) + 1;
    }
    return at === 0 ? text : out + text.slice(at);
  }

  private placeholderFor(f: Found): string {
    const known = this.byValue.get(f.text);
    if (known) return known;
    let n = this.next[f.kind] ?? 0;
    let placeholder: string;
    // a placeholder the client wrote itself is never given out: restoring would replace its text
    this.written ??= writtenPlaceholders(this.texts);
    do placeholder = placeholderString(f.kind, ++n);
    while (this.written.size > 0 && this.written.has(placeholder));
    this.next[f.kind] = n;
    this.byValue.set(f.text, placeholder);
    this.byPlaceholder.set(placeholder, f.text);
    return placeholder;
  }

  /** Every string of `value` (objects and arrays walked, keys left alone) redacted. */
  redactDeep(value: unknown): unknown {
    return mapStrings(value, (s) => this.redact(s));
  }

  /**
   * The request a provider outside the gateway is sent: redacted once, then the same for every
   * attempt (so the counts are the request's, however many providers are tried).
   */
  forProvider(request: unknown): unknown {
    const memo = this.memo !== null && this.memo.request === request ? this.memo : { request, sent: this.redactDeep(request) };
    this.memo = memo;
    this.used = true;
    return memo.sent;
  }

  /** One text the gateway itself sends to a provider outside it (an embedding query), redacted. */
  outbound(text: string): string {
    const sent = this.redact(text);
    if (sent !== text) this.used = true;
    return sent;
  }

  /** A /v1 body as a provider outside the gateway is sent it: the client's texts redacted (mapProxyTexts). */
  forProxy(api: ProxyApi, body: Record<string, unknown>): Record<string, unknown> {
    this.used = true;
    return mapProxyTexts(api, body, (s) => this.redact(s));
  }

  /**
   * `text` with the values back where the provider used a placeholder (unchanged without
   * restore_pii). `inJson`: the text is JSON (tool-call arguments), so a value is written as JSON
   * string content (a multi-line address's newline as `\n`), keeping it valid.
   */
  restore(text: string, inJson = false): string {
    if (!this.restores || this.byPlaceholder.size === 0 || !text.includes("[")) return text;
    return text.replace(PLACEHOLDER, (m) => {
      const v = this.byPlaceholder.get(m);
      return v === undefined ? m : inJson && jsonEscapes(v) ? JSON.stringify(v).slice(1, -1) : v;
    });
  }

  /** Every string of `value` restored; a string that is itself JSON (tool-call arguments) stays valid JSON. */
  restoreDeep(value: unknown): unknown {
    if (!this.restores || this.byPlaceholder.size === 0) return value;
    return mapStrings(value, (s) => (isJsonText(s) ? this.restoreJson(s) : this.restore(s)));
  }

  /**
   * A serialized JSON answer with the values back, each written as JSON string content. A value
   * that JSON must escape (a newline, a quote) inside a string that is JSON itself (tool-call
   * arguments) needs escaping twice: then the answer is parsed and restored string by string.
   */
  restoreJson(json: string): string {
    if (!this.restores || this.byPlaceholder.size === 0 || !json.includes("[")) return json;
    // restored as text in one pass, which also tells whether a value needed escaping
    let nested = false;
    const restored = json.replace(PLACEHOLDER, (m) => {
      const v = this.byPlaceholder.get(m);
      if (v === undefined) return m;
      if (!jsonEscapes(v)) return v;
      nested = true;
      return JSON.stringify(v).slice(1, -1);
    });
    if (nested) {
      try {
        return JSON.stringify(this.restoreDeep(JSON.parse(json)));
      } catch {
        // not JSON after all: restored as text
      }
    }
    return restored;
  }

  /** Whether `tail` (a "[" and what follows it at a chunk's end) may be the start of a placeholder given out. */
  mayContinue(tail: string): boolean {
    for (const p of this.byPlaceholder.keys()) if (p.length > tail.length && p.startsWith(tail)) return true;
    return false;
  }

  /** The header value and meta object for an answer: what was redacted (null: nothing). */
  summary(): GuardCounts | null {
    return this.used && Object.keys(this.redacted).length > 0 ? { ...this.redacted } : null;
  }
}

/** A string that is a JSON object or array (tool-call arguments, a tool's JSON result). */
function isJsonText(s: string): boolean {
  const first = s.trimStart()[0];
  if (first !== "{" && first !== "[") return false;
  try {
    const v: unknown = JSON.parse(s);
    return typeof v === "object" && v !== null;
  } catch {
    return false;
  }
}

/**
 * Whether JSON.stringify writes `s` as other than itself in quotes: it holds a quote, a backslash,
 * a control character or a lone surrogate (most values hold none: no string is built to find out).
 */
function jsonEscapes(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c) return true;
    if (c >= 0xd800 && c <= 0xdfff) {
      const d = s.charCodeAt(i + 1);
      if (c >= 0xdc00 || !(d >= 0xdc00 && d <= 0xdfff)) return true;
      i++;
    }
  }
  return false;
}

/**
 * Every placeholder-shaped text (`[EMAIL_1]`) in `texts`: one scan per text that has a "[", instead
 * of a search of every text per placeholder given out. A placeholder holds no "[" or "]" inside, so
 * the scan finds each occurrence of one.
 */
function writtenPlaceholders(texts: string[]): Set<string> {
  const found = new Set<string>();
  for (const t of texts) if (t.includes("[")) for (const m of t.matchAll(PLACEHOLDER)) found.add(m[0]);
  return found;
}

function mapStrings(value: unknown, fn: (s: string) => string): unknown {
  if (typeof value === "string") return fn(value);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, fn));
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = mapStrings(v, fn);
    return out;
  }
  return value;
}

/** Every string of a function request: what a guard inspects. */
export function stringsOf(value: unknown, into: string[] = []): string[] {
  if (typeof value === "string") into.push(value);
  else if (Array.isArray(value)) for (const v of value) stringsOf(v, into);
  else if (typeof value === "object" && value !== null) for (const v of Object.values(value)) stringsOf(v, into);
  return into;
}

/** "redacted=email:1,name:2" (or blocked=...), kinds in a stable order. */
export function guardHeader(what: "redacted" | "blocked", counts: GuardCounts): string {
  return `${what}=${Object.keys(counts)
    .sort()
    .map((k) => `${k}:${counts[k]}`)
    .join(",")}`;
}

/** The 422 of a blocked request: names the kinds, never a value. */
export function guardrailBlocked(blocked: GuardCounts): GatewayError {
  const kinds = Object.keys(blocked).sort();
  return new GatewayError(
    "guardrail_blocked",
    `this request was refused by a guardrail of the key's plan: it contains ${kinds.join(", ")}`,
    { headers: { "x-textai-guardrails": guardHeader("blocked", blocked) }, meta: { guardrails: { blocked: { ...blocked } } } },
  );
}

// ---- the /v1 bodies: which fields are the client's text ----

/** Text content: a string, or parts whose `text` is text (`text`, `input_text`, `output_text`). */
function mapContent(content: unknown, fn: (s: string) => string): unknown {
  if (typeof content === "string") return fn(content);
  if (!Array.isArray(content)) return content;
  return content.map((p) => (isObject(p) && typeof p.text === "string" ? { ...p, text: fn(p.text) } : p));
}

function mapToolCalls(calls: unknown, fn: (s: string) => string): unknown {
  if (!Array.isArray(calls)) return calls;
  return calls.map((c) =>
    isObject(c) && isObject(c.function) && typeof c.function.arguments === "string"
      ? { ...c, function: { ...c.function, arguments: fn(c.function.arguments) } }
      : c,
  );
}

/**
 * The body of a /v1 call with every text the client wrote passed through `fn`: chat messages
 * (content strings and text parts, a participant's `name`, tool results, earlier tool-call
 * arguments) and `prediction`; the Responses API's `instructions`, `input` (text, message items,
 * function-call outputs, text or parts, arguments, custom tool inputs, reasoning summaries) and a stored prompt's variables; the
 * embeddings' `input` strings; the end user's `user` and `safety_identifier` everywhere.
 * Everything else is left as sent.
 */
export function mapProxyTexts(api: ProxyApi, body: Record<string, unknown>, fn: (s: string) => string): Record<string, unknown> {
  // who the end user is: often an email (`user`, `safety_identifier`), the client's text all the same
  const ids = (out: Record<string, unknown>) => {
    for (const f of ["user", "safety_identifier"]) if (typeof body[f] === "string") out[f] = fn(body[f]);
    return out;
  };
  if (api === "chat/completions") {
    if (!Array.isArray(body.messages)) return body;
    const messages = body.messages.map((m) => {
      if (!isObject(m)) return m;
      const out: Record<string, unknown> = { ...m };
      if ("content" in m) out.content = mapContent(m.content, fn);
      if (typeof m.name === "string") out.name = fn(m.name);
      if ("tool_calls" in m) out.tool_calls = mapToolCalls(m.tool_calls, fn);
      if (isObject(m.function_call) && typeof m.function_call.arguments === "string")
        out.function_call = { ...m.function_call, arguments: fn(m.function_call.arguments) };
      return out;
    });
    const out = ids({ ...body, messages });
    if (isObject(body.prediction) && "content" in body.prediction)
      out.prediction = { ...body.prediction, content: mapContent(body.prediction.content, fn) };
    return out;
  }
  if (api === "embeddings") {
    const input = body.input;
    const out = ids({ ...body });
    if (typeof input === "string") out.input = fn(input);
    else if (Array.isArray(input)) out.input = input.map((x) => (typeof x === "string" ? fn(x) : x));
    return out;
  }
  const out = ids({ ...body });
  if (typeof body.instructions === "string") out.instructions = fn(body.instructions);
  if (typeof body.input === "string") out.input = fn(body.input);
  else if (Array.isArray(body.input))
    out.input = body.input.map((item) => {
      if (!isObject(item)) return item;
      const o: Record<string, unknown> = { ...item };
      if ("content" in item) o.content = mapContent(item.content, fn);
      // a function's output: text, or parts (input_text)
      if ("output" in item) o.output = mapContent(item.output, fn);
      if (typeof item.arguments === "string") o.arguments = fn(item.arguments);
      // a custom tool's call: its input is free text
      if (typeof item.input === "string") o.input = fn(item.input);
      // an earlier reasoning item's summary may repeat what the client wrote
      if (Array.isArray(item.summary)) o.summary = mapContent(item.summary, fn);
      return o;
    });
  // a stored prompt's variables: text, or an input_text part
  if (isObject(body.prompt) && isObject(body.prompt.variables)) {
    const variables: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(body.prompt.variables))
      variables[k] =
        typeof v === "string" || Array.isArray(v) ? mapContent(v, fn) : isObject(v) ? (mapContent([v], fn) as unknown[])[0] : v;
    out.prompt = { ...body.prompt, variables };
  }
  return out;
}

/** The client's texts of a /v1 body (what a guard inspects). */
export function proxyTexts(api: ProxyApi, body: Record<string, unknown>): string[] {
  const texts: string[] = [];
  mapProxyTexts(api, body, (s) => {
    texts.push(s);
    return s;
  });
  return texts;
}

// ---- streamed answers ----

/** A request that asks for JSON text: chat's `response_format`, the Responses API's `text.format`. */
function asksJson(body: Record<string, unknown>): boolean {
  const format = isObject(body.response_format) ? body.response_format : isObject(body.text) ? body.text.format : undefined;
  return isObject(format) && (format.type === "json_object" || format.type === "json_schema");
}

/** The held-text key of a chat choice's deprecated `function_call` (beside tool calls' indexes). */
const FUNCTION_CALL = "function_call";

/**
 * Puts the values back into a streamed /v1 answer, event by event. A placeholder cut between two
 * chunks ("[EMA" + "IL_1]") is caught by holding back a chunk's end that may start one given out,
 * until the next chunk of the same text says; what is still held when the text ends is sent as it is.
 */
export class StreamRestorer {
  private readonly held = new Map<string, string>();
  /** per held text: a delta event like the one it came in (the Responses API), to send what is left in */
  private readonly templates = new Map<string, Record<string, unknown>>();
  private lastChunk: Record<string, unknown> | null = null;

  /** the answer's text is JSON (the request asked for a JSON format): values go into it as JSON string content */
  private readonly jsonText: boolean;

  constructor(
    private readonly guard: RequestGuard,
    private readonly api: ProxyApi,
    body: Record<string, unknown> = {},
  ) {
    this.jsonText = asksJson(body);
  }

  /** The events to send for one upstream event (none, it, or what was held and it). */
  push(event: unknown): unknown[] {
    if (!isObject(event)) return [event];
    if (this.api === "chat/completions") return [this.chatChunk(event)];
    return this.responsesEvent(event);
  }

  /** The upstream ended: what is still held, as events of its own. */
  end(): unknown[] {
    const out: unknown[] = [];
    for (const [key, text] of this.held) {
      if (!text) continue;
      if (this.api === "chat/completions") {
        const [c, tool] = key.split(":");
        const delta =
          tool === undefined
            ? { content: text }
            : tool === FUNCTION_CALL
              ? { function_call: { arguments: text } }
              : { tool_calls: [{ index: Number(tool), function: { arguments: text } }] };
        out.push({
          ...(this.lastChunk ?? { object: "chat.completion.chunk" }),
          choices: [{ index: Number(c), delta, finish_reason: null }],
        });
      } else {
        const template = this.templates.get(key);
        if (template) out.push({ ...template, delta: text });
      }
    }
    this.held.clear();
    return out;
  }

  /** `json`: the text is JSON being written (tool-call arguments): values go in as JSON string content. */
  private feed(key: string, text: string, json = false): string {
    const s = this.guard.restore((this.held.get(key) ?? "") + text, json);
    const tail = PARTIAL_AT_END.exec(s);
    if (tail && this.guard.mayContinue(tail[0])) {
      this.held.set(key, tail[0]);
      return s.slice(0, tail.index);
    }
    this.held.delete(key);
    return s;
  }

  private take(key: string): string {
    const text = this.held.get(key) ?? "";
    this.held.delete(key);
    return text;
  }

  private chatChunk(event: Record<string, unknown>): Record<string, unknown> {
    if (!Array.isArray(event.choices) || event.choices.length === 0) return event;
    const { choices: _choices, ...rest } = event;
    this.lastChunk = rest;
    const choices = event.choices.map((choice) => {
      if (!isObject(choice) || !isObject(choice.delta)) return choice;
      const c = typeof choice.index === "number" ? choice.index : 0;
      const delta: Record<string, unknown> = { ...choice.delta };
      if (typeof delta.content === "string") delta.content = this.feed(`${c}`, delta.content, this.jsonText);
      if (Array.isArray(delta.tool_calls))
        delta.tool_calls = delta.tool_calls.map((tc) => {
          if (!isObject(tc) || !isObject(tc.function) || typeof tc.function.arguments !== "string") return tc;
          const t = typeof tc.index === "number" ? tc.index : 0;
          return { ...tc, function: { ...tc.function, arguments: this.feed(`${c}:${t}`, tc.function.arguments, true) } };
        });
      // the deprecated `functions` API: one call, its arguments streamed the same way
      if (isObject(delta.function_call) && typeof delta.function_call.arguments === "string")
        delta.function_call = {
          ...delta.function_call,
          arguments: this.feed(`${c}:${FUNCTION_CALL}`, delta.function_call.arguments, true),
        };
      if (choice.finish_reason !== null && choice.finish_reason !== undefined) {
        // the choice ends here: what it held goes with its last chunk
        const left = this.take(`${c}`);
        if (left) delta.content = `${typeof delta.content === "string" ? delta.content : ""}${left}`;
        const call = this.take(`${c}:${FUNCTION_CALL}`);
        if (call) {
          const fc = isObject(delta.function_call) ? delta.function_call : {};
          delta.function_call = { ...fc, arguments: `${typeof fc.arguments === "string" ? fc.arguments : ""}${call}` };
        }
        for (const key of [...this.held.keys()])
          if (key.startsWith(`${c}:`)) {
            const args = this.take(key);
            const index = Number(key.slice(key.indexOf(":") + 1));
            delta.tool_calls = [
              ...(Array.isArray(delta.tool_calls) ? delta.tool_calls : []),
              { index, function: { arguments: args } },
            ];
          }
      }
      return { ...choice, delta };
    });
    return { ...event, choices };
  }

  private responsesEvent(event: Record<string, unknown>): unknown[] {
    const type = typeof event.type === "string" ? event.type : "";
    const where = `${String(event.item_id)}:${String(event.output_index)}:${String(event.content_index)}`;
    if (type.endsWith(".delta") && typeof event.delta === "string") {
      const key = `${type}@${where}`;
      this.templates.set(key, event);
      // a function call's arguments are JSON; text is text, unless a JSON format was asked for
      return [{ ...event, delta: this.feed(key, event.delta, this.jsonText || type.includes("arguments")) }];
    }
    const out: unknown[] = [];
    if (type.endsWith(".done")) {
      // the text is complete: what its deltas held back is sent before its end
      const key = `${type.slice(0, -".done".length)}.delta@${where}`;
      const left = this.take(key);
      const template = this.templates.get(key);
      if (left && template) out.push({ ...template, delta: left });
    }
    out.push(this.guard.restoreDeep(event));
    return out;
  }
}
