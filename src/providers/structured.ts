import type { JsonSchema } from "./types";

/**
 * Adapts a function's result schema (TypeBox JSON schema) to what OpenAI's strict structured
 * output accepts, and maps answers back:
 * - strict mode wants every property required and `additionalProperties: false` everywhere, so
 *   optional properties become required-but-nullable, and the nulls are removed again from the
 *   answer before it is validated against the original schema;
 * - the root must be an object, so other roots are wrapped in `{ "value": ... }`;
 * - keywords strict mode rejects are dropped (the gateway validates the answer against the full
 *   schema anyway, and a repair attempt covers what the relaxed schema let through);
 * - free-form maps (TypeBox T.Record, T.Unknown) cannot be said in strict mode at all: then the
 *   schema is sent with `strict: false` instead of failing the request.
 */

export interface StructuredSchema {
  schema: JsonSchema;
  strict: boolean;
  /** the answer is `{ [wrapKey]: value }` and must be unwrapped */
  wrapKey?: string;
}

const WRAP_KEY = "value";

/** Keywords kept in strict mode; everything else (minLength, patternProperties, uniqueItems, ...) goes. */
const KEEP = new Set([
  "type",
  "properties",
  "required",
  "items",
  "enum",
  "anyOf",
  "description",
  "additionalProperties",
  "$defs",
  "$ref",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minItems",
  "maxItems",
  "pattern",
  "format",
]);
const STRICT_FORMATS = new Set(["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"]);

