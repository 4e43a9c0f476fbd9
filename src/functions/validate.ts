import type { TSchema } from "@sinclair/typebox";
import { type TypeCheck, TypeCompiler } from "@sinclair/typebox/compiler";
import { Value } from "@sinclair/typebox/value";
import { GatewayError } from "../errors";

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

export function checkerFor(schema: TSchema): TypeCheck<TSchema> {
  let c = compiled.get(schema);
  if (!c) {
    c = TypeCompiler.Compile(schema);
    compiled.set(schema, c);
  }
  return c;
}

/** "/conversation/0/role" -> "conversation[0].role" */
export function pointerToParam(pointer: string): string {
  return pointer
    .split("/")
    .slice(1)
    .map((p) => p.replaceAll("~1", "/").replaceAll("~0", "~"))
    .reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), "");
}

/**
 * Applies defaults, validates, and drops unknown fields (they are ignored, not errors).
 * The first problem becomes a 400 invalid_request naming the field in `param`.
 */
export function validateAgainst<T>(schema: TSchema, input: unknown, maxTextChars: number): T {
  const value = Value.Default(schema, input);
  const checker = checkerFor(schema);
  if (!checker.Check(value)) {
    const first = checker.Errors(value).First();
    const param = first ? pointerToParam(first.path) : null;
    const missing = first && first.value === undefined;
    const message = !first
      ? "request does not match the schema"
      : missing
        ? `${param} is required`
        : `${param || "body"}: ${first.message.replace(/^Expected/, "expected")}`;
    throw new GatewayError("invalid_request", message, { param });
  }
  Value.Clean(schema, value);
  const long = findLongString(value, maxTextChars, "");
  if (long !== null)
    throw new GatewayError("invalid_request", `${long} is longer than ${maxTextChars} characters`, { param: long });
  return value as T;
}

function findLongString(v: unknown, max: number, path: string): string | null {
  if (typeof v === "string") return v.length > max ? path || "body" : null;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const hit = findLongString(v[i], max, `${path}[${i}]`);
      if (hit) return hit;
    }
  } else if (v && typeof v === "object") {
    for (const [k, c] of Object.entries(v)) {
      const hit = findLongString(c, max, path ? `${path}.${k}` : k);
      if (hit) return hit;
    }
  }
  return null;
}
