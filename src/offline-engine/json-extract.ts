/**
 * Schema-driven structured extraction for the offline engine: fills the fields a caller asks
 * for from "Label: value" lines and from entity recognizers chosen by each field's name, type
 * and description. A field the engine has no recognizer for is reported as unresolved instead
 * of being set to null, because null would claim the text does not say.
 *
 *   parseSchemaSpec(schema: unknown): FieldSpec[] | null
 *     accepts a JSON Schema object, a name -> type/description map, either as JSON text, or a
 *     comma-separated list of field names; null when it is none of these.
 *   extractJson(text, fields, opts?): { value, found, missing, unresolved }
 *     value: every field, null when recognized-but-absent; found/missing/unresolved: field paths.
 *   defaultExtraction(text): grouped entities when no schema is given.
 */
import { checkCpuBudget, tickCpuBudget } from "./budget";
import { chrono } from "./chrono";
import { type Entity, type EntityType, extractEntities } from "./extract";
import {
  AMOUNT_LABELS,
  type Conventions,
  conventionsOf,
  DATE_ROLE_WORDS,
  foreignIdValue,
  type LocaleEntity,
  localeEntities,
  readAmount,
  withLocaleEntities,
} from "./json-locale";
import { asciiWordAt, findWordAt, foldAscii, foldedSameLength, isAsciiAlnum, isAsciiWord, isSpace } from "./phrase-scan";

export type FieldType = "string" | "number" | "integer" | "boolean" | "date" | "array" | "object";

export interface FieldSpec {
  name: string;
  type: FieldType;
  description?: string;
  required: boolean;
  enum?: string[];
  /** array items */
  items?: FieldSpec;
  /** object properties */
  properties?: FieldSpec[];
  format?: string;
}

const SIMPLE_TYPES: Record<string, FieldType> = {
  string: "string",
  text: "string",
  str: "string",
  number: "number",
  float: "number",
  decimal: "number",
  integer: "integer",
  int: "integer",
  boolean: "boolean",
  bool: "boolean",
  date: "date",
  datetime: "date",
  "date-time": "date",
  array: "array",
  list: "array",
  object: "object",
};

/**
 * Bounds on a caller's field specification (docs/fairness.md). A schema is request-shaped work
 * like a text: past these it is refused before anything else runs, so its parsing, the result
 * schema built from it and a prompt naming it stay small whatever was sent.
 */
export const SCHEMA_LIMITS = {
  /** nesting: each object level, array level and `[]` suffix counts one */
  depth: 8,
  /** fields in all, nested ones and array items included */
  fields: 200,
  nameChars: 64,
  /** allowed values of one field */
  enumValues: 100,
  /** allowed values of all fields together: each becomes a branch of the result schema */
  enumValuesInAll: 1000,
  /** a description or a type name */
  textChars: 1000,
  /** one allowed value */
  valueChars: 200,
} as const;

/** A field specification past SCHEMA_LIMITS; `path` names the field ("" for the whole schema). */
export class SchemaSpecTooLarge extends Error {
  constructor(
    message: string,
    readonly path: string,
  ) {
    super(message);
    this.name = "SchemaSpecTooLarge";
  }
}

const tooDeep = (path: string) =>
  new SchemaSpecTooLarge(`nests deeper than ${SCHEMA_LIMITS.depth} levels (objects, arrays and [] suffixes)`, path);

/** The running count of one parse, so every limit is checked as the walk goes, never after it. */
class SpecWalk {
  private fields = 0;
  private values = 0;

  /** One more field at `depth` (1 for a top-level field); throws past a limit. */
  enter(path: string, depth: number): void {
    tickCpuBudget();
    if (++this.fields > SCHEMA_LIMITS.fields)
      throw new SchemaSpecTooLarge(`has more than ${SCHEMA_LIMITS.fields} fields (nested ones included)`, "");
    if (depth > SCHEMA_LIMITS.depth) throw tooDeep(path);
  }

  name(parent: string, name: string): string {
    const path = parent ? `${parent}.${shortName(name)}` : shortName(name);
    if (name.length > SCHEMA_LIMITS.nameChars)
      throw new SchemaSpecTooLarge(`has a name longer than ${SCHEMA_LIMITS.nameChars} characters`, path);
    return path;
  }

  text(path: string, what: string, v: string): string {
    if (v.length > SCHEMA_LIMITS.textChars)
      throw new SchemaSpecTooLarge(`has a ${what} longer than ${SCHEMA_LIMITS.textChars} characters`, path);
    return v;
  }

  allowedValues(path: string, v: unknown[]): string[] {
    if (v.length > SCHEMA_LIMITS.enumValues)
      throw new SchemaSpecTooLarge(`has more than ${SCHEMA_LIMITS.enumValues} allowed values`, path);
    this.values += v.length;
    if (this.values > SCHEMA_LIMITS.enumValuesInAll)
      throw new SchemaSpecTooLarge(`has more than ${SCHEMA_LIMITS.enumValuesInAll} allowed values in all its fields`, "");
    const out = v.filter((x): x is string => typeof x === "string");
    for (const x of out)
      if (x.length > SCHEMA_LIMITS.valueChars)
        throw new SchemaSpecTooLarge(`has an allowed value longer than ${SCHEMA_LIMITS.valueChars} characters`, path);
    return out;
  }
}

/** A name as it appears in an error path: never the whole of a long one. */
const shortName = (name: string) => (name.length > SCHEMA_LIMITS.nameChars ? `${name.slice(0, SCHEMA_LIMITS.nameChars)}…` : name);