function isObj(v: unknown): v is JsonSchema {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

interface Walk {
  strict: boolean;
}

function isNullable(s: JsonSchema): boolean {
  if (s.type === "null") return true;
  if (Array.isArray(s.type) && s.type.includes("null")) return true;
  return Array.isArray(s.anyOf) && (s.anyOf as JsonSchema[]).some(isNullable);
}

function nullable(s: JsonSchema): JsonSchema {
  if (isNullable(s)) return s;
  if (Array.isArray(s.anyOf)) return { ...s, anyOf: [...(s.anyOf as JsonSchema[]), { type: "null" }] };
  return { anyOf: [s, { type: "null" }] };
}

function adapt(s: JsonSchema, w: Walk): JsonSchema {
  const out: JsonSchema = {};
  // const is expressed as a one-value enum, which every strict implementation accepts.
  if ("const" in s) out.enum = [s.const];
  const alts = Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : null;
  if (alts) out.anyOf = (alts as JsonSchema[]).map((a) => adapt(a, w));
  if (Array.isArray(s.allOf)) {
    // Intersections cannot be expressed in strict mode; a merged object is close enough.
    const merged: JsonSchema = { type: "object", properties: {}, required: [] };
    for (const part of s.allOf as JsonSchema[]) {
      if (isObj(part.properties)) Object.assign(merged.properties as JsonSchema, part.properties);
      if (Array.isArray(part.required)) (merged.required as string[]).push(...(part.required as string[]));
    }
    return adapt(merged, w);
  }
  for (const [key, value] of Object.entries(s)) {
    if (!KEEP.has(key) || key === "anyOf") continue;
    if (key === "format" && !STRICT_FORMATS.has(String(value))) continue;
    if (key === "properties" || key === "$defs") {
      const props: JsonSchema = {};
      for (const [name, sub] of Object.entries(value as JsonSchema)) if (isObj(sub)) props[name] = adapt(sub, w);
      out[key] = props;
    } else if (key === "items") {
      if (isObj(value)) out.items = adapt(value, w);
      else w.strict = false;
    } else out[key] = value;
  }
  const type = out.type ?? (isObj(s.properties) || isObj(s.patternProperties) ? "object" : undefined);
  if (type === "object" || (Array.isArray(type) && type.includes("object"))) {
    const props = (out.properties ?? {}) as JsonSchema;
    const freeForm = isObj(s.patternProperties) || isObj(s.additionalProperties) || Object.keys(props).length === 0;
    if (freeForm) {
      // A map of arbitrary keys: keep its value schema and give up strictness for this request.
      w.strict = false;
      const valueSchema = isObj(s.additionalProperties)
        ? s.additionalProperties
        : isObj(s.patternProperties)
          ? Object.values(s.patternProperties)[0]
          : undefined;
      out.additionalProperties = isObj(valueSchema) ? adapt(valueSchema, w) : true;
    } else out.additionalProperties = false;
    const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
    for (const [name, sub] of Object.entries(props)) if (!required.has(name)) props[name] = nullable(sub as JsonSchema);
    out.type = "object";
    out.properties = props;
    out.required = Object.keys(props);
  }
  if (type === undefined && !alts && !("const" in s) && !Array.isArray(s.enum) && typeof s.$ref !== "string") {
    // T.Unknown / T.Any: strict mode has no "anything" schema.
    w.strict = false;
  }
  return out;
}

/** Adapted once per schema object (a function's result schema is one object for its life). */
const adaptedSchemas = new WeakMap<JsonSchema, StructuredSchema>();

/** The schema as strict structured output takes it; computed once per schema object, and shared: never change it. */
export function toStructured(schema: JsonSchema): StructuredSchema {
  let out = adaptedSchemas.get(schema);
  if (!out) {
    out = adaptStructured(schema);
    adaptedSchemas.set(schema, out);
  }
  return out;
}

function adaptStructured(schema: JsonSchema): StructuredSchema {
  const w: Walk = { strict: true };
  const rootIsObject = schema.type === "object" || (schema.type === undefined && isObj(schema.properties));
  const source = rootIsObject ? schema : { type: "object", properties: { [WRAP_KEY]: schema }, required: [WRAP_KEY] };
  const adapted = adapt(source, w);
  return { schema: adapted, strict: w.strict, wrapKey: rootIsObject ? undefined : WRAP_KEY };
}

/**
 * Undoes the adaptation on a parsed answer: unwraps a wrapped root and removes the nulls strict
 * mode put into optional properties whose own schema does not allow null.
 */
export function fromStructured(value: unknown, original: JsonSchema, structured: StructuredSchema): unknown {
  let v = value;
  if (structured.wrapKey && isObj(v)) v = v[structured.wrapKey];
  return stripNulls(v, original, original);
}

function resolve(s: JsonSchema, root: JsonSchema): JsonSchema {
  if (typeof s.$ref !== "string" || !s.$ref.startsWith("#/")) return s;
  let node: unknown = root;
  for (const part of s.$ref.slice(2).split("/")) node = isObj(node) ? node[part] : undefined;
  return isObj(node) ? node : s;
}

function stripNulls(value: unknown, schema: JsonSchema, root: JsonSchema): unknown {
  const s = resolve(schema, root);
  if (Array.isArray(value)) return isObj(s.items) ? value.map((x) => stripNulls(x, s.items as JsonSchema, root)) : value;
  if (!isObj(value)) return value;
  if (Array.isArray(s.anyOf) || Array.isArray(s.oneOf)) {
    // Which branch matched is not known here; strip with the first object branch, which covers T.Union([T.Object, T.Null]).
    const branch = ((s.anyOf ?? s.oneOf) as JsonSchema[]).find((b) => isObj(resolve(b, root).properties));
    return branch ? stripNulls(value, branch, root) : value;
  }
  if (!isObj(s.properties)) return value;
  const props = s.properties;
  const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const sub = props[k];
    if (v === null && !required.has(k) && isObj(sub) && !isNullable(resolve(sub, root))) continue;
    out[k] = isObj(sub) ? stripNulls(v, sub, root) : v;
  }
  return out;
}

/**
 * System-prompt text for servers without json_schema support (json_object mode): the schema goes
 * in the prompt. The fenced block is also what the upstream simulator reads back.
 */
export function schemaInstruction(schema: JsonSchema): string {
  return `Answer with one JSON object only, no prose, matching this JSON Schema:\n\`\`\`json\n${JSON.stringify(schema)}\n\`\`\``;
}

/** Reads back the schema written by schemaInstruction (used by the upstream simulator). */
export function schemaFromInstruction(text: string): JsonSchema | undefined {
  const m = /```json\n([\s\S]*?)\n```/.exec(text);
  if (!m?.[1]) return undefined;
  try {
    const parsed: unknown = JSON.parse(m[1]);
    return isObj(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}
