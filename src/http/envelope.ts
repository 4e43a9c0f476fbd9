import { errorType, type GatewayError, type ProviderAttempt } from "../errors";

export const API_VERSION = "v1";

export interface SuccessMeta {
  credits_deducted: number;
  credits_remaining?: number;
  execution_time_ms: number;
  cached?: boolean;
  provider?: string;
  model?: string;
  attempts?: ProviderAttempt[];
  [extra: string]: unknown;
}

/**
 * A request id: a UUIDv7 (time-ordered, random in its last 74 bits). Ids that grow with time are
 * appended at the end of the indexes that hold them (the request log's key, the ledger's request
 * index) instead of landing on a random page each, which made the request log's writes 3 times
 * as costly with v4 ids (docs/request-log.md).
 */
export function newRequestId(): string {
  return `req_${Bun.randomUUIDv7()}`;
}

/**
 * The union envelope (forms A and B of the spec). `resultJson` is already-serialized JSON, so a
 * cached answer is spliced in without being parsed and serialized again.
 */
export function renderSuccess(requestId: string, message: string, resultJson: string, meta: SuccessMeta, status = 200): string {
  const head = JSON.stringify({ success: true, status: "success", code: status, message, request_id: requestId });
  const fullMeta = { version: API_VERSION, timestamp: new Date().toISOString(), ...meta };
  if (!fullMeta.attempts?.length) delete fullMeta.attempts;
  return `${head.slice(0, -1)},"data":{"result":${resultJson}},"meta":${JSON.stringify(fullMeta)}}`;
}

export function successBody(requestId: string, message: string, result: unknown, meta: SuccessMeta, status = 200): string {
  return renderSuccess(requestId, message, JSON.stringify(result ?? null), meta, status);
}

export function errorBody(requestId: string, err: GatewayError, executionMs?: number): string {
  const meta: Record<string, unknown> = { version: API_VERSION, timestamp: new Date().toISOString(), credits_deducted: 0 };
  if (executionMs !== undefined) meta.execution_time_ms = executionMs;
  if (err.attempts?.length) meta.attempts = err.attempts;
  if (err.meta) Object.assign(meta, err.meta);
  return JSON.stringify({
    success: false,
    status: "error",
    code: err.status,
    message: err.message,
    request_id: requestId,
    error: { type: errorType(err.code), code: err.code, message: err.message, param: err.param },
    meta,
  });
}