function fromJsonSchema(
  name: string,
  s: Record<string, unknown>,
  required: boolean,
  walk: SpecWalk,
  path: string,
  depth: number,
): FieldSpec {
  const rawType = Array.isArray(s.type) ? s.type.slice(0, 8).find((t) => t !== "null") : s.type;
  const format = typeof s.format === "string" ? walk.text(path, "format", s.format) : undefined;
  let type: FieldType = SIMPLE_TYPES[walk.text(path, "type", String(rawType ?? "string")).toLowerCase()] ?? "string";
  if (type === "string" && (format === "date" || format === "date-time")) type = "date";
  const spec: FieldSpec = {
    name,
    type,
    required,
    format,
    description: typeof s.description === "string" ? walk.text(path, "description", s.description) : undefined,
  };
  if (Array.isArray(s.enum)) spec.enum = walk.allowedValues(path, s.enum);
  if (type === "array") {
    const items =
      s.items && typeof s.items === "object" && !Array.isArray(s.items)
        ? (s.items as Record<string, unknown>)
        : { type: "string" };
    walk.enter(`${path}[]`, depth + 1);
    spec.items = fromJsonSchema(name, items, true, walk, `${path}[]`, depth + 1);
  }
  if (type === "object" && s.properties && typeof s.properties === "object")
    spec.properties = propertiesOf(s as Record<string, unknown>, walk, path, depth + 1);
  if (!rawType && s.properties) {
    spec.type = "object";
    spec.properties = propertiesOf(s, walk, path, depth + 1);
  }
  return spec;
}

function propertiesOf(s: Record<string, unknown>, walk: SpecWalk, parent: string, depth: number): FieldSpec[] {
  const req = new Set(Array.isArray(s.required) ? s.required.slice(0, SCHEMA_LIMITS.fields).map(String) : []);
  const out: FieldSpec[] = [];
  for (const k in s.properties as Record<string, unknown>) {
    const v = (s.properties as Record<string, unknown>)[k];
    out.push(fieldOf(k, v, req.has(k), walk, walk.name(parent, k), depth));
  }
  return out;
}

/** Trailing "[]" suffixes of a type name ("string[][]": 2), counted in one pass from the end. */
function arraySuffixes(t: string): { base: string; levels: number } {
  let end = t.length;
  let levels = 0;
  for (;;) {
    while (end > 0 && /\s/.test(t[end - 1] as string)) end--;
    if (end < 2 || t[end - 1] !== "]" || t[end - 2] !== "[") break;
    end -= 2;
    levels++;
  }
  return { base: t.slice(0, end).trim(), levels };
}

function fieldOf(name: string, v: unknown, required: boolean, walk: SpecWalk, path: string, depth: number): FieldSpec {
  walk.enter(path, depth);
  if (typeof v === "string") {
    const t = walk.text(path, "type or description", v).trim().toLowerCase();
    const { base, levels } = arraySuffixes(t);
    if (levels > 0) {
      if (depth + levels > SCHEMA_LIMITS.depth) throw tooDeep(path);
      // innermost first: "string[][]" is an array of arrays of strings
      const known = SIMPLE_TYPES[base];
      let spec: FieldSpec = known
        ? { name, type: known, required: true }
        : { name, type: "string", required: true, description: base };
      for (let i = 1; i <= levels; i++) {
        if (i > 1) walk.enter(path, depth + levels - i + 1);
        spec = { name, type: "array", required: i === levels ? required : true, items: spec };
      }
      return spec;
    }
    const known = SIMPLE_TYPES[t];
    return known ? { name, type: known, required } : { name, type: "string", required, description: v };
  }
  if (Array.isArray(v)) return { name, type: "string", required, enum: walk.allowedValues(path, v) };
  if (v && typeof v === "object") return fromJsonSchema(name, v as Record<string, unknown>, required, walk, path, depth);
  return { name, type: "string", required };
}

/**
 * Normalizes the shapes callers send as a schema into a field list; null when it is none of them.
 * Throws SchemaSpecTooLarge past SCHEMA_LIMITS, after work proportional to the limits, not to
 * what was sent.
 */
export function parseSchemaSpec(schema: unknown): FieldSpec[] | null {
  const walk = new SpecWalk();
  if (typeof schema === "string") {
    const t = schema.trim();
    if (!t) return null;
    if (t.startsWith("{")) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(t);
      } catch {
        return null;
      }
      return parseSchemaSpec(parsed);
    }
    // "name, email, phone number" or "name: string, total: number"
    const parts = t
      .split(/[,;\n]+/)
      .map((p) => p.trim())
      .filter(Boolean);
    if (!parts.length || parts.some((p) => p.length > 80)) return null;
    return parts.map((p) => {
      const [n, ty] = p.split(/(?<!\s)\s*:\s*/);
      const name = n.replace(/\s+/g, "_").toLowerCase();
      return fieldOf(name, ty ?? "string", false, walk, walk.name("", name), 1);
    });
  }
  if (!schema || typeof schema !== "object" || Array.isArray(schema)) return null;
  const s = schema as Record<string, unknown>;
  if (s.properties && typeof s.properties === "object") return propertiesOf(s, walk, "", 1);
  const out: FieldSpec[] = [];
  for (const k in s) out.push(fieldOf(k, s[k], false, walk, walk.name("", k), 1));
  return out;
}

// ---- recognizing what a field wants ----

type Kind = EntityType | "currency" | "first_name" | "last_name";

/** A field that counts things: its value is a plain number, never an amount of money or a percentage. */
const COUNT_HINT = /count|quantity|\bqty\b|number of|\bnum\b|guests|people|\bage\b|years|nights|items|units|seats|rooms/;

