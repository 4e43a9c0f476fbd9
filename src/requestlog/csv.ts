import { COLUMNS, type RequestLogEntry } from "./interface";

/**
 * One CSV cell (RFC 4180): quoted when it holds a comma, quote or line break. A cell that a
 * spreadsheet would run as a formula (=, +, -, @, tab, CR first) gets a leading apostrophe:
 * `model` and `path` come from what clients sent.
 */
export function csvCell(v: unknown): string {
  if (v === null || v === undefined) return "";
  let s = typeof v === "object" ? JSON.stringify(v) : String(v);
  if (typeof v === "string" && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export const CSV_HEADER = `${COLUMNS.join(",")}\r\n`;

export const csvLine = (e: RequestLogEntry): string => `${COLUMNS.map((c) => csvCell(e[c])).join(",")}\r\n`;

/**
 * The CSV of every entry `read` pages through (newest first), at most `max` rows, as a stream: one
 * page (500 rows) is read per chunk, so a long download holds one page in memory at a time.
 */
export function csvStream(
  readPage: (cursor: string | null) => Promise<{ data: RequestLogEntry[]; next_cursor: string | null }>,
  max: number,
): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  let cursor: string | null = null;
  let sent = 0;
  let started = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started) {
        started = true;
        controller.enqueue(enc.encode(CSV_HEADER));
        return;
      }
      const page = await readPage(cursor);
      const rows = page.data.slice(0, max - sent);
      sent += rows.length;
      if (rows.length) controller.enqueue(enc.encode(rows.map(csvLine).join("")));
      cursor = page.next_cursor;
      if (!cursor || sent >= max) controller.close();
    },
  });
}
