/**
 * The pipeline of the OpenAI-compatible routes (`/v1/chat/completions`, `/v1/embeddings`,
 * `/v1/responses`), beside the function pipeline (http/pipeline.ts): the client's body is
 * forwarded to the provider as sent, only `model` resolved (docs/openai-compatible.md). Its own
 * steps are the shape checks, the parameter ranges, the shared-object and private-URL refusals,
 * the per-token pricing (docs/pricing.md) and the stream's usage chunk; the key's model policy,
 * the guardrails, the cache decision, the hold and the charge are the admission stage's
 * (http/admission.ts, credits/charged-answer.ts), as for a function. Refusals are thrown: the
 * app's one error handler answers them in OpenAI's shape.
 */
import { type KeyPolicy, keyBudget } from "../auth/policy";
import { canonicalJson } from "../cache/canonical";
import { type ChargedAnswerCall, chargedAnswer, chargedStream } from "../credits/charged-answer";
import type { Reservation } from "../credits/interface";
import { type PricedCall, pricedTargets, reportedUsage } from "../credits/pricing";
import { GatewayError, invalidRequest } from "../errors";
import { API_FN, type NativeCall, type ProxyCall, type ProxyOutcome } from "../providers/chat";
import type { Tags } from "../providers/groups/groups";
import { textsOf } from "../providers/guard-walk";
import type { GuardCounts, RequestGuard } from "../providers/guardrails";
import { routedModel, type Target, targetModel } from "../providers/route-plan";
import { refusePrivateUrls, refuseSharedObjects, remoteUrls } from "../providers/shared-account";
import { isObject, ProviderError, type ProxyApi } from "../providers/types";
import { admitGuarded, admitModels, admitTags, cacheKeyOf, cacheWanted, routeOf } from "./admission";
import { type SentBody, sentBytes } from "./body";
import type { AppDeps } from "./deps";
import type { Edge } from "./edge";
import { countRedactions, markGuarded } from "./guardrails";
import { checkParameterRanges } from "./openai-params";
import { asksUsage, noteCharge, type StreamWire, streamAnswer } from "./proxy-stream";
import { mark, type RequestState, serverTiming } from "./state";

export type ProxyDeps = Pick<AppDeps, "config" | "ledger" | "cache" | "router" | "metrics" | "logger">;

/** Only what routing and billing need; everything else is the provider's to judge. */
function checkShape(api: ProxyApi, body: Record<string, unknown>): void {
  if (body.model !== undefined && typeof body.model !== "string") throw invalidRequest("model must be a string", "model");
  if (body.stream !== undefined && typeof body.stream !== "boolean") throw invalidRequest("stream must be a boolean", "stream");
  if (api === "chat/completions") {
    const m = body.messages;
    if (!Array.isArray(m) || m.length === 0) throw invalidRequest("messages must be a non-empty array", "messages");
    const bad = m.findIndex((x) => !isObject(x) || typeof x.role !== "string");
    if (bad >= 0) throw invalidRequest(`messages[${bad}] must be an object with a role`, `messages[${bad}]`);
  }
  if (api === "embeddings" && body.input === undefined) throw invalidRequest("input is required", "input");
  if (api === "embeddings" && body.stream !== undefined) throw invalidRequest("embeddings do not stream", "stream");
}

/**
 * What the cache may answer (docs/openai-compatible.md): never a stream, never n > 1,
 * never a sample asked for explicitly (temperature > 0 or top_p < 1) without a seed, never the
 * stateful Responses API.
 */
function cacheable(api: ProxyApi, body: Record<string, unknown>): boolean {
  if (api === "responses" || body.stream === true) return false;
  if (api === "embeddings") return true;
  if (typeof body.n === "number" && body.n > 1) return false;
  const sampled =
    (typeof body.temperature === "number" && body.temperature > 0) || (typeof body.top_p === "number" && body.top_p < 1);
  return !sampled || body.seed !== undefined;
}

/** Bytes `withStreamUsage` may add to a body: `,"stream_options":{"include_usage":true}` and then some. */
const STREAM_USAGE_BYTES = 64;

