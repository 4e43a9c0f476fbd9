import { errorType, type GatewayError } from "../errors";
import { errorBody, successBody } from "./envelope";
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

export function errorResponse(state: RequestState, err: GatewayError): Response {
  state.errorCode = err.code;
  const headers = { ...err.headers };
  if (err.code === "rate_limited" && !state.headers["Retry-After"] && !headers["Retry-After"]) headers["Retry-After"] = "1";
  return jsonResponse(
    state,
    err.status,
    errorBody(state.requestId, err, Math.round(performance.now() - state.startedPerf)),
    headers,
  );
}

/** An error in OpenAI's shape, `{"error": {message, type, param, code}}`: what every `/v1` route answers. */
export function openAiErrorResponse(state: RequestState, err: GatewayError): Response {
  state.errorCode = err.code;
  const headers = { ...err.headers };
  if (err.code === "rate_limited" && !state.headers["Retry-After"] && !headers["Retry-After"]) headers["Retry-After"] = "1";
  const error = { message: err.message, type: errorType(err.code), param: err.param, code: err.code };
  return jsonResponse(state, err.status, JSON.stringify({ error }), headers);
}