// Matched against the field name with words separated by spaces ("growth_rate" -> "growth rate").
const KIND_HINTS: [RegExp, Kind][] = [
  [/e-?mail/, "email"],
  [/phone|mobile|\btel\b|telephone|\bcell\b|\bfax\b/, "phone"],
  [/\burl\b|\blink\b|website|\bsite\b|homepage|\buri\b/, "url"],
  [/currency/, "currency"],
  // "payment date", "date of payment": a date, though "payment" names an amount
  [/\bdate\b/, "date"],
  [/percent|percentage|\bpct\b|\brate\b/, "percentage"],
  [/amount|price|cost|total|subtotal|\bfee\b|salary|budget|balance|payment|\btax\b|refund|revenue|spend|paid|charge/, "money"],
  [/date|\bwhen\b|deadline|birthday|\bdob\b| at$|\bday\b|\bdue\b|expir|schedul|appointment|\btime\b/, "date"],
  [/first ?name|given ?name/, "first_name"],
  [/last ?name|surname|family ?name/, "last_name"],
  [
    /\bid\b|number$|\bno\b|order|invoice|ticket|tracking|reference|\bref\b|\bsku\b|code|confirmation|booking|account|serial|policy|claim/,
    "id",
  ],
  [
    /company|organi[sz]ation|\borg\b|employer|vendor|merchant|business|brand|supplier|bank|airline|hotel|store|retailer|venue/,
    "organization",
  ],
  [
    /name|person|customer|client|contact|sender|recipient|author|agent|buyer|seller|passenger|patient|employee|manager|\bby$/,
    "person",
  ],
  [COUNT_HINT, "number"],
];

const words = (name: string) =>
  name
    .replace(/([a-z])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);

const NUMERIC_KINDS = new Set<Kind>(["money", "percentage", "number"]);

function kindOf(f: FieldSpec): Kind | null {
  if (f.format === "email") return "email";
  if (f.format === "uri" || f.format === "url") return "url";
  if (f.type === "date") return "date";
  const name = words(f.name).join(" ");
  const desc = (f.description ?? "").toLowerCase();
  const hinted = KIND_HINTS.find(([re]) => re.test(name))?.[1] ?? KIND_HINTS.find(([re]) => re.test(desc))?.[1] ?? null;
  // a numeric field named after people or things ("new_customers", "open_tickets") is a count
  if ((f.type === "number" || f.type === "integer") && (hinted === null || !NUMERIC_KINDS.has(hinted))) return "number";
  return hinted;
}

// ---- "Label: value" lines ----
//
// Both readers below scan the text for the field's words instead of compiling them into a regular
// expression (phrase-scan.ts): a caller names the fields, and a pattern built from a caller's words
// can backtrack exponentially (issue 35.1). Each start position costs at most the field name's
// length, and every step is a CPU safe point.

/** A value as read: trimmed, without a trailing "." or "," (an ellipsis or "e.g.," kept); null when blank. */
const cleanValue = (v: string) => v.trim().replace(/(?<![.,])[.,]+$/, "") || null;

const ID_TAILS = ["#", "no.", "no", "number", "num", "id"];
const isLabelSeparator = (c: number) => c === 95 || c === 45 || isSpace(c);
const wordCharAt = (text: string, i: number) => isAsciiWord(text.charCodeAt(i));
const isValueEnd = (c: number) => c === 10 || c === 59 || c === 124; // \n ; |

/** The end of the field's words at `at` ("order id", "order_id", "OrderID"), or -1 when they are not there. */
function labelEnd(text: string, at: number, ws: readonly string[]): number {
  let i = at;
  for (let k = 0; k < ws.length; k++) {
    if (k > 0) while (i < text.length && isLabelSeparator(text.charCodeAt(i))) i++;
    if (!asciiWordAt(text, i, ws[k] as string)) return -1;
    i += (ws[k] as string).length;
  }
  return i;
}

const skipSpaces = (text: string, i: number) => {
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return i;
};

/**
 * After a label ending at `i`: an optional "#", "no.", "number", "num" or "id", then ":" or "=",
 * then the value to the end of its line (or a ";" or "|"). undefined when no value is set there;
 * null when one is, but blank.
 */
function valueAfterLabel(text: string, i: number): string | null | undefined {
  const tails = [...ID_TAILS.map((t) => ({ t, at: skipSpaces(text, i) })), { t: "", at: i }];
  for (const { t, at } of tails) {
    if (t && !asciiWordAt(text, at, t)) continue;
    const colon = skipSpaces(text, at + t.length);
    const c = text.charCodeAt(colon);
    if (c !== 58 && c !== 61) continue; // : =
    const from = skipSpaces(text, colon + 1);
    let end = from;
    while (end < text.length && !isValueEnd(text.charCodeAt(end))) {
      tickCpuBudget();
      end++;
    }
    if (end > from) return cleanValue(text.slice(from, end));
    // nothing but blanks after the colon: set, but blank, when a blank other than a line break came first
    for (let j = colon + 1; j < from; j++) if (text.charCodeAt(j) !== 10) return null;
  }
  return undefined;
}

/** "Order ID: 5531", "order_no = 5531": the value on the line labelled with the field's words. */
function labelValue(text: string, f: FieldSpec): string | null {
  const all = words(f.name);
  const ws = all.filter((w) => w !== "id" || all.length === 1);
  if (!ws.length) return null;
  const first = (ws[0] as string).charCodeAt(0);
  for (let at = 0; at < text.length; at++) {
    tickCpuBudget();
    if (foldAscii(text.charCodeAt(at)) !== first || (at > 0 && isAsciiWord(text.charCodeAt(at - 1)))) continue;
    const end = labelEnd(text, at, ws);
    if (end < 0) continue;
    const v = valueAfterLabel(text, end);
    if (v !== undefined) return v;
  }
  return null;
}

const COPULAS = ["is", "was", "are", "were", "will be"];
/** Words of `[\w'-]` after the field's words and before the verb: "the reason for the delay given by them was …" */
const isPhraseWordChar = (c: number) => isAsciiWord(c) || c === 39 || c === 45;

