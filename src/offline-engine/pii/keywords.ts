/**
 * Keyword gates: one pass over a text's words tells which keyword lists occur in it, so a pattern
 * that cannot match without one of its keywords is not run at all (most prompts carry no street
 * word of any of the 30 languages the address patterns know).
 *
 * A gate is only ever a necessary condition, never a decision: when it says "maybe", the pattern
 * runs as before, so what the recognizer finds is unchanged. It errs on the side of "maybe": words
 * are compared in lower case (the patterns are case-sensitive after their first letter), and a
 * word is looked up by a 32-bit hash (two words sharing a hash only let a pattern run).
 *
 * Words here are runs of letters (`\p{L}`): a keyword of a pattern that no letter may precede
 * ("rue" after a non-letter) and no letter may follow is such a run. A keyword with punctuation
 * ("u.", "c/", "pr-ti") is gated on its first run of letters ("u", "c", "pr").
 *
 * Endings ("…vej 7", "…straße 5") are gated on the words that a number follows (after spaces and
 * at most one "."): those words' endings are looked up, not every word's.
 */
import { tickCpuBudget } from "../budget";
import { category, codePointAt, groupSeparator, isSpace, LETTER, MARK } from "./chars";

/** The keyword lists, one bit each. */
export const STREET_WORD_AFTER = 1;
export const STREET_WORD_BEFORE = 2;
export const STREET_WORD_ROMANCE = 4;
export const STREET_ENDING = 8;
export const STREET_SUFFIX_EN = 16;
export const STREET_PREPOSITION = 32;
/** labels of patterns that start at an ASCII word boundary (`\b`, case-insensitive): see ASCII_BOUNDARY */
export const POSTCODE_LABEL = 64;
export const UNIT_LABEL = 128;
/** the phrases before a lower-case name ("hey its felipe carvalho"): their places are kept too (cueStarts) */
export const NAME_CUE = 256;
/** two words in capitals side by side ("JARRED WALKER") */
export const CAPS_PAIR = 512;
/** a word that starts like a phrase announcing an address ("address", "ship to"): see gatePrefixes */
export const ADDRESS_CUE_PREFIX = 1024;
/** the words of a post-office box ("Box", "Postfach", "Apartado", "B.P."...) */
export const POSTBOX_WORD = 2048;
/** the first words of a conversation's cues (names-thread.ts): closings, greetings, authors, roles, list labels */
export const CLOSING_WORD = 4096;
export const GREETING_WORD = 8192;
export const AUTHOR_WORD = 16384;
export const ROLE_WORD = 32768;
export const ATTENDEE_WORD = 65536;
export const NAME_FIELD_WORD = 131072;
/** the words of spoken numbers (spelled.ts): only counted (spokenWordCount) */
export const SPOKEN_NUMBER = 262144;
const THREAD_WORD = CLOSING_WORD | GREETING_WORD | AUTHOR_WORD | ROLE_WORD | ATTENDEE_WORD | NAME_FIELD_WORD;

/**
 * Lists whose patterns start at `\b` in a case-insensitive Unicode pattern: `\b` is an ASCII word
 * boundary there, so such a pattern may start inside a run of letters, right after a non-ASCII one
 * ("éstreet"), and "ſ" and "K" (the Kelvin sign) count as ASCII letters. A word with any non-ASCII
 * character therefore turns these lists on, whatever it is.
 */
const ASCII_BOUNDARY = POSTCODE_LABEL | UNIT_LABEL | NAME_CUE | ADDRESS_CUE_PREFIX;

/**
 * Lists whose words' places are kept too (gatedLines): their patterns never run over a line break,
 * so only the lines holding one of their words can hold a match.
 */
const PLACED = STREET_WORD_AFTER | STREET_WORD_BEFORE | STREET_PREPOSITION | STREET_ENDING | THREAD_WORD;

/** Lower case of a UTF-16 unit for the hash (itself when its lower case is not one unit); 0: not computed yet. */
const LOWER = new Uint16Array(0x10000);

