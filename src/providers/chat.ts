import { GatewayError, invalidRequest, type ProviderAttempt } from "../errors";
import type { AttemptTrace, RequestTrace } from "../trace";
import { askedOutputTokens, type Breakers } from "./breaker";
import { fallback, type OutcomeHook, type Step } from "./fallback";
import type { GateHow, GroupNeed } from "./groups/groups";
import { chatFromResponses, responseEventsFromChat, responseFromChat, untranslatable } from "./responses-via-chat";
import { type Target, targetModel } from "./route-plan";
import { remoteUrls } from "./shared-account";
import {
  type ChatMessage,
  type CompletionResult,
  type Feature,
  isObject,
  type MessagesRequest,
  type Provider,
  ProviderError,
  type ProxyApi,
  type ProxyRequest,
  type UpstreamErrorBody,
} from "./types";
import { reportedUsage } from "./usage";
import { setupAdvice } from "./vendors";

/** the environment variables that enable a provider, for the "no provider" message */
const SETUP_KEYS = setupAdvice().keys;

/** Function name of each OpenAI-compatible API in routes, costs, rate limits, models and metrics. */
export const API_FN: Record<ProxyApi, string> = {
  "chat/completions": "chat-completions",
  embeddings: "embeddings",
  responses: "responses",
};

export interface ProxyCall {
  api: ProxyApi;
  /** the client's body without `api_key`: forwarded as sent, except `model` */
  body: Record<string, unknown>;
  /**
   * The client's bytes of `body`, when `body` is the parse of them unchanged (no key removed, no
   * field added, no redaction): sent as they are to a provider that keeps `model` as it is.
   */
  sentText?: () => string | undefined;
  signal: AbortSignal;
  /** epoch ms; for streams it bounds the time to the first event */
  deadlineMs: number;
  /** names answers the gateway writes itself (providers without an OpenAI-style API) */
  requestId: string;
  /** the request's trace: one span per provider attempt */
  trace?: RequestTrace;
  /** the hold's upper-bound tokens: a model group's context windows and strategies read them */
  need?: GroupNeed;
  /**
   * The client's body in the API it came in (the inbound Messages API's, redacted as `body` is),
   * of which `body` is the translation: a provider with its own method for that API is sent this
   * one, and answers in that API's shape (ProxyOutcome `native`).
   */
  native?: NativeCall;
}

export interface NativeCall {
  body: Record<string, unknown>;
  /** its bytes as the client sent them, when unchanged */
  sentText?: () => string | undefined;
  /** the inbound API's own headers that go with it (Inbound `headers`: `anthropic-beta`) */
  headers?: Record<string, string>;
}

export interface ProxyOutcome {
  /** the upstream's answer, serialized once (cacheable as is) */
  json: string;
  /**
   * `json` as the call parsed it (never cached: a hit has only `json`), so pricing reads its usage
   * without parsing it again; dropped by whoever changes `json`
   */
  parsed?: { value: unknown };
  provider: string;
  model: string;
  attempts: ProviderAttempt[];
  /** `provider/model` of the model group's deployment that answered (docs/routing.md) */
  deployment?: string;
  /** the answer is in the inbound API's shape (ProxyCall `native`), not the chat one */
  native?: boolean;
}

export interface ProxyStreamOutcome {
  /** the upstream's events, parsed; an error after the first event surfaces here as a ProviderError */
  events: AsyncIterable<unknown>;
  provider: string;
  model: string;
  attempts: ProviderAttempt[];
  deployment?: string;
  /** the events are the inbound API's own (ProxyCall `native`), not chat chunks */
  native?: boolean;
}

export interface ProxyEnv {
  breakers: Breakers;
  onOutcome?: OutcomeHook;
  /** a model group's gate around each attempt of `call` on a deployment (groups/groups.ts): a stream's end, an answer's usage */
  gate?: <T>(step: Step, go: () => Promise<T | null>, how: GateHow<T> | undefined, call: ProxyCall) => Promise<T | null>;
  /** every deployment refused `call` before any was tried */
  noneTried?: (call: ProxyCall, refused?: GatewayError) => GatewayError;
}

