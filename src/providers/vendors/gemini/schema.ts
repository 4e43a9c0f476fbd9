import type { JsonSchema } from "../../types";

/**
 * JSON Schema (the gateway's function result schemas, a client's `response_format.json_schema`,
 * a tool's `parameters`) as Gemini's `Schema`, the OpenAPI 3.0 subset its `responseSchema` and a
 * function declaration's `parameters` take: `type` (one, with `nullable` for a null alternative),
 * `format`, `description`, `enum` (strings), `properties`, `required`, `propertyOrdering`,
 * `items`, `minItems`, `maxItems`, `minimum`, `maximum`, `minLength`, `maxLength`, `pattern`,
 * `anyOf`, `title`. Keywords outside it are dropped (the gateway validates a function's answer
 * against the full schema anyway). Null when the schema says something the subset cannot:
 * a free-form map (`additionalProperties` or `patternProperties` of its own, or an object without
 * properties), `$ref`, `not`, `const` or `enum` of other than strings, a tuple; then the caller
 * sends the JSON Schema itself (`responseJsonSchema`, `parametersJsonSchema`) instead.
 */
export function toGeminiSchema(schema: JsonSchema): JsonSchema | null {
  try {
    return convert(schema, 0);
  } catch (e) {
    if (e instanceof Inexpressible) return null;
    throw e;
  }
}

class Inexpressible extends Error {}

const isObj = (v: unknown): v is JsonSchema => typeof v === "object" && v !== null && !Array.isArray(v);

const TYPES = new Set(["string", "number", "integer", "boolean", "array", "object"]);
/** copied as they are */
const PLAIN = ["description", "title", "minItems", "maxItems", "minimum", "maximum", "minLength", "maxLength", "pattern"];
/** the formats Gemini's Schema documents (string: enum, date-time; number: float, double; integer: int32, int64) */
const FORMATS = new Set(["enum", "date-time", "float", "double", "int32", "int64"]);

/** The strings a `const` or string `enum` schema allows (nothing else said), or null. */
function stringConsts(s: JsonSchema): string[] | null {
  if (Object.keys(s).some((k) => !["const", "enum", "type", "description", "title"].includes(k))) return null;
  if (s.type !== undefined && s.type !== "string") return null;
  if (typeof s.const === "string" && s.enum === undefined) return [s.const];
  if (Array.isArray(s.enum) && s.const === undefined && s.enum.every((v) => typeof v === "string")) return s.enum as string[];
  return null;
}

const isNull = (s: unknown) => isObj(s) && s.type === "null" && Object.keys(s).length === 1;

/** A schema too deep is not sent as a Schema (Gemini refuses deep nesting; the JSON Schema goes instead). */
const MAX_DEPTH = 24;

function convert(s: JsonSchema, depth: number): JsonSchema {
  if (depth > MAX_DEPTH) throw new Inexpressible();
  for (const k of ["$ref", "not", "if", "prefixItems", "patternProperties", "dependentSchemas"])
    if (s[k] !== undefined) throw new Inexpressible();
  const alts = Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : null;
  if (Array.isArray(s.allOf)) throw new Inexpressible();
  if (alts) {
    const nonNull = (alts as unknown[]).filter((a) => !isNull(a));
    const nullable = nonNull.length < alts.length;
    const rest: JsonSchema = { ...s };
    delete rest.anyOf;
    delete rest.oneOf;
    // a union of string constants (TypeBox's Union of Literals) is one enum, which Gemini follows best
    const consts = nonNull.map((a) => (isObj(a) ? stringConsts(a) : null));
    if (nonNull.length > 1 && consts.every((c) => c !== null)) {
      const out: JsonSchema = { type: "string", enum: consts.flat() };
      for (const k of ["description", "title"]) if (typeof s[k] === "string") out[k] = s[k];
      if (nullable) out.nullable = true;
      return out;
    }
    if (nonNull.length === 1) {
      const one = convert({ ...rest, ...(nonNull[0] as JsonSchema) }, depth + 1);
      return nullable ? { ...one, nullable: true } : one;
    }
    const out: JsonSchema = { anyOf: nonNull.map((a) => convert(isObj(a) ? a : {}, depth + 1)) };
    for (const k of ["description", "title"]) if (typeof s[k] === "string") out[k] = s[k];
    if (nullable) out.nullable = true;
    return out;
  }
  const out: JsonSchema = {};
  let type = s.type;
  if (Array.isArray(type)) {
    const kinds = type.filter((t) => t !== "null");
    if (kinds.length !== 1) throw new Inexpressible();
    if (kinds.length < type.length) out.nullable = true;
    type = kinds[0];
  }
  if ("const" in s) {
    if (typeof s.const !== "string") throw new Inexpressible();
    out.enum = [s.const];
    type ??= "string";
  }
  if (Array.isArray(s.enum)) {
    if (!s.enum.every((v) => typeof v === "string")) throw new Inexpressible();
    out.enum = s.enum;
    type ??= "string";
  }
  if (type === undefined && isObj(s.properties)) type = "object";
  if (type === undefined && s.items !== undefined) type = "array";
  // T.Unknown and the like: any value, which the subset cannot say
  if (typeof type !== "string" || !TYPES.has(type)) throw new Inexpressible();
  out.type = type;
  for (const k of PLAIN) if (s[k] !== undefined) out[k] = s[k];
  if (typeof s.format === "string" && FORMATS.has(s.format)) out.format = s.format;
  if (type === "array") {
    if (!isObj(s.items)) throw new Inexpressible();
    out.items = convert(s.items, depth + 1);
  }
  if (type === "object") {
    const props = isObj(s.properties) ? s.properties : {};
    const names = Object.keys(props);
    if (names.length === 0 || isObj(s.additionalProperties)) throw new Inexpressible();
    out.properties = Object.fromEntries(names.map((n) => [n, convert(isObj(props[n]) ? props[n] : {}, depth + 1)]));
    if (Array.isArray(s.required)) out.required = s.required.filter((n) => typeof n === "string" && n in props);
    out.propertyOrdering = names;
  }
  return out;
}
