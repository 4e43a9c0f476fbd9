import { GatewayError } from "../errors";
import type { LogCursor, RequestLogEntry, RequestLogQuery } from "./interface";

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 500;

const bad = (param: string, message: string) => new GatewayError("invalid_request", message, { param });

/** The opaque cursor of the entry a page ended on: base64url of "time.request_id". */
export function encodeCursor(e: Pick<RequestLogEntry, "time" | "request_id">): string {
  return Buffer.from(`${Date.parse(e.time)}.${e.request_id}`).toString("base64url");
}

export function decodeCursor(raw: string): LogCursor {
  const text = raw.length <= 200 && /^[A-Za-z0-9_-]+$/.test(raw) ? Buffer.from(raw, "base64url").toString() : "";
  const m = /^(\d{1,15})\.(\S{1,100})$/.exec(text);
  if (!m) throw bad("cursor", "cursor is not one this gateway gave out; use next_cursor of the previous page");
  return { time: Number(m[1]), requestId: m[2] };
}

/** An instant from an ISO 8601 date or date-time; without a zone it is UTC (a date alone: midnight UTC). */
export function instant(raw: string, param: string): number {
  // a date-time without a zone (what a browser's datetime-local field sends) is read as UTC, not the server's zone
  const text = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(raw) ? `${raw}Z` : raw;
  const t = raw.length <= 40 && /^\d{4}-\d{2}-\d{2}/.test(raw) ? Date.parse(text) : Number.NaN;
  if (!Number.isFinite(t)) throw bad(param, `${param} must be an ISO 8601 date or date-time, such as 2026-11-26T14:00:00Z`);
  return t;
}

/** `status`: one code (429) or a class (4xx). */
function statusRange(raw: string): { statusMin: number; statusMax: number } {
  const one = /^([1-5]\d\d)$/.exec(raw);
  if (one) return { statusMin: Number(one[1]), statusMax: Number(one[1]) };
  const cls = /^([1-5])xx$/i.exec(raw);
  if (cls) return { statusMin: Number(cls[1]) * 100, statusMax: Number(cls[1]) * 100 + 99 };
  throw bad("status", "status must be an HTTP status (429) or a class (4xx)");
}

/** `limit`: a whole number from 1 to MAX_LIMIT; DEFAULT_LIMIT when none or empty. */
export function pageLimit(raw: string | undefined): number {
  if (raw === undefined || raw === "") return DEFAULT_LIMIT;
  const n = /^\d{1,4}$/.test(raw) ? Number(raw) : 0;
  if (n < 1 || n > MAX_LIMIT) throw bad("limit", `limit must be a whole number from 1 to ${MAX_LIMIT}`);
  return n;
}

/** A text filter: empty is none, over 200 characters is refused. */
export function text(raw: string | undefined, param: string): string | undefined {
  if (raw === undefined || raw === "") return undefined;
  if (raw.length > 200) throw bad(param, `${param} is too long`);
  return raw;
}

/**
 * The filters of GET /api/v1/account/requests and /admin/v1/requests (and the dashboard's page)
 * from a query string: limit (1 to 500, default 50), cursor, function, status, key_id, from, to,
 * and with `admin` account_id. An empty value is no filter.
 */
export function parseLogQuery(query: Record<string, string | undefined>, opts: { admin: boolean }): RequestLogQuery {
  const q: RequestLogQuery = { limit: pageLimit(query.limit) };
  if (query.cursor) q.cursor = decodeCursor(query.cursor);
  q.function = text(query.function, "function");
  q.keyId = text(query.key_id, "key_id");
  if (opts.admin) q.accountId = text(query.account_id, "account_id");
  if (query.status) Object.assign(q, statusRange(query.status));
  if (query.from) q.from = instant(query.from, "from");
  if (query.to) q.to = instant(query.to, "to");
  if (q.from !== undefined && q.to !== undefined && q.from >= q.to) throw bad("to", "to must be after from");
  return q;
}

/** One page: `limit` entries and the cursor of the next (null on the last page). */
export async function readPage(
  read: (q: RequestLogQuery) => Promise<RequestLogEntry[]>,
  q: RequestLogQuery,
): Promise<{ data: RequestLogEntry[]; next_cursor: string | null; limit: number }> {
  const rows = await read({ ...q, limit: q.limit + 1 });
  const data = rows.slice(0, q.limit);
  const last = data[data.length - 1];
  return { data, next_cursor: rows.length > q.limit && last ? encodeCursor(last) : null, limit: q.limit };
}
