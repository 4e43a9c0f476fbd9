/**
 * The Anthropic Messages API's error shape (`/v1/messages`, docs/messages.md):
 * `{"type":"error","error":{"type":…,"message":…}}` with a `request-id` header, every code of the
 * gateway's closed set (errors.ts) mapped to one of Anthropic's error types in one table.
 */
import type { ErrorCode } from "../errors";

/** The error types of Anthropic's API a `/v1/messages` answer uses (CONTRACT section 15). */
export type MessagesErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "not_found_error"
  | "rate_limit_error"
  | "api_error"
  | "overloaded_error";

/**
 * Each gateway code as Anthropic's type; the status stays the gateway's (Anthropic's SDKs pick
 * the exception class by status). Anthropic answers the client errors it has no type of its own
 * for with invalid_request_error, and so does the gateway (credits, methods, sizes, media types,
 * guardrails, a client gone).
 */
const MESSAGES_ERROR_TYPE: Record<ErrorCode, MessagesErrorType> = {
  invalid_json: "invalid_request_error",
  invalid_request: "invalid_request_error",
  missing_api_key: "authentication_error",
  invalid_api_key: "authentication_error",
  insufficient_credits: "invalid_request_error",
  expired_api_key: "authentication_error",
  key_budget_exceeded: "invalid_request_error",
  not_signed_in: "authentication_error",
  forbidden: "permission_error",
  not_found: "not_found_error",
  model_not_found: "not_found_error",
  method_not_allowed: "invalid_request_error",
  conflict: "invalid_request_error",
  request_timeout: "invalid_request_error",
  payload_too_large: "invalid_request_error",
  unsupported_media_type: "invalid_request_error",
  idempotency_mismatch: "invalid_request_error",
  guardrail_blocked: "invalid_request_error",
  content_filtered: "invalid_request_error",
  rate_limited: "rate_limit_error",
  internal_error: "api_error",
  provider_error: "api_error",
  // (no provider configured is no passing overload: Anthropic's SDKs would retry an overloaded_error)
  no_provider: "api_error",
  service_unavailable: "overloaded_error",
  provider_timeout: "api_error",
  client_closed: "invalid_request_error",
};

export const messagesErrorType = (code: ErrorCode): MessagesErrorType => MESSAGES_ERROR_TYPE[code];

/** Anthropic's type for a status that came from elsewhere (a provider's own 4xx passed on). */
export function messagesErrorTypeOfStatus(status: number): MessagesErrorType {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 429) return "rate_limit_error";
  if (status === 503 || status === 529) return "overloaded_error";
  return status >= 500 ? "api_error" : "invalid_request_error";
}

/** Anthropic's own error types, as an upstream may name them (the SDK's ErrorType, and 413's request_too_large). */
const ANTHROPIC_TYPES = new Set<string>([
  "invalid_request_error",
  "authentication_error",
  "billing_error",
  "permission_error",
  "not_found_error",
  "request_too_large",
  "rate_limit_error",
  "timeout_error",
  "api_error",
  "overloaded_error",
]);

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
  return status !== undefined ? messagesErrorTypeOfStatus(status) : "api_error";
}

/** Anthropic's error body; `type` one of MessagesErrorType, or an `anthropic` provider's own as it sent it. */
export function messagesErrorBody(type: string, message: string): string {
  return JSON.stringify({ type: "error", error: { type, message } });
}
