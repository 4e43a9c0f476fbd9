/**
 * The recognizers' input stage: text read as a person reads it (docs/guardrails.md, "Folding").
 * Compatibility forms become what they stand for (NFKC: fullwidth `４１１１` and `＠`, small `﹫`,
 * superscript `¹²³` and circled `①` digits, mathematical `𝟒`), as do the ideographic full stop
 * `。`, dash variants (`‐`, `−`, the long-vowel mark `ー` typed between groups) and space variants
 * (no-break, thin, ideographic); other scripts' decimal digits (`٤١١١`) become ASCII ones;
 * invisible characters (zero-width space and joiners, word joiner, byte-order mark, soft hyphen)
 * and combining diacritical marks are dropped. The recognizers read the folded view; `at` maps
 * each of its code units back to the original text, so spans land on what the client wrote.
 *
 * Fast path: a text with no code unit above 0x7F (most prompts) has nothing to fold; `fold`
 * answers null after one native scan (a RegExp test, `/[^\x00-\x7f]/`, which builds no match) and
 * allocates nothing: about 1.5 µs on 1 KB, against some 100 µs for the recognizers. A text whose
 * non-ASCII characters all read as themselves (accented letters, other scripts) is answered null
 * after one look at each of them, with nothing built either.
 */

import { category, codePointAt, knownAscii, MARK } from "./chars";

export interface Folded {
  /** the text as the recognizers read it */
  view: string;
  /** for each code unit of `view`: its offset in the original text; `at[view.length]` is the text's length */
  at: number[];
}

/** a code unit above 0x7F (the negated ASCII class scans about twice as fast as the range above it) */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the class is the ASCII range, NUL included
const NON_ASCII = /[^\x00-\x7f]/;

/** The folded view of `text` with its map back, or null when folding changes nothing (always for ASCII). */
export function fold(text: string): Folded | null {
  // (an ASCII text is folded only for a URL's escapes: "%2B82%2010%201234%205678", "%40")
  const ascii = !NON_ASCII.test(text);
  const escapes = text.includes("%") && URL_ESCAPE.test(text);
  if (ascii && !escapes) {
    knownAscii(text);
    return null;
  }
  // the first code point that folds to something else; none (accented letters, other scripts
  // written plainly: most non-ASCII text): nothing to fold, and nothing built
  let first = -1;
  for (let i = 0; i < text.length; ) {
    const c = text.charCodeAt(i);
    if (c === 37 && escapes && urlEscape(text, i) !== null) {
      first = i;
      break;
    }
    if (c < 0x80) {
      i++;
      continue;
    }
    const cp = codePointAt(text, i);
    if (pieceAt(text, i, cp) !== null) {
      first = i;
      break;
    }
    i += cp > 0xffff ? 2 : 1;
  }
  if (first < 0) return null;
  let view = text.slice(0, first);
  const at: number[] = new Array(first);
  for (let i = 0; i < first; i++) at[i] = i;
  let changed = false;
  for (let i = first; i < text.length; ) {
    const escaped = escapes && text.charCodeAt(i) === 37 ? urlEscape(text, i) : null;
    if (escaped !== null) {
      changed = true;
      view += escaped;
      at.push(i);
      i += 3;
      continue;
    }
    const cp = codePointAt(text, i);
    const width = cp > 0xffff ? 2 : 1;
    const piece = cp < 0x80 ? null : pieceAt(text, i, cp);
    if (piece === null) {
      view += width === 1 ? text[i] : text.slice(i, i + 2);
      at.push(i);
      if (width === 2) at.push(i);
    } else {
      changed = true;
      view += piece;
      for (let j = 0; j < piece.length; j++) at.push(i);
    }
    i += width;
  }
  if (!changed) return null;
  at.push(text.length);
  return { view, at };
}

/**
 * `end` moved back over invisible characters right after a value ("+972 54 123 4567\u200E"): a span
 * ends at its last character a reader sees (a combining accent is seen: "Bàba\u0301" keeps it).
 */
