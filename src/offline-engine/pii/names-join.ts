/**
 * Names whose parts the recognizers find apart (or one part only), joined once the overlaps are
 * resolved (issue 41, the fourth blind part's forms):
 * - a nickname in quotes between the given name and the surname: `Robert "Bobby" Thompson`;
 * - the surname first and a comma, at the start of a field: `KOWALSKA, Marta`, `O'Donoghue, Niamh`,
 *   `DOE-WILLIAMS, Teresa A.`, `GARCIA, ROBERTO` (all capitals: the given name must be a listed one);
 * - a capitalised word joined to a name by "and" in one of the engine's languages: `Femke en Daan`,
 *   `Aistė ir Tomas`, `Can ve Elif Şahin` (the word must be a name of the lists).
 * Each reads only the few characters around a name already found (the all-capitals form alone
 * scans the text, and only a text with ", " between two capitals).
 */
import { isEnglishWord, isGazetteerName, isStopword } from "./gazetteer";
import { isFamilyName, isGivenName } from "./given-names";
import { GIVEN_NAMES, NOT_NAME_WORDS, SURNAME_PARTICLE_PATTERN } from "./name-lists";
import { isPlaceName } from "./places";
import { entity, type PiiEntity } from "./types";

const WORD = String.raw`\p{Lu}[\p{L}\p{M}'’-]{0,30}`;
const PARTICLE = SURNAME_PARTICLE_PATTERN;
/** a nickname in quotes, then one to three capitalised words (particles between) */
const NICK_AFTER = new RegExp(
  String.raw`[ \t]{1,4}["“„«‘'](\p{Lu}[\p{L}\p{M}.'’-]{0,19})["”»’'][ \t]{1,4}(${WORD}(?:[ \t]{1,4}(?:${PARTICLE}[ \t]{1,4}){0,3}${WORD}){0,2})`,
  "uy",
);
/** a surname and its comma right before a given name, the surname opening a field */
const SURNAME_BEFORE = new RegExp(String.raw`(?:^|[\n\t;|:>])[ \t]{0,4}(${WORD}),[ \t]{1,4}$`, "u");
/** a list that goes on after a name ("Anneke, Joris, Maud and …"): no surname-first form */
const LIST_GOES_ON = /,[ \t]{0,4}\p{Lu}|[ \t]{1,4}(?:and|und|et|en|y|og|och|ja|i|&)[ \t]{1,4}\p{Lu}/uy;
/** a middle initial after a given name: " A." */
const INITIAL_AFTER = /[ \t]{1,4}\p{Lu}\.(?![\p{L}\p{N}])/uy;
/** two words in capitals, the second a given name, a comma between, opening a field */
const CAPS_INVERTED = /(?:^|[\n\t;|:])[ \t]{0,4}(\p{Lu}[\p{Lu}'’-]{1,40}),[ \t]{1,4}(\p{Lu}{2,40})(?![\p{L}\p{M}])/gmu;
const CAPS_PAIR = /\p{Lu}\p{Lu}, \p{Lu}\p{Lu}/u;

/** "and" (and "or") in the languages the engine reads; the English ones are marked */
const CONJUNCTIONS = new Set(
  "and or & und oder et ou en of ja tai ir arba i y e o og eller och és vagy ve veya и или και ή a oraz lub și sau dan atau at ni".split(
    " ",
  ),
);
const ENGLISH_CONJUNCTIONS = new Set(["and", "or", "&"]);
const CONJ_AFTER =
  /[ \t]{1,4}([\p{L}&]{1,5})[ \t]{1,4}(\p{Lu}[\p{Ll}\p{M}'’]{1,30}(?:-\p{Lu}[\p{Ll}\p{M}'’]{1,30})?)(?![\p{L}\p{M}])/uy;
const CONJ_BEFORE =
  /(?:^|[^\p{L}\p{M}])(\p{Lu}[\p{Ll}\p{M}'’]{1,30}(?:-\p{Lu}[\p{Ll}\p{M}'’]{1,30})?)[ \t]{1,4}([\p{L}&]{1,5})[ \t]{1,4}$/u;