/** `provider/model` of a deployment target, undefined for a provider named directly. */
const deploymentOf = (step: Step): string | undefined => step.target.deployment?.served;

/**
 * A provider's answer to a client error (400, 404, 413, 422): it goes back to the client with its
 * status and error object, because another provider would say the same.
 */
export class UpstreamClientError extends Error {
  constructor(
    readonly status: number,
    readonly error: UpstreamErrorBody,
    readonly provider: string,
    readonly attempts: ProviderAttempt[],
  ) {
    super(error.message);
    this.name = "UpstreamClientError";
  }
}

interface Need {
  feature: Feature;
  /** the field of the request that needs it */
  param: string;
}

const TOOL_FIELDS = ["tools", "tool_choice", "parallel_tool_calls", "functions", "function_call"];
const PART_FEATURE: Record<string, Feature> = { image_url: "images", input_audio: "audio", file: "files" };

/** The optional features a request needs, each with the first field that needs it. */
export function requiredFeatures(api: ProxyApi, body: Record<string, unknown>): Need[] {
  // anything the provider could fetch, anywhere in the body (shared-account.ts)
  const url = remoteUrls(api, body)[0];
  const fetches: Need[] = url ? [{ feature: "remote_urls", param: url.param }] : [];
  if (api === "embeddings") return [{ feature: "embeddings", param: "model" }, ...fetches];
  if (api === "responses") return [{ feature: "responses", param: "input" }, ...fetches];
  const needs: Need[] = [...fetches];
  const add = (feature: Feature, param: string) => {
    if (!needs.some((n) => n.feature === feature)) needs.push({ feature, param });
  };
  for (const f of TOOL_FIELDS) if (body[f] !== undefined) add("tools", f);
  const rf = body.response_format;
  if (isObject(rf) && (rf.type === "json_schema" || rf.type === "json_object")) add("structured_output", "response_format");
  if (body.audio !== undefined) add("audio", "audio");
  if (Array.isArray(body.modalities) && body.modalities.includes("audio")) add("audio", "modalities");
  const messages = Array.isArray(body.messages) ? body.messages : [];
  messages.forEach((m, i) => {
    if (!isObject(m)) return;
    if (m.role === "tool" || m.role === "function" || m.tool_calls !== undefined || m.function_call !== undefined)
      add("tools", `messages[${i}]`);
    if (!Array.isArray(m.content)) return;
    for (const part of m.content) {
      const feature = isObject(part) && typeof part.type === "string" ? PART_FEATURE[part.type] : undefined;
      if (feature) add(feature, `messages[${i}].content`);
    }
  });
  return needs;
}

/**
 * Fields a provider without an OpenAI-style API (mock) answers faithfully: it writes one plain
 * text choice, so anything asking for more (tools, n, stop, logprobs, ...) must go elsewhere.
 */
const PLAIN_FIELDS = new Set([
  "model",
  "messages",
  "stream",
  "stream_options",
  "temperature",
  "top_p",
  "max_tokens",
  "max_completion_tokens",
  "user",
  "metadata",
  "seed",
]);
const PLAIN_ROLES = new Set(["system", "developer", "user", "assistant"]);

/** A Responses call this provider answers through Chat Completions (it has no Responses API of its own). */
const viaChat = (p: Provider, api: ProxyApi) => api === "responses" && p.proxy !== undefined && !p.features?.has("responses");

/**
 * The field a translating provider's API cannot express (its `untranslatable`), as what it lacks:
 * such a provider is skipped, the field never dropped on the way.
 */
function untranslated(provider: Provider, api: ProxyApi, body: Record<string, unknown>, as: Feature): Need | null {
  const param = provider.untranslatable?.(api, body);
  return param ? { feature: as, param } : null;
}

