import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { GatewayError } from "../errors";
import { checkerFor, literalsOf } from "../schema-check";
import { closest } from "../words";

export { closest };

const withDefaults = new WeakMap<TSchema, boolean>();

function declaresDefaults(schema: TSchema): boolean {
  let has = withDefaults.get(schema);
  if (has === undefined) {
    const walk = (s: unknown): boolean => s !== null && typeof s === "object" && ("default" in s || Object.values(s).some(walk));
    has = walk(schema);
    withDefaults.set(schema, has);
  }
  return has;
}

type SchemaError = NonNullable<ReturnType<ReturnType<ReturnType<typeof checkerFor>["Errors"]>["First"]>>;

/**
 * A union's error said of the variant the value was meant as (the one of its JSON type: an object
 * for an object), so `documents[0]: expected union value` becomes `documents[0].content: expected
 * string length less or equal to 100000`; the error as it was when no variant or several have that type.
 */
function withinUnion(first: SchemaError | undefined): SchemaError | undefined {
  const variants = (first?.schema as { anyOf?: TSchema[] } | undefined)?.anyOf;
  if (!first || !variants || first.value === undefined) return first;
  const kind = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v === "number" ? "number" : typeof v);
  const typeOf = (s: TSchema) => ((s as { type?: string }).type === "integer" ? "number" : (s as { type?: string }).type);
  const meant = variants.filter((v) => typeOf(v) === kind(first.value));
  const types = [...new Set(variants.map(typeOf))];
  // a value of none of the variants' types ("tags": ["a"] where a text, a number or a yes/no goes)
  if (meant.length === 0 && types.every((t) => t !== undefined))
    return {
      ...first,
      message: `Expected ${types.join(" or ")}, not ${/^[aeiou]/.test(kind(first.value)) ? "an" : "a"} ${kind(first.value)}`,
    };
  if (meant.length !== 1) return first;
  const inner = checkerFor(meant[0] as TSchema)
    .Errors(first.value)
    .First();
  return inner ? withinUnion({ ...inner, path: first.path + inner.path }) : first;
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
 * Applies defaults, validates, and drops unknown fields. With `strict` (the /api/v1 function
 * routes) an unknown field is a 400 naming it and the closest known name instead: a misspelled
 * option must not be charged for silently. The first problem becomes a 400 invalid_request naming
 * the field in `param`.
 */
