/**
 * The Anthropic Messages API's error shape (`/v1/messages`, docs/messages.md):
 * `{"type":"error","error":{"type":…,"message":…}}` with a `request-id` header, every refusal's
 * type read from its status (and code) by one mapping, Anthropic's own (docs.claude.com/en/api/errors).
 */
import { ERROR_STATUS, type ErrorCode } from "../errors";

/** The error types of Anthropic's API a `/v1/messages` answer uses. */
export type MessagesErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "billing_error"
  | "permission_error"
  | "not_found_error"
  | "conflict_error"
  | "request_too_large"
  | "rate_limit_error"
  | "api_error"
  | "timeout_error"
  | "overloaded_error";

/**
 * Anthropic's type of each status it gives one (its API reference; 409's conflict_error is its
 * SDK's ErrorType). Another 4xx is invalid_request_error, as Anthropic answers them; another 5xx api_error.
 */
const TYPE_OF_STATUS: Readonly<Record<number, MessagesErrorType>> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  409: "conflict_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  503: "overloaded_error",
  504: "timeout_error",
  529: "overloaded_error",
};

/**
 * The one mapping of a `/v1/messages` refusal (the gateway's own, a provider's 4xx passed on, a
 * count_tokens refusal) to Anthropic's type: by its status, which also picks the SDK's exception
 * class (402 PaymentRequiredError with billing_error, 504 GatewayTimeoutError with timeout_error,
 * ...). One code is read for itself: `no_provider` (503, no provider configured) is api_error, no
 * passing overload (Anthropic's SDKs and tools retry an overloaded_error).
 */
export function messagesErrorTypeOf(status: number, code?: ErrorCode): MessagesErrorType {
  if (code === "no_provider") return "api_error";
  return TYPE_OF_STATUS[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
}

/** Anthropic's type for a gateway code, at the code's status. */
export const messagesErrorType = (code: ErrorCode): MessagesErrorType => messagesErrorTypeOf(ERROR_STATUS[code], code);

/** Anthropic's own error types, as an upstream may name them. */
const ANTHROPIC_TYPES: ReadonlySet<string> = new Set(Object.values(TYPE_OF_STATUS));

/**
 * Anthropic's type for an error a provider sent itself (an error event inside its stream, an
 * exception after its first event): the type it named when it is one of Anthropic's, else what
 * an OpenAI-style type or code says (a rate limit, a timeout, an overload), else its status's,
 * else api_error.
 */
export function messagesErrorTypeOfUpstream(upstream: { type: string | null; code?: string | null; status?: number }): string {
  const { type, status } = upstream;
  if (type && ANTHROPIC_TYPES.has(type)) return type;
  const t = `${type ?? ""} ${upstream.code ?? ""}`.toLowerCase();
  if (t.includes("rate_limit") || t.includes("throttl")) return "rate_limit_error";
  if (t.includes("overload") || t.includes("unavailable")) return "overloaded_error";
  if (t.includes("timeout")) return "timeout_error";
  return status !== undefined ? messagesErrorTypeOf(status) : "api_error";
}

/** Anthropic's error body; `type` one of MessagesErrorType, or an `anthropic` provider's own as it sent it. */
export function messagesErrorBody(type: string, message: string): string {
  return JSON.stringify({ type: "error", error: { type, message } });
}