/** What `provider` lacks to serve this request as sent ("tools", "n", ...), or null when it can. */
function lacks(provider: Provider, api: ProxyApi, body: Record<string, unknown>, needs: Need[]): Need | null {
  if (viaChat(provider, api)) {
    // what the Responses body asks to fetch, whatever its translation keeps
    const fetch = needs.find((n) => n.feature === "remote_urls");
    if (fetch && !provider.features?.has("remote_urls")) return fetch;
    const field = untranslatable(body);
    if (field) return { feature: "responses", param: field };
    const chat = chatFromResponses(body);
    const chatNeeds = requiredFeatures("chat/completions", chat);
    return (
      chatNeeds.find((n) => !provider.features?.has(n.feature)) ?? untranslated(provider, "chat/completions", chat, "responses")
    );
  }
  if (provider.proxy) return needs.find((n) => !provider.features?.has(n.feature)) ?? untranslated(provider, api, body, "tools");
  if (api !== "chat/completions" || needs[0]) return needs[0] ?? null;
  for (const key of Object.keys(body)) {
    if (!PLAIN_FIELDS.has(key) && body[key] !== undefined && !(key === "n" && body.n === 1))
      return { feature: "tools", param: key };
  }
  const messages = Array.isArray(body.messages) ? body.messages : [];
  for (const [i, m] of messages.entries()) {
    if (!isObject(m) || !PLAIN_ROLES.has(String(m.role))) return { feature: "tools", param: `messages[${i}].role` };
  }
  return null;
}

/** What the operator can set so that `provider` serves what it lacks, if anything ("" when nothing can). */
function enableHint(provider: Provider, lack: Need): string {
  const how = provider.enables?.[lack.feature];
  return how ? `: ${how}` : "";
}

/**
 * The route minus the providers that cannot serve the request as sent (never one sent a request
 * with fields removed). No provider left: 400 naming the field and the providers tried.
 */
export function capableTargets(api: ProxyApi, body: Record<string, unknown>, targets: readonly Target[]): readonly Target[] {
  const fn = API_FN[api];
  if (targets.length === 0) {
    throw new GatewayError(
      "no_provider",
      `${fn} needs an AI provider: set ${SETUP_KEYS}, or add a [[providers]] entry to the TEXTAI_CONFIG file`,
    );
  }
  const needs = requiredFeatures(api, body);
  const ok: Target[] = [];
  const skipped: string[] = [];
  let param: string | null = null;
  for (const t of targets) {
    const lack = lacks(t.provider, api, body, needs);
    if (!lack) ok.push(t);
    else {
      param ??= lack.param;
      skipped.push(
        needs.includes(lack)
          ? `${t.name} (no ${lack.feature} support${enableHint(t.provider, lack)})`
          : `${t.name} (cannot serve "${lack.param}")`,
      );
    }
  }
  if (ok.length === 0) {
    const fetches = needs.some((n) => n.feature === "remote_urls" && n.param === param);
    const what = api === "chat/completions" || fetches ? `"${param}"` : `the ${fn} API`;
    const why = fetches
      ? ": it is a URL or media part the provider would fetch, and only data: URLs go to a provider without remote_urls"
      : "";
    throw invalidRequest(`no provider in the route can serve ${what}${why}; tried ${skipped.join(", ")}`, param);
  }
  // every target can: the list as given (a model group's is made once and shared)
  return ok.length === targets.length ? targets : ok;
}

const CLIENT_STATUSES = new Set([400, 404, 413, 422]);
const isClientError = (e: ProviderError) =>
  e.kind === "context_length" || (e.kind === "status" && CLIENT_STATUSES.has(e.status ?? 0));

/**
 * The fallback of the OpenAI-compatible endpoints (the one loop, fallback.ts): each target gets one
 * try (breaker permitting); the deadline and the client's signal end the whole loop. A client error
 * ends it too, unless a later provider lists the same model. Every provider rate-limited: 429.
 */
