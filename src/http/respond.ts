import { errorType, type GatewayError } from "../errors";
import type { UpstreamClientError } from "../providers/chat";
import { errorBody, successBody } from "./envelope";
import { messagesErrorBody, messagesErrorType, messagesErrorTypeOf } from "./messages-errors";
import type { RequestState } from "./state";

export function jsonResponse(
  state: RequestState,
  status: number,
  body: string,
  extraHeaders: Record<string, string> = {},
): Response {
  state.status = status;
  return new Response(body, { status, headers: { "content-type": "application/json", ...state.headers, ...extraHeaders } });
}

/** A successful non-function answer (resources, account, admin): nothing is charged. */
export function ok(state: RequestState, message: string, result: unknown, status = 200): Response {
  const body = successBody(
    state.requestId,
    message,
    result,
    {
      credits_deducted: state.credits ?? 0,
      ...(state.creditsRemaining === undefined ? {} : { credits_remaining: state.creditsRemaining }),
      execution_time_ms: Math.round(performance.now() - state.startedPerf),
    },
    status,
  );
  return jsonResponse(state, status, body);
}

/**
 * How a path's refusals are written (http/path.ts `errorWireOf`): the envelope; OpenAI's shape
 * under `/v1` ("v1"); Anthropic's on the Messages API's paths ("messages", http/messages-errors.ts).
 */
export type ErrorWire = "envelope" | "v1" | "messages";

/**
 * The one rendering of a refusal: in the envelope, in OpenAI's shape
 * (`{"error": {message, type, param, code}}`, what every `/v1` route answers, so OpenAI SDK clients
 * raise the exception class of the status), or in Anthropic's on `/v1/messages` (with its
 * `request-id` header). A 429 always says when to retry (`Retry-After`, 1 s unless the error or
 * the request's limit headers say otherwise).
 */
export function errorResponse(state: RequestState, err: GatewayError, wire: ErrorWire = "envelope"): Response {
  state.errorCode = err.code;
  const headers = { ...err.headers };
  if (err.code === "rate_limited" && !state.headers["Retry-After"] && !headers["Retry-After"]) headers["Retry-After"] = "1";
  let body: string;
  if (wire === "v1")
    body = JSON.stringify({ error: { message: err.message, type: errorType(err.code), param: err.param, code: err.code } });
  else if (wire === "messages") {
    // /v1/messages goes through the chat-completions route: its missing provider is said of /v1/messages
    const message =
      err.code === "no_provider"
        ? err.message.replaceAll("/v1/chat/completions", "/v1/messages (served through the chat-completions route)")
        : err.message;
    body = messagesErrorBody(messagesErrorType(err.code), message);
    headers["request-id"] = state.requestId;
  } else body = errorBody(state.requestId, err, Math.round(performance.now() - state.startedPerf));
  return jsonResponse(state, err.status, body, headers);
}

/**
 * A provider's own 4xx to a `/v1` call (the client's error, not the gateway's): its body passed
 * through as it was, or its message in Anthropic's shape on `/v1/messages`.
 */
export function upstreamErrorResponse(state: RequestState, err: UpstreamClientError, wire: ErrorWire = "v1"): Response {
  state.provider = err.provider;
  state.errorCode = err.error.code ?? undefined;
  if (wire === "messages")
    return jsonResponse(state, err.status, messagesErrorBody(messagesErrorTypeOf(err.status), err.error.message), {
      "request-id": state.requestId,
    });
  return jsonResponse(state, err.status, JSON.stringify({ error: err.error }));
}