/**
 * A chat stream always asks the upstream for its usage chunk: the call is charged on it
 * (docs/pricing.md). A client that did not ask for it does not get it (proxy-stream.ts).
 */
function withStreamUsage(body: Record<string, unknown>): Record<string, unknown> {
  if (asksUsage(body)) return body;
  return { ...body, stream_options: { ...(isObject(body.stream_options) ? body.stream_options : {}), include_usage: true } };
}

function withoutApiKey(raw: Record<string, unknown>): Record<string, unknown> {
  const { api_key: _key, ...body } = raw;
  return body;
}

const noTargets = (targets: readonly Target[]) => targets.length === 0;

/** The targets that are sent an inbound API's body as sent (the only ones that get all of it); none: the translation's refusal. */
function onlyNative(targets: readonly Target[], refusal: GatewayError, stream: boolean): readonly Target[] {
  const native = targets.filter((t) => (stream ? t.provider.messagesStream : t.provider.messages) !== undefined);
  if (native.length === 0) throw refusal;
  return native;
}

/**
 * A route that translated another API's body into the body of `api` (the inbound Messages API,
 * http/routes/messages.ts): the name its calls are charged and counted under, its answer made of
 * the chat answer (restored, priced), and its stream's framing. Everything else is the pipeline's.
 */
export interface Inbound {
  /** its usage name (the edge's `fn`): charges, the cache, stream metrics */
  fn: string;
  /**
   * The client's body as it came (without api_key): what a provider that speaks its API is sent
   * (redacted like the translation; ProxyCall `native`), what the guardrails inspect and the cache
   * keys on.
   */
  own: Record<string, unknown>;
  /**
   * What the translation of `own` left out (a field it cannot carry): the call then goes only to
   * providers that speak its API (`onlyNative`), this refusal when there is none.
   */
  untranslated?: GatewayError | null;
  /**
   * The inbound API's own request headers that change what its provider does (`anthropic-beta`):
   * sent with `own` to a provider that speaks the API, never to a translation; part of the cache key.
   */
  headers?: Record<string, string>;
  /** the client's answer from the chat one, or from the provider's own (`native`: passed through) (`tokens`: what it was charged on, when known) */
  answer(out: ProxyOutcome, tokens: { input: number; output: number } | undefined): string;
  /** its stream's framing, one per stream (`promptTokens`: the prompt's estimate; `native`: the events are its API's own) */
  wire(promptTokens: number, native: boolean): StreamWire;
}

/** A call admitted and priced: what both answers (plain, streamed) go on with. */
interface Admitted {
  api: ProxyApi;
  fn: string;
  /** the client's body, without api_key */
  body: Record<string, unknown>;
  guard: RequestGuard | null;
  priced: PricedCall;
  call: ProxyCall;
  inbound?: Inbound;
}

export class ProxyPipeline {
  constructor(private deps: ProxyDeps) {}

  /**
   * Validation and the admission stage (nothing is held or sent before they pass), then the answer:
   * plain (cached when it may be) or streamed.
   */
  async handle(api: ProxyApi, request: Request, state: RequestState, edge: Edge, inbound?: Inbound): Promise<Response> {
    const t = performance.now();
    const { auth, body: raw } = edge;
    // a key sent in the body is not forwarded; the usual body, without one, is used as parsed (no copy)
    const body = "api_key" in raw ? withoutApiKey(raw) : raw;
    const admitted = this.admit(api, body, auth.policy, state, admitTags(auth), request);
    const targets = inbound?.untranslated ? onlyNative(admitted, inbound.untranslated, body.stream === true) : admitted;
    const urls = remoteUrls(api, body);
    if (urls.length > 0) await refusePrivateUrls(urls);
    const guard = admitGuarded(this.deps, auth, state, textsOf, inbound?.own ?? body);
    mark(state, "validate", t);
    const a = this.price(api, raw, body, targets, guard, request, state, inbound);
    if (body.stream === true) return this.stream(a, request, state, edge);
    const done = await chargedAnswer(this.plainCall(a, request, state, edge));
    return this.plainAnswer(state, done, inbound);
  }

