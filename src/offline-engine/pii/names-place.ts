/**
 * A capitalised run in an address's place position is a place, not a person (issue 41: the fourth
 * blind part's "69003 Lyon", "DOB 02-Jan-1979, Amman", "Villa 27, Street 14b, Al Barsha 2",
 * "Tower 3, Taikoo Shing", "Jabotinsky 12 Ramat Gan"): the word before it holds a digit (a house
 * number, a postcode, a flat, a date), it is not at a line's start (where an address card puts the
 * person), and it does not read as a person's name by itself:
 * - one word: only right after a postcode (four to six digits), or after a number and a comma as
 *   the line's last word and no given name of the lists;
 * - two or more words: unless the first is a given name of the lists and the last a family name.
 */
import { isGazetteerName } from "./gazetteer";
import { isFamilyName, isGivenName } from "./given-names";
import { GIVEN_NAMES } from "./name-lists";
import { introBefore } from "./names";
import { isPlaceNameAt } from "./places";

/** the token before a run: what it is and how it is set off (", " or one blank) */
const BEFORE = /(?:^|[\s(])([^\s]{0,12}\d[^\s,]{0,12})(,?)[ \t]$/u;
/** list markers, times and labels: "1.", "2)", "[10:41]", "No:" */
const NOT_PLACE_TOKEN = /[.)\]:#]$|^\[|^#/;
const POSTCODE = /^(?:[A-Z]{1,2}-?)?\d{4,6}$/;

function lineStartsAt(text: string, start: number): boolean {
  let k = start;
  while (k > 0 && (text[k - 1] === " " || text[k - 1] === "\t")) k--;
  return k === 0 || text[k - 1] === "\n";
}

function endsLine(text: string, end: number): boolean {
  return /^[ \t]{0,4}[.!?;]?[ \t]{0,4}(?:\r?\n|$)/.test(text.slice(end, end + 8));
}

/**
 * Whether BEFORE may match before `start`: a blank or tab right before it, and a digit among the
 * characters before that back to an ASCII blank or line break (every \s is such a break or
 * outside ASCII, so the run read holds the token BEFORE needs), within its 24-character window.
 */
function digitTokenBefore(text: string, start: number): boolean {
  const c = text.charCodeAt(start - 1);
  if (c !== 32 && c !== 9) return false;
  const lo = Math.max(0, start - 24);
  for (let k = start - 2; k >= lo; k--) {
    const d = text.charCodeAt(k);
    if (d >= 48 && d <= 57) return true;
    if (d === 32 || (d >= 9 && d <= 13)) return false;
  }
  return false;
}

export function placeAfterNumber(text: string, start: number, end: number): boolean {
  if (start === 0 || lineStartsAt(text, start)) return false;
  if (!digitTokenBefore(text, start)) return false;
  const m = BEFORE.exec(text.slice(Math.max(0, start - 24), start));
  if (!m) return false;
  const token = m[1] as string;
  if (NOT_PLACE_TOKEN.test(token)) return false;
  const words = text.slice(start, end).split(/[ \t]+/);
  if (words.length === 1) {
    if (m[2] === "") return POSTCODE.test(token);
    // a given name after a number and a comma signs the line ("pozovi me na 064 227 3318, Miloš")
    const word = words[0] as string;
    return endsLine(text, end) && !GIVEN_NAMES.has(word) && !isGivenName(word);
  }
  const first = words[0] as string;
  const last = words[words.length - 1] as string;
  const person = (GIVEN_NAMES.has(first) || isGivenName(first)) && (isFamilyName(last) || isGazetteerName(last));
  return !person;
}

/** What may follow a place in an address: a comma, a line's end, a postcode, a state, a bracket. */
const PLACE_END = /^[ \t]{0,4}(?:[,;)\]]|\r?\n|$|\d{3,}|-[ \t]?[A-Z]{2}(?![\p{L}]))/u;

/**
 * A run that names a town or city of the list (places.ts) and has no cue of a person before it
 * (a title, "my name is", a greeting): "Addis Ababa", "Ramat Gan", "Kuala Lumpur" anywhere; a
 * one-word place that is also a given name ("Santiago", "Florence") only where an address ends a
 * place: after a comma and before a comma, the line's end, a postcode or a state.
 */
export function knownPlace(text: string, start: number, end: number): boolean {
  if (!isPlaceNameAt(text, start, end) || introBefore(text, start) !== null) return false;
  const run = text.slice(start, end);
  if (run.includes(" ") || run.includes("-")) return true;
  if (!GIVEN_NAMES.has(run) && !isGivenName(run)) return true;
  const before = text.slice(Math.max(0, start - 3), start);
  const after = text.slice(end, end + 12);
  // (or before a US state and ZIP code: "left Charlotte, NC 28202")
  return (/,[ \t]{0,2}$/.test(before) && PLACE_END.test(after)) || /^,[ \t]?[A-Z]{2}[ \t]+\d{5}/.test(after);
}
