/**
 * Shared text helpers of the offline engine. Offsets everywhere in the engine are JavaScript
 * string indices (UTF-16 code units), so `text.slice(start, end)` selects the span exactly,
 * whatever characters (accents, CJK, emoji) the text holds.
 */

import { checkCpuBudget, tickCpuBudget } from "./budget";

export interface TextSpan {
  text: string;
  start: number;
  end: number;
}

/**
 * Abbreviations whose trailing period does not end a sentence. Lower-case, without the dot.
 * Single letters (initials, "U.S.") are handled separately.
 */
const ABBREVIATIONS = new Set([
  "mr",
  "mrs",
  "ms",
  "dr",
  "prof",
  "sr",
  "jr",
  "st",
  "mt",
  "vs",
  "etc",
  "e.g",
  "i.e",
  "inc",
  "ltd",
  "co",
  "corp",
  "no",
  "approx",
  "dept",
  "est",
  "fig",
  "gen",
  "gov",
  "lt",
  "col",
  "sgt",
  "capt",
  "rev",
  "ave",
  "blvd",
  "rd",
  "jan",
  "feb",
  "mar",
  "apr",
  "jun",
  "jul",
  "aug",
  "sep",
  "sept",
  "oct",
  "nov",
  "dec",
  "u.s",
  "ph.d",
  "a.m",
  "p.m",
]);

// A terminator run (with closing quotes/brackets) followed by whitespace, or a line break run.
// CJK full-width terminators end a sentence without needing a following space.
// The lookbehind lets a terminator run be tried only from its first character: without it a long
// run with no space after it ("!!!!…") is retried from every position, quadratic in its length.
const BOUNDARY = /(?<![.!?…])([.!?…]+["'”’)\]]*)(\s+)|([。！？]+["'”’」』)]*)|(\n\s*\n|\r?\n)/g;

/** Splits text into sentences with their offsets; empty text gives an empty list. */
export function splitSentences(text: string): TextSpan[] {
  const out: TextSpan[] = [];
  let segStart = 0;
  BOUNDARY.lastIndex = 0;
  for (let m = BOUNDARY.exec(text); m !== null; m = BOUNDARY.exec(text)) {
    checkCpuBudget();
    let cut: number;
    if (m[1] !== undefined) {
      if (m[1] === "." && isAbbreviationBefore(text, m.index)) continue;
      const next = text.charAt(m.index + m[0].length);
      // "3.5" never matches (needs whitespace); a lower-case continuation after "." is rarely a new sentence
      if (m[1].startsWith(".") && next >= "a" && next <= "z") continue;
      cut = m.index + m[1].length;
    } else if (m[3] !== undefined) {
      cut = m.index + m[3].length;
    } else {
      // a single line break inside a hard-wrapped paragraph is a space, not a sentence's end
      if (wrappedAt(text, m.index, m.index + m[0].length)) continue;
      cut = m.index;
    }
    pushTrimmed(text, segStart, cut, out);
    segStart = m.index + m[0].length;
  }
  pushTrimmed(text, segStart, text.length, out);
  return out;
}

/** A line of prose this long or longer, ended by a single line break, is taken as wrapped by hand (75 to 80 columns). */
const WRAPPED_LINE = 50;
/** What starts a line of its own: a bullet, a numbered item, a heading, a table row, a quote. */
const OWN_LINE = /^[ \t]*(?:[-*•+#|>]|\d{1,3}[.)][ \t])/;

/**
 * Whether the single line break at [at, next) continues the sentence before it: text written to a
 * fixed width ("… free of charge up to 48 hours before the\nstart date.") breaks lines anywhere.
 * So when the line before is long, ends with no sentence mark (nor ":" or ";"), and neither line is
 * a list item, heading, table row or quote. Short lines (addresses, signatures, headings) keep
 * their breaks, as do the lines of a list.
 */
function wrappedAt(text: string, at: number, next: number): boolean {
  // one line break ("\n" or "\r\n"), not a blank line
  if (next - at > 2 || text.charCodeAt(next - 1) !== 10) return false;
  // (the whole line as wrapped, wherever the sentence began on it)
  const line = text.slice(text.lastIndexOf("\n", at - 1) + 1, at).trimEnd();
  if (line.length < WRAPPED_LINE || /[.!?…:;。！？"'”’)\]]$/.test(line) || OWN_LINE.test(line)) return false;
  const after = text.slice(next, next + 8);
  return after.trim() !== "" && !OWN_LINE.test(after);
}

function isAbbreviationBefore(text: string, dotIndex: number): boolean {
  let i = dotIndex;
  while (i > 0 && /[\p{L}.]/u.test(text.charAt(i - 1))) i--;
  const word = text.slice(i, dotIndex).toLowerCase();
  if (word.length === 1) return true; // an initial: "J. Smith"
  return ABBREVIATIONS.has(word);
}

function pushTrimmed(text: string, start: number, end: number, out: TextSpan[]): void {
  let s = start;
  let e = end;
  // a "sentence" can be 100 KB of spaces: a safe point per character trimmed
  while (s < e && /\s/.test(text.charAt(s))) {
    tickCpuBudget();
    s++;
  }
  while (e > s && /\s/.test(text.charAt(e - 1))) {
    tickCpuBudget();
    e--;
  }
  if (e > s) out.push({ text: text.slice(s, e), start: s, end: e });
}

// Letters, digits and marks, with inner apostrophes or hyphens ("don't", "e-mail").
const WORD = /[\p{L}\p{N}\p{M}]+(?:['’-][\p{L}\p{N}\p{M}]+)*/gu;

/** Word tokens in their original case, punctuation and spaces dropped. */
export function tokenize(text: string): string[] {
  return text.match(WORD) ?? [];
}

/** A score as answers report it: three decimals (0.35 x 0.8 reads 0.28, not 0.27999999999999997). */
export function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