  /**
   * An inbound API's count of input tokens (the Messages API's count_tokens, `own` its body): the
   * count of the route's first provider when that provider counts the API's tokens itself (exact:
   * Anthropic's own tokenizer), sent the body as the call would be (model, redaction); else, or
   * when that provider fails, the input tokens a call of this body is held for (the hold's bound:
   * docs/pricing.md), after the same checks and model policy as the call. Free, nothing held.
   */
  async countInput(
    api: ProxyApi,
    request: Request,
    state: RequestState,
    edge: Edge,
    { own, untranslated, headers }: Pick<Inbound, "own" | "untranslated" | "headers">,
  ): Promise<number> {
    const { auth, body } = edge;
    const targets = this.admit(api, body, auth.policy, state, admitTags(auth), request);
    const bound = () => this.price(api, body, body, targets, null, request, state).priced.estimate.input;
    // the guardrails' refusal stands whoever counts (a blocked kind is a 422 here as on the call)
    const guard = admitGuarded(this.deps, auth, state, textsOf, own);
    const first = targets[0];
    if (!first?.provider.countTokens) {
      if (untranslated) throw untranslated;
      return bound();
    }
    const { body: sent, sentText } = this.native(own, guard, state, headers);
    const model = targetModel(first, API_FN[api]);
    const text = model === sent.model ? sentText?.() : undefined;
    const ms = Math.max(1, state.startedAt + this.deps.config.limits.requestTimeoutMs - Date.now());
    try {
      const answer = await first.provider.countTokens({
        body: text ? sent : { ...sent, model },
        text,
        signal: AbortSignal.any([request.signal, AbortSignal.timeout(ms)]),
        headers,
      });
      state.provider = first.name;
      return (answer as { input_tokens: number }).input_tokens;
    } catch (err) {
      if (!(err instanceof ProviderError)) throw err;
      this.deps.logger.log("warn", "a provider's token count failed: the gateway's bound answered", {
        request_id: state.requestId,
        provider: first.name,
        error: err.code,
      });
      return bound();
    }
  }

  /** The body's shape and parameters, then the key's model policy: the targets the call may go to. */
  private admit(
    api: ProxyApi,
    body: Record<string, unknown>,
    policy: KeyPolicy | undefined,
    state: RequestState,
    tags: Tags | undefined,
    request: Request,
  ): readonly Target[] {
    const { router, config } = this.deps;
    const fn = API_FN[api];
    checkShape(api, body);
    // the model asked for, until one answers (the request log)
    if (typeof body.model === "string") state.model = body.model.slice(0, 200);
    checkParameterRanges(api, body);
    refuseSharedObjects(api, body);
    const asked = typeof body.model === "string" ? body.model : undefined;
    const route = asked === undefined ? undefined : routeOf(config, request, asked, tags);
    const routed = route?.model;
    return admitModels(
      policy,
      fn,
      asked,
      (allow) => {
        const planned = router.proxyTargets({ api, body }, tags, routed);
        return allow ? planned.filter((t) => allow(routedModel(t, fn))) : planned;
      },
      noTargets,
      route?.via,
    );
  }

