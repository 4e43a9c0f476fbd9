import { MAX_OUTPUT_TOKENS, type PricingConfig, type TokenPrice } from "../config";
import { invalidRequest } from "../errors";
import { type Target, targetModel } from "../providers/route-plan";
import { isObject } from "../providers/types";
import { reportedUsage, type TokenUsage, USAGE_KINDS, type UsageKind } from "../providers/usage";
import { creditsUp } from "./amount";

/**
 * Prices of the OpenAI-compatible endpoints (docs/pricing.md): credits per 1,000 input and output
 * tokens per model, plus a fee per call for the work a provider bills outside tokens (built-in
 * tools, audio output), a call's total rounded up to whole credits. Before the call the gateway
 * holds an upper bound of what it can cost (every forwarded byte, every image and audio part at
 * the model's maximum, every choice's output cap); after it, it charges the provider's reported
 * usage, never more than it held.
 */

// What a provider reported is read in providers/usage.ts (where each vendor's descriptor says it
// puts it); re-exported for the callers that price with it.
export { reportedUsage, type TokenUsage } from "../providers/usage";

/** The estimate of a token count from a length in characters (about four characters a token). */
export const CHARS_PER_TOKEN = 4;
export const tokensOfChars = (chars: number): number => Math.ceil(chars / CHARS_PER_TOKEN);

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

/**
 * Whole credits for `usage` at `price`, rounded up (1,234 tokens at 1 credit per 1,000 cost 2),
 * the tokens of each kind priced apart (a prompt cache's reads and writes, reasoning) at their own price;
 * throws (500, amount.ts) rather than answer an amount that is not credits.
 */
export function creditsFor(price: TokenPrice, usage: TokenUsage): number {
  let input = usage.input;
  let output = usage.output;
  let apart = 0;
  // the tokens of a kind priced apart (cached input, reasoning), each out of the input or output it is part of
  if (usage.kinds && price.kinds)
    for (const [kind, n] of Object.entries(usage.kinds) as [UsageKind, number][]) {
      const each = price.kinds[kind];
      if (each === undefined || !n) continue;
      if (USAGE_KINDS[kind].partOf === "input") {
        const part = Math.min(n, input);
        input -= part;
        apart += part * each;
      } else {
        const part = Math.min(n, output);
        output -= part;
        apart += part * each;
      }
    }
  return creditsUp((input * price.input + output * price.output + apart) / 1000, "the price of a call");
}

/** `price` with each kind priced apart at most its input or output price: what an upper bound of input and output tokens is held at. */
export function boundPrice(price: TokenPrice): TokenPrice {
  if (!price.kinds) return price;
  let { input, output } = price;
  for (const [kind, each] of Object.entries(price.kinds))
    if (USAGE_KINDS[kind as UsageKind]?.partOf === "input") input = Math.max(input, each);
    else if (USAGE_KINDS[kind as UsageKind]?.partOf === "output") output = Math.max(output, each);
  return { ...price, input, output };
}

type Api = "chat/completions" | "responses" | "embeddings";

/** Tokens a provider may add around what it is sent (chat template, tool preamble): a constant per call. */
export const PROMPT_OVERHEAD_TOKENS = 256;

/** Parts read as images (by `type`; without one, the vLLM short form `{"image_url": ...}`). */
const IMAGE_PARTS = new Set(["image_url", "input_image", "image"]);
/** Parts read as audio. */
const AUDIO_PARTS = new Set(["input_audio", "audio_url", "audio"]);

/** What a forwarded body holds besides text: its image and audio parts, and the bytes of the images sent inline. */
export interface Media {
  images: number;
  audio: number;
  /** bytes of inline images (`data:` URLs): held at the model's image tokens instead of their size */
  inlineImageBytes: number;
}

const dataUrlLength = (v: unknown): number => {
  const url = typeof v === "string" ? v : isObject(v) && typeof v.url === "string" ? v.url : null;
  return url?.trimStart().startsWith("data:") ? url.length : 0;
};

/** One walk of the parsed body (nothing serialised): every image and audio part, wherever it sits. */
export function mediaOf(v: unknown, out: Media = { images: 0, audio: 0, inlineImageBytes: 0 }): Media {
  if (Array.isArray(v)) {
    for (const c of v) if (c !== null && typeof c === "object") mediaOf(c, out);
    return out;
  }
  if (!isObject(v)) return out;
  const type = v.type;
  if (typeof type === "string" ? IMAGE_PARTS.has(type) : "image_url" in v) {
    out.images++;
    out.inlineImageBytes += dataUrlLength(v.image_url);
  } else if (typeof type === "string" && AUDIO_PARTS.has(type)) out.audio++;
  for (const k in v) {
    const c = v[k];
    if (c !== null && typeof c === "object") mediaOf(c, out);
  }
  return out;
}

