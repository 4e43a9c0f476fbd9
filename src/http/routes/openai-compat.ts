import { Type as T } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { AppDeps } from "../../app";
import { toGatewayError } from "../../app";
import { authenticate } from "../../auth/authenticate";
import { canonicalJson, digest } from "../../cache/canonical";
import { chargedAnswer } from "../../credits/charged-answer";
import type { Reservation } from "../../credits/ledger";
import { GatewayError } from "../../errors";
import { validateAgainst } from "../../functions/validate";
import type { ChatStreamOutcome } from "../../providers/chat";
import type { ChatMessage } from "../../providers/types";
import { rateLimitHeaders } from "../../ratelimit/limiter";
import { readJsonBody } from "../body";
import { mark, type RequestState, serverTiming, stateOf } from "../state";

export const CHAT_COMPLETIONS = "chat-completions";

const ContentPart = T.Object({ type: T.String(), text: T.Optional(T.String()) });
const ChatCompletionRequest = T.Object({
  model: T.Optional(T.String({ maxLength: 200 })),
  messages: T.Array(
    T.Object({
      role: T.Union([T.Literal("system"), T.Literal("developer"), T.Literal("user"), T.Literal("assistant")]),
      content: T.Union([T.String(), T.Array(ContentPart), T.Null()]),
      name: T.Optional(T.String()),
    }),
    { minItems: 1 },
  ),
  stream: T.Optional(T.Boolean()),
  temperature: T.Optional(T.Number({ minimum: 0, maximum: 2 })),
  max_tokens: T.Optional(T.Integer({ minimum: 1 })),
  max_completion_tokens: T.Optional(T.Integer({ minimum: 1 })),
  user: T.Optional(T.String()),
});
type ChatCompletionBody = import("@sinclair/typebox").Static<typeof ChatCompletionRequest>;

/** OpenAI's error shape, so OpenAI SDK clients raise the matching exception classes. */
function openAiError(state: RequestState, err: GatewayError): Response {
  state.status = err.status;
  state.errorCode = err.code;
  const type =
    err.status === 401
      ? "invalid_request_error"
      : err.status === 429
        ? "rate_limit_exceeded"
        : err.status === 402
          ? "insufficient_quota"
          : err.status >= 500
            ? "api_error"
            : "invalid_request_error";
  const headers: Record<string, string> = { "content-type": "application/json", ...state.headers, ...err.headers };
  if (err.code === "rate_limited" && !headers["Retry-After"]) headers["Retry-After"] = "1";
  return new Response(JSON.stringify({ error: { message: err.message, type, param: err.param, code: err.code } }), {
    status: err.status,
    headers,
  });
}

const toMessages = (body: ChatCompletionBody): ChatMessage[] =>
  body.messages.map((m) => ({
    role: m.role === "developer" ? "system" : m.role,
    content: typeof m.content === "string" ? m.content : (m.content ?? []).map((p) => p.text ?? "").join(""),
  }));

/**
 * POST /v1/chat/completions and GET /v1/models: the same keys, credits (flat per request),
 * limits, cache (non-streaming) and fallback as the function endpoints.
 */