/**
 * What follows the field's last word, which ends at `i`: the rest of that word, at most four
 * more words, "is", "was", "are", "were" or "will be", then the value (at most 120 characters, to
 * the clause end). undefined when that is not what follows; null when the value is blank.
 */
function valueAfterPhrase(text: string, i: number): string | null | undefined {
  while (i < text.length && isAsciiWord(text.charCodeAt(i))) i++;
  for (let extra = 0; extra <= 4; extra++) {
    const gap = skipSpaces(text, i);
    if (gap === i) return undefined;
    for (const verb of COPULAS) {
      const after = gap + verb.length;
      if (!asciiWordAt(text, gap, verb) || after >= text.length || !isSpace(text.charCodeAt(after))) continue;
      const from = skipSpaces(text, after);
      let end = from;
      while (end < text.length && end - from < 120 && !isClauseEnd(text.charCodeAt(end))) end++;
      if (end > from) return cleanValue(text.slice(from, end));
      // blanks only: a value all the same (blank), else the verb was one more word ("… is was …")
      if (after + 1 < from) return null;
      break;
    }
    let w = gap;
    while (w < text.length && isPhraseWordChar(text.charCodeAt(w))) {
      tickCpuBudget();
      w++;
    }
    if (w === gap) return undefined;
    i = w;
  }
  return undefined;
}
const isClauseEnd = (c: number) => c === 10 || c === 46 || c === 59 || c === 33 || c === 63; // \n . ; ! ?

/** The words of a text: runs of ASCII letters and digits, and whether only blanks, "_" or "-" join each to the next. */
interface Tokens {
  start: number[];
  end: number[];
  joined: boolean[];
}

function tokensOf(text: string): Tokens {
  const t: Tokens = { start: [], end: [], joined: [] };
  let i = 0;
  while (i < text.length) {
    tickCpuBudget();
    if (!isAsciiAlnum(text.charCodeAt(i))) {
      i++;
      continue;
    }
    const s = i;
    while (i < text.length && isAsciiAlnum(text.charCodeAt(i))) i++;
    const e = i;
    while (i < text.length && isLabelSeparator(text.charCodeAt(i))) i++;
    t.start.push(s);
    t.end.push(e);
    t.joined.push(i > e && (i === text.length || isAsciiAlnum(text.charCodeAt(i))));
  }
  return t;
}

/**
 * A string field said in a sentence rather than on a label line: "the reason for the delay was
 * a customs hold", "Project codename is Bluebird" -> the words after the verb, to the clause end.
 * The field's words appear in order, each joined to the next by blanks, "_" or "-" with at most two
 * other words between; the last may go on ("deliver" -> "delivery"). The first place in the text
 * where they do and a verb follows wins; where they appear at a word but lead nowhere is
 * remembered, so each (word of the text, word of the field) is tried once.
 */
function phraseValue(text: string, f: FieldSpec, tokens: () => Tokens): string | null {
  const all = words(f.name);
  const ws = all.filter((w) => !GENERIC.has(w) || all.length === 1);
  if (!ws.length) return null;
  const t = tokens();
  const n = t.start.length;
  const last = ws.length - 1;
  const dead = new Uint8Array(n * ws.length);
  const tokenIs = (i: number, w: string, prefix: boolean) =>
    (prefix ? t.end[i]! - t.start[i]! >= w.length : t.end[i]! - t.start[i]! === w.length) && asciiWordAt(text, t.start[i]!, w);
  // the value when field word k is text word i and the rest follows, else undefined (and remembered)
  const from = (i: number, k: number): string | null | undefined => {
    tickCpuBudget();
    if (dead[i * ws.length + k]) return undefined;
    let v: string | null | undefined;
    if (k === last) v = tokenIs(i, ws[k]!, true) ? valueAfterPhrase(text, t.start[i]! + ws[k]!.length) : undefined;
    else if (tokenIs(i, ws[k]!, false))
      for (let j = i + 1; j <= i + 3 && j < n && t.joined[j - 1]; j++) {
        v = from(j, k + 1);
        if (v !== undefined) break;
      }
    if (v === undefined) dead[i * ws.length + k] = 1;
    return v;
  };
  for (let i = 0; i < n; i++) {
    // a text word starting right after "_" is inside a longer \w run, not a word start
    if (t.start[i]! > 0 && text.charCodeAt(t.start[i]! - 1) === 95) continue;
    const v = from(i, 0);
    if (v !== undefined) return v;
  }
  return null;
}

// ---- coercion ----

/** A value that cannot be read with confidence: the field is null and flagged (meta.low_confidence). */
const DOUBTFUL = Symbol("doubtful");

