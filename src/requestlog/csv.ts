import { COLUMNS, type RequestLogEntry } from "./interface";

/**
 * What a spreadsheet runs as a formula when it starts a cell (OWASP's CSV injection list: =, +, -,
 * @, tab, CR), with their fullwidth and small forms, which some spreadsheets fold to the ASCII ones.
 */
const FORMULA_TRIGGERS = new Set(["=", "+", "-", "@", "\t", "\r", "＝", "＋", "－", "＠", "﹦", "﹢", "﹣", "﹫", "−"]);
/** Where a spreadsheet may split a cell into two (the separator it was told, or guessed): a new cell starts after each. */
const SEPARATORS = new Set([",", ";", "|", "\t", "\r", "\n", "，", "；", "｜"]);
/** Skipped at the start of a cell when looking for a trigger (a spreadsheet may trim or unquote them). */
const LEADING = new Set([" ", '"', "'", "\u00a0", "\u3000"]);

/**
 * A text made safe to open in a spreadsheet: an apostrophe goes before every formula trigger that
 * could start a cell, that is at the start of the text or after a separator the cell might be split
 * on (`;=1` opened with `;` as the separator), spaces and quotes between them skipped. One linear
 * pass, no regex.
 */
export function neutraliseFormula(s: string): string {
  let out = "";
  let cellStart = true;
  for (const ch of s) {
    if (cellStart && FORMULA_TRIGGERS.has(ch)) out += "'";
    out += ch;
    cellStart = SEPARATORS.has(ch) || (cellStart && LEADING.has(ch));
  }
  return out;
}

/**
 * One CSV cell (RFC 4180), the one writer of every CSV the gateway exports: a text (or an object's
 * JSON) is neutralised (`neutraliseFormula`: `model` and `path` come from what clients sent), then
 * quoted when it holds a comma, semicolon, tab, quote or line break, so a spreadsheet splitting on
 * any of them keeps it one cell. Numbers and booleans are the gateway's own and are written as they are.
 */
export function csvCell(v: unknown): string {
  if (v === null || v === undefined) return "";
  let s = typeof v === "object" ? JSON.stringify(v) : String(v);
  if (typeof v === "string" || typeof v === "object") s = neutraliseFormula(s);
  return /[",;\t\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** A column of the export: its head and its cell. */
type CsvColumn = readonly [string, (e: RequestLogEntry) => unknown];

/**
 * The CSV of every entry `read` pages through (newest first), at most `max` rows, as a stream: one
 * page (500 rows) is read per chunk, so a long download holds one page in memory at a time.
 */
export function csvStream(
  readPage: (cursor: string | null) => Promise<{ data: RequestLogEntry[]; next_cursor: string | null }>,
  max: number,
  /** columns after the log's own (the dashboard's `key_label`) */
  extra: readonly CsvColumn[] = [],
): ReadableStream<Uint8Array> {
  const columns: readonly CsvColumn[] = [...COLUMNS.map((c): CsvColumn => [c, (e) => e[c]]), ...extra];
  const line = (e: RequestLogEntry) => `${columns.map(([, cell]) => csvCell(cell(e))).join(",")}\r\n`;
  const enc = new TextEncoder();
  let cursor: string | null = null;
  let sent = 0;
  let started = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started) {
        started = true;
        controller.enqueue(enc.encode(`${columns.map(([head]) => head).join(",")}\r\n`));
        return;
      }
      const page = await readPage(cursor);
      const rows = page.data.slice(0, max - sent);
      sent += rows.length;
      if (rows.length) controller.enqueue(enc.encode(rows.map(line).join("")));
      cursor = page.next_cursor;
      if (!cursor || sent >= max) controller.close();
    },
  });
}
