import { isObject, ProviderError } from "../../types";

/**
 * Gemini's `GenerateContentResponse` as OpenAI's chat completion (and its stream chunks): text,
 * function calls as tool_calls with ids the gateway makes, finish reasons, usage with cached and
 * thinking tokens (docs/providers.md, "gemini").
 */

type Part = Record<string, unknown>;

/** finishReason as OpenAI's finish_reason; an answer Google's filters withheld is content_filter */
const FINISH: Record<string, string> = {
  STOP: "stop",
  MAX_TOKENS: "length",
  SAFETY: "content_filter",
  RECITATION: "content_filter",
  BLOCKLIST: "content_filter",
  PROHIBITED_CONTENT: "content_filter",
  SPII: "content_filter",
  IMAGE_SAFETY: "content_filter",
};

/** Gemini's finishReason as OpenAI's (a reason OpenAI has no word for, such as MALFORMED_FUNCTION_CALL or OTHER, is "stop"). */
export const finishReasonOf = (reason: unknown): string => FINISH[String(reason)] ?? "stop";

/** The error of an answer withheld by the provider's content filter (CONTRACT section 4: 422 content_filtered). */
export function contentFiltered(provider: string, why: string): ProviderError {
  const message = `provider "${provider}" refused the request: its content filter ${why}`;
  return new ProviderError("content_filter", message, 422, undefined, {
    message,
    type: "invalid_request_error",
    code: "content_filtered",
    param: null,
  });
}

/** A prompt Gemini blocked (`promptFeedback.blockReason`, no candidate): the content filter's refusal. */
export function blockedPrompt(answer: Record<string, unknown>, provider: string): ProviderError | null {
  const feedback = isObject(answer.promptFeedback) ? answer.promptFeedback : null;
  if (!feedback?.blockReason || (Array.isArray(answer.candidates) && answer.candidates.length > 0)) return null;
  return contentFiltered(provider, `blocked the prompt (${String(feedback.blockReason)})`);
}

const count = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0);

/**
 * usageMetadata as OpenAI's usage: prompt tokens (tool-use prompt tokens included) with the cached
 * ones in `prompt_tokens_details.cached_tokens`; completion tokens are the candidates' and the
 * thoughts' (Gemini counts thoughts apart, OpenAI inside), the thoughts in
 * `completion_tokens_details.reasoning_tokens`. Null without usageMetadata.
 */
export function usageOf(meta: unknown): Record<string, unknown> | null {
  if (!isObject(meta)) return null;
  const prompt = count(meta.promptTokenCount) + count(meta.toolUsePromptTokenCount);
  const thoughts = count(meta.thoughtsTokenCount);
  const completion = count(meta.candidatesTokenCount) + thoughts;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: count(meta.cachedContentTokenCount) },
    completion_tokens_details: { reasoning_tokens: thoughts },
  };
}

