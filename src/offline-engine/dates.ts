import type * as Chrono from "chrono-node";
import { checkCpuBudget } from "./budget";
import { chrono } from "./chrono";

/** Longest piece of text handed to chrono at once. */
const WINDOW = 500;

/**
 * chrono.parse over windows of at most WINDOW characters, cut at a line or sentence end (else at a
 * space), with results' offsets in the whole text. Some of chrono's parsers test a pattern against
 * the text before every candidate, which is quadratic in the length of what it is given: on 20 KB
 * of "1.1.1." one call took a second, on 100 KB twenty. No date spans a line or sentence end, so
 * the windows lose nothing a reader would call a date.
 */
export function parseDates(text: string, ref: Date): Chrono.ParsedResult[] {
  if (text.length <= WINDOW) return chrono().parse(text, ref);
  const out: Chrono.ParsedResult[] = [];
  let start = 0;
  while (start < text.length) {
    checkCpuBudget();
    const end = start + WINDOW >= text.length ? text.length : cutPoint(text, start);
    for (const r of chrono().parse(text.slice(start, end), ref)) {
      (r as { index: number }).index += start;
      out.push(r);
    }
    start = end;
  }
  return out;
}

function cutPoint(text: string, start: number): number {
  const limit = start + WINDOW;
  let space = -1;
  for (let i = limit - 1; i > start + WINDOW / 2; i--) {
    const c = text.charCodeAt(i);
    if (c === 10) return i + 1;
    if ((c === 32 || c === 9) && space < 0) space = i + 1;
    if (c === 32 && i > 0 && ".!?".includes(text.charAt(i - 1))) return i + 1;
  }
  return space > 0 ? space : limit;
}
