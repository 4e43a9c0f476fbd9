import { GatewayError, type ProviderAttempt } from "../errors";
import { type CircuitBreaker, countsAgainstProvider } from "./breaker";
import { type Target, targetModel } from "./route-plan";
import { type ChatMessage, type CompletionRequest, ProviderError, type StreamChunk } from "./types";

/** Function name of the OpenAI-compatible endpoint in routes, models, metrics. */
export const CHAT_FN = "chat-completions";

export interface ChatOptions {
  /** "model" or "provider/model" */
  model?: string;
  signal: AbortSignal;
  /** epoch ms; for streams it bounds the time to the first chunk */
  deadlineMs: number;
  stream?: boolean;
  temperature?: number;
  maxTokens?: number;
}

export interface ChatOutcome {
  text: string;
  provider: string;
  model: string;
  usage?: { prompt_tokens: number; completion_tokens: number };
  finishReason?: string;
  attempts: ProviderAttempt[];
}

export interface ChatStreamOutcome {
  /** the answer's chunks; an error after the first chunk surfaces here as a ProviderError */
  stream: AsyncIterable<StreamChunk>;
  provider: string;
  model: string;
  attempts: ProviderAttempt[];
}

export interface ChatEnv {
  breaker(name: string): CircuitBreaker;
  onOutcome?: (provider: string, fn: string, outcome: "ok" | "error", ms: number) => void;
}

type Served<T> = { value: T; target: Target };

/**
 * Sequential fallback shared by plain and streaming chat: each target gets one try (breaker
 * permitting); the deadline and the client's signal end the whole loop.
 */
async function fallback<T>(
  targets: Target[],
  opts: ChatOptions,
  env: ChatEnv,
  tryOne: (t: Target, signal: AbortSignal) => Promise<T>,
  /** a stream keeps using the signal after the first chunk; a plain answer is done with it */
  keepSignal = false,
) {
  if (targets.length === 0) {
    throw new GatewayError(
      "no_provider",
      "chat completions need an AI provider: set OPENAI_API_KEY or GROQ_API_KEY, or add a [[providers]] entry to the TEXTAI_CONFIG file",
    );
  }
  const attempts: ProviderAttempt[] = [];
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), Math.max(0, opts.deadlineMs - Date.now()));
  const signal = AbortSignal.any([opts.signal, deadline.signal]);
  try {
    for (const target of targets) {
      const model = targetModel(target, CHAT_FN);
      const breaker = env.breaker(target.name);
      if (!breaker.tryAcquire()) {
        attempts.push({ provider: target.name, model, error: "circuit_open", ms: 0 });
        continue;
      }
      const started = performance.now();
      try {
        const value = await tryOne(target, signal);
        breaker.success();
        env.onOutcome?.(target.name, CHAT_FN, "ok", Math.round(performance.now() - started));
        return { served: { value, target } as Served<T>, attempts };
      } catch (err) {
        const ms = Math.round(performance.now() - started);
        if (signal.aborted) {
          breaker.release();
          const timedOut = deadline.signal.aborted && !opts.signal.aborted;
          attempts.push({ provider: target.name, model, error: timedOut ? "timeout" : "aborted", ms });
          if (timedOut)
            throw new GatewayError("provider_timeout", "chat completion: no provider answered before the deadline", { attempts });
          throw new GatewayError("provider_error", "chat completion: the client closed the request", { attempts });
        }
        const e = err instanceof ProviderError ? err : new ProviderError("connection", "provider failed unexpectedly");
        attempts.push({ provider: target.name, model, error: e.code, status: e.status, ms });
        if (countsAgainstProvider(e)) breaker.failure();
        else breaker.release();
        if (e.status === 429 && e.retryAfterMs) breaker.pauseFor(e.retryAfterMs);
        env.onOutcome?.(target.name, CHAT_FN, "error", ms);
      }
    }
  } finally {
    clearTimeout(timer);
    // Settles the composite signal so it does not stay reachable from the client's signal.
    if (!keepSignal) deadline.abort();
  }
  const list = attempts.map((a) => `${a.provider}: ${a.error}`).join(", ");
  throw new GatewayError("provider_error", `chat completion: every provider failed (${list})`, { attempts });
}

function chatRequest(messages: ChatMessage[], t: Target, opts: ChatOptions, signal: AbortSignal): CompletionRequest {
  return { fn: CHAT_FN, messages, model: t.model, temperature: opts.temperature, maxTokens: opts.maxTokens, signal };
}

export async function runChat(messages: ChatMessage[], targets: Target[], opts: ChatOptions, env: ChatEnv): Promise<ChatOutcome> {
  const { served, attempts } = await fallback(targets, opts, env, (t, signal) =>
    t.provider.complete(chatRequest(messages, t, opts, signal)),
  );
  const r = served.value;
  return { text: r.text, provider: served.target.name, model: r.model, usage: r.usage, finishReason: r.finishReason, attempts };
}

/** Falls back only until the first chunk arrives: after that the client has seen output. */
export async function runChatStream(
  messages: ChatMessage[],
  targets: Target[],
  opts: ChatOptions,
  env: ChatEnv,
): Promise<ChatStreamOutcome> {
  const streaming = targets.filter((t) => typeof t.provider.stream === "function");
  const { served, attempts } = await fallback(
    streaming,
    opts,
    env,
    async (t, signal) => {
      const stream = t.provider.stream?.(chatRequest(messages, t, opts, signal));
      if (!stream) throw new ProviderError("unsupported", "provider cannot stream");
      const it = stream[Symbol.asyncIterator]();
      const first = await it.next();
      return { first, it };
    },
    true,
  );
  const { first, it } = served.value;
  return { stream: resume(first, it), provider: served.target.name, model: targetModel(served.target, CHAT_FN), attempts };
}

async function* resume(first: IteratorResult<StreamChunk>, it: AsyncIterator<StreamChunk>): AsyncIterable<StreamChunk> {
  let done = first.done === true;
  try {
    if (!done) yield first.value;
    while (!done) {
      const n = await it.next();
      done = n.done === true;
      if (!done) yield n.value;
    }
  } finally {
    // The consumer stopped early (client went away): closing the upstream iterator aborts its request.
    if (!done) await it.return?.();
  }
}
