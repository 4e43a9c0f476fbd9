import { Type as T } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { canonicalJson, digest } from "../../cache/canonical";
import { chargedAnswer } from "../../credits/charged-answer";
import type { Reservation } from "../../credits/interface";
import type { AppDeps } from "../../deps";
import { clientClosed, errorType, GatewayError, invalidRequest } from "../../errors";
import { API_FN, type ProxyCall, UpstreamClientError } from "../../providers/chat";
import { targetModel } from "../../providers/route-plan";
import type { ProxyApi, UpstreamErrorBody } from "../../providers/types";
import { requestEdge } from "../edge";
import { toGatewayError } from "../errors";
import { mark, type RequestState, serverTiming, stateOf } from "../state";

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

/** A model id from the path; a broken percent-encoding is the client's error, not ours. */
function decodedId(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw invalidRequest("the model id in the path is not valid percent-encoding", "model");
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

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
 * What the cache may answer (README: OpenAI-compatible endpoints): never a stream, never n > 1,
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

/** The error event that ends a stream cut after its first byte (never followed by [DONE]). */
function errorFrame(api: ProxyApi, message: string, code: string): Uint8Array {
  if (api === "responses")
    return enc.encode(`event: error\ndata: ${JSON.stringify({ type: "error", code, message, param: null })}\n\n`);
  return enc.encode(`data: ${JSON.stringify({ error: { message, type: "api_error", param: null, code } })}\n\n`);
}

const Loose = (description: string) => T.Object({}, { additionalProperties: true, description });

/**
 * POST /v1/chat/completions, /v1/embeddings and /v1/responses as a faithful proxy (the body goes
 * to the provider as sent, only `model` resolved), with the keys, credits (flat per request),
 * limits, cache and fallback of the function endpoints; GET /v1/models and /v1/models/{id}.
 */
export function openAiCompatRoutes(deps: AppDeps) {
  const { config, ledger, cache, router, providers, metrics, logger } = deps;

  const forward = async (api: ProxyApi, request: Request, state: RequestState): Promise<Response> => {
    const fn = API_FN[api];
    const { auth, body: raw } = await requestEdge(deps, request, state, { fn, rateClass: "standard", body: true });
    const t = performance.now();
    const { api_key: _key, ...body } = raw;
    checkShape(api, body);
    const targets = router.proxyTargets({ api, body });
    mark(state, "validate", t);
    const price = config.costs[fn] ?? 1;
    const insufficient = () => new GatewayError("insufficient_credits", `insufficient credits: a call of ${fn} costs ${price}`);
    const call: ProxyCall = {
      api,
      body,
      signal: request.signal,
      deadlineMs: state.startedAt + config.limits.requestTimeoutMs,
      requestId: state.requestId,
    };
    const details = (provider: string, cached: boolean) => ({
      keyId: auth.keyId,
      fn,
      requestId: state.requestId,
      provider,
      cached,
      signal: request.signal,
    });
    const charged = (r: Reservation, provider: string, cached: boolean) => {
      state.provider = provider;
      state.credits = r.amount;
      state.cached = cached;
    };

    if (body.stream === true) {
      const reservation = await ledger.reserve(auth.accountId, price);
      if (!reservation) throw insufficient();
      let outcome: Awaited<ReturnType<typeof router.proxyStream>>;
      try {
        outcome = await router.proxyStream(call, targets);
      } catch (err) {
        ledger.release(reservation);
        throw err;
      }
      state.provider = outcome.provider;
      const events = outcome.events[Symbol.asyncIterator]();
      // open -> settling -> charged, or -> released (cut, failed or abandoned): the hold ends exactly once
      let phase: "open" | "settling" | "charged" | "released" = "open";
      const release = () => {
        if (phase === "open" || phase === "settling") ledger.release(reservation);
        phase = "released";
      };
      // The access log line was written when the stream began (status 200); how it ended is told here.
      const ended = (how: "completed" | "cut" | "client_closed") => {
        metrics.inc("textai_streams_total", "Streamed answers by function and how they ended", { function: fn, outcome: how });
        if (how !== "completed")
          logger.log(how === "cut" ? "warn" : "info", "stream ended early", {
            request_id: state.requestId,
            fn,
            provider: outcome.provider,
            status: how === "cut" ? 502 : 499,
          });
      };
      const sse = new ReadableStream<Uint8Array>({
        async pull(controller) {
          try {
            const next = await events.next();
            if (!next.done) {
              controller.enqueue(frame(api, next.value));
              return;
            }
            phase = "settling";
            await ledger.settle(reservation, details(outcome.provider, false));
            phase = "charged";
            charged(reservation, outcome.provider, false);
            ended("completed");
            if (api === "chat/completions") controller.enqueue(DONE);
            controller.close();
          } catch (err) {
            // charged already (the client left before [DONE]) or abandoned by the client: nothing to tell
            if (phase === "charged" || phase === "released") return;
            // cut after the first byte: an error event, never a fake [DONE]; nothing charged
            release();
            ended("cut");
            const e = toGatewayError(
              "UNKNOWN",
              err instanceof GatewayError
                ? err
                : request.signal.aborted
                  ? clientClosed()
                  : new GatewayError("provider_error", `upstream stream failed: ${(err as Error).message}`),
            );
            state.errorCode = e.code;
            try {
              controller.enqueue(errorFrame(api, e.message, e.code));
              controller.close();
            } catch {
              // the client is gone already
            }
          }
        },
        async cancel() {
          if (phase !== "open") return;
          release();
          state.status = 499;
          state.errorCode = "client_closed";
          ended("client_closed");
          await events.return?.();
        },
      });
      state.status = 200;
      return new Response(sse, {
        headers: {
          "content-type": "text/event-stream; charset=utf-8",
          "cache-control": "no-cache",
          "x-textai-provider": outcome.provider,
          ...state.headers,
        },
      });
    }

    const first = targets[0];
    const useCache =
      config.cache.enabled &&
      first !== undefined &&
      cacheable(api, body) &&
      !/no-cache|no-store/i.test(request.headers.get("cache-control") ?? "");
    // Every forwarded field and the provider and model it goes to: no two different requests share an answer.
    const cacheKey =
      useCache && first ? digest(auth.accountId, fn, first.name, targetModel(first, fn), canonicalJson(body)) : null;
    const { answer, reservation, cached } = await chargedAnswer({
      ledger,
      cache,
      mark: (stage, since) => mark(state, stage, since),
      accountId: auth.accountId,
      cost: price,
      cacheKey,
      details,
      insufficient,
      produce: () => router.proxy(call, targets),
      fromCache: (hit) => ({ ...hit, attempts: [] }),
    });
    charged(reservation, answer.provider, cached);
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

  /** Every model of every provider that can answer OpenAI-style calls, as `provider/model` and as the plain id. */
  const modelList = () => {
    const out: { id: string; object: "model"; created: number; owned_by: string }[] = [];
    const plain = new Set<string>();
    for (const p of providers.values()) {
      if (p.type === "local") continue;
      for (const m of p.listModels?.() ?? []) {
        out.push({ id: `${p.name}/${m}`, object: "model", created: 0, owned_by: p.name });
        if (!plain.has(m)) out.push({ id: m, object: "model", created: 0, owned_by: p.name });
        plain.add(m);
      }
    }
    return out;
  };

  const handler =
    (api: ProxyApi) =>
    async ({ request }: { request: Request }) => {
      const state = stateOf(request);
      try {
        return await forward(api, request, state);
      } catch (err) {
        return errorAnswer(request, state, err);
      }
    };
  const post = (summary: string, description: string) => ({
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
  const listing = async (request: Request, rawId?: string): Promise<Response> => {
    const state = stateOf(request);
    try {
      // the same edge as every authenticated route: authentication, then the key's rate limit
      await requestEdge(deps, request, state, { fn: "models", rateClass: "standard", body: false });
      const id = rawId === undefined ? undefined : decodedId(rawId);
      const all = modelList();
      const body = id === undefined ? { object: "list", data: all } : all.find((m) => m.id === id);
      if (!body)
        throw new GatewayError("not_found", `model "${id}" is not served by any configured provider`, { param: "model" });
      state.status = 200;
      return new Response(JSON.stringify(body), { headers: { "content-type": "application/json", ...state.headers } });
    } catch (err) {
      return errorAnswer(request, state, err);
    }
  };

  return new Elysia({ name: "openai-compat" })
    .post(
      "/v1/chat/completions",
      handler("chat/completions"),
      post(
        "OpenAI-compatible chat completions (plain and stream: true), forwarded as sent; 1 credit per request",
        "An OpenAI Chat Completions request: every field is forwarded to the provider as sent",
      ),
    )
    .post(
      "/v1/embeddings",
      handler("embeddings"),
      post("OpenAI-compatible embeddings, forwarded as sent; 1 credit per request", "An OpenAI Embeddings request"),
    )
    .post(
      "/v1/responses",
      handler("responses"),
      post(
        "OpenAI Responses API, passed through to providers that implement it; 1 credit per request",
        "An OpenAI Responses request: forwarded as sent to a provider with the responses feature",
      ),
    )
    .get("/v1/models", ({ request }) => listing(request), {
      detail: { tags: ["Conversation"], summary: "Models of the configured providers, as provider/model and plain ids" },
    })
    .get("/v1/models/*", ({ request, params }) => listing(request, params["*"]), {
      detail: { tags: ["Conversation"], summary: "One model" },
    });
}
