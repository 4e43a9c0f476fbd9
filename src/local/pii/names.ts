/**
 * Person names. Runs of capitalised words are names when the evidence says so: a title before
 * them ("Dr. Ada Lovelace"), a phrase that introduces a person ("my name is", "Dear",
 * "Regards,"), or a known given name leading the run. Given names that are also common words
 * ("Will", "Grace") need a surname or a context phrase.
 */
import { AMBIGUOUS_NAMES, GIVEN_NAMES, NOT_NAME_WORDS, SURNAME_PARTICLES } from "./name-lists";
import { entity, type PiiEntity } from "./types";

const WORD = /\p{L}[\p{L}\p{M}'’-]*/gu;
const TITLE =
  /(?:^|[^\p{L}])(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Professor|Sir|Dame|Lady|Lord|Rev|Fr|Sra|Sr|Herr|Frau|Mme|Mlle|Monsieur|Madame|Señor|Señora|Officer|Detective|Judge|Nurse|Captain|Capt|Sgt|Agent)\.?\s+$/u;
/** phrases after which a capitalised run is a name even when no given-name list knows it */
const STRONG_INTRO =
  /(?:\bmy name is|\bname is|\bname\s*:|\bnamed|\bcalled|\bDear|\bsigned|\bAttn\.?:?|\bAttention:|\bpatient:?|\bcustomer:?|\bemployee:?|\bcontact person:?|\bassigned to|\bfull name:?)\s*$/iu;
const WEAK_INTRO =
  /(?:\bI'?m|\bI am|\bit'?s|\bthis is|\bHi|\bHello|\bHey|\bThanks|\bThank you|\bRegards|\bBest|\bCheers|\bSincerely|\bcontact|\bask for|\bspeak (?:with|to)|\btalk to|\breach|\bfrom|\bfor|\bby|\bcc|\bwith|\bmet|\btold|\bemail|\bcall|\band|\bheiße|\bje suis|\bje m'appelle|\bme llamo|\bsoy|\bmi chiamo|\bsono)\s*[:,]?\s*$/iu;

/** verbs that follow a person far more often than a place or product ("Olumide Bakare signed") */
const PERSON_VERB =
  /^\s+(?:said|says|told|asked|wrote|signed|replied|called|emailed|mentioned|confirmed|explained|agreed|joined|thinks|believes|will|who|and (?:her|his))\b/u;

const MONTH_NAMES = new Set(["April", "May", "June", "July", "August"]);

interface Token {
  start: number;
  end: number;
  word: string;
}

// "I'm", "Don't", "We'll": contractions are never part of a name ("O'Brien" is not one)
const CONTRACTION = /['’](?:m|d|ll|ve|re|t)$/u;

function isCapitalized(word: string): boolean {
  if (CONTRACTION.test(word)) return false;
  const first = word.charAt(0);
  if (first === first.toLowerCase()) return false;
  // ALL-CAPS words are acronyms ("SSN", "IBM"), not names
  return word.length === 1 || word.slice(1) !== word.slice(1).toUpperCase();
}

function tokens(text: string): Token[] {
  const out: Token[] = [];
  for (const m of text.matchAll(WORD)) {
    // "Sarah's" is "Sarah"; a trailing hyphen or apostrophe is punctuation
    const word = m[0].replace(/(?:['’]s|['’-]+)$/u, "");
    if (word) out.push({ start: m.index, end: m.index + word.length, word });
  }
  return out;
}

export function findNames(text: string): PiiEntity[] {
  const toks = tokens(text);
  const out: PiiEntity[] = [];
  let i = 0;
  while (i < toks.length) {
    const first = toks[i];
    if (!isCapitalized(first.word) || NOT_NAME_WORDS.has(first.word)) {
      i++;
      continue;
    }
    const run = runFrom(text, toks, i);
    const last = toks[run - 1];
    const length = run - i;
    const before = text.slice(Math.max(0, first.start - 30), first.start);
    const after = text.slice(last.end, last.end + 20);
    const score = nameScore(first.word, length, before, PERSON_VERB.test(after));
    if (score > 0) {
      out.push(entity("name", text, first.start, last.end, score));
      i = run;
    } else i++;
  }
  return out;
}

/** End (exclusive token index) of the capitalised run starting at `i`, at most four words. */
function runFrom(text: string, toks: Token[], i: number): number {
  let j = i + 1;
  let words = 1;
  while (j < toks.length && words < 4) {
    const gap = text.slice(toks[j - 1].end, toks[j].start);
    const initial = toks[j - 1].word.length === 1 && gap === ". ";
    if (gap !== " " && !initial) break;
    const w = toks[j].word;
    if (SURNAME_PARTICLES.has(w) && j + 1 < toks.length && isCapitalized(toks[j + 1].word)) {
      j++;
      continue;
    }
    if (!isCapitalized(w) || NOT_NAME_WORDS.has(w)) break;
    j++;
    words++;
  }
  // a dangling initial at the end ("John F") is more likely the start of the next sentence
  while (j - 1 > i && toks[j - 1].word.length === 1) j--;
  return j;
}

function nameScore(firstWord: string, length: number, before: string, personVerbAfter: boolean): number {
  if (TITLE.test(before)) return 0.93;
  if (STRONG_INTRO.test(before)) return 0.9;
  const known = GIVEN_NAMES.has(firstWord);
  const ambiguous = AMBIGUOUS_NAMES.has(firstWord);
  const weak = WEAK_INTRO.test(before);
  if (known && !ambiguous) return length >= 2 ? 0.9 : 0.8;
  // "from June", "in May": a lone month name is a month unless a title or "my name is" says otherwise
  if (known && ambiguous) return length >= 2 ? 0.75 : weak && !MONTH_NAMES.has(firstWord) ? 0.7 : 0;
  if ((weak || personVerbAfter) && length >= 2 && firstWord.length > 1) return 0.7;
  return 0;
}