export function openAiCompatRoutes(deps: AppDeps) {
  const { config, keys, limiter, ledger, cache, router } = deps;
  const cost = () => config.costs[CHAT_COMPLETIONS] ?? 1;

  const completions = async (request: Request, state: RequestState): Promise<Response> => {
    state.fn = CHAT_COMPLETIONS;
    let t = performance.now();
    const raw = await readJsonBody(request, config.limits);
    t = mark(state, "body", t);
    const auth = authenticate(keys, request.headers, raw);
    state.auth = auth;
    t = mark(state, "auth", t);
    const d = limiter.check(auth.keyId, auth.plan, CHAT_COMPLETIONS, "standard");
    t = mark(state, "ratelimit", t);
    Object.assign(state.headers, rateLimitHeaders(d));
    if (!d.allowed) throw new GatewayError("rate_limited", `rate limit of ${d.limit} requests per minute exceeded`);
    const body = validateAgainst<ChatCompletionBody>(ChatCompletionRequest, raw, config.limits.maxTextChars);
    const messages = toMessages(body);
    mark(state, "validate", t);
    const price = cost();
    const insufficient = () => new GatewayError("insufficient_credits", `insufficient credits: a chat completion costs ${price}`);
    const opts = {
      model: body.model || undefined,
      signal: request.signal,
      deadlineMs: state.startedAt + config.limits.requestTimeoutMs,
      temperature: body.temperature,
      maxTokens: body.max_completion_tokens ?? body.max_tokens,
    };
    const details = (provider: string, cached: boolean) => ({
      keyId: auth.keyId,
      fn: CHAT_COMPLETIONS,
      requestId: state.requestId,
      provider,
      cached,
    });
    const charged = (r: Reservation, provider: string, cached: boolean) => {
      state.provider = provider;
      state.credits = r.amount;
      state.cached = cached;
    };
    const id = `chatcmpl-${state.requestId.slice(4)}`;
    const created = Math.floor(Date.now() / 1000);

    if (body.stream) {
      const reservation = ledger.reserve(auth.accountId, price);
      if (!reservation) throw insufficient();
      let outcome: ChatStreamOutcome;
      try {
        outcome = await router.chat(messages, { ...opts, stream: true });
      } catch (err) {
        ledger.release(reservation);
        throw err;
      }
      state.provider = outcome.provider;
      const enc = new TextEncoder();
      const frame = (delta: Record<string, unknown>, finish: string | null) =>
        enc.encode(
          `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model: outcome.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
        );
      const sse = new ReadableStream<Uint8Array>({
        async start(controller) {
          let finish: string | null = null;
          try {
            controller.enqueue(frame({ role: "assistant", content: "" }, null));
            for await (const chunk of outcome.stream) {
              if (chunk.delta) controller.enqueue(frame({ content: chunk.delta }, null));
              if (chunk.finishReason) finish = chunk.finishReason;
            }
            controller.enqueue(frame({}, finish ?? "stop"));
            await ledger.settle(reservation, details(outcome.provider, false));
            charged(reservation, outcome.provider, false);
            controller.enqueue(enc.encode("data: [DONE]\n\n"));
          } catch (err) {
            // cut upstream after the first byte: an error event, never a fake [DONE]; nothing charged
            ledger.release(reservation);
            const e = toGatewayError(
              "UNKNOWN",
              err instanceof GatewayError
                ? err
                : new GatewayError("provider_error", `upstream stream failed: ${(err as Error).message}`),
            );
            state.errorCode = e.code;
            controller.enqueue(
              enc.encode(
                `data: ${JSON.stringify({ error: { message: e.message, type: "api_error", param: null, code: e.code } })}\n\n`,
              ),
            );
          }
          controller.close();
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

    const useCache = config.cache.enabled && !/no-cache|no-store/i.test(request.headers.get("cache-control") ?? "");
    const { answer, reservation, cached } = await chargedAnswer({
      ledger,
      cache,
      state,
      accountId: auth.accountId,
      cost: price,
      cacheKey: useCache ? digest(auth.accountId, CHAT_COMPLETIONS, canonicalJson({ ...body, stream: false })) : null,
      details,
      insufficient,
      produce: async () => {
        const o = await router.chat(messages, { ...opts, stream: false });
        return {
          json: JSON.stringify({ text: o.text, usage: o.usage, finish: o.finishReason ?? "stop" }),
          provider: o.provider,
          model: o.model,
        };
      },
      fromCache: (hit) => hit,
    });
    charged(reservation, answer.provider, cached);
    const a = JSON.parse(answer.json) as {
      text: string;
      usage?: { prompt_tokens: number; completion_tokens: number };
      finish: string;
    };
    const usage = a.usage ?? { prompt_tokens: 0, completion_tokens: 0 };
    state.status = 200;
    mark(state, "total", state.startedPerf);
    return new Response(
      JSON.stringify({
        id,
        object: "chat.completion",
        created,
        model: answer.model,
        choices: [{ index: 0, message: { role: "assistant", content: a.text }, finish_reason: a.finish }],
        usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
      }),
      {
        headers: {
          "content-type": "application/json",
          "X-Cache": cached ? "HIT" : "MISS",
          "x-textai-provider": answer.provider,
          "x-textai-credits-deducted": String(reservation.amount),
          "x-textai-credits-remaining": String(reservation.remaining),
          "Server-Timing": serverTiming(state),
          ...state.headers,
        },
      },
    );
  };

  return new Elysia({ name: "openai-compat" })
    .post(
      "/v1/chat/completions",
      async ({ request }) => {
        const state = stateOf(request);
        try {
          return await completions(request, state);
        } catch (err) {
          return openAiError(state, toGatewayError("UNKNOWN", err));
        }
      },
      {
        parse: "none",
        detail: {
          tags: ["Conversation"],
          summary: "OpenAI-compatible chat completions (plain and stream: true); 1 credit per request",
          requestBody: {
            required: true,
            content: { "application/json": { schema: ChatCompletionRequest as unknown as Record<string, never> } },
          },
        },
      },
    )
    .get(
      "/v1/models",
      async ({ request }) => {
        const state = stateOf(request);
        state.fn = "models";
        try {
          state.auth = authenticate(keys, request.headers, null);
          state.status = 200;
          const created = Math.floor(Date.now() / 1000);
          return new Response(
            JSON.stringify({
              object: "list",
              data: router.models().map((id) => ({ id, object: "model", created, owned_by: id.split("/")[0] })),
            }),
            {
              headers: { "content-type": "application/json", ...state.headers },
            },
          );
        } catch (err) {
          return openAiError(state, toGatewayError("UNKNOWN", err));
        }
      },
      { detail: { tags: ["Conversation"], summary: "Models of the configured providers, as provider/model" } },
    );
}
