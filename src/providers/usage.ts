import { isObject } from "./types";
import { vendors } from "./vendors";

/** Tokens a provider reported for a call: input (prompt) and output (completion). */
export interface TokenUsage {
  input: number;
  output: number;
}

const count = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? Math.ceil(v) : null);

/** where vendors carry usage beside OpenAI's places (their descriptors' `usageIn`), in registry order */
const VENDOR_PLACES = vendors().flatMap((v) => (v.usageIn ? [v.usageIn] : []));

function usageObject(value: Record<string, unknown>): Record<string, unknown> | null {
  if (isObject(value.usage)) return value.usage;
  if (isObject(value.response) && isObject(value.response.usage)) return value.response.usage;
  for (const place of VENDOR_PLACES) {
    const u = place(value);
    if (isObject(u)) return u;
  }
  return null;
}

/**
 * The usage a provider reported in an answer or a stream event: Chat Completions and Embeddings
 * (`usage.prompt_tokens`, `completion_tokens`), Responses (`usage.input_tokens`, `output_tokens`,
 * also inside a stream's `response.completed` event), or where a vendor's descriptor says it puts
 * it (`usageIn`: Groq's `x_groq.usage`). Null when there is none. Pricing (credits/) and traces
 * (tracing/otel.ts) read it here.
 */
export function reportedUsage(value: unknown): TokenUsage | null {
  if (!isObject(value)) return null;
  const u = usageObject(value);
  if (!u) return null;
  const input = count(u.prompt_tokens) ?? count(u.input_tokens);
  const output = count(u.completion_tokens) ?? count(u.output_tokens) ?? 0;
  if (input === null) return null;
  return { input, output };
}
