import { HTTP_ERRORS, HttpStatusError } from "../../http-transport";
import { mapSdkError } from "../../openai-like";
import { contextLengthError, isObject, ProviderError, type UpstreamErrorBody } from "../../types";

/**
 * Bedrock Runtime's errors (a JSON body `{"message": ...}`, the exception's name in the
 * `x-amzn-ErrorType` header, else in the body's `__type` or `code`) as the gateway's
 * ProviderError: ThrottlingException (429) keeps its Retry-After when one is given,
 * ServiceUnavailable, InternalServer, ModelNotReady and ModelTimeout stay statuses the router
 * retries elsewhere, a ValidationException about the context window is `context_length` naming
 * `messages`, and credentials AWS refuses (AccessDenied, UnrecognizedClient, an invalid signature
 * or token) are the gateway's own failure, never passed to a client as its error.
 */

const CONTEXT_LENGTH =
  /too many (input )?tokens|input is too long|prompt is too long|context (window|length)|maximum (input )?(token|context)|exceeds? the (maximum|model)/i;

/** the exceptions that mean the gateway's credentials (or their permissions) are refused */
const AUTH = new Set([
  "accessdeniedexception",
  "unrecognizedclientexception",
  "invalidsignatureexception",
  "signaturedoesnotmatch",
  "expiredtokenexception",
  "incompletesignature",
  "missingauthenticationtokenexception",
  "invalidclienttokenid",
]);

/** The exception's name: `x-amzn-ErrorType` ("ThrottlingException:http://..."), else `__type` ("...#ThrottlingException") or `code`. */
export function errorTypeOf(headers: Headers | undefined, body: unknown): string | null {
  const sanitize = (v: string) => (v.split(":")[0] as string).split("#").at(-1)?.trim() || null;
  const header = headers?.get("x-amzn-errortype");
  if (header) return sanitize(header);
  if (isObject(body)) {
    for (const k of ["__type", "code", "Code"]) if (typeof body[k] === "string") return sanitize(body[k] as string);
  }
  return null;
}

function retryAfterMs(headers: Headers | undefined): number | undefined {
  const raw = headers?.get("retry-after");
  if (!raw) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function statusError(err: HttpStatusError, provider: string): ProviderError {
  const body = isObject(err.error) ? err.error : {};
  const type = errorTypeOf(err.headers, body);
  const lower = type?.toLowerCase() ?? "";
  const status = err.status ?? 500;
  const message = (
    typeof body.message === "string" ? body.message : typeof body.Message === "string" ? body.Message : err.message
  ).slice(0, 300);
  if (AUTH.has(lower) || status === 401 || (status === 403 && !type))
    return new ProviderError(
      "status",
      `provider "${provider}" refused the gateway's AWS credentials (${status}${type ? ` ${type}` : ""})`,
      status,
    );
  if (status === 400 && (lower === "validationexception" || !type) && CONTEXT_LENGTH.test(message)) {
    return contextLengthError(message);
  }
  const upstream: UpstreamErrorBody =
    lower === "resourcenotfoundexception" || status === 404
      ? { message, type: "invalid_request_error", code: "model_not_found", param: "model" }
      : {
          message,
          type: status === 429 ? "rate_limit_error" : status < 500 ? "invalid_request_error" : "server_error",
          code: type,
          param: null,
        };
  const retry = status === 429 || status >= 500 ? retryAfterMs(err.headers) : undefined;
  return new ProviderError("status", `upstream answered ${status}: ${message}`, status, retry, upstream);
}

/** Anything a call to Bedrock throws, as a ProviderError. */
export function bedrockError(err: unknown, provider: string, signal?: AbortSignal): ProviderError {
  if (err instanceof ProviderError) return err;
  if (err instanceof HttpStatusError && !signal?.aborted) return statusError(err, provider);
  return mapSdkError(err, HTTP_ERRORS, signal);
}
