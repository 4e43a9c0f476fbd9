import type { MaybePromise } from "../maybe";

/** Counts per guardrail kind (CONTRACT section 14); null while no guardrail ran. */
export type GuardrailCounts = Record<string, number>;

/**
 * One authenticated API request as the request log keeps it (CONTRACT section 13): metadata only,
 * never a body. `time` is when the request arrived, in ms since the epoch.
 */
export interface RequestRecord {
  requestId: string;
  time: number;
  accountId: string;
  keyId: string;
  method: string;
  path: string;
  function: string | null;
  status: number;
  errorCode: string | null;
  provider: string | null;
  model: string | null;
  latencyMs: number;
  credits: number;
  cache: "HIT" | "MISS" | null;
  promptTokens: number | null;
  completionTokens: number | null;
  idempotentReplay: boolean;
  guardrails: GuardrailCounts | null;
}

/** A log entry as the API, the CLI and the dashboard show it. */
export interface RequestLogEntry {
  request_id: string;
  /** ISO 8601, UTC */
  time: string;
  account_id: string;
  key_id: string;
  method: string;
  path: string;
  function: string | null;
  status: number;
  error_code: string | null;
  provider: string | null;
  model: string | null;
  latency_ms: number;
  credits: number;
  cache: "HIT" | "MISS" | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  idempotent_replay: boolean;
  guardrails: GuardrailCounts | null;
}

/** Where a page starts: after the entry at (time, request id), newest first. */
export interface LogCursor {
  time: number;
  requestId: string;
}

/** The filters of the request log's routes; every one optional but `limit`. */
export interface RequestLogQuery {
  accountId?: string;
  keyId?: string;
  function?: string;
  /** statuses in [statusMin, statusMax] (one status: both the same) */
  statusMin?: number;
  statusMax?: number;
  /** from this instant (inclusive), ms */
  from?: number;
  /** before this instant (exclusive), ms */
  to?: number;
  cursor?: LogCursor;
  limit: number;
}

/**
 * The request log's store. Implementations: SQLite (one node, requestlog/sqlite.ts) and
 * PostgreSQL (many nodes, requestlog/postgres.ts); `RequestLog` (recorder.ts) batches writes to it.
 */
export interface RequestLogStore {
  /** Adds the rows; one already there (same request id) is kept as it was. */
  insert(rows: RequestRecord[]): MaybePromise<void>;
  /** Entries matching `q`, newest first (time, then request id, descending), at most `q.limit`. */
  page(q: RequestLogQuery): MaybePromise<RequestLogEntry[]>;
  /** One entry; with `accountId`, only if it is that account's. */
  get(requestId: string, accountId?: string): MaybePromise<RequestLogEntry | null>;
  /** Deletes at most `max` entries older than `before` (ms); answers how many it deleted. */
  prune(before: number, max: number): MaybePromise<number>;
}

/** The row shape both stores read (snake_case columns). */
export interface LogRow {
  request_id: string;
  time: number | string;
  account_id: string;
  key_id: string;
  method: string;
  path: string;
  function: string | null;
  status: number;
  error_code: string | null;
  provider: string | null;
  model: string | null;
  latency_ms: number;
  credits: number | string;
  cache: string | null;
  prompt_tokens: number | string | null;
  completion_tokens: number | string | null;
  idempotent_replay: number | boolean;
  guardrails: string | GuardrailCounts | null;
}

const numOrNull = (v: number | string | null) => (v === null ? null : Number(v));

export function entryOf(r: LogRow): RequestLogEntry {
  return {
    request_id: r.request_id,
    time: new Date(Number(r.time)).toISOString(),
    account_id: r.account_id,
    key_id: r.key_id,
    method: r.method,
    path: r.path,
    function: r.function,
    status: r.status,
    error_code: r.error_code,
    provider: r.provider,
    model: r.model,
    latency_ms: r.latency_ms,
    credits: Number(r.credits),
    cache: r.cache === "HIT" || r.cache === "MISS" ? r.cache : null,
    prompt_tokens: numOrNull(r.prompt_tokens),
    completion_tokens: numOrNull(r.completion_tokens),
    idempotent_replay: !!r.idempotent_replay,
    guardrails: typeof r.guardrails === "string" ? (JSON.parse(r.guardrails) as GuardrailCounts) : r.guardrails,
  };
}

/** The columns in insert order, and a record's values in that order. */
export const COLUMNS = [
  "request_id",
  "time",
  "account_id",
  "key_id",
  "method",
  "path",
  "function",
  "status",
  "error_code",
  "provider",
  "model",
  "latency_ms",
  "credits",
  "cache",
  "prompt_tokens",
  "completion_tokens",
  "idempotent_replay",
  "guardrails",
] as const;

export function valuesOf(r: RequestRecord): (string | number | boolean | null)[] {
  return [
    r.requestId,
    r.time,
    r.accountId,
    r.keyId,
    r.method,
    r.path,
    r.function,
    r.status,
    r.errorCode,
    r.provider,
    r.model,
    r.latencyMs,
    r.credits,
    r.cache,
    r.promptTokens,
    r.completionTokens,
    r.idempotentReplay,
    r.guardrails === null ? null : JSON.stringify(r.guardrails),
  ];
}