// the first number of a labelled value, with its grouping and decimal separators ("1.234,56 EUR", "CHF 2'345.60")
const VALUE_NUMBER_RE = /-?\d{1,3}(?:[ \u00a0\u202f\u2009'\u2019]\d{3})+(?:[.,]\d{1,2})?(?![\d.,])|-?\d+(?:[.,]\d+)*/;

/** The first number in `s`, read by its shape and the text's conventions; DOUBTFUL when they do not settle it. */
function toNumber(s: string, conv: Conventions): number | null | typeof DOUBTFUL {
  const m = VALUE_NUMBER_RE.exec(s);
  if (!m) return null;
  const neg = m[0].startsWith("-");
  const r = readAmount(neg ? m[0].slice(1) : m[0], conv);
  if (!r) return null;
  if (r.doubtful) return DOUBTFUL;
  return neg ? -r.value : r.value;
}

function toIsoDate(s: string, ref: Date): string | null {
  const r = chrono().parseDate(s, ref);
  if (!r) return null;
  const p = (x: number) => String(x).padStart(2, "0");
  return `${r.getFullYear()}-${p(r.getMonth() + 1)}-${p(r.getDate())}`;
}

function coerce(raw: string, f: FieldSpec, ref: Date, conv: Conventions): unknown {
  switch (f.type) {
    case "number":
      return toNumber(raw, conv);
    case "integer": {
      const n = toNumber(raw, conv);
      return n === null || n === DOUBTFUL ? n : Math.round(n);
    }
    case "boolean":
      return /^(?:yes|y|true|1|on|checked)\b/i.test(raw) ? true : /^(?:no|n|false|0|off|none)\b/i.test(raw) ? false : null;
    case "date":
      return toIsoDate(raw, ref);
    default:
      if (f.enum?.length) return f.enum.find((e) => e.toLowerCase() === raw.toLowerCase()) ?? null;
      return raw;
  }
}

function entityValue(e: LocaleEntity, f: FieldSpec, kind: Kind): unknown {
  if (e.doubtful && kind !== "currency") return DOUBTFUL;
  if (f.type === "number" || f.type === "integer") {
    const n = typeof e.value === "number" ? e.value : Number(e.text.replace(/,/g, ""));
    return !Number.isFinite(n) ? null : f.type === "integer" ? Math.round(n) : n;
  }
  if (f.type === "date" || kind === "date") return typeof e.value === "string" ? e.value.split("/")[0] : e.text;
  if (f.type === "object" && kind === "money") return { amount: e.value, currency: e.currency ?? null };
  if (kind === "first_name") return e.text.split(/\s+/)[0];
  if (kind === "last_name") {
    const parts = e.text.split(/\s+/);
    return parts.length > 1 ? parts[parts.length - 1] : null;
  }
  if (kind === "currency") return e.currency ?? null;
  if (kind === "email") return String(e.value ?? e.text);
  return e.text;
}

const ENTITY_FOR: Record<Kind, EntityType> = {
  email: "email",
  phone: "phone",
  url: "url",
  date: "date",
  money: "money",
  percentage: "percentage",
  number: "number",
  person: "person",
  organization: "organization",
  id: "id",
  currency: "money",
  first_name: "person",
  last_name: "person",
};

// Words that say nothing about which of several same-kind entities a field means.
const GENERIC = new Set([
  "date",
  "time",
  "amount",
  "price",
  "total",
  "number",
  "no",
  "id",
  "name",
  "email",
  "phone",
  "url",
  "the",
  "of",
  "value",
  "code",
  "address",
]);

/** Among unused entities of a kind, the one nearest after a distinguishing word of the field name. */
function pick(text: string, f: FieldSpec, cands: readonly Entity[], used: Set<Entity>, shared: boolean): Entity | null {
  const free = shared ? cands : cands.filter((e) => !used.has(e));
  if (!free.length) return null;
  const cues = words(f.name).filter((w) => !GENERIC.has(w) && w.length > 2);
  if (cues.length) {
    const lower = text.toLowerCase();
    let best: Entity | null = null;
    let bestD = Number.POSITIVE_INFINITY;
    for (const cue of cues) {
      for (let i = lower.indexOf(cue.slice(0, 5)); i >= 0; i = lower.indexOf(cue.slice(0, 5), i + 1)) {
        for (const e of free) {
          tickCpuBudget();
          // after the cue ("total: $5") or right before it ("340 new customers")
          // (right before only on the same line: "$1,000.00\nTax" is the line above's)
          const before = i - e.end <= 2 && !text.slice(e.end, i).includes("\n");
          const d = e.start >= i ? e.start - i : before ? (i - e.end) * 2 : Number.POSITIVE_INFINITY;
          if (d < 80 && d < bestD) {
            bestD = d;
            best = e;
          }
        }
      }
    }
    if (best) return best;
  }
  return free[0];
}

/**
 * Among unused amounts, the one nearest after a label word of another language for the field
 * ("Summe: 23,40 €" for `total`, "Montant TTC : 1 200,00 €" over "Montant HT"); null when no such
 * label is in the text. `lower` is the text in lower case.
 */
function pickByLabel(lower: string, f: FieldSpec, cands: readonly Entity[], used: Set<Entity>): Entity | null {
  const labels = words(f.name).flatMap((w) => AMOUNT_LABELS[w] ?? []);
  let best: Entity | null = null;
  let bestD = Number.POSITIVE_INFINITY;
  for (const label of labels) {
    for (let i = lower.indexOf(label); i >= 0; i = lower.indexOf(label, i + 1)) {
      tickCpuBudget();
      // at a word start: "gesamt" in "Gesamtbetrag", not "ttc" inside another word
      if (i > 0 && /\p{L}/u.test(lower[i - 1] as string)) continue;
      for (const e of cands) {
        const d = e.start - i;
        if (!used.has(e) && d >= 0 && d < 60 && d < bestD) {
          bestD = d;
          best = e;
        }
      }
    }
  }
  return best;
}

// ---- date roles and parties ----

type DateRole = "due" | "issue" | "delivery" | "start" | "end";

// Cue words said just before a date (same line, same clause), nearest cue wins.
const DATE_ROLE_CUES: [RegExp, DateRole][] = [
  [/\b(?:due|pay(?:ment|able)?|expected by|deadline|no later than|settle[ds]? by|expir\w*|valid until)\b/gi, "due"],
  [
    /\b(?:issued?|dated|invoice date|date of (?:issue|invoice)|billing date|bill date|created|raised|sent on|invoiced on)\b/gi,
    "issue",
  ],
  [/\b(?:deliver\w*|ship(?:ped|ping|s)?|dispatch\w*|arriv\w*|received on|shipment)\b/gi, "delivery"],
  [/\b(?:starts?|starting|begins?|from|check-?in|effective)\b/gi, "start"],
  [/\b(?:ends?|ending|until|through|check-?out)\b/gi, "end"],
  // the same roles said in other languages (json-locale.ts)
  [new RegExp(`(?<![\\p{L}])(?:${DATE_ROLE_WORDS.due.join("|")})(?![\\p{L}])`, "giu"), "due"],
  [new RegExp(`(?<![\\p{L}])(?:${DATE_ROLE_WORDS.issue.join("|")})(?![\\p{L}])`, "giu"), "issue"],
  [new RegExp(`(?<![\\p{L}])(?:${DATE_ROLE_WORDS.delivery.join("|")})(?![\\p{L}])`, "giu"), "delivery"],
  [new RegExp(`(?<![\\p{L}])(?:${DATE_ROLE_WORDS.start.join("|")})(?![\\p{L}])`, "giu"), "start"],
  [new RegExp(`(?<![\\p{L}])(?:${DATE_ROLE_WORDS.end.join("|")})(?![\\p{L}])`, "giu"), "end"],
];

/** The role of a date from the cue words before it in its clause, or null when none is said. */
function dateRole(text: string, e: Entity): DateRole | null {
  const from = Math.max(0, e.start - 60);
  let window = text.slice(from, e.start);
  // only the clause the date is in: after the last line break or sentence end
  const cut = Math.max(window.lastIndexOf("\n"), window.lastIndexOf(". "), window.lastIndexOf("; "));
  if (cut >= 0) window = window.slice(cut + 1);
  let best: DateRole | null = null;
  let bestAt = -1;
  for (const [re, role] of DATE_ROLE_CUES) {
    re.lastIndex = 0;
    for (let m = re.exec(window); m; m = re.exec(window)) {
      if (m.index + m[0].length > bestAt) {
        bestAt = m.index + m[0].length;
        best = role;
      }
    }
  }
  return best;
}

/** The role a date field asks for, from its name and description. */
function fieldDateRole(f: FieldSpec): DateRole | null {
  const n = `${words(f.name).join(" ")} ${(f.description ?? "").toLowerCase()}`;
  if (/\b(?:due|deadline|payable|expir\w*|pay by|payment date)\b/.test(n)) return "due";
  if (/\b(?:issued?|invoice date|invoice|billing|bill date|created|dated)\b/.test(n)) return "issue";
  if (/\b(?:deliver\w*|ship\w*|dispatch\w*|arriv\w*)\b/.test(n)) return "delivery";
  if (/\b(?:start\w*|begin\w*|from|check in|checkin)\b/.test(n)) return "start";
  if (/\b(?:end|ending|until|to|check out|checkout)\b/.test(n)) return "end";
  return null;
}

type PartyRole = "customer" | "contact" | "vendor";

// "Bill to: Harbor Logistics", "Attn: Maria Lopez", "sold to Greenleaf Bakery": the party named after the cue
const PARTY_CUES: [RegExp, PartyRole][] = [
  [
    /\b(?:bill(?:ed)? to|invoice to|sold to|ship(?:ped)? to|customer(?: name)?|client(?: name)?|buyer|purchaser)\s*[:-]?\s*/gi,
    "customer",
  ],
  [/\b(?:attn|attention|c\/o|contact(?: person)?)\s*[.:-]?\s*/gi, "contact"],
  [/\b(?:vendor|supplier|seller|issued by|remit to|payable to|from)\s*[:-]?\s*/gi, "vendor"],
];

/** The role a party field asks for, from its name and description. */
function fieldPartyRole(f: FieldSpec): PartyRole | null {
  const n = `${words(f.name).join(" ")} ${(f.description ?? "").toLowerCase()}`;
  if (/\b(?:attn|attention|contact)\b/.test(n)) return "contact";
  if (/\b(?:customer|client|buyer|purchaser|bill(?:ed)? to|billed|sold to|ship to|recipient)\b/.test(n)) return "customer";
  if (/\b(?:vendor|supplier|seller|merchant|issuer|from|company)\b/.test(n)) return "vendor";
  return null;
}

// A name after a party cue: capitalised words (with "&", "of", "and" between), an optional legal suffix
const PARTY_NAME = /^[A-Z][\p{L}'&.-]*(?:[ \t]+(?:[A-Z&][\p{L}'&.-]*|of|and|de|the|für|und))*/u;