function proxyFallback<T>(
  targets: readonly Target[],
  call: ProxyCall,
  env: ProxyEnv,
  send: (t: Target, model: string, signal: AbortSignal, headers?: Record<string, string>) => Promise<T>,
  /** a stream keeps using the signal after the first event; a plain answer is done with it (and its span, ended here) */
  keepSignal = false,
  /** what a model group's gate reads of the answer: a stream's end, a plain answer's usage */
  how?: GateHow<T>,
) {
  const { gate, noneTried } = env;
  const fn = API_FN[call.api];
  return fallback<T>({
    fn,
    operation: call.api === "embeddings" ? "embeddings" : "chat",
    steps: targets.map((target) => ({ target, model: targetModel(target, fn) })),
    signal: call.signal,
    deadlineMs: call.deadlineMs,
    trace: call.trace,
    breakers: env.breakers,
    onOutcome: env.onOutcome,
    send: ({ step, signal, headers }) => send(step.target, step.model, signal, headers),
    gate: gate && ((step, go) => gate(step, go, how, call)),
    noneTried: noneTried && ((refused) => noneTried(call, refused)),
    answered: (value) => (keepSignal ? undefined : { answer: value }),
    keepSignal,
    unexpected: "connection",
    outputTokens: askedOutputTokens(call.body),
    rateLimited: true,
    afterFailure: (e, { target, model }, left, attempts) => {
      // a content filter refused this request's content: another provider only for the same model, else 422
      if (e.kind === "content_filter") {
        const same = left.filter((s) => s.target.provider.listModels?.().includes(model)).map((s) => ({ ...s, model }));
        if (same.length === 0)
          throw new GatewayError("content_filtered", `provider "${target.name}": its content filter refused the request`, {
            attempts,
          });
        return same;
      }
      if (!isClientError(e)) return left;
      // a deployment's context window was too small: on to the next that is larger (docs/routing.md)
      if (e.kind === "context_length" && target.deployment) {
        const larger = biggerWindows(left, target.deployment.maxContextTokens);
        if (larger.length > 0) return larger;
      }
      const same = left.filter((s) => s.target.provider.listModels?.().includes(model)).map((s) => ({ ...s, model }));
      if (same.length === 0) {
        const upstream = e.upstream ?? { message: e.message, type: "invalid_request_error", code: null, param: null };
        throw new UpstreamClientError(e.status ?? 400, upstream, target.name, attempts);
      }
      return same;
    },
  });
}

/** The deployments left whose context window is unknown or larger than `than` (unknown: all of them). */
function biggerWindows(left: Step[], than: number | undefined): Step[] {
  return left.filter((s) => {
    const max = s.target.deployment?.maxContextTokens;
    return s.target.deployment !== undefined && (than === undefined || max === undefined || max > than);
  });
}

/** Text messages for a provider without an OpenAI-style API (only plain requests reach one). */
function plainMessages(body: Record<string, unknown>): ChatMessage[] {
  const messages = Array.isArray(body.messages) ? (body.messages as Record<string, unknown>[]) : [];
  return messages.map((m) => ({
    role: m.role === "developer" ? "system" : (m.role as ChatMessage["role"]),
    content:
      typeof m.content === "string"
        ? m.content
        : Array.isArray(m.content)
          ? m.content.map((p) => (isObject(p) && typeof p.text === "string" ? p.text : "")).join("")
          : "",
  }));
}

function plainComplete(
  p: Provider,
  call: ProxyCall,
  model: string,
  signal: AbortSignal,
  headers?: Record<string, string>,
): Promise<CompletionResult> {
  const b = call.body;
  const maxTokens = (b.max_completion_tokens ?? b.max_tokens) as number | undefined;
  const temperature = b.temperature as number | undefined;
  return p.complete({ fn: API_FN[call.api], messages: plainMessages(b), model, temperature, maxTokens, signal, headers });
}

function usageOf(r: CompletionResult) {
  const u = r.usage ?? { prompt_tokens: 0, completion_tokens: 0 };
  return { ...u, total_tokens: u.prompt_tokens + u.completion_tokens };
}

const now = () => Math.floor(Date.now() / 1000);