  /** What is forwarded (redacted by the guardrails) and the hold's bound: nothing is held or sent yet. */
  private price(
    api: ProxyApi,
    raw: Record<string, unknown>,
    body: Record<string, unknown>,
    targets: readonly Target[],
    guard: RequestGuard | null,
    request: Request,
    state: RequestState,
    inbound?: Inbound,
  ): Admitted {
    const { config } = this.deps;
    // every /v1 provider is outside the gateway: what it is sent is redacted
    const sent = guard ? guard.forProxy(api, body) : body;
    const forwarded = api === "chat/completions" && body.stream === true ? withStreamUsage(sent) : sent;
    // what the client sent describes this body only if it is the one the edge parsed (a route
    // that translates another API's body hands over a body of its own)
    const asSent = raw === state.parsedBody;
    // Priced per token (docs/pricing.md): an upper bound of what the call can cost, from every
    // byte forwarded, is held before any provider is called. The body's size as it arrived bounds
    // the forwarded one (less a key; plus include_usage), unless the guardrails rewrote it.
    const bytes =
      asSent && sent === body && state.bodyBytes !== undefined
        ? state.bodyBytes + (forwarded === sent ? 0 : STREAM_USAGE_BYTES)
        : Buffer.byteLength(JSON.stringify(forwarded));
    // a body the translation left fields out of is priced on the larger of the two
    const ownBytes = inbound?.untranslated ? Buffer.byteLength(JSON.stringify(inbound.own)) : 0;
    const priced = pricedTargets(config.pricing, api, forwarded, Math.max(bytes, ownBytes), targets);
    const call: ProxyCall = {
      api,
      body: forwarded,
      // the body parsed once and serialised only if changed: unchanged, the client's own bytes go
      sentText: asSent && forwarded === raw && !guard && state.sentBody ? () => sentBytes(state.sentBody as SentBody) : undefined,
      signal: request.signal,
      deadlineMs: state.startedAt + config.limits.requestTimeoutMs,
      requestId: state.requestId,
      trace: state.trace,
      need: priced.estimate,
      native: inbound && this.native(inbound.own, guard, state, inbound.headers),
    };
    const fn = inbound?.fn ?? API_FN[api];
    return { api, fn, body, guard, priced, call, inbound };
  }

  /** An inbound API's own body as a provider that speaks it is sent: redacted, or the client's bytes. */
  private native(
    own: Record<string, unknown>,
    guard: RequestGuard | null,
    state: RequestState,
    headers?: Record<string, string>,
  ): NativeCall {
    if (guard) return { body: guard.forProxyToo(own), headers };
    const sent = own === state.parsedBody && state.sentBody ? (state.sentBody as SentBody) : undefined;
    return { body: own, sentText: sent && (() => sentBytes(sent)), headers };
  }

  private insufficient({ fn, priced: { hold, estimate } }: Admitted): GatewayError {
    return new GatewayError(
      "insufficient_credits",
      `insufficient credits: a call of ${fn} holds up to ${hold} credit${hold === 1 ? "" : "s"} (at most ${estimate.input} input and at most ${estimate.output} output tokens)`,
    );
  }

  /** A reported usage that costs more than the hold: charged the hold, logged (never the body) and counted. */
  private overHold(a: Admitted, state: RequestState, provider: string, credits: number): void {
    const { fn } = a;
    this.deps.metrics.inc("textai_usage_over_hold_total", "/v1 calls whose reported usage cost more than their hold", {
      function: fn,
      provider,
    });
    this.deps.logger.log("warn", "reported usage above the hold", {
      request_id: state.requestId,
      fn,
      provider,
      held: a.priced.hold,
      credits,
    });
  }

  /** Held, opened, then charged on what was delivered (credits/charged-answer.ts `chargedStream`); never cached. */
  private async stream(a: Admitted, request: Request, state: RequestState, { auth }: Edge): Promise<Response> {
    const { ledger, router, metrics, logger } = this.deps;
    const { priced } = a;
    const {
      stream: outcome,
      reservation,
      charge,
    } = await chargedStream({
      ledger,
      mark: (stage, since) => mark(state, stage, since),
      accountId: auth.accountId,
      cost: priced.hold,
      budget: keyBudget(auth),
      insufficient: () => this.insufficient(a),
      produce: () => router.proxyStream(a.call, priced.targets),
      pricing: (outcome) => ({
        price: priced.priceOf(outcome.provider, outcome.deployment),
        fees: priced.feesOf(outcome.provider, outcome.deployment),
        overHold: (credits) => this.overHold(a, state, outcome.provider, credits),
        promptTokens: priced.promptTokens,
        // the client's signal is left out: a client that leaves early pays for what it was sent
        details: { keyId: auth.keyId, fn: a.fn, requestId: state.requestId, provider: outcome.provider, cached: false },
      }),
    });
    markGuarded(state, countRedactions(a.guard, metrics));
    return streamAnswer({
      ...a,
      request,
      state,
      outcome,
      reservation,
      charge,
      metrics,
      logger,
      wire: a.inbound?.wire(priced.promptTokens, outcome.native === true),
    });
  }