export function endBeforeInvisible(text: string, start: number, end: number): number {
  while (end > start) {
    const c = text.charCodeAt(end - 1);
    const cp = c >= 0xdc00 && c <= 0xdfff && end - 2 >= start ? codePointAt(text, end - 2) : c;
    if (cp < 0x80 || !invisible(cp)) break;
    end -= cp > 0xffff ? 2 : 1;
  }
  return end;
}

const invisible = (cp: number): boolean => INVISIBLE.test(String.fromCodePoint(cp));

/** a URL's escape of a blank, a "+" or an "@" (a form's values in a query string) */
const URL_ESCAPE = /%(?:2[0Bb]|40)/;

/** The character the URL escape at `i` (a "%") stands for, when it is a blank, "+" or "@"; else null. */
function urlEscape(text: string, i: number): string | null {
  const a = text.charCodeAt(i + 1);
  const b = text.charCodeAt(i + 2) | 32;
  if (a === 50 && b === 48) return " ";
  if (a === 50 && b === 98) return "+";
  if (a === 52 && b === 48) return "@";
  return null;
}

/**
 * What the non-ASCII code point `cp` at `i` reads as (null: itself): foldCodePoint's answer, but a
 * pictograph, a middle dot or a bullet between two digits (skipping blanks and invisible
 * characters) is read through as a group separator, "-" ("0152 👉 3381 👉 9074", "0176🔹5512",
 * "0612·345·678"), as a person reads such a number.
 */
function pieceAt(text: string, i: number, cp: number): string | null {
  const kind = separatorKind(cp);
  if (kind !== NOT_SEPARATOR) {
    const after = i + (cp > 0xffff ? 2 : 1);
    if (kind === PICTOGRAPH_SEPARATOR) {
      if (digitAfter(text, after)) {
        if (digitBefore(text, i)) return "-";
        // a pictograph glued before a number is its label's icon ("my number 📱07911…", "☎️+49…"): read as nothing
        let k = after;
        while (k < text.length && text.charCodeAt(k) >= 0x80 && foldCodePoint(text.charCodeAt(k)) === "") k++;
        if (isDigitUnit(text.charCodeAt(k)) || text.charCodeAt(k) === 43) return "";
      }
      // (a dot or bullet only glued to both groups: " · " between fields stays, "Hafenstraße 21 · 20459 Hamburg")
    } else if (gluedDigits(text, i, after)) return "-";
  }
  return foldCodePoint(cp);
}

function gluedDigits(text: string, i: number, after: number): boolean {
  return i > 0 && isDigitUnit(text.charCodeAt(i - 1)) && isDigitUnit(text.charCodeAt(after));
}

const NOT_SEPARATOR = 0;
const PICTOGRAPH_SEPARATOR = 1;
const DOT_SEPARATOR = 2;
const SEPARATOR_KINDS = new Map<number, number>();
/** a pictograph (emoji) */
const PICTOGRAPH = /^\p{Extended_Pictographic}$/u;
/** whether `cp` may stand between a number's groups: a pictograph, or a middle dot or bullet */
function separatorKind(cp: number): number {
  let kind = SEPARATOR_KINDS.get(cp);
  if (kind === undefined) {
    kind =
      cp === 0xb7 || cp === 0x2022 || cp === 0x2219 || cp === 0x22c5 || cp === 0x30fb || cp === 0xff65
        ? DOT_SEPARATOR
        : PICTOGRAPH.test(String.fromCodePoint(cp))
          ? PICTOGRAPH_SEPARATOR
          : NOT_SEPARATOR;
    SEPARATOR_KINDS.set(cp, kind);
  }
  return kind;
}

/** a decimal digit of any script (one UTF-16 unit: the scripts a number is written in) */
const isDigitUnit = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 0x660 && DIGIT.test(String.fromCharCode(c)));

/** Whether a digit stands before `i`, past blanks and what folds to nothing, within a few characters. */
function digitBefore(text: string, i: number): boolean {
  for (let k = i - 1, n = 0; k >= 0 && n < 4; k--, n++) {
    const c = text.charCodeAt(k);
    if (isDigitUnit(c)) return true;
    if (c !== 32 && !(c >= 0xd800 && c <= 0xdfff) && foldCodePoint(c) !== "") return false;
  }
  return false;
}