function lower(c: number): number {
  if (c < 0x80) return c >= 65 && c <= 90 ? c + 32 : c;
  let l = LOWER[c];
  if (l === 0) {
    // ſ (long s) matches "s" in a case-insensitive pattern; toLowerCase keeps it
    const s = c === 0x17f ? "s" : String.fromCharCode(c).toLowerCase();
    l = s.length === 1 ? s.charCodeAt(0) : c;
    LOWER[c] = l;
  }
  return l;
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** hash of a word (lower case) -> the lists it belongs to */
const WORDS = new Map<number, number>();
/** 1 where the low 16 bits of a hash in WORDS are these (a word whose bits are not is in no list) */
const WORD_LOW_BITS = new Uint8Array(0x10000);
/** hash of an ending, read backwards (lower case) -> the lists it belongs to; the longest ending's length */
const ENDINGS = new Map<number, number>();
let longestEnding = 0;

/** The first run of letters of a keyword ("u." -> "u", "pr-ti" -> "pr"), as the text's words are cut. */
function letterRun(word: string): string {
  let i = 0;
  while (i < word.length && category(codePointAt(word, i)) !== LETTER) i++;
  let j = i;
  while (j < word.length) {
    const cp = codePointAt(word, j);
    if (category(cp) !== LETTER) break;
    j += cp > 0xffff ? 2 : 1;
  }
  return word.slice(i, j);
}

function hashForward(s: string, from: number, to: number): number {
  let h = FNV_OFFSET;
  for (let i = from; i < to; i++) h = Math.imul(h ^ lower(s.charCodeAt(i)), FNV_PRIME);
  return h >>> 0;
}

/**
 * Lists registered but not yet hashed: hashing them needs the Unicode character tests (chars.ts),
 * whose tables a gateway that never redacts should not hold, so it waits for the first scan.
 */
const pending: (() => void)[] = [];

/** Registers keywords (whole words) under `flag`. */
export function gateWords(flag: number, words: Iterable<string>): void {
  const list = [...words];
  pending.push(() => addWords(flag, list));
}

/**
 * Registers word beginnings under `flag`: the first three characters (ASCII, lower case) of
 * the phrases of a pattern that may start inside a word ("find" matches in "findings"), a
 * two-letter word with the space after it ("go "). The starts of such words are kept too
 * (prefixStarts). Checked on ASCII words only: a word with any other character turns the flag
 * on (see ASCII_BOUNDARY) and leaves the starts to a scan of the text.
 */
export function gatePrefixes(flag: number, prefixes: Iterable<string>): void {
  for (const p of prefixes) {
    if (!/^[a-z]{2}[a-z ]$/.test(p)) throw new Error(`gatePrefixes: "${p}" is not three ASCII characters`);
    const code = (p.charCodeAt(0) << 14) | (p.charCodeAt(1) << 7) | p.charCodeAt(2);
    PREFIXES.set(code, (PREFIXES.get(code) ?? 0) | flag);
    PREFIX_PAIRS[code >> 7] = 1;
  }
}

/** the first three characters of a word, packed (lower case) -> the lists whose prefixes they are */
const PREFIXES = new Map<number, number>();
/** 1 where two first characters (packed) begin a prefix: most words skip the lookup */
const PREFIX_PAIRS = new Uint8Array(128 * 128);

/** Registers word endings under `flag`: gated on the words a number follows. */
export function gateEndings(flag: number, endings: Iterable<string>): void {
  const list = [...endings];
  pending.push(() => addEndings(flag, list));
}

function addWords(flag: number, words: string[]): void {
  for (const w of words) {
    const run = letterRun(w);
    if (run.length === 0) continue;
    const h = hashForward(run, 0, run.length);
    WORDS.set(h, (WORDS.get(h) ?? 0) | flag);
    WORD_LOW_BITS[h & 0xffff] = 1;
  }
}

function addEndings(flag: number, endings: string[]): void {
  for (const e of endings) {
    const run = letterRun(e);
    if (run.length === 0) continue;
    let h = FNV_OFFSET;
    for (let i = run.length - 1; i >= 0; i--) h = Math.imul(h ^ lower(run.charCodeAt(i)), FNV_PRIME);
    h >>>= 0;
    ENDINGS.set(h, (ENDINGS.get(h) ?? 0) | flag);
    longestEnding = Math.max(longestEnding, run.length);
  }
}

let lastText: string | null = null;
let lastFlags = 0;
/** starts of the words of NAME_CUE in the last text, or null: a word with a non-ASCII character (see ASCII_BOUNDARY) */
let lastCues: number[] | null = [];
/** starts of the words with a prefix of ADDRESS_CUE_PREFIX in the last text, or null (as lastCues) */
let lastPrefixCues: number[] | null = [];
/** whether the last text has a digit beside "O", "o", "I" or "l" (index.ts ocrDigits: /\d[OoIl]|[OoIl]\d/) */
let lastOcrPair = false;
/** how many words of SPOKEN_NUMBER the last text holds, or Infinity (a word with a non-ASCII character, as lastCues) */
let lastSpoken = 0;

/** The flags of the keyword lists that occur in `text` (maybe: see above). */
export function keywordFlags(text: string): number {
  if (text !== lastText) scan(text);
  return lastFlags;
}

/**
 * Where a word of NAME_CUE starts in `text`, in order: a NAME_CUE pattern can only match there.
 * Null when it may match elsewhere too (a word with a non-ASCII character): then scan the text.
 */
export function cueStarts(text: string): readonly number[] | null {
  if (text !== lastText) scan(text);
  return lastCues;
}

/**
 * Where a word with a prefix of ADDRESS_CUE_PREFIX starts in `text`, in order (gatePrefixes);
 * null when the text has a word with a non-ASCII character.
 */
export function prefixStarts(text: string): readonly number[] | null {
  if (text !== lastText) scan(text);
  return lastPrefixCues;
}

/**
 * How many words of SPOKEN_NUMBER `text` holds (maybe more: see above), or Infinity when it has a word
 * with a non-ASCII character: such a word may be cut otherwise by the reader of spoken numbers, or
 * fold onto one of theirs ("ſ", "K").
 */
export function spokenWordCount(text: string): number {
  if (text !== lastText) scan(text);
  return lastSpoken;
}

/** Whether `text` has a digit beside a letter a scanner takes for one ("O1451", "9I7", "4l8"), found by the same pass. */
export function ocrPair(text: string): boolean {
  if (text !== lastText) scan(text);
  return lastOcrPair;
}

/**
 * Forgets the last text (detectPii calls it when done): the next text is scanned even when it is
 * the same, and no prompt stays referenced here.
 */
export function forgetText(): void {
  lastText = null;
  lastCues = [];
  lastPrefixCues = [];
  placed.length = 0;
  resetRuns();
  // the token arrays of a long text: let them go
  if (tokenStarts.length > 4096) tokenStarts.length = tokenEnds.length = 0;
}

/**
 * The name scanner's words (names.ts), found by the same pass: a letter, then letters, marks,
 * "'", "’" and "-", less a trailing "'s" or trailing "'", "’" and "-". Such a word is one or more
 * of this pass's words (runs of letters) with those characters between them. Their starts and
 * ends (exclusive) are in tokenStarts and tokenEnds, valid until the next text; returns how many.
 */
export function nameTokens(text: string): number {
  if (text !== lastText) scan(text);
  return tokenCount;
}
export const tokenStarts: number[] = [];
export const tokenEnds: number[] = [];
let tokenCount = 0;

/**
 * The runs of digits a number in groups (a card's, an SSN's) can lie in, found by the same pass:
 * maximal runs of the digits 0-9 each apart by nothing or by what GROUP_SEPARATOR reads through
 * (chars.ts), of DIGIT_RUN_MIN digits or more, as (start, end, digits) triples; valid until the
 * next text.
 */
export function digitRuns(text: string): readonly number[] {
  if (text !== lastText) scan(text);
  return runs;
}
/** The fewest digits of a run digitRuns keeps (a number spelled digit by digit's seven: the least the recognizers ask for). */
export const DIGIT_RUN_MIN = 7;
const runs: number[] = [];
/** the run being read: where it starts (-1: none), its last digit, its digits */
let runStart = -1;
let runLast = -1;
let runDigits = 0;

/**
 * The digit at `i` goes on with the run being read, or ends it and starts the next. Returns whether
 * "O", "o", "I" or "l" touches it (ocrDigits reads such a text's numbers again).
 */
function addDigit(text: string, i: number): boolean {
  if (runStart >= 0 && (i === runLast + 1 || groupSeparator(text, runLast + 1, i))) {
    runDigits++;
    runLast = i;
  } else {
    endRun();
    runStart = i;
    runLast = i;
    runDigits = 1;
  }
  return isOcrLetter(text.charCodeAt(i + 1)) || isOcrLetter(text.charCodeAt(i - 1));
}

function resetRuns(): void {
  runs.length = 0;
  runStart = -1;
  runDigits = 0;
}

function endRun(): void {
  if (runDigits >= DIGIT_RUN_MIN) runs.push(runStart, runLast + 1, runDigits);
  runStart = -1;
  runDigits = 0;
}

const APOSTROPHE = 0x27;
const RIGHT_QUOTE = 0x2019;
const HYPHEN = 0x2d;

/** Adds the name token text[start, end), less its trailing "'s", or trailing "'", "’" and "-". */
function addToken(text: string, start: number, end: number): void {
  const last = text.charCodeAt(end - 1);
  const beforeLast = text.charCodeAt(end - 2);
  if (last === 0x73 && end - start >= 2 && (beforeLast === APOSTROPHE || beforeLast === RIGHT_QUOTE)) end -= 2;
  else {
    while (end > start) {
      const c = text.charCodeAt(end - 1);
      if (c !== APOSTROPHE && c !== RIGHT_QUOTE && c !== HYPHEN) break;
      end--;
    }
  }
  tokenStarts[tokenCount] = start;
  tokenEnds[tokenCount] = end;
  tokenCount++;
}

function scan(text: string): void {
  while (pending.length > 0) pending.pop()?.();
  const n = text.length;
  let flags = 0;
  const cues: number[] = [];
  const prefixCues: number[] = [];
  placed.length = 0;
  let ascii = true;
  let spoken = 0;
  let ocr = false;
  // the run of letters before the current one ended in capitals at this index (CAPS_PAIR), else -1
  let capsEnd = -1;
  // the name token being read (nameTokens): its start (-1: none) and where it may go on
  let tokenStart = -1;
  let tokenEnd = 0;
  tokenCount = 0;
  resetRuns();
  let i = 0;
  while (i < n) {
    tickCpuBudget();
    // skip to a letter
    let c = text.charCodeAt(i);
    if (c < 0x80) {
      if (!((c >= 65 && c <= 90) || (c >= 97 && c <= 122))) {
        if (c >= 48 && c <= 57 && addDigit(text, i)) ocr = true;
        // "'" and "-" right after a token's letters go on with it; anything else ends it
        if (tokenStart >= 0) {
          if (i === tokenEnd && (c === APOSTROPHE || c === HYPHEN)) tokenEnd = i + 1;
          else {
            addToken(text, tokenStart, tokenEnd);
            tokenStart = -1;
          }
        }
        i++;
        continue;
      }
    } else {
      const cp = codePointAt(text, i);
      const kind = category(cp);
      if (kind !== LETTER) {
        const width = cp > 0xffff ? 2 : 1;
        // so do "’" and marks
        if (tokenStart >= 0) {
          if (i === tokenEnd && (cp === RIGHT_QUOTE || kind === MARK)) tokenEnd = i + width;
          else {
            addToken(text, tokenStart, tokenEnd);
            tokenStart = -1;
          }
        }
        i += width;
        continue;
      }
    }
    const start = i;
    // a word right after a token's letters and marks goes on with it
    if (tokenStart >= 0 && start !== tokenEnd) addToken(text, tokenStart, tokenEnd);
    if (tokenStart < 0 || start !== tokenEnd) tokenStart = start;
    let h = FNV_OFFSET;
    let wordAscii = true;
    let capitals = true;
    while (i < n) {
      c = text.charCodeAt(i);
      if (c < 0x80) {
        if (c >= 65 && c <= 90) h = Math.imul(h ^ (c + 32), FNV_PRIME);
        else if (c >= 97 && c <= 122) {
          h = Math.imul(h ^ c, FNV_PRIME);
          capitals = false;
        } else break;
        i++;
      } else {
        const cp = codePointAt(text, i);
        if (category(cp) !== LETTER) break;
        wordAscii = false;
        h = Math.imul(h ^ lower(c), FNV_PRIME);
        if (cp > 0xffff) h = Math.imul(h ^ text.charCodeAt(i + 1), FNV_PRIME);
        i += cp > 0xffff ? 2 : 1;
      }
    }
    tokenEnd = i;
    // most words are no keyword: their hash's low bits settle it without the map
    const f = WORD_LOW_BITS[h & 0xffff] === 0 ? undefined : WORDS.get(h >>> 0);
    if (f !== undefined) {
      flags |= f;
      if (f & NAME_CUE) cues.push(start);
      if (f & SPOKEN_NUMBER) spoken++;
      if (f & PLACED) placed.push(start, f & PLACED);
    }
    if (!wordAscii) {
      ascii = false;
      flags |= ASCII_BOUNDARY;
    } else if (i - start >= 2) {
      // ASCII letters: lower case is | 32 (the third character may be a space: "go ")
      const pair = ((text.charCodeAt(start) | 32) << 7) | (text.charCodeAt(start + 1) | 32);
      if (PREFIX_PAIRS[pair] === 1) {
        const third = start + 2 < n ? text.charCodeAt(start + 2) : 0;
        const p = third < 128 ? PREFIXES.get((pair << 7) | (third >= 65 && third <= 90 ? third + 32 : third)) : undefined;
        if (p !== undefined) {
          flags |= p;
          prefixCues.push(start);
        }
      }
    }
    // capitals (a non-ASCII word may be): two words of them with only blanks between
    if (!wordAscii || capitals) {
      if (capsEnd >= 0 && i - start >= 2 && onlyBlanks(text, capsEnd, start)) flags |= CAPS_PAIR;
      capsEnd = i;
    } else capsEnd = -1;
    flags |= numberAfter(text, start, i);
  }
  if (tokenStart >= 0) addToken(text, tokenStart, tokenEnd);
  endRun();
  lastText = text;
  lastFlags = flags;
  lastCues = ascii ? cues : null;
  lastPrefixCues = ascii ? prefixCues : null;
  lastSpoken = ascii ? spoken : Number.POSITIVE_INFINITY;
  lastOcrPair = ocr;
}

/** "O", "o", "I", "l" (NaN, past either end of the text: no) */
const isOcrLetter = (c: number): boolean => c === 79 || c === 111 || c === 73 || c === 108;

/** (start, flags) of the words of PLACED lists in the last text, in text order */
const placed: number[] = [];

/**
 * Every match of `pattern` (global) in `text`, as matchAll gives them, for a pattern of a PLACED
 * list `flag` that cannot match without one of its words (the keywords above) and never reads
 * past a line break ("\n") nor treats one differently from the text's start or end: it runs on the
 * lines that hold such a word only, each line on its own. The matches' `index` is into `text`.
 */
export function* onGatedLines(text: string, pattern: RegExp, flag: number): Generator<RegExpExecArray> {
  if (text !== lastText) scan(text);
  // the lines first: what runs between two matches may scan another text
  const lines: number[] = [];
  let lineEnd = -1;
  for (let k = 0; k < placed.length; k += 2) {
    const at = placed[k] as number;
    if (at < lineEnd || ((placed[k + 1] as number) & flag) === 0) continue;
    const lineStart = text.lastIndexOf("\n", at - 1) + 1;
    lineEnd = text.indexOf("\n", at);
    if (lineEnd < 0) lineEnd = text.length;
    lines.push(lineStart, lineEnd);
  }
  for (let k = 0; k < lines.length; k += 2) {
    const lineStart = lines[k] as number;
    const end = lines[k + 1] as number;
    const line = lineStart === 0 && end === text.length ? text : text.slice(lineStart, end);
    pattern.lastIndex = 0;
    for (let m = pattern.exec(line); m !== null; m = pattern.exec(line)) {
      m.index += lineStart;
      yield m;
    }
  }
}

/** Where the words of PLACED list `flag` start in `text`, in order (a copy). */
export function gatedStarts(text: string, flag: number): number[] {
  if (text !== lastText) scan(text);
  const out: number[] = [];
  for (let k = 0; k < placed.length; k += 2) if (((placed[k + 1] as number) & flag) !== 0) out.push(placed[k] as number);
  return out;
}

/** Whether text[from, to) is one or more spaces and tabs. */
function isLetterCode(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c >= 0xc0;
}

function onlyBlanks(text: string, from: number, to: number): boolean {
  if (to <= from) return false;
  // (a middle initial's period: "HEIKKI J. LAITINEN")
  const first = from > 0 && text.charCodeAt(from) === 46 && !isLetterCode(text.charCodeAt(from - 2)) ? from + 1 : from;
  if (to <= first) return false;
  for (let k = first; k < to; k++) {
    const c = text.charCodeAt(k);
    if (c !== 32 && c !== 9) return false;
  }
  return true;
}

/** A number after the word text[start, end) (past one "." and spaces): the flags of its endings (their places kept), else 0. */
function numberAfter(text: string, start: number, end: number): number {
  const n = text.length;
  let k = end;
  if (k < n && text.charCodeAt(k) === 46) k++;
  const spaceFrom = k;
  while (k < n && isSpace(text.charCodeAt(k))) k++;
  if (k === spaceFrom || k >= n) return 0;
  const d = text.charCodeAt(k);
  if (d < 48 || d > 57) return 0;
  const ending = endingFlags(text, start, end);
  if (ending & PLACED) placed.push(start, ending & PLACED);
  return ending;
}

function endingFlags(text: string, start: number, end: number): number {
  let flags = 0;
  let h = FNV_OFFSET;
  const from = Math.max(start, end - longestEnding);
  for (let i = end - 1; i >= from; i--) {
    h = Math.imul(h ^ lower(text.charCodeAt(i)), FNV_PRIME);
    flags |= ENDINGS.get(h >>> 0) ?? 0;
  }
  return flags;
}
