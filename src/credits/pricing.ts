import type { PricingConfig, TokenPrice } from "../config";
import { invalidRequest } from "../errors";
import { type Target, targetModel } from "../providers/route-plan";
import { isObject } from "../providers/types";

/**
 * Prices of the OpenAI-compatible endpoints (docs/pricing.md): credits per 1,000 input and output
 * tokens per model, a call's total rounded up to whole credits. Before the call the gateway holds
 * an estimate (the prompt's size plus every choice's output cap); after it, it charges the
 * provider's reported usage, never more than it held.
 */

export interface TokenUsage {
  input: number;
  output: number;
}

/** The estimate of a token count from a length in characters (about four characters a token). */
export const CHARS_PER_TOKEN = 4;
export const tokensOfChars = (chars: number): number => Math.ceil(chars / CHARS_PER_TOKEN);

const count = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? Math.ceil(v) : null);
const positiveInt = (v: unknown): number | null => (typeof v === "number" && Number.isInteger(v) && v > 0 ? v : null);

const globs = new Map<string, RegExp>();
/** `*` matches any run of characters; everything else literally; the whole name. */
export function globMatch(pattern: string, name: string): boolean {
  let re = globs.get(pattern);
  if (!re) {
    re = new RegExp(
      `^${pattern
        .split("*")
        .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
        .join(".*")}$`,
      "s",
    );
    globs.set(pattern, re);
  }
  return re.test(name);
}

/** The price of `model` as served by `provider`: the first entry matching `model` or `provider/model`; null when none does. */
export function listedPrice(p: PricingConfig, provider: string, model: string): TokenPrice | null {
  const qualified = `${provider}/${model}`;
  for (const m of p.models) if (globMatch(m.pattern, model) || globMatch(m.pattern, qualified)) return m.price;
  return null;
}

/** The listed price, else the default one (null only when unpriced models are refused). */
export function priceFor(p: PricingConfig, provider: string, model: string): TokenPrice | null {
  return listedPrice(p, provider, model) ?? (p.refuseUnpriced ? null : p.default);
}

/** Whole credits for `usage` at `price`, rounded up (1,234 tokens at 1 credit per 1,000 cost 2). */
export function creditsFor(price: TokenPrice, usage: TokenUsage): number {
  const exact = (usage.input * price.input + usage.output * price.output) / 1000;
  return exact <= 0 ? 0 : Math.ceil(exact - 1e-9);
}

type Api = "chat/completions" | "responses" | "embeddings";

/** The prompt's size in tokens, estimated from the characters of what the model reads. */
export function promptTokens(api: Api, body: Record<string, unknown>): number {
  const read =
    api === "chat/completions" ? [body.messages, body.tools, body.functions] : [body.input, body.instructions, body.tools];
  let chars = 0;
  for (const part of read) if (part !== undefined) chars += typeof part === "string" ? part.length : JSON.stringify(part).length;
  return tokensOfChars(chars);
}

/** The most output the call may ask for: every choice's cap (the request's, else the configured default). */
export function maxOutputTokens(api: Api, body: Record<string, unknown>, defaultMax: number): number {
  if (api === "embeddings") return 0;
  if (api === "responses") return positiveInt(body.max_output_tokens) ?? defaultMax;
  const cap = positiveInt(body.max_completion_tokens) ?? positiveInt(body.max_tokens) ?? defaultMax;
  return cap * (positiveInt(body.n) ?? 1);
}

/**
 * The usage a provider reported in an answer or a stream event: Chat Completions and Embeddings
 * (`usage.prompt_tokens`, `completion_tokens`), Responses (`usage.input_tokens`, `output_tokens`,
 * also inside a stream's `response.completed` event), Groq's `x_groq.usage`. Null when there is none.
 */
export function reportedUsage(value: unknown): TokenUsage | null {
  if (!isObject(value)) return null;
  const u = isObject(value.usage)
    ? value.usage
    : isObject(value.response) && isObject(value.response.usage)
      ? value.response.usage
      : isObject(value.x_groq) && isObject(value.x_groq.usage) // Groq's last stream chunk
        ? value.x_groq.usage
        : null;
  if (!u) return null;
  const input = count(u.prompt_tokens) ?? count(u.input_tokens);
  const output = count(u.completion_tokens) ?? count(u.output_tokens) ?? 0;
  if (input === null) return null;
  return { input, output };
}