/**
 * The most input tokens a call of `bytes` forwarded bytes can be counted: every byte at most one
 * token (byte-level BPE and byte-fallback tokenizers never make more tokens than the UTF-8 bytes of
 * a text, and JSON takes at least as many bytes as the UTF-8 of the text it carries), plus the
 * provider's template, plus each image and audio part at the model's maximum (docs/pricing.md).
 */
export function inputBound(bytes: number, media: Media, price: TokenPrice, p: PricingConfig): number {
  return (
    Math.max(0, bytes - media.inlineImageBytes) +
    PROMPT_OVERHEAD_TOKENS +
    media.images * (price.imageTokens ?? p.imageTokens) +
    media.audio * (price.audioTokens ?? p.audioTokens)
  );
}

const utf8Bytes = (v: unknown): number =>
  v === undefined || v === null ? 0 : Buffer.byteLength(typeof v === "string" ? v : JSON.stringify(v));

/**
 * The most output a call may be counted, choices times each choice's cap: the request's cap, else
 * the model's `max_output_tokens`, else `default_max_output_tokens`; never above the model's
 * `max_output_tokens`. A Chat Completions `prediction` adds its size (rejected prediction tokens
 * are billed as output).
 */
export function maxOutputTokens(api: Api, body: Record<string, unknown>, price: TokenPrice, defaultMax: number): number {
  if (api === "embeddings") return 0;
  const within = (cap: number | null) =>
    Math.min(cap ?? price.maxOutputTokens ?? defaultMax, price.maxOutputTokens ?? MAX_OUTPUT_TOKENS);
  if (api === "responses") return within(positiveInt(body.max_output_tokens));
  const cap = within(positiveInt(body.max_completion_tokens) ?? positiveInt(body.max_tokens));
  const predicted = isObject(body.prediction) ? utf8Bytes(body.prediction.content) : 0;
  return (cap + predicted) * (positiveInt(body.n) ?? 1);
}

/** Tool types that cost tokens only; any other type is work a provider bills per call (docs/pricing.md). */
const TOKEN_ONLY_TOOLS = new Set(["function", "custom"]);

/**
 * The per-call fees a request asks for: every tool that is not a function (web_search,
 * image_generation, code_interpreter, file_search, ...: named by its `type`), Chat Completions'
 * `web_search_options` (web_search), and audio output (`modalities` with "audio", or `audio`:
 * audio_output). Each with the field that asks for it, for the 400 when it has no price.
 */
export function perCallFees(api: Api, body: Record<string, unknown>): { name: string; param: string }[] {
  const out: { name: string; param: string }[] = [];
  if (api === "embeddings") return out;
  const add = (name: string, param: string) => {
    if (!out.some((f) => f.name === name)) out.push({ name, param });
  };
  if (Array.isArray(body.tools))
    body.tools.forEach((t, i) => {
      const type = isObject(t) ? t.type : undefined;
      if (type !== undefined && !(typeof type === "string" && TOKEN_ONLY_TOOLS.has(type))) add(String(type), `tools[${i}].type`);
    });
  if (body.web_search_options !== undefined && body.web_search_options !== null) add("web_search", "web_search_options");
  if (Array.isArray(body.modalities) && body.modalities.includes("audio")) add("audio_output", "modalities");
  else if (body.audio !== undefined && body.audio !== null) add("audio_output", "audio");
  return out;
}

/**
 * Characters of model output a stream event carries: chat chunks' content, refusal, reasoning and
 * tool-call deltas; Responses events' `delta` text.
 */
