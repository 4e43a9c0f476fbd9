/**
 * The ranges OpenAI documents for the parameters of the /v1 APIs the gateway serves (OpenAI's API
 * reference and its OpenAPI document, read 2026-11-26). A value outside them is the 400 OpenAI
 * itself answers, naming the parameter, before any provider is called: a provider that accepts
 * `temperature: 7` would otherwise answer something OpenAI never would. The output caps have the
 * gateway's own ceiling too (config.ts MAX_OUTPUT_TOKENS: no model writes more), so a call's hold is
 * always a finite number of credits (docs/pricing.md).
 */
import { MAX_OUTPUT_TOKENS } from "../config";
import { invalidRequest } from "../errors";
import type { ProxyApi } from "../providers/types";

type Rule =
  | { type: "decimal" | "integer"; min?: number; max?: number }
  | { type: "boolean" }
  | { type: "enum"; values: readonly string[] };

const decimal = (min: number, max: number): Rule => ({ type: "decimal", min, max });
const integer = (min?: number, max?: number): Rule => ({ type: "integer", min, max });
const boolean: Rule = { type: "boolean" };

const RULES: Record<ProxyApi, Record<string, Rule>> = {
  "chat/completions": {
    temperature: decimal(0, 2),
    top_p: decimal(0, 1),
    n: integer(1, 128),
    presence_penalty: decimal(-2, 2),
    frequency_penalty: decimal(-2, 2),
    logprobs: boolean,
    top_logprobs: integer(0, 20),
    max_tokens: integer(1, MAX_OUTPUT_TOKENS),
    max_completion_tokens: integer(1, MAX_OUTPUT_TOKENS),
    seed: integer(),
    parallel_tool_calls: boolean,
    store: boolean,
  },
  responses: {
    temperature: decimal(0, 2),
    top_p: decimal(0, 1),
    top_logprobs: integer(0, 20),
    max_output_tokens: integer(16, MAX_OUTPUT_TOKENS),
    max_tool_calls: integer(1),
    parallel_tool_calls: boolean,
    store: boolean,
    background: boolean,
  },
  embeddings: {
    dimensions: integer(1),
    encoding_format: { type: "enum", values: ["float", "base64"] },
  },
};

const typeName = (v: unknown) =>
  typeof v === "number" ? (Number.isInteger(v) ? "an integer" : "a decimal") : Array.isArray(v) ? "an array" : `a ${typeof v}`;

function checkOne(name: string, rule: Rule, v: unknown): void {
  if (rule.type === "boolean") {
    if (typeof v !== "boolean")
      throw invalidRequest(`Invalid type for '${name}': expected a boolean, but got ${typeName(v)} instead.`, name);
    return;
  }
  if (rule.type === "enum") {
    if (typeof v !== "string" || !rule.values.includes(v))
      throw invalidRequest(
        `Invalid value for '${name}': expected one of ${rule.values.map((x) => `'${x}'`).join(", ")}, but got ${JSON.stringify(v)} instead.`,
        name,
      );
    return;
  }
  const integral = rule.type === "integer";
  if (typeof v !== "number" || !Number.isFinite(v) || (integral && !Number.isInteger(v)))
    throw invalidRequest(
      `Invalid type for '${name}': expected ${integral ? "an integer" : "a decimal"}, but got ${typeName(v)} instead.`,
      name,
    );
  const what = integral ? "integer" : "decimal";
  if (rule.min !== undefined && v < rule.min)
    throw invalidRequest(
      `Invalid '${name}': ${what} below minimum value. Expected a value >= ${rule.min}, but got ${v} instead.`,
      name,
    );
  if (rule.max !== undefined && v > rule.max)
    throw invalidRequest(
      `Invalid '${name}': ${what} above maximum value. Expected a value <= ${rule.max}, but got ${v} instead.`,
      name,
    );
}

/** Chat Completions' `stop` (up to 4 sequences) and `logit_bias` (token id -> -100..100). */
function checkChatExtras(body: Record<string, unknown>): void {
  const stop = body.stop;
  if (stop !== undefined && stop !== null && typeof stop !== "string") {
    if (!Array.isArray(stop) || stop.some((s) => typeof s !== "string"))
      throw invalidRequest("Invalid type for 'stop': expected a string or an array of strings.", "stop");
    if (stop.length > 4)
      throw invalidRequest(
        `Invalid 'stop': array too long. Expected an array with maximum length 4, but got an array with length ${stop.length} instead.`,
        "stop",
      );
  }
  const bias = body.logit_bias;
  if (bias === undefined || bias === null) return;
  if (typeof bias !== "object" || Array.isArray(bias))
    throw invalidRequest(`Invalid type for 'logit_bias': expected an object, but got ${typeName(bias)} instead.`, "logit_bias");
  for (const [token, v] of Object.entries(bias)) checkOne(`logit_bias.${token}`, integer(-100, 100), v);
}

const RULE_LIST = Object.fromEntries(Object.entries(RULES).map(([api, rules]) => [api, Object.entries(rules)])) as Record<
  ProxyApi,
  [string, Rule][]
>;

/** Throws OpenAI's 400 for the first parameter outside its documented range; null means "not set", as OpenAI reads it. */
export function checkParameterRanges(api: ProxyApi, body: Record<string, unknown>): void {
  for (const [name, rule] of RULE_LIST[api]) {
    const v = body[name];
    if (v !== undefined && v !== null) checkOne(name, rule, v);
  }
  if (api === "chat/completions") checkChatExtras(body);
}