/** Whether a digit stands at or after `i`, past blanks and what folds to nothing (a keycap's selectors), within a few characters. */
function digitAfter(text: string, i: number): boolean {
  for (let k = i, n = 0; k < text.length && n < 4; k++, n++) {
    const c = text.charCodeAt(k);
    if (isDigitUnit(c)) return true;
    if (c !== 32 && !(c >= 0xd800 && c <= 0xdfff) && (c < 0x80 || foldCodePoint(c) !== "")) return false;
  }
  return false;
}

/** What each non-ASCII code point reads as (null: itself), found once per code point. */
const FOLDED = new Map<number, string | null>();

function foldCodePoint(cp: number): string | null {
  let f = FOLDED.get(cp);
  if (f === undefined) {
    f = readAs(cp);
    FOLDED.set(cp, f);
  }
  return f;
}

const DIGIT = /^\p{Nd}$/u;
/** what NFKC may turn a code point into and still be kept: letters, digits and marks, or one character */
const WORDLIKE = /^[\p{L}\p{N}\p{M}]+$/u;

/** what no reader sees: Unicode's default-ignorable code points (zero-width space and joiners, bidi marks and isolates, the Arabic letter mark, soft hyphen, variation selectors, Hangul fillers, tag characters, ...) */
const INVISIBLE = /^\p{Default_Ignorable_Code_Point}$/u;

function readAs(cp: number): string | null {
  // invisible, as a class: a mark or selector inside a number or an address ("054\u200F-123", a keycap's U+FE0F)
  if (INVISIBLE.test(String.fromCodePoint(cp))) return "";
  // combining diacritical marks (a letter's accents written apart, or stacked on a digit or "@")
  if (
    (cp >= 0x300 && cp <= 0x36f) ||
    (cp >= 0x1ab0 && cp <= 0x1aff) ||
    (cp >= 0x1dc0 && cp <= 0x1dff) ||
    (cp >= 0x20d0 && cp <= 0x20ff) ||
    (cp >= 0xfe20 && cp <= 0xfe2f)
  )
    return "";
  // dashes, minus, the long-vowel mark (ー, ｰ) typed between groups of digits
  if ((cp >= 0x2010 && cp <= 0x2015) || cp === 0x2212 || cp === 0xfe58 || cp === 0xfe63 || cp === 0xff0d) return "-";
  if (cp === 0x30fc || cp === 0xff70 || cp === 0x2e3a || cp === 0x2e3b) return "-";
  // the ideographic full stop (。, ｡) as the dot of an address
  if (cp === 0x3002 || cp === 0xff61) return ".";
  if (cp === 0x2028 || cp === 0x2029) return "\n";
  // the ordinal indicators stay: the address patterns read "nº 12" and "2º andar" as written
  if (cp === 0xaa || cp === 0xba) return null;
  const ch = String.fromCodePoint(cp);
  if (DIGIT.test(ch)) return asciiDigit(cp);
  const nfkc = ch.normalize("NFKC");
  if (nfkc === ch) return null;
  // an expansion into punctuation (… as "...", ½ as "1⁄2") is left alone: it is not how the text reads
  if (nfkc.length > 1 && !WORDLIKE.test(nfkc) && [...nfkc].length > 1) return null;
  // what NFKC left a mark on (a compatibility form with an accent) is folded once more
  return [...nfkc]
    .map((c) => (category(c.codePointAt(0) as number) === MARK ? (readAs(c.codePointAt(0) as number) ?? c) : c))
    .join("");
}

/** A decimal digit of any script as its ASCII digit: every script's digits are a run of ten from its zero. */
function asciiDigit(cp: number): string {
  const nfkc = String.fromCodePoint(cp).normalize("NFKC");
  if (nfkc.length === 1 && nfkc >= "0" && nfkc <= "9") return nfkc;
  let zero = cp;
  while (zero > cp - 9 && DIGIT.test(String.fromCodePoint(zero - 1))) zero--;
  return String(cp - zero);
}
