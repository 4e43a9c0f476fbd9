import type { RequestLogEntry, RequestRecord } from "../../src/requestlog/interface";

/** The entry a store must give back for a record it was given: every field, spelled out. */
export function entryWritten(r: RequestRecord): RequestLogEntry {
  return {
    request_id: r.requestId,
    time: new Date(r.time).toISOString(),
    account_id: r.accountId,
    key_id: r.keyId,
    method: r.method,
    path: r.path,
    function: r.function,
    status: r.status,
    error_code: r.errorCode,
    provider: r.provider,
    model: r.model,
    latency_ms: r.latencyMs,
    credits: r.credits,
    cache: r.cache,
    prompt_tokens: r.promptTokens,
    completion_tokens: r.completionTokens,
    idempotent_replay: r.idempotentReplay,
    guardrails: r.guardrails,
  };
}
