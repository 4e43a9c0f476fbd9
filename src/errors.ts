/** The closed set of error codes the gateway answers with, and their HTTP status. */
export const ERROR_STATUS = {
  invalid_json: 400,
  invalid_request: 400,
  missing_api_key: 401,
  invalid_api_key: 401,
  insufficient_credits: 402,
  /** the key's policy expired (docs/key-policies.md) */
  expired_api_key: 401,
  /** the key's monthly_credit_limit is spent */
  key_budget_exceeded: 402,
  /** a dashboard JSON route without a signed-in session */
  not_signed_in: 401,
  forbidden: 403,
  not_found: 404,
  /** a `model` no provider in the route serves (OpenAI's code for it) */
  model_not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  /** the body did not arrive whole within limits.body_timeout_ms */
  request_timeout: 408,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_mismatch: 422,
  /** a guardrail of the key's plan or policy refused the request (docs/guardrails.md) */
  guardrail_blocked: 422,
  /** a provider's content filter refused the request (Azure OpenAI's content_filter) */
  content_filtered: 422,
  rate_limited: 429,
  internal_error: 500,
  provider_error: 502,
  no_provider: 503,
  service_unavailable: 503,
  provider_timeout: 504,
  /** the client went away before its answer (nginx's 499): its own outcome, never a 5xx */
  client_closed: 499,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

const ERROR_TYPE: Record<ErrorCode, string> = {
  invalid_json: "invalid_request_error",
  invalid_request: "invalid_request_error",
  missing_api_key: "authentication_error",
  invalid_api_key: "authentication_error",
  insufficient_credits: "billing_error",
  expired_api_key: "authentication_error",
  key_budget_exceeded: "billing_error",
  not_signed_in: "authentication_error",
  forbidden: "permission_error",
  not_found: "not_found_error",
  model_not_found: "invalid_request_error",
  method_not_allowed: "invalid_request_error",
  conflict: "conflict_error",
  request_timeout: "invalid_request_error",
  payload_too_large: "invalid_request_error",
  unsupported_media_type: "invalid_request_error",
  idempotency_mismatch: "invalid_request_error",
  guardrail_blocked: "invalid_request_error",
  content_filtered: "invalid_request_error",
  rate_limited: "rate_limit_error",
  internal_error: "api_error",
  provider_error: "provider_error",
  no_provider: "provider_error",
  service_unavailable: "api_error",
  provider_timeout: "provider_error",
  client_closed: "invalid_request_error",
};

export function errorType(code: ErrorCode): string {
  return ERROR_TYPE[code];
}

export interface ProviderAttempt {
  provider: string;
  model?: string;
  error: string;
  status?: number;
  ms: number;
}

/** An error that is meant to reach the client, in the envelope, with this code. */
export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly param: string | null;
  readonly headers: Record<string, string>;
  attempts?: ProviderAttempt[];
  /** extra fields of the envelope's meta (meta.guardrails of a blocked request) */
  readonly meta?: Record<string, unknown>;

  constructor(
    code: ErrorCode,
    message: string,
    opts: {
      param?: string | null;
      headers?: Record<string, string>;
      attempts?: ProviderAttempt[];
      meta?: Record<string, unknown>;
    } = {},
  ) {
    super(message);
    this.name = "GatewayError";
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.param = opts.param ?? null;
    this.headers = opts.headers ?? {};
    this.attempts = opts.attempts;
    this.meta = opts.meta;
  }
}

export const invalidRequest = (message: string, param: string | null = null) =>
  new GatewayError("invalid_request", message, { param });

/** A resource the caller names that does not exist or is another account's (404 not_found). */
export function notFound(what = "resource"): GatewayError {
  return new GatewayError("not_found", `${what} not found`);
}

/** OpenAI's code for a model it does not serve (404 model_not_found), with the gateway's message saying what to do. */
export const modelNotFound = (message: string) => new GatewayError("model_not_found", message, { param: "model" });

/** The client closed its connection (mid-body, or while its call ran): nobody is left to answer. */
export function clientClosed(what = "the client closed the request"): GatewayError {
  return new GatewayError("client_closed", what);
}