const callId = () => `call_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;

function partsOf(candidate: Record<string, unknown>): Part[] {
  const content = isObject(candidate.content) ? candidate.content : null;
  return Array.isArray(content?.parts) ? (content.parts as unknown[]).filter(isObject) : [];
}

/** The answer's text: its text parts but thoughts (a thought summary is not the answer). */
export const textOf = (parts: Part[]): string =>
  parts.map((p) => (typeof p.text === "string" && p.thought !== true ? p.text : "")).join("");

function toolCallsOf(parts: Part[]) {
  return parts
    .filter((p) => isObject(p.functionCall))
    .map((p) => {
      const fc = p.functionCall as Record<string, unknown>;
      return {
        id: typeof fc.id === "string" && fc.id ? fc.id : callId(),
        type: "function" as const,
        function: { name: String(fc.name ?? ""), arguments: JSON.stringify(isObject(fc.args) ? fc.args : {}) },
      };
    });
}

/** A whole answer as a chat.completion; a blocked prompt or an answer without candidates throws. */
export function chatCompletionOf(answer: unknown, model: string, provider: string): Record<string, unknown> {
  if (!isObject(answer)) throw new ProviderError("connection", "upstream sent a malformed response");
  const blocked = blockedPrompt(answer, provider);
  if (blocked) throw blocked;
  const candidates = Array.isArray(answer.candidates) ? answer.candidates.filter(isObject) : [];
  if (candidates.length === 0) throw new ProviderError("connection", "upstream sent a malformed response");
  const choices = candidates.map((c, i) => {
    const parts = partsOf(c);
    const calls = toolCallsOf(parts);
    const text = textOf(parts);
    return {
      index: typeof c.index === "number" ? c.index : i,
      message: {
        role: "assistant",
        content: calls.length > 0 && text === "" ? null : text,
        refusal: null,
        ...(calls.length ? { tool_calls: calls } : {}),
      },
      finish_reason: calls.length ? "tool_calls" : finishReasonOf(c.finishReason),
      logprobs: null,
    };
  });
  const usage = usageOf(answer.usageMetadata);
  return {
    id: `chatcmpl-${typeof answer.responseId === "string" ? answer.responseId : crypto.randomUUID()}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: typeof answer.modelVersion === "string" ? answer.modelVersion : model,
    choices,
    ...(usage ? { usage } : {}),
  };
}

/**
 * A stream's Gemini chunks as chat.completion.chunk events: a first delta with the role per
 * candidate, text deltas, each function call whole as one tool_calls delta, the finish, and (when
 * the client asked: `stream_options.include_usage`) a last chunk with the usage. A blocked prompt
 * throws; a stream that ends before every candidate finished throws (a cut stream).
 */
export async function* chatChunksOf(
  chunks: AsyncIterable<unknown>,
  model: string,
  provider: string,
  includeUsage: boolean,
): AsyncIterable<unknown> {
  const id = `chatcmpl-${crypto.randomUUID()}`;
  const created = Math.floor(Date.now() / 1000);
  const started = new Set<number>();
  const finished = new Set<number>();
  const callsSeen = new Map<number, number>();
  let usage: Record<string, unknown> | null = null;
  let answeredModel = model;
  const chunk = (index: number, delta: Record<string, unknown>, finish: string | null) => ({
    id,
    object: "chat.completion.chunk",
    created,
    model: answeredModel,
    choices: [{ index, delta, finish_reason: finish, logprobs: null }],
  });
  for await (const raw of chunks) {
    if (!isObject(raw)) throw new ProviderError("connection", "upstream sent a malformed response");
    const blocked = blockedPrompt(raw, provider);
    if (blocked) throw blocked;
    if (typeof raw.modelVersion === "string") answeredModel = raw.modelVersion;
    usage = usageOf(raw.usageMetadata) ?? usage;
    const candidates = Array.isArray(raw.candidates) ? raw.candidates.filter(isObject) : [];
    for (const [i, c] of candidates.entries()) {
      const index = typeof c.index === "number" ? c.index : i;
      if (!started.has(index)) {
        started.add(index);
        yield chunk(index, { role: "assistant", content: "" }, null);
      }
      const parts = partsOf(c);
      const text = textOf(parts);
      if (text) yield chunk(index, { content: text }, null);
      const calls = toolCallsOf(parts);
      for (const call of calls) {
        const n = callsSeen.get(index) ?? 0;
        callsSeen.set(index, n + 1);
        yield chunk(index, { tool_calls: [{ index: n, ...call }] }, null);
      }
      if (c.finishReason && !finished.has(index)) {
        finished.add(index);
        yield chunk(index, {}, callsSeen.has(index) ? "tool_calls" : finishReasonOf(c.finishReason));
      }
    }
  }
  if (started.size === 0 || finished.size < started.size) throw new ProviderError("connection", "upstream stream ended early");
  if (includeUsage && usage) yield { id, object: "chat.completion.chunk", created, model: answeredModel, choices: [], usage };
}