export async function runProxy(call: ProxyCall, targets: readonly Target[], env: ProxyEnv): Promise<ProxyOutcome> {
  const { value, step, attempts } = await proxyFallback(
    targets,
    call,
    env,
    async (t, model, signal, headers) => {
      if (call.native && t.provider.messages) return t.provider.messages(asSent(call.native, model, signal, headers));
      if (viaChat(t.provider, call.api) && t.provider.proxy) {
        const body = chatFromResponses({ ...call.body, model });
        const chat = await t.provider.proxy({ api: "chat/completions", body, signal, headers });
        return responseFromChat(call.body, isObject(chat) ? chat : {}, call.requestId.slice(4));
      }
      if (t.provider.proxy) return t.provider.proxy(sameModel(call, model, signal, headers));
      const r = await plainComplete(t.provider, call, model, signal, headers);
      return {
        id: `chatcmpl-${call.requestId.slice(4)}`,
        object: "chat.completion",
        created: now(),
        model: r.model,
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: r.text, refusal: null },
            finish_reason: r.finishReason ?? "stop",
            logprobs: null,
          },
        ],
        usage: usageOf(r),
      };
    },
    false,
    env.gate && PLAIN_USED,
  );
  const model = isObject(value) && typeof value.model === "string" ? value.model : step.model;
  const deployment = deploymentOf(step);
  const native = isNative(call, step, false) ? { native: true } : {};
  return { json: JSON.stringify(value), parsed: { value }, provider: step.target.name, model, attempts, deployment, ...native };
}

/** Whether the attempt that answered was sent the inbound API's own body. */
const isNative = (call: ProxyCall, step: Step, stream: boolean) =>
  call.native !== undefined && (stream ? step.target.provider.messagesStream : step.target.provider.messages) !== undefined;

/** The inbound API's body with `model` set to the target's, and its client's bytes with that model (sentWith). */
function asSent(native: NativeCall, model: string, signal: AbortSignal, headers?: Record<string, string>): MessagesRequest {
  const text = sentWith(native.body, native.sentText, model);
  const sent = native.headers ? { ...headers, ...native.headers } : headers;
  return { body: model === native.body.model ? native.body : { ...native.body, model }, text, signal, headers: sent };
}

/** The request to a provider: the client's body with `model` set to the provider's, and its bytes with that model (sentWith). */
function sameModel(call: ProxyCall, model: string, signal: AbortSignal, headers?: Record<string, string>): ProxyRequest {
  const text = sentWith(call.body, call.sentText, model);
  return { api: call.api, body: model === call.body.model ? call.body : { ...call.body, model }, text, signal, headers };
}

/**
 * The client's bytes of `body` (`sent`: when they say exactly what the parsed body says) with its
 * model set to `model`: as sent when it is the same; else, when "model" is the body's first key and
 * its value is written as JSON.stringify writes it, that value replaced (a model group's deployment,
 * a route's model: the rest of the body is not serialised again); otherwise undefined (serialised).
 */
function sentWith(
  body: Record<string, unknown>,
  sent: (() => string | undefined) | undefined,
  model: string,
): string | undefined {
  if (!sent) return undefined;
  const from = body.model;
  if (model === from) return sent();
  if (typeof from !== "string") return undefined;
  const text = sent();
  if (text === undefined) return undefined;
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== 123 /* { */) return undefined;
  i = skipSpace(text, i + 1);
  if (!text.startsWith('"model"', i)) return undefined;
  i = skipSpace(text, i + 7);
  if (text.charCodeAt(i) !== 58 /* : */) return undefined;
  i = skipSpace(text, i + 1);
  const value = JSON.stringify(from);
  if (!text.startsWith(value, i)) return undefined;
  return `${text.slice(0, i)}${JSON.stringify(model)}${text.slice(i + value.length)}`;
}

/** The index of the first character at or after `i` that is not JSON whitespace. */
function skipSpace(text: string, i: number): number {
  for (;;) {
    const c = text.charCodeAt(i);
    if (c !== 32 && c !== 10 && c !== 13 && c !== 9) return i;
    i++;
  }
}

