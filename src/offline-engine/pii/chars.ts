/**
 * Character tests of the PII scanners, by code point, so that hot loops need no regex or string
 * per character. Each agrees with the regex class it replaces (`\s`, `\p{L}`, `\p{M}`, `\p{N}`).
 */

/** General categories, as bits: a code point has at most one. */
export const LETTER = 1;
export const MARK = 2;
export const NUMBER = 4;

const IS_LETTER = /^\p{L}$/u;
const IS_MARK = /^\p{M}$/u;
const IS_NUMBER = /^\p{N}$/u;
/** categories of the Basic Multilingual Plane, filled on first use (bit 8: looked up) */
const BMP = new Uint8Array(0x10000);
const KNOWN = 8;

/** LETTER, MARK, NUMBER or 0 for the code point `cp`. */
export function category(cp: number): number {
  if (cp < 0x80) {
    if ((cp >= 65 && cp <= 90) || (cp >= 97 && cp <= 122)) return LETTER;
    return cp >= 48 && cp <= 57 ? NUMBER : 0;
  }
  if (cp < 0x10000) {
    let c = BMP[cp];
    if (c === 0) {
      c = lookUp(cp) | KNOWN;
      BMP[cp] = c;
    }
    return c & ~KNOWN;
  }
  return lookUp(cp);
}

function lookUp(cp: number): number {
  const ch = String.fromCodePoint(cp);
  return IS_LETTER.test(ch) ? LETTER : IS_MARK.test(ch) ? MARK : IS_NUMBER.test(ch) ? NUMBER : 0;
}

/** Code point at `i` (a lone surrogate stands for itself); it is two units wide when above 0xFFFF. */
export function codePointAt(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
    const d = text.charCodeAt(i + 1);
    if (d >= 0xdc00 && d <= 0xdfff) return ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000;
  }
  return c;
}

/** Code point that ends just before `i` (i > 0). */
export function codePointBefore(text: string, i: number): number {
  const d = text.charCodeAt(i - 1);
  if (d >= 0xdc00 && d <= 0xdfff && i >= 2) {
    const c = text.charCodeAt(i - 2);
    if (c >= 0xd800 && c <= 0xdbff) return ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000;
  }
  return d;
}

/** JavaScript's `\s`. */
export function isSpace(c: number): boolean {
  if (c < 0x80) return c === 32 || (c >= 9 && c <= 13);
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** hasNonAscii's last text and its answer (the recognizers of one call ask about the same text) */
let nonAsciiText: string | null = null;
let nonAsciiAnswer = false;
const NON_ASCII = /[\u0080-\uffff]/;

/**
 * Whether `text` holds any character outside ASCII: one native scan per text, shared by the
 * recognizers (a pattern whose every alternative needs a non-ASCII letter is skipped on ASCII text).
 */
export function hasNonAscii(text: string): boolean {
  if (text !== nonAsciiText) {
    nonAsciiAnswer = NON_ASCII.test(text);
    nonAsciiText = text;
  }
  return nonAsciiAnswer;
}

/** Tells hasNonAscii that `text` is all ASCII (fold.ts has just scanned it): no second scan. */
export function knownAscii(text: string): void {
  nonAsciiText = text;
  nonAsciiAnswer = false;
}

/** Lets the last text go (a long prompt is not held after its call). */
export function forgetNonAscii(): void {
  nonAsciiText = null;
}

/**
 * What a person reads through between two groups of digits (a card's, an SSN's): blanks (one,
 * or two as in "4111  1111" of two thin spaces folded), a dash, "/", "_" or "," with blanks around
 * it, or a line break with blanks around it.
 */
export const GROUP_SEPARATOR = String.raw`(?:[ \t]*(?:\r?\n|[-/_,.])[ \t]*|[ \t]{1,2})`;

/** Whether text[from, to) is what GROUP_SEPARATOR reads through (from < to). */
export function groupSeparator(text: string, from: number, to: number): boolean {
  let a = from;
  while (a < to && (text.charCodeAt(a) === 32 || text.charCodeAt(a) === 9)) a++;
  // blanks alone: one or two
  if (a === to) return to - from <= 2;
  let b = to;
  while (b > a && (text.charCodeAt(b - 1) === 32 || text.charCodeAt(b - 1) === 9)) b--;
  if (b - a === 2) return text.charCodeAt(a) === 13 && text.charCodeAt(a + 1) === 10;
  if (b - a !== 1) return false;
  const c = text.charCodeAt(a);
  return c === 10 || c === 45 || c === 47 || c === 95 || c === 44 || c === 46; // \n - / _ , .
}