export function deliveredChars(event: unknown): number {
  if (!isObject(event)) return 0;
  if (typeof event.delta === "string") return event.delta.length;
  let n = 0;
  // a Messages API stream's content_block_delta
  if (isObject(event.delta))
    for (const f of ["text", "partial_json", "thinking"]) if (typeof event.delta[f] === "string") n += event.delta[f].length;
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
export function answerUsage(api: Api, promptTokens: number, answer: unknown): { usage: TokenUsage; reported: boolean } {
  const reported = reportedUsage(answer);
  if (reported) return { usage: reported, reported: true };
  const out = isObject(answer) ? (answer.choices ?? answer.output) : undefined;
  const output = api === "embeddings" || out === undefined ? 0 : tokensOfChars(JSON.stringify(out).length);
  return { usage: { input: promptTokens, output }, reported: false };
}

/** What a /v1 call holds and how its answer is charged, for the targets that have a price. */
export interface PricedCall {
  /** the targets with a price, in route order */
  targets: readonly Target[];
  /** whole credits held before the call: the upper bound at the dearest target */
  hold: number;
  /** the bound held (at the dearest target): the most input and output tokens the call can be counted */
  estimate: TokenUsage;
  /** the prompt's estimated tokens (about 4 bytes a token of what is forwarded): charged when a provider reports no usage */
  promptTokens: number;
  /** `provider`'s price; `deployment` (a model group's `provider/model`) tells apart two models of one provider */
  priceOf(provider: string, deployment?: string): TokenPrice;
  /** credits of the per-call fees (built-in tools, audio output) at `provider`'s model */
  feesOf(provider: string, deployment?: string): number;
  /**
   * what an answer of `provider` (its JSON, or the same already parsed) costs, with its tokens;
   * `reported`: on the provider's reported usage (else on the estimate)
   */
  charge(
    provider: string,
    json: string,
    parsed?: { value: unknown },
    deployment?: string,
  ): { credits: number; tokens: TokenUsage; reported: boolean };
}

/** Where a target's price is kept: its provider's name, and for a model group's deployment its `provider/model` too. */
const priceKey = (t: Target): string => t.deployment?.served ?? t.name;

/**
 * Prices a /v1 call before it runs: each target at its model's price (the model the gateway
 * sends it); without a price and with `refuse_unpriced`, a target is dropped, and a call left
 * with none is refused (400, nothing charged, no provider called). So is a call that asks for
 * work billed per call (a built-in tool, audio output) its model has no fee for, naming the field.
 * `forwarded` is the body that goes to the provider and `bytes` its size as sent.
 */
export function pricedTargets(
  p: PricingConfig,
  api: Api,
  forwarded: Record<string, unknown>,
  bytes: number,
  targets: readonly Target[],
): PricedCall {
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
      if (!prices.has(t.name)) prices.set(t.name, price);
      if (t.deployment) prices.set(priceKey(t), price);
      kept.push(t);
    } else if (t.model !== undefined) throw refuse(model); // the model the request asked for
  }
  const first = targets[0];
  if (kept.length === 0) throw refuse(first ? targetModel(first, fn) : String(forwarded.model ?? ""));
  const fees = perCallFees(api, forwarded);
  const media = mediaOf(forwarded);
  const feeOf = new Map<string, number>();
  let hold = 0;
  let estimate: TokenUsage = { input: 0, output: 0 };
  // the deployments of a model group often share one price: its bound is worked out once
  let boundOf: TokenPrice | null = null;
  for (const t of kept) {
    const key = priceKey(t);
    const price = prices.get(key) as TokenPrice;
    let fee = 0;
    for (const f of fees) {
      const each = price.perCall?.[f.name];
      if (each === undefined)
        throw invalidRequest(
          `${f.param}: "${f.name}" is work the provider bills per call, and model "${targetModel(t, fn)}" has no per-call price for it on this gateway (pricing: per_call.${f.name}); nothing was charged`,
          f.param,
        );
      fee += each;
    }
    const feeCredits = creditsUp(fee, "a per-call fee");
    if (!feeOf.has(t.name)) feeOf.set(t.name, feeCredits);
    if (t.deployment) feeOf.set(key, feeCredits);
    // the same price (and so the same fees) as the target before: the same bound and credits
    if (price === boundOf) continue;
    boundOf = price;
    const bound = {
      input: inputBound(bytes, media, price, p),
      output: maxOutputTokens(api, forwarded, price, p.defaultMaxOutputTokens),
    };
    const credits = creditsFor(boundPrice(price), bound) + (feeOf.get(key) ?? 0);
    if (credits >= hold) {
      hold = credits;
      estimate = bound;
    }
  }
  hold = creditsUp(hold, "a hold");
  const promptTokens = tokensOfChars(bytes);
  const priceOf = (provider: string, deployment?: string) =>
    (deployment !== undefined ? prices.get(deployment) : undefined) ?? prices.get(provider) ?? p.default;
  const feesOf = (provider: string, deployment?: string) =>
    (deployment !== undefined ? feeOf.get(deployment) : undefined) ?? feeOf.get(provider) ?? 0;
  return {
    // every target priced: the list as given (a model group's is made once, and so are its orders)
    targets: kept.length === targets.length ? targets : kept,
    hold,
    estimate,
    promptTokens,
    priceOf,
    feesOf,
    charge(provider, json, parsed, deployment) {
      let answer: unknown = null;
      if (parsed) answer = parsed.value;
      else
        try {
          answer = JSON.parse(json);
        } catch {
          // not JSON: no usage, the estimate
        }
      const { usage, reported } = answerUsage(api, promptTokens, answer);
      return {
        credits: creditsFor(priceOf(provider, deployment), usage) + feesOf(provider, deployment),
        tokens: usage,
        reported,
      };
    },
  };
}
