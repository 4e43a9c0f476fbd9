/**
 * Finding caller-supplied words and phrases (a schema's field names and allowed values, facet
 * values, aspects) in a text by scanning, never by compiling them into a regular expression: a
 * pattern built from a caller's words can backtrack exponentially ("a_a_…_a" against "a a … a"
 * held the thread 1.1 s, issue 35.1), and no review of the pattern can see the words it will be
 * built from. Every function here is linear in the text (times the phrase's length, which
 * SCHEMA_LIMITS and the request schemas bound) and passes a CPU safe point per step, so a call
 * ends at its budget whatever it was given. test/local/regex-audit.test.ts fails on any
 * `new RegExp` in src/ whose source could come from a request.
 *
 *   findWordAt(text, word, from, isBoundary)   first occurrence of `word` at `from` or after,
 *                                              not inside a longer run of isBoundary characters
 *   foldedSameLength(text)                     text.toLowerCase() when that keeps every offset
 */
import { tickCpuBudget } from "./budget";
import { isSpace } from "./pii/chars";

/** ASCII letters and digits, and `_`: what `\w` matches without the `u` flag. */
export const isAsciiWord = (c: number): boolean =>
  (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95;

/** ASCII letters and digits. */
export const isAsciiAlnum = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57);

// JavaScript's `\s`, as the PII scanner reads it (one definition: pii/chars.ts)
export { isSpace };

/** Letters and numbers in any script (`[\p{L}\p{N}]`), by code point. */
const LETTER_OR_NUMBER = /[\p{L}\p{N}]/u;
export function isLetterOrNumberAt(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if (c < 128) return isAsciiAlnum(c);
  // a low surrogate: judge the whole code point it ends
  const at = c >= 0xdc00 && c <= 0xdfff && i > 0 ? i - 1 : i;
  const cp = text.codePointAt(at);
  return cp !== undefined && LETTER_OR_NUMBER.test(String.fromCodePoint(cp));
}

/** ASCII upper case folded to lower case; everything else as it is. */
export const foldAscii = (c: number): number => (c >= 65 && c <= 90 ? c + 32 : c);

/**
 * The text in lower case with every offset kept: toLowerCase() where it keeps the length (nearly
 * always), else character by character, each kept as it is where its lower case is longer.
 */
export function foldedSameLength(text: string): string {
  const lower = text.toLowerCase();
  if (lower.length === text.length) return lower;
  let out = "";
  for (const ch of text) {
    tickCpuBudget();
    const l = ch.toLowerCase();
    out += l.length === ch.length ? l : ch;
  }
  return out;
}

/** Whether `word` (lower-case ASCII) is at `at` in `text`, ASCII letters compared without case. */
export function asciiWordAt(text: string, at: number, word: string): boolean {
  if (at + word.length > text.length) return false;
  for (let j = 0; j < word.length; j++) if (foldAscii(text.charCodeAt(at + j)) !== word.charCodeAt(j)) return false;
  return true;
}

/**
 * The first index at or after `from` where `word` occurs in `text` with no boundary character
 * right before it or right after it (`isBoundary` says which characters would make it part of a
 * longer word); -1 when there is none. Both are compared as given (fold them first).
 */
export function findWordAt(text: string, word: string, from: number, isBoundary: (text: string, i: number) => boolean): number {
  if (!word) return -1;
  for (let i = text.indexOf(word, from); i >= 0; i = text.indexOf(word, i + 1)) {
    tickCpuBudget();
    const end = i + word.length;
    if ((i === 0 || !isBoundary(text, i - 1)) && (end >= text.length || !isBoundary(text, end))) return i;
  }
  return -1;
}

/**
 * Whether `name` matches the glob `pattern` as a whole: `*` stands for any run of characters,
 * everything else for itself (an operator's model pattern such as "gpt-4o*", tried on the model a
 * caller names). The parts between stars are found leftmost in order, which is exact for a glob
 * with no other wildcard and costs at most the name's length times the pattern's.
 */
export function globMatch(pattern: string, name: string): boolean {
  const parts = pattern.split("*");
  if (parts.length === 1) return pattern === name;
  const first = parts[0] as string;
  const last = parts[parts.length - 1] as string;
  if (first.length + last.length > name.length || !name.startsWith(first) || !name.endsWith(last)) return false;
  let at = first.length;
  const end = name.length - last.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const part = parts[i] as string;
    const found = name.indexOf(part, at);
    if (found < 0 || found + part.length > end) return false;
    at = found + part.length;
  }
  return true;
}
