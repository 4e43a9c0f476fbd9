/**
 * OpenAI's published component schemas (test/fixtures/openai-openapi/, MIT) as a validator: the
 * gateway's own /v1 answers, events and errors are checked against them.
 */
import { Validator } from "@cfworker/json-schema";
import openapi from "../fixtures/openai-openapi/components.json";
import sdkUsage from "../fixtures/openai-openapi/sdk-response-usage.json";

// Schemas the fixture does not vendor (its README says which and why).
const ANYTHING = [
  "ServiceTier",
  "ModelIdsResponses",
  "InputItem",
  "Conversation-2",
  "TextResponseFormatConfiguration",
  "Verbosity",
  "ToolsArray",
  "ToolChoiceParam",
  "Prompt",
  "OutputTextContent",
  "ChatCompletionResponseMessage",
  "ChatCompletionStreamResponseDelta",
  "ChatCompletionTokenLogprob",
  "CompletionUsage",
];

/**
 * Some schemas of the document still use OpenAPI 3.0's `nullable: true`, which JSON Schema 2020-12
 * does not know: it means "or null", so it becomes exactly that.
 */
function withNull(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withNull);
  if (typeof node !== "object" || node === null) return node;
  const { nullable, ...rest } = node as Record<string, unknown>;
  const out = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, k === "enum" ? v : withNull(v)]));
  if (nullable !== true) return out;
  if (typeof out.type === "string") {
    const enumWithNull = Array.isArray(out.enum) ? { enum: [...out.enum, null] } : {};
    return { ...out, type: [out.type, "null"], ...enumWithNull };
  }
  return { anyOf: [out, { type: "null" }] };
}

const schemas = withNull(openapi.components.schemas) as Record<string, unknown>;
for (const name of ANYTHING) schemas[name] = {};
for (const union of ["OutputItem", "OutputContent", "OutputMessageContent"]) {
  const u = schemas[union] as { anyOf?: { $ref: string }[]; oneOf?: { $ref: string }[] };
  for (const m of u.anyOf ?? u.oneOf ?? []) schemas[m.$ref.split("/").at(-1) as string] ??= false;
}
const BASE = "https://fixtures.test/openai-openapi.json";

/** The schema errors of `value` against component `name` ([] when it is valid). */
export function violations(name: string, value: unknown): string[] {
  const v = new Validator({ $ref: `${BASE}#/components/schemas/${name}` }, "2020-12", false);
  v.addSchema({ components: { schemas } } as never, BASE);
  return v.validate(value).errors.map((e) => `${e.instanceLocation}: ${e.error}`);
}

/** The errors of a Responses `usage` against the openai SDK's (newer) ResponseUsage. */
export function usageViolations(usage: unknown): string[] {
  return new Validator(sdkUsage.schema as never, "2020-12", false)
    .validate(usage)
    .errors.map((e) => `${e.instanceLocation}: ${e.error}`);
}
