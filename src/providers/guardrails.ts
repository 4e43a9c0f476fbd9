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
import { mapJson } from "./guard-walk";
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
 * The escapes of JSON text (`Zo\u00eb \u0141ukasiewicz`, as Python's json.dumps writes every
 * non-ASCII letter, and `\n`) in a string that is JSON itself (tool-call arguments): read before
 * recognising. What reads as something else in any script (fullwidth digits, `﹫`, dashes, thin
 * spaces, zero-width characters) is the recognizer's own input stage (offline-engine/pii/fold.ts).
 */
const ESCAPE = /^\\(?:u([0-9a-fA-F]{4})|([nrt]))/;
const ESCAPED: Record<string, string> = { n: "\n", r: "\r", t: "\t" };

/**
 * The kinds of `types` in `text`. Spans are `text`'s own (what is replaced is what the client
 * wrote); a value is the client's text with JSON escapes read, so `Zo\u00eb` in a tool's JSON and
 * `Zoë` in a message are one value, restored as `Zoë`.
 */
function detect(text: string, types: PiiType[]): Found[] {
  if (!text.includes("\\"))
    return detectPii(text, { types }).map((e) => ({ kind: FROM_PII[e.type], start: e.start, end: e.end, text: e.text }));
  let decoded = "";
  // for decoded's i-th code unit: where it comes from in `text` (one past the end at the end)
  const at: number[] = [];
  for (let i = 0; i < text.length; ) {
    const esc = text.charCodeAt(i) === 0x5c ? ESCAPE.exec(text.slice(i, i + 6)) : null;
    if (esc) {
      decoded += esc[1] !== undefined ? String.fromCharCode(Number.parseInt(esc[1], 16)) : (ESCAPED[esc[2] as string] as string);
      at.push(i);
      i += esc[0].length;
    } else {
      decoded += text[i];
      at.push(i);
      i++;
    }
  }
  at.push(text.length);
  return detectPii(decoded, { types }).map((e) => ({
    kind: FROM_PII[e.type],
    start: at[e.start] as number,
    end: at[e.end] as number,
    text: e.text,
  }));
}

interface Found {
  kind: GuardrailPiiKind;
  start: number;
  end: number;
  text: string;
}

/**
 * Texts recognised lately: a chat resends its whole history with every turn, and a system prompt
 * or a tool's description comes with every call, so most of a guarded request's text has been
 * recognised before, by the same recogniser with the same kinds. Kept by the SHA-256 of the kinds
 * and the text, as spans only (no text, no value: a hit takes its values from the text at hand);
 * the least recently used goes first. Texts under MEMO_MIN code units cost little to read again;
 * texts with JSON escapes (whose values are not slices of them) are not kept.
 */
/** A request's texts the recogniser read, and those it remembered (RECOGNISED). */
export interface RecognisedCounts {
  read: number;
  remembered: number;
}

const RECOGNISED = new Map<string, { kind: GuardrailPiiKind; start: number; end: number }[]>();
const RECOGNISED_KEPT = 4096;
const MEMO_MIN = 64;
const MEMO_MAX = 256 * 1024;

/** Forgets every text remembered (RECOGNISED): a measure of the recogniser's own cost (bench/pii-speed.ts) starts each call from none. */
export function forgetRecognisedTexts(): void {
  RECOGNISED.clear();
}

/** detect, through the memo of texts recognised lately (RECOGNISED); `seen`: counts of the texts read and remembered. */
function recognise(text: string, types: PiiType[], typesKey: string, seen: RecognisedCounts): Found[] {
  if (text.length < MEMO_MIN || text.length > MEMO_MAX || text.includes("\\")) {
    seen.read++;
    return detect(text, types);
  }
  const key = `${typesKey}:${Bun.SHA256.hash(text, "base64")}`;
  const spans = RECOGNISED.get(key);
  if (spans !== undefined) {
    seen.remembered++;
    // used again: to the end of the order, the last to go
    RECOGNISED.delete(key);
    RECOGNISED.set(key, spans);
    return spans.map((f) => ({ kind: f.kind, start: f.start, end: f.end, text: text.slice(f.start, f.end) }));
  }
  seen.read++;
  const found = detect(text, types);
  if (RECOGNISED.size >= RECOGNISED_KEPT) RECOGNISED.delete(RECOGNISED.keys().next().value as string);
  RECOGNISED.set(
    key,
    found.map((f) => ({ kind: f.kind, start: f.start, end: f.end })),
  );
  return found;
}

/**
 * Identifier-shaped texts (the API's own field names, which the walk reads as every key, and enum
 * values) in which a guard of these settings found nothing, kept per settings object (a plan's,
 * shared by its requests): read once per process, not once per request. Only such short
 * identifiers are kept, never free text, and a bounded number of them.
 */
