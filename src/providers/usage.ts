import { isObject } from "./types";
import { vendors } from "./vendors";

/**
 * Tokens a provider reported for a call: input (prompt) and output (completion); of the input,
 * those read from its prompt cache and those written to it, when it says (priced apart when
 * `[pricing]` gives them a price).
 */
export interface TokenUsage {
  input: number;
  output: number;
  cachedInput?: number;
  cacheWrite?: number;
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
 * it (`usageIn`: Groq's `x_groq.usage`). Null when there is none. The prompt cache's part of the
 * input: `prompt_tokens_details` (or `input_tokens_details`) `cached_tokens` and
 * `cache_write_tokens`, or a Messages API usage's `cache_read_input_tokens` and
 * `cache_creation_input_tokens` (which its `input_tokens` leaves out: added to the input).
 * Pricing (credits/) and traces (tracing/otel.ts) read it here.
 */
export function reportedUsage(value: unknown): TokenUsage | null {
  if (!isObject(value)) return null;
  const u = usageObject(value);
  if (!u) return null;
  let input = count(u.prompt_tokens) ?? count(u.input_tokens);
  const output = count(u.completion_tokens) ?? count(u.output_tokens) ?? 0;
  if (input === null) return null;
  const details = isObject(u.prompt_tokens_details)
    ? u.prompt_tokens_details
    : isObject(u.input_tokens_details)
      ? u.input_tokens_details
      : {};
  let cachedInput = count(details.cached_tokens) ?? 0;
  let cacheWrite = count(details.cache_write_tokens) ?? 0;
  // a usage whose input leaves its cache reads and writes out (the Messages API's): counted in
  const read = count(u.cache_read_input_tokens);
  const written = count(u.cache_creation_input_tokens);
  if (read !== null || written !== null) {
    cachedInput = read ?? 0;
    cacheWrite = written ?? 0;
    input += cachedInput + cacheWrite;
  }
  if (cachedInput === 0 && cacheWrite === 0) return { input, output };
  return { input, output, cachedInput: Math.min(cachedInput, input), cacheWrite: Math.min(cacheWrite, input) };
}

/**
 * The usage a stream has reported so far: its last report, or a Messages API stream's, which
 * reports it in two halves (the input in `message_start`'s message, the output, and any count it
 * corrects, in `message_delta`): laid over one another, as Anthropic's SDK does.
 */
export class StreamUsage {
  private split: Record<string, unknown> | null = null;
  private last: TokenUsage | null = null;

  see(event: unknown): void {
    if (!isObject(event)) return;
    if (event.type === "message_start" && isObject(event.message) && isObject(event.message.usage)) {
      this.split = { ...event.message.usage };
    } else if (event.type === "message_delta" && this.split !== null && isObject(event.usage)) {
      for (const [k, v] of Object.entries(event.usage)) if (v !== null && v !== undefined) this.split[k] = v;
    } else {
      this.last = reportedUsage(event) ?? this.last;
      return;
    }
    this.last = reportedUsage({ usage: this.split }) ?? this.last;
  }

  get(): TokenUsage | null {
    return this.last;
  }
}
