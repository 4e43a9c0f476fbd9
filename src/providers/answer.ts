import type { TSchema } from "@sinclair/typebox";
import type { TypeCheck } from "@sinclair/typebox/compiler";
import { Value } from "@sinclair/typebox/value";
import { CpuBudgetExceeded } from "../offline-engine/budget";
import { checkerFor, checkerForShape } from "../schema-check";
import { ensureFormats } from "./formats";
import type { RoutedFunction } from "./types";

ensureFormats();

export type Verdict = { ok: true; value: unknown } | { ok: false; problems: string[] };

const MAX_PROBLEMS = 8;

/** The schema a provider's answer must satisfy for this request. */
export function resultSchema(def: RoutedFunction, request: unknown): TSchema {
  return def.resultSchemaFor?.(request) ?? def.result;
}

/**
 * Whether `value` is a valid result of `def` for `request`: postprocess, then the schema, then the
 * function's semantic checks. Problems are short and name JSON paths, since they go back to the
 * model in the repair prompt (and never into logs).
 */
export function judge(
  def: RoutedFunction,
  request: unknown,
  schema: TSchema,
  value: unknown,
  opts: { ownAnswer?: boolean } = {},
): Verdict {
  let v = value;
  if (def.postprocess) {
    try {
      v = def.postprocess(request, v);
    } catch (err) {
      // the offline engine's answer is judged under its CPU budget: running out is not a bad answer
      if (err instanceof CpuBudgetExceeded) throw err;
      // postprocess trusts the result's shape; garbage makes it throw, which is just another invalid answer.
      return { ok: false, problems: ["the answer does not have the required structure"] };
    }
  }
  // Result schemas are closed: keys a model adds of its own are dropped, after the function's
  // postprocess has seen them, rather than costing a repair round-trip. An answer that already
  // passes a schema closed all the way down has none to drop; cleaning it anyway walked all 25,000
  // entities of a big offline answer (15 ms) to change nothing. The offline engine's own answers
  // count maps keyed by anything (counts per type) as closed too: their keys come from our code.
  const checker = checkerOf(schema, def.result);
  const passed = closedAllTheWay(schema, opts.ownAnswer === true) && checker.Check(v);
  if (!passed) {
    v = Value.Clean(schema, v);
    const problems = schemaProblems(checker, v);
    if (problems.length) return { ok: false, problems };
  }
  const semantic = def.check?.(request, v) ?? [];
  return semantic.length ? { ok: false, problems: semantic.slice(0, MAX_PROBLEMS) } : { ok: true, value: v };
}

/** Parses a text answer and judges it. */
export function judgeText(def: RoutedFunction, request: unknown, schema: TSchema, text: string): Verdict {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stripFences(text));
  } catch {
    return { ok: false, problems: ["the answer is not valid JSON"] };
  }
  return judge(def, request, schema, parsed);
}

function checkerOf(schema: TSchema, compiledSchema: TSchema): TypeCheck<TSchema> {
  return schema === compiledSchema ? checkerFor(schema) : checkerForShape(schema);
}

function schemaProblems(checker: TypeCheck<TSchema>, value: unknown): string[] {
  if (checker.Check(value)) return [];
  return [...take(checker.Errors(value), MAX_PROBLEMS)].map((e) => `${e.path || "/"}: ${e.message}`);
}

const closedSchemas = [new WeakMap<TSchema, boolean>(), new WeakMap<TSchema, boolean>()];

/**
 * Whether every object in `schema`, at any depth, forbids additional properties, and it holds
 * nothing (a record, an intersection, any, a reference) whose extra keys Value.Clean would drop
 * while the check passes: then a value that passes the check is already clean.
 */
function closedAllTheWay(schema: TSchema, anyKeyMaps: boolean): boolean {
  const cache = closedSchemas[anyKeyMaps ? 1 : 0];
  let closed = cache.get(schema);
  if (closed === undefined) {
    closed = isClosed(schema as Record<string, unknown>, anyKeyMaps);
    cache.set(schema, closed);
  }
  return closed;
}

const LEAF_TYPES = new Set(["string", "number", "integer", "boolean", "null"]);

/** Type.Record(Type.String(), ...): every key but one holding a line break matches */
const ANY_KEY = "^(.*)$";

function isClosed(s: Record<string, unknown>, anyKeyMaps: boolean): boolean {
  const closed = (x: unknown) => isClosed(x as Record<string, unknown>, anyKeyMaps);
  const variants = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (variants) return variants.every(closed);
  if (s.allOf !== undefined || s.$ref !== undefined || s.not !== undefined) return false;
  if (s.type === "object") {
    const patterns = s.patternProperties as Record<string, unknown> | undefined;
    if (patterns !== undefined) {
      const keys = Object.keys(patterns);
      return anyKeyMaps && s.properties === undefined && keys.length === 1 && keys[0] === ANY_KEY && closed(patterns[ANY_KEY]);
    }
    if (s.additionalProperties !== false) return false;
    return Object.values((s.properties ?? {}) as Record<string, unknown>).every(closed);
  }
  if (s.type === "array") return s.items !== undefined && !Array.isArray(s.items) && closed(s.items);
  return (typeof s.type === "string" && LEAF_TYPES.has(s.type)) || s.const !== undefined || Array.isArray(s.enum);
}

function* take<T>(it: Iterable<T>, n: number): Iterable<T> {
  let i = 0;
  for (const x of it) {
    if (i++ >= n) return;
    yield x;
  }
}

/** Models in json_object mode sometimes wrap the JSON in a Markdown fence. */
function stripFences(text: string): string {
  const m = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/.exec(text);
  return m?.[1] ?? text;
}