/** A word that may be a part of a name: no everyday English word (unless a listed given name), no function word. */
function namePart(word: string): boolean {
  const bare = word.replace(/['’]s$/, "");
  if (NOT_NAME_WORDS.has(bare) || isStopword(bare)) return false;
  return !isEnglishWord(bare) || GIVEN_NAMES.has(bare);
}

/**
 * Whether a word that only a conjunction ties to a name is one too: never an everyday English word
 * or a function word; beside "and" or "or" a name of the lists, beside another language's "and" any
 * other capitalised word (the lists miss many: "Eero ja Jussi").
 */
function tiedName(word: string, englishConjunction: boolean): boolean {
  const parts = word.split("-");
  if (!parts.every(namePart)) return false;
  return !englishConjunction || parts.every((p) => GIVEN_NAMES.has(p) || isGivenName(p) || isGazetteerName(p));
}

/** Words before a place ("to Paris and Berlin"): a name after one is no anchor for another. */
const LOCATIVES = new Set(
  "to in from at near via into nach aus von bei à au aux dans en de para em na do w z v ve da i till från".split(" "),
);

/** The word that ends right before `at` (past blanks), lower case. */
function wordBefore(text: string, at: number): string {
  // (ASCII read by character code; the pattern decides where a character outside ASCII stands)
  const lo = Math.max(0, at - 16);
  let k = at;
  while (k > lo && isBlankCode(text.charCodeAt(k - 1))) k--;
  if (k === at || at - k > 4) return "";
  let s = k;
  while (s > lo) {
    const c = text.charCodeAt(s - 1);
    if (c >= 0x80) return wordBeforeByPattern(text, at);
    if (!((c >= 65 && c <= 90) || (c >= 97 && c <= 122))) break;
    s--;
  }
  return s === k ? "" : text.slice(s, k).toLowerCase();
}

function wordBeforeByPattern(text: string, at: number): string {
  const m = /([\p{L}]{1,16})[ \t]{1,4}$/u.exec(text.slice(Math.max(0, at - 16), at));
  return m ? (m[1] as string).toLowerCase() : "";
}

const isBlankCode = (c: number): boolean => c === 32 || c === 9;

/**
 * Whether the nearest character before `start` past blanks (at least one), not before `lo`, is one
 * of `marks`: the last character NICK_BEFORE or SURNAME_BEFORE needs before their blanks.
 */
function markBeforeBlanks(text: string, lo: number, start: number, marks: string): boolean {
  let k = start;
  while (k > lo && isBlankCode(text.charCodeAt(k - 1))) k--;
  return k < start && k > lo && marks.includes(text[k - 1] as string);
}

/**
 * Whether CONJ_BEFORE's conjunction on text[lo, start) may be one of CONJUNCTIONS: the letters (and
 * "&") between a blank and the blanks that end the window, which the pattern takes as its
 * conjunction; true when a character outside ASCII leaves it to the pattern.
 */
function conjunctionBefore(text: string, lo: number, start: number): boolean {
  let k = start;
  while (k > lo && isBlankCode(text.charCodeAt(k - 1))) k--;
  if (k === start) return false;
  let s = k;
  while (s > lo) {
    const c = text.charCodeAt(s - 1);
    if (c >= 0x80) return true;
    if (!((c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 38)) break;
    s--;
  }
  if (s === k || k - s > 5) return false;
  return CONJUNCTIONS.has(text.slice(s, k).toLowerCase());
}

/** A surname written first: a name of the lists, or in capitals and no everyday word. */
function surnameFirst(word: string): boolean {
  if (!namePart(word)) return false;
  const parts = word.split(/[-'’]/).filter((p) => p.length > 1);
  if (word === word.toUpperCase()) return parts.every((p) => !isEnglishWord(p) || isGazetteerName(p));
  // a given name before the comma is a list of given names ("Anneke, Joris, Maud")
  if (GIVEN_NAMES.has(word) || isGivenName(word)) return false;
  return parts.some((p) => isGazetteerName(p) || isFamilyName(p));
}

/** Whether entities other than names lie in [from, to). */
function othersIn(entities: PiiEntity[], from: number, to: number): boolean {
  return entities.some((e) => e.type !== "name" && e.start < to && e.end > from);
}

/** The list with one name over [from, to), in place of every name it overlaps. */
function replaced(text: string, entities: PiiEntity[], from: number, to: number, score: number): PiiEntity[] {
  const kept = entities.filter((e) => e.end <= from || e.start >= to);
  const joined = entity("name", text, from, to, score);
  const at = kept.findIndex((e) => e.start >= to);
  kept.splice(at < 0 ? kept.length : at, 0, joined);
  return kept;
}

function sticky(re: RegExp, text: string, at: number): RegExpExecArray | null {
  re.lastIndex = at;
  return re.exec(text);
}

/** The end of a name at [start, end) once a nickname and a surname after it are taken in, or -1. */
function nicknameEnd(text: string, end: number): number {
  const m = sticky(NICK_AFTER, text, end);
  if (!m) return -1;
  const surname = (m[2] as string).split(/[ \t]+/);
  let n = surname.length;
  while (n > 0 && !namePart(surname[n - 1] as string)) n--;
  if (n === 0 || !namePart(surname[0] as string)) return -1;
  const kept = surname.slice(0, n).join(" ");
  const from = end + m[0].length - (m[2] as string).length;
  let to = from + (m[2] as string).indexOf(kept) + kept.length;
  if (/['’]s$/.test(kept)) to -= 2;
  return to;
}

/** a given name and a nickname in quotes right before a surname found alone: `Anna-Karin "Kajsa" Holm` */
const NICK_BEFORE =
  /(?:^|[^\p{L}\p{M}])(\p{Lu}[\p{L}\p{M}'’-]{0,30})[ \t]{1,4}["“„«‘'](\p{Lu}[\p{L}\p{M}.'’-]{0,19})["”»’'][ \t]{1,4}$/u;

/** The start of a surname found alone once a given name and a nickname before it are taken in, or -1. */
function nicknameStart(text: string, start: number): number {
  const lo = Math.max(0, start - 60);
  if (!markBeforeBlanks(text, lo, start, "\"”»’'")) return -1;
  const m = NICK_BEFORE.exec(text.slice(lo, start));
  if (!m) return -1;
  const given = m[1] as string;
  if (!given.split("-").every((p) => namePart(p) && (GIVEN_NAMES.has(p) || isGivenName(p)))) return -1;
  return lo + m.index + m[0].indexOf(given);
}

/** The start of a name once "SURNAME, " before it is taken in, or -1 (also when a name found ends there: a list). */
function invertedStart(text: string, start: number, entities: PiiEntity[]): number {
  const lo = Math.max(0, start - 40);
  if (!markBeforeBlanks(text, lo, start, ",")) return -1;
  const m = SURNAME_BEFORE.exec(text.slice(lo, start));
  if (!m || !surnameFirst(m[1] as string)) return -1;
  const at = lo + m.index + m[0].length - m[0].replace(/^[^\p{L}]*/u, "").length;
  const surnameEnd = at + (m[1] as string).length;
  return entities.some((e) => e.end === surnameEnd) ? -1 : at;
}

/** A name tied by a conjunction after or before the name at [start, end): its span, or null. */
function coordinated(text: string, start: number, end: number): [number, number] | null {
  if (LOCATIVES.has(wordBefore(text, start))) return null;
  const after = sticky(CONJ_AFTER, text, end);
  if (after) {
    const conj = (after[1] as string).toLowerCase();
    if (CONJUNCTIONS.has(conj) && tiedName(after[2] as string, ENGLISH_CONJUNCTIONS.has(conj)))
      return [end + after[0].length - (after[2] as string).length, end + after[0].length];
  }
  const lo = Math.max(0, start - 40);
  const before = conjunctionBefore(text, lo, start) ? CONJ_BEFORE.exec(text.slice(lo, start)) : null;
  if (before) {
    const conj = (before[2] as string).toLowerCase();
    const word = before[1] as string;
    if (CONJUNCTIONS.has(conj) && tiedName(word, ENGLISH_CONJUNCTIONS.has(conj))) {
      const at = lo + before.index + before[0].indexOf(word);
      return [at, at + word.length];
    }
  }
  return null;
}

/** A character that may be \p{Lu} (an ASCII capital, or any character outside ASCII) at `at`. */
function mayBeUpper(text: string, at: number): boolean {
  const c = text.charCodeAt(at);
  return (c >= 65 && c <= 90) || c >= 0x80;
}

/** CAPS_PAIR's necessary condition, read at each ", ": two characters that may be capitals on each side. */
function capsAroundComma(text: string): boolean {
  for (let p = text.indexOf(", "); p >= 0; p = text.indexOf(", ", p + 1))
    if (p >= 2 && mayBeUpper(text, p - 2) && mayBeUpper(text, p - 1) && mayBeUpper(text, p + 2) && mayBeUpper(text, p + 3))
      return true;
  return false;
}

/** INITIAL_SURNAME_QUICK's necessary condition, read at each ".": a capital before it, one after it (past a blank), then a letter. */
function capitalBeforePeriod(text: string): boolean {
  for (let p = text.indexOf("."); p >= 0; p = text.indexOf(".", p + 1)) {
    if (p < 1 || !mayBeUpper(text, p - 1)) continue;
    const q = text.charCodeAt(p + 1) === 32 ? p + 2 : p + 1;
    const c = text.charCodeAt(q + 1);
    if (mayBeUpper(text, q) && ((c >= 97 && c <= 122) || c >= 0x80)) return true;
  }
  return false;
}

/** Names in capitals written surname first: "GARCIA, ROBERTO" (the second a listed given name). */
function capsInverted(text: string, entities: PiiEntity[]): PiiEntity[] {
  if (!capsAroundComma(text) || !CAPS_PAIR.test(text)) return entities;
  let out = entities;
  for (const m of text.matchAll(CAPS_INVERTED)) {
    const surname = m[1] as string;
    const given = m[2] as string;
    if (!isGivenName(given) || isEnglishWord(given) || !surnameFirst(surname)) continue;
    const from = (m.index as number) + m[0].indexOf(surname);
    const to = (m.index as number) + m[0].length;
    if (othersIn(out, from, to)) continue;
    out = replaced(text, out, from, to, 0.8);
  }
  return out;
}

/** an initial and a surname: "J. Kowalski", "M.Nowicka" */
const INITIAL_SURNAME = /(?<![\p{L}\p{N}.])\p{Lu}\.[ \t]?(\p{Lu}[\p{Ll}\p{M}'’-]{1,30})(?![\p{L}\p{M}])/gu;
const INITIAL_SURNAME_QUICK = /\p{Lu}\. ?\p{Lu}\p{Ll}/u;

/** Initials before a family name of the lists, no everyday word and no town ("attendees: J. Kowalski, M. Nowicka"). */
function initialNames(text: string, entities: PiiEntity[]): PiiEntity[] {
  if (!capitalBeforePeriod(text) || !INITIAL_SURNAME_QUICK.test(text)) return entities;
  const added: PiiEntity[] = [];
  for (const m of text.matchAll(INITIAL_SURNAME)) {
    const surname = m[1] as string;
    if (!(isFamilyName(surname) || isGazetteerName(surname)) || !namePart(surname) || isPlaceName(surname)) continue;
    const from = m.index as number;
    const to = from + m[0].length;
    if (!entities.some((e) => e.start < to && e.end > from)) added.push(entity("name", text, from, to, 0.75));
  }
  return added.length === 0 ? entities : [...entities, ...added].sort((a, b) => a.start - b.start);
}

/** The entities (in text order, not overlapping) with the names above joined or added. */
export function joinNames(text: string, entities: PiiEntity[]): PiiEntity[] {
  let out = initialNames(text, capsInverted(text, entities));
  const added: PiiEntity[] = [];
  for (let i = 0; i < out.length; i++) {
    const e = out[i] as PiiEntity;
    if (e.type !== "name") continue;
    let from = e.start;
    let to = e.end;
    const nick = nicknameEnd(text, to);
    const nickBefore = nick > 0 ? -1 : nicknameStart(text, from);
    if (nick > 0) to = nick;
    else if (nickBefore >= 0) from = nickBefore;
    else if (!e.text.includes(",") && !sticky(LIST_GOES_ON, text, to)) {
      const inverted = invertedStart(text, from, out);
      if (inverted >= 0) {
        from = inverted;
        const initial = sticky(INITIAL_AFTER, text, to);
        if (initial) to += initial[0].length;
      }
    }
    if ((from !== e.start || to !== e.end) && !othersIn(out, from, to)) {
      out = replaced(text, out, from, to, e.score);
      i = out.findIndex((x) => x.start === from);
      continue;
    }
    const tied = coordinated(text, e.start, e.end);
    if (tied && !out.some((x) => x.start < tied[1] && x.end > tied[0]))
      added.push(entity("name", text, tied[0], tied[1], Math.min(e.score, 0.75)));
  }
  if (added.length === 0) return out;
  return [...out, ...added]
    .sort((a, b) => a.start - b.start)
    .filter((e, k, all) => k === 0 || e.start >= (all[k - 1] as PiiEntity).end);
}
