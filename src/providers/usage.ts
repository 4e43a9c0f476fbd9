import { isObject } from "./types";
import { vendors } from "./vendors";

/**
 * The kinds of tokens priced apart from plain input and output (CONTRACT section 15: cached
 * input, cache writes, reasoning or thinking), each a part of the input or of the output a provider reports,
 * and where OpenAI's usage objects say how many (Chat Completions', then Responses'). A vendor
 * whose answers the gateway translates writes its own counts there (vendors/gemini: usageMetadata's
 * cachedContentTokenCount and thoughtsTokenCount). `[pricing]` prices each by its name
 * (credits/pricing.ts `creditsFor`); a kind without a price is charged as the input or output it
 * is part of. The one place a kind is added.
 */
export const USAGE_KINDS = {
  cached_input: {
    partOf: "input",
    at: [
      ["prompt_tokens_details", "cached_tokens"],
      ["input_tokens_details", "cached_tokens"],
    ],
  },
  cache_write: {
    partOf: "input",
    at: [
      ["prompt_tokens_details", "cache_write_tokens"],
      ["input_tokens_details", "cache_write_tokens"],
    ],
  },
  reasoning: {
    partOf: "output",
    at: [
      ["completion_tokens_details", "reasoning_tokens"],
      ["output_tokens_details", "reasoning_tokens"],
    ],
  },
} as const satisfies Record<string, { partOf: "input" | "output"; at: readonly (readonly [string, string])[] }>;

export type UsageKind = keyof typeof USAGE_KINDS;
const KINDS = Object.entries(USAGE_KINDS) as [UsageKind, (typeof USAGE_KINDS)[UsageKind]][];

/** Tokens a provider reported for a call: input (prompt) and output (completion), and the parts of them of a kind priced apart. */
export interface TokenUsage {
  input: number;
  output: number;
  /** how many of `input` or `output` were of each kind (USAGE_KINDS); absent: none reported */
  kinds?: Partial<Record<UsageKind, number>>;
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
  let input = count(u.prompt_tokens) ?? count(u.input_tokens);
  const output = count(u.completion_tokens) ?? count(u.output_tokens) ?? 0;
  if (input === null) return null;
  let kinds: TokenUsage["kinds"];
  // a usage whose input leaves its prompt cache's reads and writes out (the Messages API's):
  // counted into the input, and as their kinds
  const read = count(u.cache_read_input_tokens);
  const written = count(u.cache_creation_input_tokens);
  if (read || written) {
    input += (read ?? 0) + (written ?? 0);
    kinds = {};
    if (read) kinds.cached_input = read;
    if (written) kinds.cache_write = written;
  }
  for (const [kind, { at }] of KINDS) {
    if (kinds?.[kind] !== undefined) continue;
    for (const [object, field] of at) {
      const details = u[object];
      const n = isObject(details) ? count(details[field]) : null;
      if (n) {
        kinds = { ...kinds, [kind]: n };
        break;
      }
    }
  }
  return kinds ? { input, output, kinds } : { input, output };
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
