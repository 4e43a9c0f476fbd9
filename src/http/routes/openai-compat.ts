import { Type as T } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { checkModel, keyBudget, modelFilter, noAllowedModel } from "../../auth/policy";
import { canonicalJson, digest } from "../../cache/canonical";
import { chargedAnswer } from "../../credits/charged-answer";
import type { Reservation } from "../../credits/interface";
import { pricedTargets, reportedUsage } from "../../credits/pricing";
import { StreamedCharge } from "../../credits/streamed-charge";
import { errorType, GatewayError, invalidRequest } from "../../errors";
import { API_FN, type ProxyCall, type ProxyOutcome, UpstreamClientError } from "../../providers/chat";
import { type GuardCounts, proxyTexts, StreamRestorer } from "../../providers/guardrails";
import { targetModel } from "../../providers/route-plan";
import { refusePrivateUrls, refuseSharedObjects, remoteUrls } from "../../providers/shared-account";
import { isObject, ProviderError, type ProxyApi, type UpstreamErrorBody } from "../../providers/types";
import { type SentBody, sentBytes } from "../body";
import type { AppDeps } from "../deps";
import type { Edge } from "../edge";
import { edgePlugin } from "../edge-plugin";
import { toGatewayError } from "../errors";
import { countRedactions, guardFor, inspectOrRefuse, markGuarded } from "../guardrails";
import { checkParameterRanges } from "../openai-params";
import { endTrace, mark, type RequestState, serverTiming } from "../state";

export const CHAT_COMPLETIONS = API_FN["chat/completions"];

/** OpenAI's error shape, so OpenAI SDK clients raise the exception class of the status. */
function openAiError(state: RequestState, status: number, error: UpstreamErrorBody, headers: Record<string, string> = {}) {
  state.status = status;
  state.errorCode = error.code ?? undefined;
  return new Response(JSON.stringify({ error }), {
    status,
    headers: { "content-type": "application/json", ...state.headers, ...headers },
  });
}

function errorAnswer(request: Request, state: RequestState, err: unknown): Response {
  // The client went away: nobody reads the answer; the access log and metrics say 499.
  if (request.signal.aborted) {
    state.status = 499;
    state.errorCode = "client_closed";
    return new Response(null, { status: 499, headers: state.headers });
  }
  if (err instanceof UpstreamClientError) {
    state.provider = err.provider;
    return openAiError(state, err.status, err.error);
  }
  const e = toGatewayError("UNKNOWN", err);
  const headers = { ...e.headers };
  if (e.code === "rate_limited" && !headers["Retry-After"] && !state.headers["Retry-After"]) headers["Retry-After"] = "1";
  return openAiError(state, e.status, { message: e.message, type: errorType(e.code), param: e.param, code: e.code }, headers);
}

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

const enc = new TextEncoder();
const DONE = enc.encode("data: [DONE]\n\n");

/** One SSE frame per upstream event; the Responses API names its events. */
function frame(api: ProxyApi, event: unknown): Uint8Array {
  const type = api === "responses" && isObject(event) && typeof event.type === "string" ? event.type : null;
  return enc.encode(`${type ? `event: ${type}\n` : ""}data: ${JSON.stringify(event)}\n\n`);
}

/**
 * The error event that ends a stream cut after its first byte (never followed by [DONE]); a
 * Responses stream numbers it after the last event sent (ResponseErrorEvent requires it).
 */
function errorFrame(api: ProxyApi, message: string, code: string, sequenceNumber: number): Uint8Array {
  if (api === "responses") {
    const event = { type: "error", code, message, param: null, sequence_number: sequenceNumber };
    return enc.encode(`event: error\ndata: ${JSON.stringify(event)}\n\n`);
  }
  return enc.encode(`data: ${JSON.stringify({ error: { message, type: "api_error", param: null, code } })}\n\n`);
}

/** Bytes `withStreamUsage` may add to a body: `,"stream_options":{"include_usage":true}` and then some. */
const STREAM_USAGE_BYTES = 64;

/** Whether the client asked for the usage chunk of a chat stream. */
const asksUsage = (body: Record<string, unknown>) => isObject(body.stream_options) && body.stream_options.include_usage === true;