/** The party named right after a cue of `role`: first cue in the text that is followed by a name. */
function partyAfterCue(text: string, role: PartyRole, cands: readonly Entity[]): string | null {
  for (const [re, r] of PARTY_CUES) {
    if (r !== role) continue;
    re.lastIndex = 0;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      checkCpuBudget();
      const at = m.index + m[0].length;
      // a recognized person or organization starting there
      const e = cands.find((c) => c.start >= at && c.start <= at + 2);
      if (e) return e.text;
      const name = partyName(text, at);
      if (name) return name;
    }
  }
  // "invoice 5531 issued on 12 May for Greenleaf Bakery": the party a document is for, in its clause
  if (role === "customer") {
    const doc = /\b(?:invoice|bill|order|quote|quotation|receipt|statement)\b/gi;
    for (let m = doc.exec(text); m; m = doc.exec(text)) {
      const clause = text.slice(m.index, m.index + 80).split(/[\n.;]/)[0];
      const f = /\bfor\s(?=[A-Z])/.exec(clause);
      const name = f ? partyName(text, m.index + f.index + f[0].length) : null;
      if (name) return name;
    }
  }
  return null;
}

/** The capitalised name starting at `at`, to the sentence end; null when there is none. */
function partyName(text: string, at: number): string | null {
  const raw = PARTY_NAME.exec(text.slice(at, at + 120))?.[0];
  if (!raw) return null;
  const name = raw
    .split(/\.[ \t]/)[0]
    .replace(/[ \t](?:of|and|de|the|für|und)$/, "")
    .trimEnd()
    .replace(/(?<![.,])[.,]+$/, "");
  return name.length > 1 && !/^(?:The|A|An|Our|Your|My|We|I|Dear|Hi|Hello)$/.test(name) ? name : null;
}

