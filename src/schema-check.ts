import type { TSchema } from "@sinclair/typebox";
import { type TypeCheck, TypeCompiler } from "@sinclair/typebox/compiler";

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