/**
 * A chat stream always asks the upstream for its usage chunk: the call is charged on it
 * (docs/pricing.md). A client that did not ask for it does not get it (`withoutUsage`).
 */
function withStreamUsage(body: Record<string, unknown>): Record<string, unknown> {
  if (asksUsage(body)) return body;
  return { ...body, stream_options: { ...(isObject(body.stream_options) ? body.stream_options : {}), include_usage: true } };
}

/** A chat chunk as the client asked for it without usage: no `usage` field, no usage-only chunk (null: drop it). */
function withoutUsage(event: unknown): unknown {
  if (!isObject(event) || !("usage" in event)) return event;
  const { usage: _usage, ...rest } = event;
  return Array.isArray(rest.choices) && rest.choices.length === 0 ? null : rest;
}

function withoutApiKey(raw: Record<string, unknown>): Record<string, unknown> {
  const { api_key: _key, ...body } = raw;
  return body;
}

const Loose = (description: string) => T.Object({}, { additionalProperties: true, description });

/**
 * POST /v1/chat/completions, /v1/embeddings and /v1/responses as a faithful proxy (the body goes
 * to the provider as sent, only `model` resolved), with the keys, credits (per token: docs/pricing.md),
 * limits, cache and fallback of the function endpoints; GET /v1/models and /v1/models/{id}.
 */