export interface ExtractionResult {
  value: Record<string, unknown>;
  found: string[];
  missing: string[];
  /** fields the engine cannot recognize at all (a model is needed) */
  unresolved: string[];
  /**
   * fields left null because the text gives a value the engine cannot read with confidence
   * ("1.234" or "03/04/2026" with nothing in the text to settle the separators or the order)
   */
  doubtful: string[];
}

interface Ctx {
  text: string;
  entities: Entity[];
  byType: Map<EntityType, Entity[]>;
  used: Set<Entity>;
  ref: Date;
  /** the text's decimal separator and date order (json-locale.ts) */
  conv: Conventions;
  out: ExtractionResult;
  /** the text's words, split once when a field is first looked for in a sentence */
  tokens: () => Tokens;
  /** the text in lower case, offsets kept */
  lower: () => string;
}

/**
 * The part of a labelled value a field of this kind wants: "SKU: TB-4410 to our Berlin office"
 * is "TB-4410"; "Bill to: Jane Doe (jane@x.com)" is "Jane Doe" for a name.
 */
function narrow(value: string, kind: Kind | null, ref: Date, conv: Conventions): string {
  if (kind === "id") return /^[#\s]*([A-Za-z0-9][\w/-]*)/.exec(value)?.[1] ?? value;
  if (kind === "person" || kind === "organization" || kind === "first_name" || kind === "last_name")
    return value
      .split(/(?<!\s)\s*[(<[,;]/)[0]
      .split(/\.[ \t]/)[0]
      .trim();
  if (kind === "money" || kind === "number") {
    // the locale reading of the value's first number ("1.234,56 EUR", not the "234,56 EUR" extract.ts sees)
    const first = value.search(/\d/);
    const local = localeEntities(value, conv).find((e) => e.type !== "date" && e.start <= first && first < e.end);
    if (local) return local.text;
  }
  if (kind && kind !== "currency" && kind !== "date") {
    const type = ENTITY_FOR[kind];
    const hit = extractEntities(value, { types: [type], referenceDate: ref })[0];
    if (hit) return hit.text;
  }
  return value;
}

/** A labelled value read as the field's type; a numeric date by the text's date order. */
function readLabelled(labelled: string, f: FieldSpec, ctx: Ctx): unknown {
  const kind = kindOf(f);
  if (kind === "date" && (f.type === "string" || f.type === "date")) {
    const d = localeEntities(labelled, ctx.conv).find((e) => e.type === "date");
    if (d) return d.doubtful ? DOUBTFUL : d.value;
  }
  return coerce(narrow(labelled, kind, ctx.ref, ctx.conv), f, ctx.ref, ctx.conv);
}

/** A field's value, null (and the field listed in `doubtful`) when the text's value cannot be read with confidence. */
function fill(f: FieldSpec, ctx: Ctx, path: string): unknown {
  const v = fillField(f, ctx, path);
  if (v !== DOUBTFUL) return v;
  const i = ctx.out.found.lastIndexOf(path);
  if (i >= 0) ctx.out.found.splice(i, 1);
  ctx.out.doubtful.push(path);
  return null;
}

/** "Rechnung Nr. 4471", "Facture n° 4471": an identifier field's value after a label of another language. */
function foreignId(f: FieldSpec, ctx: Ctx, path: string): string | null {
  const hit = foreignIdValue(ctx.text, words(f.name));
  if (!hit) return null;
  // the number is the identifier's: no amount or count field takes it
  for (const e of ctx.entities) if (e.start < hit.end && e.end > hit.start) ctx.used.add(e);
  ctx.out.found.push(path);
  return hit.value;
}

function fillField(f: FieldSpec, ctx: Ctx, path: string): unknown {
  checkCpuBudget();
  if (f.type === "object" && f.properties?.length) {
    const obj: Record<string, unknown> = {};
    for (const p of f.properties) obj[p.name] = fill(p, ctx, `${path}.${p.name}`);
    return obj;
  }
  const labelled = labelValue(ctx.text, f);
  if (labelled !== null && f.type !== "array") {
    const v = readLabelled(labelled, f, ctx);
    if (v !== null) {
      ctx.out.found.push(path);
      return v;
    }
  }
  if (f.enum?.length) {
    const lower = ctx.lower();
    const hit = f.enum.find((e) => {
      checkCpuBudget();
      return findWordAt(lower, e.toLowerCase(), 0, wordCharAt) >= 0;
    });
    (hit ? ctx.out.found : ctx.out.missing).push(path);
    return hit ?? null;
  }
  const kind = kindOf(
    f.type === "array" && f.items ? { ...f.items, name: f.name, description: f.description ?? f.items.description } : f,
  );
  if (!kind) {
    // a plain string field: "<field words> is/was/: value" in the text, else honestly not found
    if (f.type === "string") {
      const v = phraseValue(ctx.text, f, ctx.tokens);
      (v !== null ? ctx.out.found : ctx.out.missing).push(path);
      return v;
    }
    ctx.out.unresolved.push(path);
    return null;
  }
  // a plain numeric field may be given as an amount or a percentage ("deposit $3,700"); a count may not ("seats": not "$120.50")
  const count = kind === "number" && COUNT_HINT.test(words(f.name).join(" "));
  const cands =
    kind === "number"
      ? ctx.entities.filter((e) => e.type === "number" || (!count && (e.type === "money" || e.type === "percentage")))
      : (ctx.byType.get(ENTITY_FOR[kind]) ?? []);
  if (f.type === "array") {
    const item = f.items ?? { name: f.name, type: "string", required: true };
    const values = cands.map((e) => entityValue(e, item, kind)).filter((v) => v !== null && v !== DOUBTFUL);
    (values.length ? ctx.out.found : ctx.out.missing).push(path);
    return [...new Set(values.map((v) => JSON.stringify(v)))].map((v) => JSON.parse(v) as unknown);
  }
  if (kind === "id") {
    const id = foreignId(f, ctx, path);
    if (id !== null) return id;
  }
  if (kind === "date") {
    const want = fieldDateRole(f);
    if (want) {
      const free = cands.filter((e) => !ctx.used.has(e));
      const roles = free.map((e) => dateRole(ctx.text, e));
      // a date said to be the asked role, else one with no role said; never one said to be another role
      const e = free.find((_, i) => roles[i] === want) ?? free.find((_, i) => roles[i] === null) ?? null;
      const v = e ? entityValue(e, f, kind) : null;
      if (e && v !== null) {
        ctx.used.add(e);
        ctx.out.found.push(path);
        return v;
      }
      ctx.out.missing.push(path);
      return null;
    }
  }
  if (kind === "person" || kind === "organization") {
    const role = fieldPartyRole(f);
    if (role) {
      const parties = ctx.entities.filter((e) => e.type === "person" || e.type === "organization");
      const named = partyAfterCue(ctx.text, role, parties);
      if (named) {
        ctx.out.found.push(path);
        return named;
      }
    }
  }
  // currency and first/last name read the same entity as the amount and the full name
  const shared = kind === "currency" || kind === "first_name" || kind === "last_name";
  const e =
    (NUMERIC_KINDS.has(kind) ? pickByLabel(ctx.lower(), f, cands, ctx.used) : null) ?? pick(ctx.text, f, cands, ctx.used, shared);
  const v = e ? entityValue(e, f, kind) : null;
  if (e && v !== null) {
    if (!shared) ctx.used.add(e);
    ctx.out.found.push(path);
    return v;
  }
  const said = f.type === "string" ? phraseValue(ctx.text, f, ctx.tokens) : null;
  (said !== null ? ctx.out.found : ctx.out.missing).push(path);
  return said;
}

/** Fills `fields` from `text`. */
export function extractJson(text: string, fields: readonly FieldSpec[], opts: { referenceDate?: Date } = {}): ExtractionResult {
  const conv = conventionsOf(text);
  const entities = withLocaleEntities(extractEntities(text, { referenceDate: opts.referenceDate }), localeEntities(text, conv));
  const byType = new Map<EntityType, Entity[]>();
  for (const e of entities) {
    const list = byType.get(e.type);
    if (list) list.push(e);
    // one list per type, grown in place: copying it per entity was quadratic (1.6 s for 33,000 phone numbers)
    else byType.set(e.type, [e]);
  }
  const out: ExtractionResult = { value: {}, found: [], missing: [], unresolved: [], doubtful: [] };
  let tokens: Tokens | undefined;
  let lower: string | undefined;
  const ctx: Ctx = {
    text,
    entities,
    byType,
    used: new Set(),
    ref: opts.referenceDate ?? new Date(),
    conv,
    out,
    tokens: () => (tokens ??= tokensOf(text)),
    lower: () => (lower ??= foldedSameLength(text)),
  };
  for (const f of fields) {
    checkCpuBudget();
    out.value[f.name] = fill(f, ctx, f.name);
  }
  return out;
}

export interface GroupedEntities {
  people: string[];
  organizations: string[];
  emails: string[];
  phones: string[];
  urls: string[];
  dates: { text: string; date: string }[];
  amounts: { text: string; amount: number; currency: string | null }[];
  percentages: number[];
  identifiers: string[];
  numbers: number[];
}

/** The groups of defaultExtraction that list an entity's value as text, by the entity's type. */
const TEXT_GROUPS = new Map<string, "people" | "organizations" | "emails" | "phones" | "urls" | "identifiers">([
  ["person", "people"],
  ["organization", "organizations"],
  ["email", "emails"],
  ["phone", "phones"],
  ["url", "urls"],
  ["id", "identifiers"],
]);
/** ... and those that list its value as a number (a finite one only). */
const NUMBER_GROUPS = new Map<string, "percentages" | "numbers">([
  ["percentage", "percentages"],
  ["number", "numbers"],
]);

/** Everything recognizable, grouped, for requests without a schema. */
export function defaultExtraction(text: string, opts: { referenceDate?: Date } = {}): GroupedEntities {
  const g: GroupedEntities = {
    people: [],
    organizations: [],
    emails: [],
    phones: [],
    urls: [],
    dates: [],
    amounts: [],
    percentages: [],
    identifiers: [],
    numbers: [],
  };
  const str = (e: Entity) => String(e.value ?? e.text);
  const num = (e: Entity) => (typeof e.value === "number" ? e.value : Number.NaN);
  const local = localeEntities(text, conventionsOf(text));
  for (const e of withLocaleEntities(extractEntities(text, opts), local)) {
    // a value the text does not settle ("1.234", "03/04/2026" with no cue) is left out
    if (e.doubtful) continue;
    const texts = TEXT_GROUPS.get(e.type);
    const numbers = NUMBER_GROUPS.get(e.type);
    if (texts) g[texts].push(str(e));
    else if (numbers) {
      if (Number.isFinite(num(e))) g[numbers].push(num(e));
    } else if (e.type === "date") g.dates.push({ text: e.text, date: str(e) });
    else if (e.type === "money" && Number.isFinite(num(e)))
      g.amounts.push({ text: e.text, amount: num(e), currency: e.currency ?? null });
  }
  return g;
}