export function validateAgainst<T>(
  schema: TSchema,
  input: unknown,
  maxTextChars: number,
  opts: { strict?: boolean; ignore?: readonly string[] } = {},
): T {
  // Value.Default walks the whole schema on every call; most request schemas declare no default
  const value = declaresDefaults(schema) ? Value.Default(schema, input) : input;
  const checker = checkerFor(schema);
  if (!checker.Check(value)) {
    const first = withinUnion(checker.Errors(value).First());
    const param = first ? pointerToParam(first.path) : null;
    const missing = first && first.value === undefined;
    const allowed = first ? literalsOf(first.schema) : null;
    // a pattern asking for a character other than blanks, said in words
    const blank = first?.schema && (first.schema as { pattern?: string }).pattern === "\\S" && typeof first.value === "string";
    const message = !first
      ? "request does not match the schema"
      : missing
        ? `${param} is required${misspellingNote(schema, value, first.path)}`
        : blank
          ? `${param || "body"} must hold a character other than spaces`
          : allowed
            ? `${param || "body"} must be one of ${allowed.map((v) => JSON.stringify(v)).join(", ")}`
            : `${param || "body"}: ${first.message.replace(/^Expected/, "expected")}`;
    throw new GatewayError("invalid_request", message, { param });
  }
  // a required text of only blanks says nothing to work on: refused as "" is, not answered and charged
  const blankAt = firstBlankString(schema, value, "");
  if (blankAt !== null)
    throw new GatewayError("invalid_request", `${blankAt || "body"} must hold a character other than spaces`, {
      param: blankAt || null,
    });
  if (opts.strict) {
    const unknown = firstUnknownField(schema, value, "", new Set(opts.ignore ?? []));
    if (unknown) throw new GatewayError("invalid_request", unknownFieldMessage(unknown), { param: unknown.param });
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

/**
 * The first string, depth first, that its schema says must not be empty (`minLength` of 1 or more)
 * and that holds only blanks (spaces, tabs, line breaks): `{"text": "   "}` is as empty as `""`.
 * Every request schema's non-empty texts are held to this here, so no function can miss it.
 * Unions follow the variant the value matches. "" when the body itself is such a string.
 */
function firstBlankString(schema: TSchema, value: unknown, path: string): string | null {
  const variants = (schema as { anyOf?: TSchema[] }).anyOf;
  if (variants) {
    const match = variants.find((v) => checkerFor(v).Check(value));
    return match ? firstBlankString(match, value, path) : null;
  }
  if (typeof value === "string") {
    const min = (schema as { minLength?: number }).minLength;
    return min !== undefined && min >= 1 && value.trim() === "" ? path : null;
  }
  if (Array.isArray(value)) {
    const items = (schema as { items?: TSchema }).items;
    if (!items || Array.isArray(items)) return null;
    for (let i = 0; i < value.length; i++) {
      const hit = firstBlankString(items, value[i], `${path}[${i}]`);
      if (hit !== null) return hit;
    }
    return null;
  }
  if (!value || typeof value !== "object") return null;
  const props = (schema as { properties?: Record<string, TSchema> }).properties ?? {};
  const patterns = Object.values((schema as { patternProperties?: Record<string, TSchema> }).patternProperties ?? {});
  for (const [k, v] of Object.entries(value)) {
    const inner = props[k] ?? patterns[0];
    const hit = inner ? firstBlankString(inner, v, path ? `${path}.${k}` : k) : null;
    if (hit !== null) return hit;
  }
  return null;
}

interface UnknownField {
  param: string;
  name: string;
  known: string[];
}

/** The first key the schema does not declare, depth first; unions follow the variant the value matches. */
function firstUnknownField(schema: TSchema, value: unknown, path: string, ignore: Set<string>): UnknownField | null {
  const variants = (schema as { anyOf?: TSchema[] }).anyOf;
  if (variants) {
    const match = variants.find((v) => checkerFor(v).Check(value));
    return match ? firstUnknownField(match, value, path, ignore) : null;
  }
  if (Array.isArray(value)) {
    const items = (schema as { items?: TSchema }).items;
    if (!items) return null;
    for (let i = 0; i < value.length; i++) {
      const hit = firstUnknownField(items, value[i], `${path}[${i}]`, ignore);
      if (hit) return hit;
    }
    return null;
  }
  if (!value || typeof value !== "object") return null;
  const props = (schema as { properties?: Record<string, TSchema> }).properties;
  const patterns = (schema as { patternProperties?: Record<string, TSchema> }).patternProperties;
  if (patterns) {
    const inner = Object.values(patterns)[0];
    if (!inner) return null;
    for (const [k, v] of Object.entries(value)) {
      const hit = firstUnknownField(inner, v, path ? `${path}.${k}` : k, ignore);
      if (hit) return hit;
    }
    return null;
  }
  if (!props) return null;
  const open = (schema as { additionalProperties?: unknown }).additionalProperties;
  for (const [k, v] of Object.entries(value)) {
    const at = path ? `${path}.${k}` : k;
    const declared = props[k];
    if (declared) {
      const hit = firstUnknownField(declared, v, at, ignore);
      if (hit) return hit;
    } else if (open !== true && typeof open !== "object" && !(path === "" && ignore.has(k))) {
      return { param: at, name: k, known: Object.keys(props) };
    }
  }
  return null;
}

/**
 * For a missing required field: an undeclared key beside it that is a likely misspelling of it
 * (`{"txt": …}` when `text` is required), said the way an unknown optional field is.
 */
function misspellingNote(root: TSchema, value: unknown, pointer: string): string {
  const segments = pointer.split("/").slice(1);
  const name = segments.pop();
  if (name === undefined) return "";
  let parent: unknown = value;
  for (const seg of segments)
    parent = parent && typeof parent === "object" ? (parent as Record<string, unknown>)[seg] : undefined;
  if (!parent || typeof parent !== "object" || Array.isArray(parent)) return "";
  const declared = new Set(objectSchemasAt(root, segments).flatMap((s) => Object.keys(s.properties ?? {})));
  const undeclared = Object.keys(parent).filter((k) => !declared.has(k));
  const typo = closest(name, undeclared);
  // none close to it: the fields sent that this function does not take, so the caller sees what went wrong
  // (`{"subject", "body"}` to email-analyze said only "email_content is required")
  if (!typo)
    return undeclared.length
      ? `; unknown field${undeclared.length > 1 ? "s" : ""} ${undeclared
          .slice(0, 5)
          .map((k) => `"${pointerToParam(`/${[...segments, k].join("/")}`)}"`)
          .join(", ")}${undeclared.length > 5 ? ", …" : ""}`
      : "";
  const at = pointerToParam(`/${[...segments, typo].join("/")}`);
  return `; unknown field "${at}": did you mean "${name}"?`;
}

/** The object schemas that can sit at a path (every variant of a union). */
function objectSchemasAt(schema: TSchema, segments: string[]): { properties?: Record<string, TSchema> }[] {
  const variants = (schema as { anyOf?: TSchema[] }).anyOf;
  if (variants) return variants.flatMap((v) => objectSchemasAt(v, segments));
  const [head, ...rest] = segments;
  if (head === undefined) return [schema as { properties?: Record<string, TSchema> }];
  const items = (schema as { items?: TSchema }).items;
  if (items && /^\d+$/.test(head)) return objectSchemasAt(items, rest);
  const next = (schema as { properties?: Record<string, TSchema> }).properties?.[head];
  return next ? objectSchemasAt(next, rest) : [];
}

function unknownFieldMessage(u: UnknownField): string {
  const near = closest(u.name, u.known);
  if (near) return `unknown field "${u.param}": did you mean "${near}"?`;
  return `unknown field "${u.param}"; known fields here: ${u.known.join(", ")}`;
}
