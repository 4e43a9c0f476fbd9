import type { JsonSchema } from "./types";

/**
 * Deterministic synthetic values that validate against a JSON schema (the subset TypeBox emits).
 * Used by the mock provider and the upstream simulator: the same (schema, seed) always gives the
 * same value, so caches, tests and benchmarks are reproducible.
 */

type Rng = () => number;

/** FNV-1a: a cheap, stable string hash to seed the generator. */
function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** mulberry32: small, fast and good enough for picking words and numbers. */
function makeRng(seed: string): Rng {
  let a = hash32(seed) || 1;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = [
  "clear",
  "quick",
  "account",
  "order",
  "support",
  "update",
  "report",
  "service",
  "customer",
  "review",
  "message",
  "result",
  "summary",
  "product",
  "delivery",
  "team",
  "request",
  "issue",
  "status",
  "note",
];

const MAX_DEPTH = 12;

interface Ctx {
  rng: Rng;
  root: JsonSchema;
  depth: number;
}

function isSchema(v: unknown): v is JsonSchema {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function pick<T>(rng: Rng, items: readonly T[]): T {
  return items[Math.floor(rng() * items.length)] as T;
}

function words(rng: Rng, n: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(pick(rng, WORDS));
  return out.join(" ");
}

/** Resolves a local "#/$defs/x" or "#/definitions/x" reference; other refs are not followed. */
function resolveRef(ref: string, root: JsonSchema): JsonSchema | undefined {
  if (!ref.startsWith("#/")) return undefined;
  let node: unknown = root;
  for (const part of ref.slice(2).split("/")) {
    if (!isSchema(node)) return undefined;
    node = node[part.replaceAll("~1", "/").replaceAll("~0", "~")];
  }
  return isSchema(node) ? node : undefined;
}

function synthString(s: JsonSchema, ctx: Ctx): string {
  const minLength = typeof s.minLength === "number" ? s.minLength : 0;
  const maxLength = typeof s.maxLength === "number" ? s.maxLength : Number.POSITIVE_INFINITY;
  let value: string;
  switch (s.format) {
    case "email":
      value = `user${Math.floor(ctx.rng() * 1000)}@example.com`;
      break;
    case "uri":
    case "url":
      value = `https://example.com/${pick(ctx.rng, WORDS)}`;
      break;
    case "date-time":
      value = new Date(Date.UTC(2026, 0, 1 + Math.floor(ctx.rng() * 300))).toISOString();
      break;
    case "date":
      value = new Date(Date.UTC(2026, 0, 1 + Math.floor(ctx.rng() * 300))).toISOString().slice(0, 10);
      break;
    case "time":
      value = "12:00:00Z";
      break;
    case "uuid":
      value = "00000000-0000-4000-8000-".concat(
        Math.floor(ctx.rng() * 0xffffffffffff)
          .toString(16)
          .padStart(12, "0"),
      );
      break;
    case "ipv4":
      value = `10.0.0.${1 + Math.floor(ctx.rng() * 250)}`;
      break;
    default:
      value = typeof s.pattern === "string" ? fromPattern(s.pattern, ctx.rng) : words(ctx.rng, 2 + Math.floor(ctx.rng() * 4));
  }
  while (value.length < minLength) value += `${value.length ? " " : ""}${pick(ctx.rng, WORDS)}`;
  if (value.length > maxLength) value = value.slice(0, maxLength).trimEnd().padEnd(Math.min(minLength, maxLength), "x");
  return value;
}

/**
 * Patterns made of a sequence of atoms — literals, escapes (\\d \\w \\s \\. ...), character
 * classes — each with an optional quantifier (? * + {n} {n,m}), such as "^[a-z]+$" or
 * "^\\d{4}-\\d{2}-\\d{2}", are honoured; for anything else (groups, alternation) a word string is
 * returned and may not match.
 */
function fromPattern(pattern: string, rng: Rng): string {
  const src = pattern.replace(/^\^/, "").replace(/\$$/, "");
  if (/[()|]/.test(src)) return words(rng, 2);
  let out = "";
  let i = 0;
  while (i < src.length) {
    let chars: string[];
    const c = src[i] as string;
    if (c === "\\") {
      const e = src[i + 1] ?? "";
      chars = e === "d" ? [..."0123456789"] : e === "w" ? [..."abcdefghijklmnopqrstuvwxyz0123456789_"] : e === "s" ? [" "] : [e];
      i += 2;
    } else if (c === "[") {
      const close = src.indexOf("]", i + 1);
      if (close < 0) return words(rng, 2);
      chars = expandClass(src.slice(i + 1, close));
      i = close + 1;
    } else if (c === ".") {
      chars = [..."abcdefghij"];
      i++;
    } else {
      chars = [c];
      i++;
    }
    let min = 1;
    let max = 1;
    const q = /^(?:\{(\d+)(?:,(\d*))?\}|[?*+])/.exec(src.slice(i));
    if (q) {
      if (q[0] === "?") [min, max] = [0, 1];
      else if (q[0] === "*") [min, max] = [0, 4];
      else if (q[0] === "+") [min, max] = [1, 6];
      else {
        min = Number(q[1]);
        max = q[2] === undefined ? min : q[2] === "" ? min + 4 : Number(q[2]);
      }
      i += q[0].length;
    }
    if (chars.length === 0) return words(rng, 2);
    const n = min + Math.floor(rng() * (max - min + 1));
    for (let k = 0; k < n; k++) out += pick(rng, chars);
  }
  return out;
}

function expandClass(body: string): string[] {
  if (body.startsWith("^")) return [..."abcdefghij"];
  const chars: string[] = [];
  for (let i = 0; i < body.length; i++) {
    const a = body[i] as string;
    if (a === "\\") {
      const e = body[++i] ?? "";
      if (e === "d") chars.push(..."0123456789");
      else if (e === "w") chars.push(..."abcdefghijklmnopqrstuvwxyz0123456789_");
      else chars.push(e);
      continue;
    }
    if (body[i + 1] === "-" && body[i + 2] !== undefined) {
      const b = body[i + 2] as string;
      for (let c = a.charCodeAt(0); c <= b.charCodeAt(0); c++) chars.push(String.fromCharCode(c));
      i += 2;
    } else chars.push(a);
  }
  return chars;
}

function synthNumber(s: JsonSchema, ctx: Ctx, integer: boolean): number {
  let min = typeof s.minimum === "number" ? s.minimum : typeof s.exclusiveMinimum === "number" ? s.exclusiveMinimum : undefined;
  let max = typeof s.maximum === "number" ? s.maximum : typeof s.exclusiveMaximum === "number" ? s.exclusiveMaximum : undefined;
  const exclusiveLow = typeof s.exclusiveMinimum === "number" && typeof s.minimum !== "number";
  const exclusiveHigh = typeof s.exclusiveMaximum === "number" && typeof s.maximum !== "number";
  if (min === undefined && max === undefined) {
    min = 0;
    max = integer ? 100 : 1;
  } else if (min === undefined) min = Math.min(0, (max as number) - 100);
  else if (max === undefined) max = min + (integer ? 100 : 1);
  const lo = min as number;
  const hi = max as number;
  if (integer) {
    const ilo = Math.ceil(exclusiveLow ? lo + 1e-9 : lo);
    const ihi = Math.floor(exclusiveHigh ? hi - 1e-9 : hi);
    return ihi < ilo ? ilo : ilo + Math.floor(ctx.rng() * (ihi - ilo + 1));
  }
  // Keep clear of exclusive bounds and round to 2 decimals so answers look like a model's.
  const span = hi - lo;
  const v = lo + span * (0.05 + 0.9 * ctx.rng());
  const rounded = Math.round(v * 100) / 100;
  return rounded > lo && rounded < hi ? rounded : v;
}

function synthObject(s: JsonSchema, ctx: Ctx): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const props = isSchema(s.properties) ? s.properties : {};
  const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
  for (const [key, sub] of Object.entries(props)) {
    // Optional properties are filled too (more realistic answers), except deep down, to keep recursion bounded.
    if (!required.has(key) && ctx.depth > MAX_DEPTH / 2) continue;
    if (isSchema(sub)) out[key] = gen(sub, { ...ctx, depth: ctx.depth + 1 });
  }
  const minProps = typeof s.minProperties === "number" ? s.minProperties : 0;
  const extra = isSchema(s.additionalProperties) ? s.additionalProperties : undefined;
  const patternProps = isSchema(s.patternProperties) ? s.patternProperties : undefined;
  // Records (TypeBox T.Record) are patternProperties; give them one or two entries.
  if (patternProps) {
    const [pattern, sub] = Object.entries(patternProps)[0] ?? [];
    if (pattern && isSchema(sub)) {
      const n = Math.max(minProps - Object.keys(out).length, 1 + Math.floor(ctx.rng() * 2));
      for (let i = 0; i < n; i++) out[keyFor(pattern, i, ctx.rng)] = gen(sub, { ...ctx, depth: ctx.depth + 1 });
    }
  } else if (extra) {
    for (let i = 0; Object.keys(out).length < minProps; i++)
      out[`${pick(ctx.rng, WORDS)}_${i}`] = gen(extra, { ...ctx, depth: ctx.depth + 1 });
  }
  return out;
}

function keyFor(pattern: string, i: number, rng: Rng): string {
  if (pattern === "^(.*)$" || pattern === "^.*$") return `${pick(rng, WORDS)}_${i}`;
  if (pattern.includes("0-9") || pattern.includes("\\d")) return String(i);
  return `${fromPattern(pattern, rng)}${i}`;
}

function synthArray(s: JsonSchema, ctx: Ctx): unknown[] {
  const minItems = typeof s.minItems === "number" ? s.minItems : 0;
  const maxItems = typeof s.maxItems === "number" ? s.maxItems : Math.max(minItems, 3);
  const lo = Math.max(minItems, Math.min(1, maxItems));
  const n = ctx.depth >= MAX_DEPTH ? minItems : lo + Math.floor(ctx.rng() * (Math.min(maxItems, lo + 2) - lo + 1));
  const prefix = Array.isArray(s.prefixItems)
    ? (s.prefixItems as JsonSchema[])
    : Array.isArray(s.items)
      ? (s.items as JsonSchema[])
      : null;
  if (prefix) return prefix.map((sub) => gen(sub, { ...ctx, depth: ctx.depth + 1 }));
  const item = isSchema(s.items) ? s.items : {};
  const out: unknown[] = [];
  const seen = new Set<string>();
  for (let i = 0; out.length < n && i < n * 5; i++) {
    const v = gen(item, { ...ctx, depth: ctx.depth + 1 });
    // uniqueItems: skip duplicates (an enum of 2 values with minItems 2 still works after a few tries).
    if (s.uniqueItems === true) {
      const k = JSON.stringify(v);
      if (seen.has(k)) continue;
      seen.add(k);
    }
    out.push(v);
  }
  return out;
}

function gen(s: JsonSchema, ctx: Ctx): unknown {
  if ("const" in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return pick(ctx.rng, s.enum);
  if (typeof s.$ref === "string") {
    const target = resolveRef(s.$ref, ctx.root);
    return target && ctx.depth < MAX_DEPTH ? gen(target, { ...ctx, depth: ctx.depth + 1 }) : null;
  }
  const alternatives = (Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : null) as JsonSchema[] | null;
  if (alternatives && alternatives.length > 0) {
    // Prefer a non-null branch: a nullable field that is always null makes poor test data.
    const nonNull = alternatives.filter((a) => a.type !== "null");
    return gen(pick(ctx.rng, nonNull.length ? nonNull : alternatives), ctx);
  }
  if (Array.isArray(s.allOf) && s.allOf.length > 0) {
    // Merge the parts of an intersection (TypeBox T.Intersect of objects).
    const merged: Record<string, unknown> = {};
    for (const part of s.allOf as JsonSchema[]) {
      const v = gen(part, ctx);
      if (isSchema(v)) Object.assign(merged, v);
    }
    return merged;
  }
  let type = s.type;
  if (Array.isArray(type)) type = type.find((t) => t !== "null") ?? type[0];
  if (type === undefined) {
    if (isSchema(s.properties) || isSchema(s.patternProperties)) type = "object";
    else if (s.items !== undefined) type = "array";
  }
  switch (type) {
    case "object":
      return synthObject(s, ctx);
    case "array":
      return synthArray(s, ctx);
    case "string":
      return synthString(s, ctx);
    case "integer":
      return synthNumber(s, ctx, true);
    case "number":
      return synthNumber(s, ctx, false);
    case "boolean":
      return ctx.rng() < 0.5;
    case "null":
      return null;
    default:
      // Unconstrained schema (T.Unknown / T.Any): any JSON value is valid.
      return words(ctx.rng, 2);
  }
}

/** A deterministic value for `seed` that validates against `schema`. */
export function synthesize(schema: JsonSchema, seed: string): unknown {
  return gen(schema, { rng: makeRng(seed), root: schema, depth: 0 });
}
