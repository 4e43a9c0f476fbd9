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
  /**
   * Rows this store takes in one `insert` when the recorder has more waiting (SQLite: one
   * transaction); unset: the recorder's `batch`.
   */
  readonly writeBatch?: number;
  /** Adds the rows; one already there (same request id) is kept as it was. */
  insert(rows: RequestRecord[]): MaybePromise<void>;
  /** Entries matching `q`, newest first (time, then request id, descending), at most `q.limit`. */
  page(q: RequestLogQuery): MaybePromise<RequestLogEntry[]>;
  /** One entry; with `accountId`, only if it is that account's. */
  get(requestId: string, accountId?: string): MaybePromise<RequestLogEntry | null>;
  /** Deletes at most `max` entries older than `before` (ms); answers how many it deleted. */
  prune(before: number, max: number): MaybePromise<number>;
}

/**
 * The row shape both stores read (snake_case columns): the entry's fields, but as the drivers
 * hand back those that differ (bigint and numeric as text, booleans as 0/1, JSON as text).
 */
export type LogRow = Omit<
  RequestLogEntry,
  "time" | "credits" | "cache" | "prompt_tokens" | "completion_tokens" | "idempotent_replay" | "guardrails"
> & {
  time: number | string;
  credits: number | string;
  cache: string | null;
  prompt_tokens: number | string | null;
  completion_tokens: number | string | null;
  idempotent_replay: number | boolean;
  guardrails: string | GuardrailCounts | null;
};

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

/** The entry of a row read by request id, or null when there is none or it is not `accountId`'s. */
export function entryIfOwn(r: LogRow | null | undefined, accountId: string | undefined): RequestLogEntry | null {
  return r && (accountId === undefined || r.account_id === accountId) ? entryOf(r) : null;
}

/**
 * The columns in insert order, each with the record's field it is written from: the one list
 * `COLUMNS` (stores, CSV) follows, and `rowOf` and `writeValues` spell out (for speed; a test holds
 * them to each other and the stores' tests to what reads back). Every entry field is a column
 * (checked here).
 */
const FIELD_OF = {
  request_id: "requestId",
  time: "time",
  account_id: "accountId",
  key_id: "keyId",
  method: "method",
  path: "path",
  function: "function",
  status: "status",
  error_code: "errorCode",
  provider: "provider",
  model: "model",
  latency_ms: "latencyMs",
  credits: "credits",
  cache: "cache",
  prompt_tokens: "promptTokens",
  completion_tokens: "completionTokens",
  idempotent_replay: "idempotentReplay",
  guardrails: "guardrails",
} as const satisfies Record<keyof RequestLogEntry, keyof RequestRecord>;

type Column = keyof typeof FIELD_OF;

export const COLUMNS = Object.keys(FIELD_OF) as Column[];

/** A record keyed by column (the guardrail counts as an object): one row of `json_populate_recordset`. */
export function rowOf(r: RequestRecord): Record<Column, unknown> {
  return {
    request_id: r.requestId,
    time: r.time,
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

/**
 * A record's values in the order of `COLUMNS` (the guardrail counts as JSON text), written into
 * `out` from `at` (a statement's bound values, an array kept for every batch): what the SQLite
 * store binds for each row it writes, without an array of its own and a copy of it per row.
 * Field by field in the order of `COLUMNS` (checked by a test against `rowOf`); booleans as 0/1,
 * as SQLite stores them.
 */
export function writeValues(r: RequestRecord, out: (string | number | null)[], at: number): void {
  out[at] = r.requestId;
  out[at + 1] = r.time;
  out[at + 2] = r.accountId;
  out[at + 3] = r.keyId;
  out[at + 4] = r.method;
  out[at + 5] = r.path;
  out[at + 6] = r.function;
  out[at + 7] = r.status;
  out[at + 8] = r.errorCode;
  out[at + 9] = r.provider;
  out[at + 10] = r.model;
  out[at + 11] = r.latencyMs;
  out[at + 12] = r.credits;
  out[at + 13] = r.cache;
  out[at + 14] = r.promptTokens;
  out[at + 15] = r.completionTokens;
  out[at + 16] = r.idempotentReplay ? 1 : 0;
  out[at + 17] = r.guardrails === null ? null : JSON.stringify(r.guardrails);
}