  /** A plain answer's call of `chargedAnswer`: cached when it may be (the admission stage's key), held, produced, charged. */
  private plainCall(
    a: Admitted,
    request: Request,
    state: RequestState,
    { auth }: Edge,
  ): ChargedAnswerCall<ProxyOutcome & { notes?: Record<string, unknown> }> {
    const { ledger, cache, router, metrics } = this.deps;
    const { fn, body, guard, priced } = a;
    const first = priced.targets[0];
    // Every forwarded field and the provider and model it goes to: no two different requests share an answer.
    const cacheKey =
      first !== undefined && cacheWanted(this.deps.config, request, cacheable(a.api, body))
        ? cacheKeyOf(
            guard,
            auth.accountId,
            fn,
            first.deployment?.group ?? first.name,
            routedModel(first, fn),
            canonicalJson(a.inbound?.own ?? body),
            // (only when there are any: the keys of calls without them stay what they were)
            ...(a.inbound?.headers ? [canonicalJson(a.inbound.headers)] : []),
          )
        : null;
    return {
      ledger,
      cache,
      mark: (stage, since) => mark(state, stage, since),
      accountId: auth.accountId,
      cost: priced.hold,
      budget: keyBudget(auth),
      cacheKey,
      details: (provider, cached) => ({
        keyId: auth.keyId,
        fn,
        requestId: state.requestId,
        provider,
        cached,
        signal: request.signal,
      }),
      insufficient: () => this.insufficient(a),
      priced: (answer) => {
        const p = priced.charge(answer.provider, answer.json, answer.parsed, answer.deployment);
        state.tokens = p.tokens;
        if (p.reported && p.credits > priced.hold) this.overHold(a, state, answer.provider, p.credits);
        return p;
      },
      produce: async () => {
        const out = await router.proxy(a.call, priced.targets);
        if (!guard) return out;
        // kept with the answer, so a cache hit of it says what was redacted too
        const redacted = countRedactions(guard, metrics);
        const json = guard.restoreJson(out.json);
        return {
          ...out,
          json,
          // pricing reads the answer's usage from its parse: kept when the restore left the answer as it
          // was, or when the answer reports its usage (a restore changes text, never usage); else the
          // restored answer is parsed again (its output tokens are estimated from the restored text)
          parsed: json === out.json || (out.parsed && reportedUsage(out.parsed.value)) ? out.parsed : undefined,
          ...(redacted ? { notes: { guardrails: { redacted } } } : {}),
        };
      },
      fromCache: (hit) => ({ ...hit, attempts: [] }),
    };
  }

  private plainAnswer(
    state: RequestState,
    {
      answer,
      reservation,
      cached,
    }: { answer: ProxyOutcome & { notes?: Record<string, unknown> }; reservation: Reservation; cached: boolean },
    inbound?: Inbound,
  ): Response {
    noteCharge(state, reservation, answer.provider, answer.model, cached);
    markGuarded(state, (answer.notes?.guardrails as { redacted?: GuardCounts } | undefined)?.redacted);
    state.status = 200;
    mark(state, "total", state.startedPerf);
    // a model group's deployment (docs/routing.md); nothing is added to a plain route's answer
    if (answer.deployment) state.headers["x-textai-deployment"] = answer.deployment;
    return new Response(inbound ? inbound.answer(answer, state.tokens) : answer.json, {
      headers: {
        "content-type": "application/json",
        "X-Cache": cached ? "HIT" : "MISS",
        "x-textai-provider": answer.provider,
        "x-textai-credits-deducted": String(reservation.amount),
        "x-textai-credits-remaining": String(reservation.remaining),
        "Server-Timing": serverTiming(state),
        ...state.headers,
      },
    });
  }
}