const CLEAN = new WeakMap<GuardrailSettings, Set<string>>();
const CLEAN_KEPT = 2048;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,39}$/;
function cleanOf(settings: GuardrailSettings): Set<string> {
  let clean = CLEAN.get(settings);
  if (!clean) {
    clean = new Set();
    CLEAN.set(settings, clean);
  }
  return clean;
}

export class RequestGuard {
  /** redactions per kind, counted when the request is first redacted */
  readonly redacted: GuardCounts = {};
  /** a redacted request went to a provider outside the gateway */
  used = false;
  /** the texts inspect had the recogniser read, and those it remembered from an earlier request */
  readonly recognised: RecognisedCounts = { read: 0, remembered: 0 };
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
    const typesKey = types.join(",");
    const blocked: GuardCounts = {};
    const clean = cleanOf(this.settings);
    for (const text of texts) {
      if (text.length === 0 || clean.has(text)) continue;
      this.texts.push(text);
      this.written = null;
      let flagged = 0;
      if (types.length > 0 && !this.found.has(text)) {
        const found = recognise(text, types, typesKey, this.recognised);
        this.found.set(text, found);
        flagged += found.length;
        for (const f of found) if (blockPii.includes(f.kind)) blocked[f.kind] = (blocked[f.kind] ?? 0) + 1;
      }
      if (blockModeration.length > 0) {
        const categories = moderate(text).flaggedCategories;
        flagged += categories.length;
        for (const c of categories) if (blockModeration.includes(c)) blocked[c] = (blocked[c] ?? 0) + 1;
      }
      if (flagged === 0 && clean.size < CLEAN_KEPT && IDENTIFIER.test(text)) clean.add(text);
    }
    return Object.keys(blocked).length > 0 ? blocked : null;
  }

  /** `text` with the kinds to redact replaced by their placeholders. */
  redact(text: string): string {
    if (this.redactKinds.size === 0 || text.length === 0 || cleanOf(this.settings).has(text)) return text;
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

  /** Every string value and object key of `value` redacted (the walk of guard-walk.ts: all but the skip list). */
  redactDeep(value: unknown): unknown {
    return mapJson(value, (s) => this.redact(s));
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

  /**
   * A /v1 body as a provider outside the gateway is sent it: every string value and object key
   * redacted but the skip list's (guard-walk.ts), whatever the API; the body itself when nothing was.
   */
  forProxy(_api: ProxyApi, body: Record<string, unknown>): Record<string, unknown> {
    this.used = true;
    return this.redactDeep(body) as Record<string, unknown>;
  }

  /**
   * Another form of the same request (an inbound API's own body beside its translation, either of
   * which may be sent): redacted with the same placeholders, its redactions not counted again.
   */
  forProxyToo(body: Record<string, unknown>): Record<string, unknown> {
    const counted = { ...this.redacted };
    const sent = this.redactDeep(body) as Record<string, unknown>;
    for (const k of Object.keys(this.redacted)) delete this.redacted[k];
    Object.assign(this.redacted, counted);
    return sent;
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

  /** Every string and key of `value` restored (the same walk); a string that is itself JSON (tool-call arguments) stays valid JSON. */
  restoreDeep(value: unknown): unknown {
    if (!this.restores || this.byPlaceholder.size === 0) return value;
    return mapJson(value, (s) => (isJsonText(s) ? this.restoreJson(s) : this.restore(s)));
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
  for (const t of texts) if (t.includes("[") && !ALONE.test(t)) for (const m of t.matchAll(PLACEHOLDER)) found.add(m[0]);
  return found;
}
/**
 * A string that is one placeholder and nothing else (a tool schema's `const`, an enum value) names
 * the gateway's own placeholder as a slot to fill, not text of the client's: it is not "written".
 */
const ALONE = /^\[[A-Z_]+_\d+\]$/;

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

// ---- streamed answers ----

/** A request that asks for JSON text: chat's `response_format`, the Responses API's `text.format`. */
function asksJson(body: Record<string, unknown>): boolean {
  const format = isObject(body.response_format) ? body.response_format : isObject(body.text) ? body.text.format : undefined;
  return isObject(format) && (format.type === "json_object" || format.type === "json_schema");
}

/** The held-text key of a chat choice's deprecated `function_call` (beside tool calls' indexes). */
const FUNCTION_CALL = "function_call";

/** A chat delta's string fields that carry no text a placeholder could be in. */
const NOT_TEXT: ReadonlySet<string> = new Set(["role"]);

/** The held-text key of a text field of choice `c`'s delta: its content is `c`, another field `c.field`. */
function textKey(c: number, field: string): string {
  return field === "content" ? `${c}` : `${c}.${field}`;
}

/** A delta that carries `text` in the field of a held-text key (`c` or `c.field`). */
function textDelta(key: string, text: string): Record<string, unknown> {
  const dot = key.indexOf(".");
  return { [dot < 0 ? "content" : key.slice(dot + 1)]: text };
}

/**
 * Puts the values back into a streamed /v1 answer, event by event. A placeholder cut between two
 * chunks ("[EMA" + "IL_1]") is caught by holding back a chunk's end that may start one given out,
 * until the next chunk of the same text says; what is still held when the text ends is sent as it is.
 */
export class StreamRestorer {
  private readonly held = new Map<string, string>();
  /** per held text: makes a delta event like the one it came in (Responses, Messages), to send what is left in */
  private readonly templates = new Map<string, (text: string) => Record<string, unknown>>();
  private lastChunk: Record<string, unknown> | null = null;

  /** the answer's text is JSON (the request asked for a JSON format): values go into it as JSON string content */
  private readonly jsonText: boolean;

  constructor(
    private readonly guard: RequestGuard,
    /** `messages`: the events are the Messages API's own (a pass-through of the inbound `/v1/messages`) */
    private readonly api: ProxyApi | "messages",
    body: Record<string, unknown> = {},
  ) {
    this.jsonText = asksJson(body);
  }

  /** The events to send for one upstream event (none, it, or what was held and it). */
  push(event: unknown): unknown[] {
    if (!isObject(event)) return [event];
    if (this.api === "chat/completions") return [this.chatChunk(event)];
    if (this.api === "messages") return this.messagesEvent(event);
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
            ? textDelta(c, text)
            : tool === FUNCTION_CALL
              ? { function_call: { arguments: text } }
              : { tool_calls: [{ index: Number(tool), function: { arguments: text } }] };
        out.push({
          ...(this.lastChunk ?? { object: "chat.completion.chunk" }),
          choices: [{ index: Number.parseInt(c, 10), delta, finish_reason: null }],
        });
      } else {
        const template = this.templates.get(key);
        if (template) out.push(template(text));
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
      // every text of the delta (content, refusal, a vendor's reasoning text...), each held apart
      for (const field of Object.keys(delta))
        if (typeof delta[field] === "string" && !NOT_TEXT.has(field))
          delta[field] = this.feed(textKey(c, field), delta[field], field === "content" && this.jsonText);
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
        for (const key of [...this.held.keys()])
          if (key === `${c}` || key.startsWith(`${c}.`)) {
            const left = this.take(key);
            const field = key === `${c}` ? "content" : key.slice(key.indexOf(".") + 1);
            if (left) delta[field] = `${typeof delta[field] === "string" ? delta[field] : ""}${left}`;
          }
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
      this.templates.set(key, (text) => ({ ...event, delta: text }));
      // a function call's arguments are JSON; text is text, unless a JSON format was asked for
      return [{ ...event, delta: this.feed(key, event.delta, this.jsonText || type.includes("arguments")) }];
    }
    const out: unknown[] = [];
    if (type.endsWith(".done")) {
      // the text is complete: what its deltas held back is sent before its end
      const key = `${type.slice(0, -".done".length)}.delta@${where}`;
      this.flush(key, out);
    }
    out.push(this.guard.restoreDeep(event));
    return out;
  }

  /** What `key`'s text held back, as an event of its own in `out`. */
  private flush(key: string, out: unknown[]): void {
    const left = this.take(key);
    const template = this.templates.get(key);
    if (left && template) out.push(template(left));
  }

  /**
   * A Messages API event: a content block's `text_delta` or `input_json_delta` restored (held as
   * chat deltas are), what it held sent before the block's `content_block_stop`; any other event
   * restored whole.
   */
  private messagesEvent(event: Record<string, unknown>): unknown[] {
    const key = `block:${String(event.index)}`;
    const d = event.delta;
    if (event.type === "content_block_delta" && isObject(d)) {
      const field = d.type === "text_delta" ? "text" : d.type === "input_json_delta" ? "partial_json" : null;
      const text = field ? d[field] : undefined;
      if (field && typeof text === "string") {
        this.templates.set(key, (left) => ({ ...event, delta: { ...d, [field]: left } }));
        return [{ ...event, delta: { ...d, [field]: this.feed(key, text, field === "partial_json" || this.jsonText) } }];
      }
    }
    const out: unknown[] = [];
    if (event.type === "content_block_stop") this.flush(key, out);
    out.push(this.guard.restoreDeep(event));
    return out;
  }
}