/**
 * Characters of model output a stream event carries: chat chunks' content, refusal, reasoning and
 * tool-call deltas; Responses events' `delta` text.
 */
export function deliveredChars(event: unknown): number {
  if (!isObject(event)) return 0;
  if (typeof event.delta === "string") return event.delta.length;
  let n = 0;
  const choices = Array.isArray(event.choices) ? event.choices : [];
  for (const c of choices) {
    const d = isObject(c) && isObject(c.delta) ? c.delta : null;
    if (!d) continue;
    for (const f of ["content", "refusal", "reasoning_content", "reasoning"]) if (typeof d[f] === "string") n += d[f].length;
    const calls = Array.isArray(d.tool_calls)
      ? d.tool_calls
      : d.function_call !== undefined
        ? [{ function: d.function_call }]
        : [];
    for (const call of calls) {
      const fn = isObject(call) && isObject(call.function) ? call.function : null;
      if (!fn) continue;
      if (typeof fn.name === "string") n += fn.name.length;
      if (typeof fn.arguments === "string") n += fn.arguments.length;
    }
  }
  return n;
}

/** The usage of a whole answer: the provider's report, else an estimate from the prompt and the answer's output. */
export function answerUsage(api: Api, body: Record<string, unknown>, answer: unknown): { usage: TokenUsage; reported: boolean } {
  const reported = reportedUsage(answer);
  if (reported) return { usage: reported, reported: true };
  const out = isObject(answer) ? (answer.choices ?? answer.output) : undefined;
  const output = api === "embeddings" || out === undefined ? 0 : tokensOfChars(JSON.stringify(out).length);
  return { usage: { input: promptTokens(api, body), output }, reported: false };
}

/** What a /v1 call holds and how its answer is charged, for the targets that have a price. */
export interface PricedCall {
  /** the targets with a price, in route order */
  targets: Target[];
  /** whole credits held before the call: the estimate at the dearest target's price */
  hold: number;
  /** the estimate held: the prompt's size and the most output the call may ask for */
  estimate: TokenUsage;
  priceOf(provider: string): TokenPrice;
  /** what an answer of `provider` (its JSON, or the same already parsed) costs, with its tokens */
  charge(provider: string, json: string, parsed?: { value: unknown }): { credits: number; tokens: TokenUsage };
}

/**
 * Prices a /v1 call before it runs: each target at its model's price (the model the gateway
 * sends it); without a price and with `refuse_unpriced`, a target is dropped, and a call left
 * with none is refused (400, nothing charged, no provider called).
 */
export function pricedTargets(p: PricingConfig, api: Api, body: Record<string, unknown>, targets: Target[]): PricedCall {
  const fn = api === "chat/completions" ? "chat-completions" : api;
  const prices = new Map<string, TokenPrice>();
  const kept: Target[] = [];
  const refuse = (model: string) =>
    invalidRequest(
      `model "${model}" has no price on this gateway, and unpriced models are refused (pricing.refuse_unpriced)`,
      "model",
    );
  for (const t of targets) {
    const model = targetModel(t, fn);
    const price = priceFor(p, t.name, model);
    if (price) {
      prices.set(t.name, price);
      kept.push(t);
    } else if (t.model !== undefined) throw refuse(model); // the model the request asked for
  }
  const first = targets[0];
  if (kept.length === 0) throw refuse(first ? targetModel(first, fn) : String(body.model ?? ""));
  const estimate = { input: promptTokens(api, body), output: maxOutputTokens(api, body, p.defaultMaxOutputTokens) };
  let hold = 0;
  for (const price of prices.values()) hold = Math.max(hold, creditsFor(price, estimate));
  const priceOf = (provider: string) => prices.get(provider) ?? p.default;
  return {
    targets: kept,
    hold,
    estimate,
    priceOf,
    charge(provider, json, parsed) {
      let answer: unknown = null;
      if (parsed) answer = parsed.value;
      else
        try {
          answer = JSON.parse(json);
        } catch {
          // not JSON: no usage, the estimate
        }
      const { usage } = answerUsage(api, body, answer);
      return { credits: creditsFor(priceOf(provider), usage), tokens: usage };
    },
  };
}