export function openAiCompatRoutes(deps: AppDeps) {
  const { config, ledger, cache, router, providers, metrics, logger } = deps;

  const forward = async (api: ProxyApi, request: Request, state: RequestState, edge: Edge): Promise<Response> => {
    const fn = API_FN[api];
    const { auth, body: raw } = edge;
    const t = performance.now();
    // a key sent in the body is not forwarded; the usual body, without one, is used as parsed (no copy)
    const body = "api_key" in raw ? withoutApiKey(raw) : raw;
    checkShape(api, body);
    // the model asked for, until one answers (the request log)
    if (typeof body.model === "string") state.model = body.model.slice(0, 200);
    checkParameterRanges(api, body);
    refuseSharedObjects(api, body);
    // the key's allowed_models: the model asked for, then the models the route may pick
    if (typeof body.model === "string" && body.model) checkModel(auth.policy, body.model);
    const planned = router.proxyTargets({ api, body });
    const allowModel = modelFilter(auth.policy);
    const targets = allowModel ? planned.filter((t) => allowModel(targetModel(t, fn))) : planned;
    if (targets.length === 0 && planned.length > 0) throw noAllowedModel(auth.policy, fn);
    await refusePrivateUrls(remoteUrls(api, body));
    // guardrails (docs/guardrails.md): a blocked kind ends the request here, uncharged and sent nowhere
    const guard = guardFor(config, auth, auth.policy?.guardrails);
    if (guard) inspectOrRefuse(guard, proxyTexts(api, body), state, metrics);
    mark(state, "validate", t);
    // every /v1 provider is outside the gateway: what it is sent is redacted
    const sent = guard ? guard.forProxy(api, body) : body;
    const forwarded = api === "chat/completions" && body.stream === true ? withStreamUsage(sent) : sent;
    // Priced per token (docs/pricing.md): an upper bound of what the call can cost, from every
    // byte forwarded, is held before any provider is called. The body's size as it arrived bounds
    // the forwarded one (less a key; plus include_usage), unless the guardrails rewrote it.
    const bytes =
      sent === body && state.bodyBytes !== undefined
        ? state.bodyBytes + (forwarded === sent ? 0 : STREAM_USAGE_BYTES)
        : Buffer.byteLength(JSON.stringify(forwarded));
    const priced = pricedTargets(config.pricing, api, forwarded, bytes, targets);
    const { hold, estimate } = priced;
    const insufficient = () =>
      new GatewayError(
        "insufficient_credits",
        `insufficient credits: a call of ${fn} holds up to ${hold} credit${hold === 1 ? "" : "s"} (at most ${estimate.input} input and at most ${estimate.output} output tokens)`,
      );
    /** A reported usage that costs more than the hold: charged the hold, logged (never the body) and counted. */
    const overHold = (provider: string, credits: number) => {
      metrics.inc("textai_usage_over_hold_total", "/v1 calls whose reported usage cost more than their hold", {
        function: fn,
        provider,
      });
      logger.log("warn", "reported usage above the hold", { request_id: state.requestId, fn, provider, held: hold, credits });
    };
    const call: ProxyCall = {
      api,
      body: forwarded,
      // the body parsed once and serialised only if changed: unchanged, the client's own bytes go
      sentText: forwarded === raw && !guard && state.sentBody ? () => sentBytes(state.sentBody as SentBody) : undefined,
      signal: request.signal,
      deadlineMs: state.startedAt + config.limits.requestTimeoutMs,
      requestId: state.requestId,
      trace: state.trace,
    };
    const details = (provider: string, cached: boolean) => ({
      keyId: auth.keyId,
      fn,
      requestId: state.requestId,
      provider,
      cached,
      signal: request.signal,
    });
    const charged = (r: Reservation, provider: string, model: string, cached: boolean) => {
      state.provider = provider;
      state.model = model;
      state.credits = r.amount;
      state.cached = cached;
    };

    if (body.stream === true) {
      const held = performance.now();
      const reservation = await ledger.reserve(auth.accountId, hold, keyBudget(auth));
      mark(state, "credits", held);
      if (!reservation) throw insufficient();
      let outcome: Awaited<ReturnType<typeof router.proxyStream>>;
      try {
        outcome = await router.proxyStream(call, priced.targets);
      } catch (err) {
        ledger.release(reservation);
        throw err;
      }
      state.provider = outcome.provider;
      state.model = outcome.model;
      markGuarded(state, countRedactions(guard, metrics));
      const restorer = guard?.restores ? new StreamRestorer(guard, api, body) : null;
      /** events to send before the next upstream one (a restorer may turn one event into two) */
      const queued: unknown[] = [];
      // the request log records a stream once it has ended, with its outcome and charge
      let streamDone = () => {};
      state.streamEnded = new Promise<void>((resolve) => {
        streamDone = resolve;
      });
      const events = outcome.events[Symbol.asyncIterator]();
      // the client's signal is left out: a client that leaves early pays for what it was sent
      const { signal: _signal, ...rowDetails } = details(outcome.provider, false);
      const charge = new StreamedCharge({
        ledger,
        reservation,
        price: priced.priceOf(outcome.provider),
        fees: priced.feesOf(outcome.provider),
        overHold: (credits) => overHold(outcome.provider, credits),
        promptTokens: priced.promptTokens,
        details: rowDetails,
      });
      const strip = api === "chat/completions" && !asksUsage(body);
      // The access log line was written when the stream began (status 200); how it ended is told here.
      const ended = (how: "completed" | "cut" | "client_closed") => {
        if (how === "cut") state.status = 502;
        streamDone();
        metrics.inc("textai_streams_total", "Streamed answers by function and how they ended", { function: fn, outcome: how });
        if (how !== "completed")
          logger.log(how === "cut" ? "warn" : "info", "stream ended early", {
            request_id: state.requestId,
            fn,
            provider: outcome.provider,
            status: how === "cut" ? 502 : 499,
            credits: how === "client_closed" ? reservation.amount : 0,
          });
      };
      /** The client left before the end: the upstream is closed, what it was sent is charged. */
      const abandoned = async () => {
        if (!charge.open) return;
        state.status = 499;
        state.errorCode = "client_closed";
        const closing = Promise.resolve(events.return?.()).catch(() => {});
        try {
          const t = performance.now();
          await charge.charge();
          mark(state, "settle", t);
          charged(reservation, outcome.provider, outcome.model, false);
          state.tokens = charge.tokens().usage;
        } catch (err) {
          logger.log("error", "charge of an abandoned stream failed", {
            request_id: state.requestId,
            fn,
            error: (err as Error).message,
          });
        }
        ended("client_closed");
        endTrace(state, request);
        await closing;
      };
      let lastSequence = -1;
      const sse = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const send = (out: unknown) => {
            const seq = isObject(out) ? out.sequence_number : undefined;
            if (typeof seq === "number") lastSequence = seq;
            controller.enqueue(frame(api, out));
          };
          try {
            if (queued.length > 0) return send(queued.shift());
            let next = await events.next();
            // an event the client did not ask for (the usage chunk) is skipped: pull must enqueue or close
            for (; !next.done; next = await events.next()) {
              charge.saw(next.value);
              const out = strip ? withoutUsage(next.value) : next.value;
              if (out === null) continue;
              // restore_pii: the client's values back, a placeholder cut between chunks included
              queued.push(...(restorer ? restorer.push(out) : [out]));
              if (queued.length > 0) return send(queued.shift());
            }
            if (restorer) queued.push(...restorer.end());
            if (queued.length > 0) return send(queued.shift());
            if (!charge.open) return;
            const t = performance.now();
            await charge.charge();
            mark(state, "settle", t);
            charged(reservation, outcome.provider, outcome.model, false);
            state.tokens = charge.tokens().usage;
            ended("completed");
            endTrace(state, request);
            if (api === "chat/completions") controller.enqueue(DONE);
            controller.close();
          } catch (err) {
            // the client left (Bun aborts its signal, which aborts the upstream): charged for what it was sent
            if (request.signal.aborted) return abandoned();
            // the charge failed, or the stream was cut after the first byte: an error event, never a fake [DONE]
            if (charge.open) {
              charge.release();
              ended("cut");
            }
            const e = toGatewayError(
              "UNKNOWN",
              err instanceof GatewayError
                ? err
                : new GatewayError(
                    "provider_error",
                    `upstream stream failed${err instanceof ProviderError ? ` (${err.code})` : ""}`,
                  ),
            );
            state.errorCode = e.code;
            endTrace(state, request);
            try {
              controller.enqueue(errorFrame(api, e.message, e.code, lastSequence + 1));
              controller.close();
            } catch {
              // the client is gone already
            }
            streamDone();
          }
        },
        cancel: abandoned,
      });
      state.status = 200;
      state.trace?.streaming();
      return new Response(sse, {
        headers: {
          "content-type": "text/event-stream; charset=utf-8",
          "cache-control": "no-cache",
          "x-textai-provider": outcome.provider,
          ...state.headers,
        },
      });
    }

    const first = priced.targets[0];
    const useCache =
      config.cache.enabled &&
      first !== undefined &&
      cacheable(api, body) &&
      !/no-cache|no-store/i.test(request.headers.get("cache-control") ?? "");
    // Every forwarded field and the provider and model it goes to: no two different requests share an answer.
    const cacheKey =
      useCache && first
        ? digest(
            auth.accountId,
            fn,
            first.name,
            targetModel(first, fn),
            canonicalJson(body),
            // a guarded answer is the answer of its guardrails (restored or not): never shared with other settings
            ...(guard ? [JSON.stringify(guard.settings)] : []),
          )
        : null;
    const { answer, reservation, cached } = await chargedAnswer({
      ledger,
      cache,
      mark: (stage, since) => mark(state, stage, since),
      accountId: auth.accountId,
      cost: hold,
      budget: keyBudget(auth),
      cacheKey,
      details,
      insufficient,
      priced: (answer) => {
        const p = priced.charge(answer.provider, answer.json, answer.parsed);
        state.tokens = p.tokens;
        if (p.reported && p.credits > hold) overHold(answer.provider, p.credits);
        return p;
      },
      produce: async (): Promise<ProxyOutcome & { notes?: Record<string, unknown> }> => {
        const out = await router.proxy(call, priced.targets);
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
    });
    charged(reservation, answer.provider, answer.model, cached);
    markGuarded(state, (answer.notes?.guardrails as { redacted?: GuardCounts } | undefined)?.redacted);
    state.status = 200;
    mark(state, "total", state.startedPerf);
    return new Response(answer.json, {
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
  };

  // `created` of the models the gateway lists: when it loaded its config (an upstream's own date is not known)
  const loadedAt = Math.floor(Date.now() / 1000);
  const PROXY_APIS = Object.keys(API_FN) as ProxyApi[];
  const modelEntry = (id: string, owner: string) => ({ id, object: "model" as const, created: loadedAt, owned_by: owner });
  /** The providers of the /v1 routes, in route order. */
  const proxyProviders = () => [...new Set(PROXY_APIS.flatMap((api) => router.proxyRoute(api)))];

  /** The models the /v1 routes' providers name, as `provider/model` and as the plain id (docs/openai-compatible.md). */
  const modelList = () => {
    const out: ReturnType<typeof modelEntry>[] = [];
    const plain = new Set<string>();
    for (const name of proxyProviders()) {
      for (const m of providers.get(name)?.listModels?.() ?? []) {
        out.push(modelEntry(`${name}/${m}`, name));
        if (!plain.has(m)) out.push(modelEntry(m, name));
        plain.add(m);
      }
    }
    return out;
  };

  /** One model: listed, or matched by a provider's pattern and in that provider's own catalog (router.modelOwner). */
  const modelById = async (id: string) => {
    const listed = modelList().find((m) => m.id === id);
    if (listed) return listed;
    if (!PROXY_APIS.some((api) => router.servesModel(api, id))) return undefined;
    const owner = await router.modelOwner(id);
    return owner === undefined ? undefined : modelEntry(id, owner);
  };

  const handler =
    (api: ProxyApi) =>
    async ({
      request,
      state,
      auth,
      payload,
    }: { request: Request; state: RequestState } & Pick<Edge, "auth"> & {
        payload: Edge["body"];
      }) => {
      try {
        return await forward(api, request, state, { auth, body: payload });
      } catch (err) {
        return errorAnswer(request, state, err);
      }
    };
  const post = (api: ProxyApi, summary: string, description: string) => ({
    key: { fn: API_FN[api], body: true },
    parse: "none" as const,
    detail: {
      tags: ["Conversation"],
      summary,
      requestBody: {
        required: true,
        content: { "application/json": { schema: Loose(description) as unknown as Record<string, never> } },
      },
    },
  });
  // the same edge as every authenticated route (the edge plugin): authentication, then the key's rate limit
  const listing = async (state: RequestState, request: Request, rawId?: string): Promise<Response> => {
    try {
      const id = rawId === undefined ? undefined : decodeURIComponent(rawId); // the edge refused a path that does not decode;
      const body = id === undefined ? { object: "list", data: modelList() } : await modelById(id);
      // no provider at all: 503 saying what to configure; else 404 naming GET /v1/models and model_patterns
      if (!body) throw router.unservedModel(id ?? "", PROXY_APIS);
      state.status = 200;
      return new Response(JSON.stringify(body), { headers: { "content-type": "application/json", ...state.headers } });
    } catch (err) {
      return errorAnswer(request, state, err);
    }
  };

  const MODELS = { fn: "models", body: false };
  return new Elysia({ name: "openai-compat" })
    .use(edgePlugin(deps))
    .post(
      "/v1/chat/completions",
      handler("chat/completions"),
      post(
        "chat/completions",
        "OpenAI-compatible chat completions (plain and stream: true), forwarded as sent; priced per token (docs/pricing.md)",
        "An OpenAI Chat Completions request: every field is forwarded to the provider as sent",
      ),
    )
    .post(
      "/v1/embeddings",
      handler("embeddings"),
      post(
        "embeddings",
        "OpenAI-compatible embeddings, forwarded as sent; priced per token (docs/pricing.md)",
        "An OpenAI Embeddings request",
      ),
    )
    .post(
      "/v1/responses",
      handler("responses"),
      post(
        "responses",
        "OpenAI Responses API, passed through to providers that implement it; priced per token (docs/pricing.md)",
        "An OpenAI Responses request: forwarded as sent to a provider with the responses feature",
      ),
    )
    .get("/v1/models", ({ state, request }) => listing(state, request), {
      key: MODELS,
      detail: { tags: ["Conversation"], summary: "Models of the configured providers, as provider/model and plain ids" },
    })
    .get("/v1/models/*", ({ state, request, params }) => listing(state, request, params["*"]), {
      key: MODELS,
      detail: { tags: ["Conversation"], summary: "One model" },
    });
}