/** Falls back only until the first event arrives: after that the client has seen output. */
export async function runProxyStream(call: ProxyCall, targets: readonly Target[], env: ProxyEnv): Promise<ProxyStreamOutcome> {
  const { value, step, attempts, span } = await proxyFallback(
    targets,
    call,
    env,
    async (t, model, signal, headers) => {
      const p = t.provider;
      const events =
        call.native && p.messagesStream
          ? p.messagesStream(asSent(call.native, model, signal, headers))
          : viaChat(p, call.api) && p.proxyStream
            ? responseEventsFromChat(
                call.body,
                p.proxyStream({ api: "chat/completions", body: chatFromResponses({ ...call.body, model }), signal, headers }),
                call.requestId.slice(4),
              )
            : p.proxyStream
              ? p.proxyStream(sameModel(call, model, signal, headers))
              : plainStream(p, call, model, signal, headers);
      const it = events[Symbol.asyncIterator]();
      const first = await it.next();
      return { first, it };
    },
    true,
    env.gate && { lasting: (value, end) => lastingStream(value, end, call.signal) },
  );
  const { first, it } = value;
  const deployment = deploymentOf(step);
  const native = isNative(call, step, true) ? { native: true } : {};
  return { events: resume(first, it, span), provider: step.target.name, model: step.model, attempts, deployment, ...native };
}

/** The tokens a plain answer reports (a model group's tpm window is corrected to them). */
const PLAIN_USED: GateHow<unknown> = {
  used: (value) => {
    const u = reportedUsage(value);
    return u ? u.input + u.output : undefined;
  },
};

/**
 * A stream's start whose events call `end` once, when they have ended, failed or been closed, or
 * the client has left (a model group's deployment is in flight until then).
 */
function lastingStream<E>(
  value: { first: IteratorResult<E>; it: AsyncIterator<E> },
  end: () => void,
  signal: AbortSignal,
): { first: IteratorResult<E>; it: AsyncIterator<E> } {
  if (value.first.done) {
    end();
    return value;
  }
  const { it } = value;
  const over = () => {
    signal.removeEventListener("abort", over);
    end();
  };
  signal.addEventListener("abort", over, { once: true });
  const wrapped: AsyncIterator<E> = {
    next: async () => {
      try {
        const n = await it.next();
        if (n.done) over();
        return n;
      } catch (err) {
        over();
        throw err;
      }
    },
    return: async (v?: unknown) => {
      over();
      return it.return ? it.return(v) : { done: true, value: v as E };
    },
  };
  return { first: value.first, it: wrapped };
}

/** The chunks of a chat completion written by the gateway for a provider without an OpenAI-style API. */
async function* plainStream(
  p: Provider,
  call: ProxyCall,
  model: string,
  signal: AbortSignal,
  headers?: Record<string, string>,
): AsyncIterable<unknown> {
  const r = await plainComplete(p, call, model, signal, headers);
  const head = { id: `chatcmpl-${call.requestId.slice(4)}`, object: "chat.completion.chunk", created: now(), model: r.model };
  const chunk = (delta: Record<string, unknown>, finish: string | null) => ({
    ...head,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
  });
  yield chunk({ role: "assistant", content: "" }, null);
  for (const piece of r.text.split(/(?<=\s)/)) if (piece) yield chunk({ content: piece }, null);
  yield chunk({}, r.finishReason ?? "stop");
  const options = call.body.stream_options;
  if (isObject(options) && options.include_usage === true) yield { ...head, choices: [], usage: usageOf(r) };
}

/** The stream after its first event; the attempt's span (when traced) ends with it. */
async function* resume<E>(first: IteratorResult<E>, it: AsyncIterator<E>, span?: AttemptTrace): AsyncIterable<E> {
  let done = first.done === true;
  try {
    if (!done) {
      span?.event(first.value);
      yield first.value;
    }
    while (!done) {
      const n = await it.next();
      done = n.done === true;
      if (!done) {
        span?.event(n.value);
        yield n.value;
      }
    }
  } catch (err) {
    span?.end({ error: err instanceof ProviderError ? err.code : "connection" });
    throw err;
  } finally {
    span?.end(done ? {} : { error: "aborted" });
    // The consumer stopped early (client went away): closing the upstream iterator aborts its request.
    if (!done) await it.return?.();
  }
}
