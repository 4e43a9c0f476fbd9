import { HTTP_ERRORS, HttpStatusError } from "../../http-transport";
import { mapSdkError } from "../../openai-like";
import { contextLengthError, isObject, ProviderError, type UpstreamErrorBody } from "../../types";

/**
 * Gemini's errors (`{error:{code,message,status,details}}`, google.rpc's status names) as the
 * gateway's ProviderError: a 429 keeps its delay (`Retry-After`, else the RetryInfo detail's
 * `retryDelay`), 5xx stay statuses the router retries elsewhere, a context-length 400 is
 * `context_length` naming `messages`, and a key Google refuses (400 API_KEY_INVALID, 401, 403) is
 * the gateway's own failure, never passed to a client as its error.
 */

const CONTEXT_LENGTH = /input token count.*exceeds|exceeds the maximum number of tokens|context (window|length)|too many tokens/i;
const KEY_PROBLEM = /API key|API_KEY_INVALID|unregistered callers/i;

/** A google.protobuf.Duration in JSON ("2s", "0.5s", "1.250s") in ms. */
function durationMs(v: unknown): number | undefined {
  const m = typeof v === "string" ? /^(\d+(?:\.\d+)?)s$/.exec(v.trim()) : null;
  return m ? Math.round(Number(m[1]) * 1000) : undefined;
}

function retryAfterMs(headers: Headers | undefined, details: unknown[]): number | undefined {
  const header = headers?.get("retry-after");
  if (header) {
    const seconds = Number(header);
    if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
    const date = Date.parse(header);
    if (!Number.isNaN(date)) return Math.max(0, date - Date.now());
  }
  for (const d of details)
    if (isObject(d) && String(d["@type"]).endsWith("google.rpc.RetryInfo")) {
      const ms = durationMs(d.retryDelay);
      if (ms !== undefined) return ms;
    }
  return undefined;
}

function statusError(err: HttpStatusError, provider: string): ProviderError {
  const body = isObject(err.error) ? err.error : {};
  const status = err.status ?? (typeof body.code === "number" ? body.code : 500);
  const message = (typeof body.message === "string" ? body.message : err.message).slice(0, 300);
  const details = Array.isArray(body.details) ? body.details : [];
  const reason = details.map((d) => (isObject(d) ? String(d.reason ?? "") : "")).join(" ");
  if (status === 401 || status === 403 || (status === 400 && KEY_PROBLEM.test(`${message} ${reason}`)))
    return new ProviderError(
      "status",
      `provider "${provider}" refused the gateway's API key (${status})`,
      status === 400 ? 401 : status,
    );
  const google = typeof body.status === "string" ? body.status.toLowerCase() : null;
  if (status === 400 && CONTEXT_LENGTH.test(message)) {
    return contextLengthError(message);
  }
  const upstream: UpstreamErrorBody =
    status === 404
      ? { message, type: "invalid_request_error", code: "model_not_found", param: "model" }
      : {
          message,
          type: status === 429 ? "rate_limit_error" : status < 500 ? "invalid_request_error" : "server_error",
          code: google,
          param: null,
        };
  const retry = status === 429 || status >= 500 ? retryAfterMs(err.headers, details) : undefined;
  return new ProviderError("status", `upstream answered ${status}: ${message}`, status, retry, upstream);
}

/** Anything a call to Gemini throws, as a ProviderError. */
export function geminiError(err: unknown, provider: string, signal?: AbortSignal): ProviderError {
  if (err instanceof ProviderError) return err;
  if (err instanceof HttpStatusError && !signal?.aborted) return statusError(err, provider);
  return mapSdkError(err, HTTP_ERRORS, signal);
}
