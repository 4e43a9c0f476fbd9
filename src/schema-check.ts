import type { TSchema } from "@sinclair/typebox";
import { type TypeCheck, TypeCompiler } from "@sinclair/typebox/compiler";

/** The values a union of literals accepts (an enum: `"ordered" | "weighted"`), or null when the schema is none. */
export function literalsOf(schema: TSchema | undefined): unknown[] | null {
  const variants = (schema as { anyOf?: TSchema[] } | undefined)?.anyOf;
  if (!variants?.length || !variants.every((v) => "const" in v)) return null;
  return variants.map((v) => (v as unknown as { const: unknown }).const);
}

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

/** A schema's compiled checker, compiled once per schema object (requests, results, provider answers). */
export function checkerFor(schema: TSchema): TypeCheck<TSchema> {
  let c = compiled.get(schema);
  if (!c) {
    c = TypeCompiler.Compile(schema);
    compiled.set(schema, c);
  }
  return c;
}

/**
 * Compiled checkers of schemas built anew for each request (a function's result schema specialised
 * to the request's flags), by the schema's JSON: a handful of shapes recur, and checking a big
 * answer dynamically cost 27 ms for 25,000 entities where the compiled check costs 0.1 ms.
 * Bounded: json-extractor's schema comes from the request, so shapes can be endless.
 */
const byShape = new Map<string, TypeCheck<TSchema>>();
const MAX_SHAPES = 64;

export function checkerForShape(schema: TSchema): TypeCheck<TSchema> {
  // a schema object seen before (a function's few fixed variants, picked per request) is not serialised again
  const known = compiled.get(schema);
  if (known) return known;
  const key = JSON.stringify(schema);
  let checker = byShape.get(key);
  if (!checker) {
    checker = TypeCompiler.Compile(schema);
    if (byShape.size >= MAX_SHAPES) byShape.clear();
    byShape.set(key, checker);
  }
  compiled.set(schema, checker);
  return checker;
}
