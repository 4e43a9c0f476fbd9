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
import { moderate } from "../local/moderation";
import { detectPii, type PiiType } from "../local/pii";
import type { ProxyApi } from "./types";

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

/** A placeholder as the gateway writes it, and the start of one cut at a chunk's end. */
const PLACEHOLDER = /\[[A-Z_]+_\d+\]/g;
const PARTIAL_AT_END = /\[[A-Z0-9_]*$/;

export type GuardCounts = Record<string, number>;

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
        const found = detectPii(text, { types }).map((e) => ({
          kind: FROM_PII[e.type],
          start: e.start,
          end: e.end,
          text: e.text,
        }));
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
      const types = this.settings.redactPii.map((k) => TO_PII[k]);
      found = detectPii(text, { types }).map((e) => ({ kind: FROM_PII[e.type], start: e.start, end: e.end, text: e.text }));
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
    const label = f.kind.toUpperCase();
    let n = this.next[f.kind] ?? 0;
    let placeholder: string;
    // a placeholder the client wrote itself is never given out: restoring would replace its text
    this.written ??= writtenPlaceholders(this.texts);
    do placeholder = `[${label}_${++n}]`;
    while (this.written.has(placeholder));
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

  /** `text` with the values back where the provider used a placeholder (unchanged without restore_pii). */
  restore(text: string): string {
    if (!this.restores || this.byPlaceholder.size === 0 || !text.includes("[")) return text;
    return text.replace(PLACEHOLDER, (m) => this.byPlaceholder.get(m) ?? m);
  }

  restoreDeep(value: unknown): unknown {
    if (!this.restores || this.byPlaceholder.size === 0) return value;
    return mapStrings(value, (s) => this.restore(s));
  }

  /** A serialized JSON answer with the values back (each written as JSON string content). */
  restoreJson(json: string): string {
    if (!this.restores || this.byPlaceholder.size === 0) return json;
    return json.replace(PLACEHOLDER, (m) => {
      const v = this.byPlaceholder.get(m);
      return v === undefined ? m : JSON.stringify(v).slice(1, -1);
    });
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

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

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
 * (content strings and text parts, tool results, earlier tool-call arguments), the Responses
 * API's `instructions` and `input` (text, message items, function-call outputs and arguments),
 * the embeddings' `input` strings. Everything else is left as sent.
 */
export function mapProxyTexts(api: ProxyApi, body: Record<string, unknown>, fn: (s: string) => string): Record<string, unknown> {
  if (api === "chat/completions") {
    if (!Array.isArray(body.messages)) return body;
    const messages = body.messages.map((m) => {
      if (!isObject(m)) return m;
      const out: Record<string, unknown> = { ...m };
      if ("content" in m) out.content = mapContent(m.content, fn);
      if ("tool_calls" in m) out.tool_calls = mapToolCalls(m.tool_calls, fn);
      if (isObject(m.function_call) && typeof m.function_call.arguments === "string")
        out.function_call = { ...m.function_call, arguments: fn(m.function_call.arguments) };
      return out;
    });
    return { ...body, messages };
  }
  if (api === "embeddings") {
    const input = body.input;
    if (typeof input === "string") return { ...body, input: fn(input) };
    if (Array.isArray(input)) return { ...body, input: input.map((x) => (typeof x === "string" ? fn(x) : x)) };
    return body;
  }
  const out: Record<string, unknown> = { ...body };
  if (typeof body.instructions === "string") out.instructions = fn(body.instructions);
  if (typeof body.input === "string") out.input = fn(body.input);
  else if (Array.isArray(body.input))
    out.input = body.input.map((item) => {
      if (!isObject(item)) return item;
      const o: Record<string, unknown> = { ...item };
      if ("content" in item) o.content = mapContent(item.content, fn);
      if (typeof item.output === "string") o.output = fn(item.output);
      if (typeof item.arguments === "string") o.arguments = fn(item.arguments);
      return o;
    });
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

  constructor(
    private readonly guard: RequestGuard,
    private readonly api: ProxyApi,
  ) {}

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
          tool === undefined ? { content: text } : { tool_calls: [{ index: Number(tool), function: { arguments: text } }] };
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

  private feed(key: string, text: string): string {
    const s = this.guard.restore((this.held.get(key) ?? "") + text);
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
      if (typeof delta.content === "string") delta.content = this.feed(`${c}`, delta.content);
      if (Array.isArray(delta.tool_calls))
        delta.tool_calls = delta.tool_calls.map((tc) => {
          if (!isObject(tc) || !isObject(tc.function) || typeof tc.function.arguments !== "string") return tc;
          const t = typeof tc.index === "number" ? tc.index : 0;
          return { ...tc, function: { ...tc.function, arguments: this.feed(`${c}:${t}`, tc.function.arguments) } };
        });
      if (choice.finish_reason !== null && choice.finish_reason !== undefined) {
        // the choice ends here: what it held goes with its last chunk
        const left = this.take(`${c}`);
        if (left) delta.content = `${typeof delta.content === "string" ? delta.content : ""}${left}`;
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
      return [{ ...event, delta: this.feed(key, event.delta) }];
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
