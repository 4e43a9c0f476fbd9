/**
 * The audit trail's filters and pages as GET /admin/v1/audit, GET /api/v1/account/audit, the
 * dashboard and the CLI read them (limit and cursor as the request log's), and its exports.
 */
import { GatewayError } from "../errors";
import type { MaybePromise } from "../maybe";
import { csvCell } from "../requestlog/csv";
import { instant, MAX_LIMIT, pageLimit, text } from "../requestlog/query";
import { closest } from "../words";
import { entryView } from "./chain";
import { AUDIT_ACTIONS, type AuditEntry, type AuditQuery, type AuditRow } from "./interface";

/** the entries an export holds at most */
export const EXPORT_MAX = 100_000;

const bad = (param: string, message: string) => new GatewayError("invalid_request", message, { param });

/** The opaque cursor of the entry a page ended on: base64url of "a.<seq>". */
export const encodeCursor = (seq: number): string => Buffer.from(`a.${seq}`).toString("base64url");

export function decodeCursor(raw: string): number {
  const t = raw.length <= 40 && /^[A-Za-z0-9_-]+$/.test(raw) ? Buffer.from(raw, "base64url").toString() : "";
  const m = /^a\.(\d{1,15})$/.exec(t);
  if (!m) throw bad("cursor", "cursor is not one this gateway gave out; use next_cursor of the previous page");
  return Number(m[1]);
}

/**
 * The filters from a query string: limit (1 to 500, default 50), cursor, actor, action, since
 * (ISO 8601), and with `admin` account_id. An empty value is no filter.
 */
export function parseAuditQuery(query: Record<string, string | undefined>, opts: { admin: boolean }): AuditQuery {
  const q: AuditQuery = { limit: pageLimit(query.limit) };
  if (query.cursor) q.beforeSeq = decodeCursor(query.cursor);
  if (opts.admin) q.accountId = text(query.account_id, "account_id");
  q.actor = text(query.actor, "actor");
  q.action = auditAction(text(query.action, "action"));
  if (query.since) q.since = instant(query.since, "since");
  return q;
}

/** An action filter: one the trail writes, or a 400 naming the one meant and every one. */
function auditAction(action: string | undefined): string | undefined {
  if (action === undefined || (AUDIT_ACTIONS as readonly string[]).includes(action)) return action;
  const near = closest(action, [...AUDIT_ACTIONS]);
  throw bad(
    "action",
    `unknown action ${JSON.stringify(action)}${near ? ` (did you mean ${near}?)` : ""}; one of: ${AUDIT_ACTIONS.join(", ")}`,
  );
}

/**
 * The actor filter as a person writes it: an email (as the dashboard shows a member) reads as that
 * member's id, which the trail stores; an email of no member matches nothing. Other values as given.
 */
export async function withActorId(
  q: AuditQuery,
  memberIdOf: (email: string) => MaybePromise<string | null>,
): Promise<AuditQuery> {
  if (!q.actor?.includes("@")) return q;
  return { ...q, actor: (await memberIdOf(q.actor.trim().toLowerCase())) ?? q.actor };
}

export interface AuditPage {
  data: AuditEntry[];
  next_cursor: string | null;
  limit: number;
}

/** One page, newest first: `limit` entries and the cursor of the next (null on the last page). */
export async function readAuditPage(
  read: (q: AuditQuery) => Promise<AuditRow[]> | AuditRow[],
  q: AuditQuery,
): Promise<AuditPage> {
  const rows = await read({ ...q, limit: q.limit + 1 });
  const data = rows.slice(0, q.limit);
  const last = data[data.length - 1];
  return {
    data: data.map(entryView),
    next_cursor: rows.length > q.limit && last ? encodeCursor(last.seq) : null,
    limit: q.limit,
  };
}

/** The columns of the CSV export, in order. */
export const AUDIT_COLUMNS = [
  "time",
  "seq",
  "id",
  "actor",
  "account_id",
  "action",
  "target_id",
  "before",
  "after",
  "client",
  "prev_hash",
  "hash",
] as const;

export type ExportFormat = "csv" | "json";

/** `format` of an export: csv or json; anything else is 400. */
export function exportFormat(raw: string | undefined): ExportFormat | null {
  if (raw === undefined || raw === "") return null;
  if (raw === "csv" || raw === "json") return raw;
  throw bad("format", "format must be csv or json");
}

/**
 * Every entry the filters match (newest first, at most EXPORT_MAX) as CSV or as one JSON array, a
 * stream read a page (500 entries) at a time.
 */
export function exportStream(
  read: (q: AuditQuery) => Promise<AuditRow[]> | AuditRow[],
  q: AuditQuery,
  format: ExportFormat,
): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  let cursor: number | undefined;
  let sent = 0;
  let started = false;
  const line = (e: AuditEntry, first: boolean) =>
    format === "csv" ? `${AUDIT_COLUMNS.map((c) => csvCell(e[c])).join(",")}\r\n` : `${first ? "" : ",\n"}${JSON.stringify(e)}`;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started) {
        started = true;
        controller.enqueue(enc.encode(format === "csv" ? `${AUDIT_COLUMNS.join(",")}\r\n` : "[\n"));
        return;
      }
      const page = await readAuditPage(read, { ...q, limit: MAX_LIMIT, beforeSeq: cursor });
      const rows = page.data.slice(0, EXPORT_MAX - sent);
      if (rows.length) controller.enqueue(enc.encode(rows.map((e, i) => line(e, sent + i === 0)).join("")));
      sent += rows.length;
      cursor = rows.at(-1)?.seq;
      if (!page.next_cursor || sent >= EXPORT_MAX) {
        if (format === "json") controller.enqueue(enc.encode("\n]\n"));
        controller.close();
      }
    },
  });
}

/** The headers of an export's download. */
export function exportHeaders(format: ExportFormat): Record<string, string> {
  return {
    "content-type": format === "csv" ? "text/csv; charset=utf-8" : "application/json; charset=utf-8",
    "content-disposition": `attachment; filename="audit-${new Date().toISOString().slice(0, 10)}.${format}"`,
    "cache-control": "no-store",
  };
}
