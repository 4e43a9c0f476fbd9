/**
 * Person names. Runs of capitalised words are names when the evidence says so: a title before
 * them ("Dr. Ada Lovelace"), a phrase that introduces a person ("my name is", "Dear",
 * "Regards,"), or a known given name leading the run. Given names that are also common words
 * ("Will", "Grace") need a surname or a context phrase.
 *
 * Speed: this runs before every capitalised word of every text, so words are scanned by
 * character code (no regex or string copy per word) and the context regexes below, which are
 * anchored at the end of a 30-character window, run only when the word just before the name is
 * the last word of one of their phrases (a set lookup). The regexes stay the definition.
 */
import { tickCpuBudget } from "../budget";
import { isSpace } from "./chars";
import { isEnglishWord, isGazetteerName, isStopword } from "./gazetteer";
import { nameTokens, tokenEnds, tokenStarts } from "./keywords";
import { AMBIGUOUS_NAMES, GIVEN_NAMES, NOT_NAME_WORDS, NOT_NAME_WORDS_AT, SURNAME_PARTICLES } from "./name-lists";
import { entity, type PiiEntity } from "./types";
import { TextSet } from "./word-filter";

/**
 * A set of ASCII words, looked up by a range of a text (in lower case, or as written) without
 * making a string of it: by hash, then compared (word-filter.ts TextSet). In lower case, only
 * the ASCII capitals of the range are read as small letters (a range with another character is
 * none of the words).
 */
class WordSet {
  private readonly set: TextSet;
  constructor(
    words: string,
    private readonly lower: boolean,
  ) {
    this.set = new TextSet(words.split(" "));
  }

  /** Whether text[from, to) (in lower case when the set is) is one of the words. */
  hasAt(text: string, from: number, to: number): boolean {
    return this.lower ? (this.set.lowerAt(text, from, to) ?? false) : this.set.hasAt(text, from, to);
  }
}

const TITLE =
  /(?:^|[^\p{L}])(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Professor|Sir|Dame|Lady|Lord|Rev|Fr|Sra|Sr|Herr|Frau|Mme|Mlle|Monsieur|Madame|Señor|Señora|Officer|Detective|Judge|Nurse|Captain|Capt|Sgt|Agent)\.?\s+$/u;
/** phrases after which a capitalised run is a name even when no given-name list knows it */
const STRONG_INTRO =
  /(?:\bmy name is|\bname is|\bname\s*:|\bnamed|\bcalled|\bDear|\bsigned|\bAttn\.?:?|\bAttention:|\bpatient:?|\bcustomer:?|\bemployee:?|\bcontact person:?|\bassigned to|\bfull name:?)\s*$/iu;
const WEAK_INTRO =
  /(?:\bI'?m|\bI am|\bit'?s|\bthis is|\bHi|\bHello|\bHey|\bThanks|\bThank you|\bRegards|\bBest|\bCheers|\bSincerely|\bcontact|\bask for|\b(?:speak|spoke|spoken) (?:with|to)|\btalk to|\bbehalf of|\bbelongs to|\bdeliver to|\bneighbou?r|\btechnician|\bcolleague|\breach|\bfrom|\bfor|\bby|\bcc|\bwith|\bmet|\btold|\bemail|\bcall|\band|\bheiße|\bje suis|\bje m'appelle|\bme llamo|\bsoy|\bmi chiamo|\bsono)\s*[:,]?\s*$/iu;

/**
 * The last word of each phrase of the regex above (TITLE: the titles, case as written; the
 * others lower-cased). A regex can match only when the ASCII word just before the name, past
 * the trailing spaces and punctuation the regex allows, is one of these; phrases with other
 * characters ("heiße", "Señor") are left to the regex (see `wordBefore`).
 */
const TITLE_WORDS = new WordSet(
  "Mr Mrs Ms Miss Mx Dr Prof Professor Sir Dame Lady Lord Rev Fr Sra Sr Herr Frau Mme Mlle Monsieur Madame Officer Detective Judge Nurse Captain Capt Sgt Agent Srta Pan Pani Sig Sra",
  false,
);
/** Titles that start no name themselves ("Dear Sr. Vassallo": the name is "Vassallo"). */
const NOT_NAME_TITLES = new Set("Sr Sra Srta Sig Pan Pani Mme Mlle Dott Ing Hr Fr Sen Sr".split(" "));
const NOT_NAME_TITLES_AT = new TextSet(NOT_NAME_TITLES);

/**
 * Cues for a single capitalised word that the gazetteer knows ("I spoke to Garnier", "according
 * to Brito", "leave it with Barros"): narrower than WEAK_INTRO, whose "from" and "for" precede
 * places as often as people.
 */
const SINGLE_INTRO =
  /(?:\b(?:thanks|thank you|thx|hi|hello|hey|dear|i'?m|i am|this is|it'?s|cc|attn|signed|told|ask|asked|(?:spoke|speak|speaking|talk|talked|talking|reach out|go|went|according|belongs|forwarded|escalating this|escalated|handed over) to|(?:spoke|speak|talk|talked|meeting|met|leave it|left it|check|checked) with)\s*[:,]?\s*)$/iu;
/** Greetings and self-introductions: a single word after them is a name even when no list knows it ("Thanks Beyizçi!"). */
const GREETING_INTRO = /(?:\b(?:thanks|thank you|thx|hi|hello|hey|dear|cheers|i'?m|i am|my name is)\s*[:,]?\s*)$/iu;
const STRONG_WORDS = new WordSet("is named called dear signed attn patient customer employee person to name", true);
const STRONG_WORDS_BEFORE_COLON = new WordSet("name attn attention patient customer employee person", true);
const ATTN = new WordSet("attn", true);
const WEAK_WORDS = new WordSet(
  "m im am s its is hi hello hey thanks you regards best cheers sincerely contact for to of with reach from by cc met told email call and neighbour neighbor technician colleague suis appelle llamo soy chiamo sono",
  true,
);

/** verbs that follow a person far more often than a place or product ("Olumide Bakare signed") */
const PERSON_VERB =
  /^\s+(?:said|says|told|asked|wrote|signed|replied|called|emailed|mentioned|confirmed|explained|agreed|joined|thinks|believes|will|who|and (?:her|his)|forwarded|sent|booked|texted|phoned|messaged|approved|submitted|cancelled|canceled|requested|is (?:off|away|sick|on leave|on holiday|on vacation)|has the keys|sagte|dijo|disse|zei|sade|sagde|powiedział|powiedziała|řekl|řekla|rekao|rekla|m'a dit|a dit|ha detto|ha dicho)(?![\p{L}])/u;

/** The last word of each phrase of SINGLE_INTRO and GREETING_INTRO ("i'm": "m", "thank you": "you"), lower case. */
const SINGLE_WORDS = new WordSet("thanks you thx hi hello hey dear m im am is s its cc attn signed told ask asked to with", true);
const GREETING_WORDS = new WordSet("thanks you thx hi hello hey dear cheers m im am is", true);
/** The first word of each alternative of PERSON_VERB (case as written: the pattern is case-sensitive). */
const PERSON_VERB_WORDS = new WordSet(
  "said says told asked wrote signed replied called emailed mentioned confirmed explained agreed joined thinks believes will who and " +
    "forwarded sent booked texted phoned messaged approved submitted cancelled canceled requested is has sagte dijo disse zei " +
    "sade sagde powiedział powiedziała řekl řekla rekao rekla m a ha",
  false,
);

const MONTH_NAMES = new Set(["April", "May", "June", "July", "August"]);

const APOSTROPHE = 0x27;
const RIGHT_QUOTE = 0x2019;

function isAsciiLetter(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

/**
 * Words of the text: starts and ends ("Sarah's" is "Sarah"; a trailing hyphen or apostrophe is
 * punctuation), found by the keyword pass over the text (keywords.ts `nameTokens`: letters, then
 * letters, marks, "'", "’" and "-"), and each word as a string once it is needed (`wordAt`).
 * Module-level arrays reused by each call (calls are synchronous), so a text costs no token objects.
 */
const starts = tokenStarts;
const ends = tokenEnds;
const words: (string | null)[] = [];

function wordAt(text: string, k: number): string {
  let w = words[k];
  if (w === null) {
    w = text.slice(starts[k], ends[k]);
    words[k] = w;
  }
  return w;
}

function tokenize(text: string): number {
  const count = nameTokens(text);
  for (let k = 0; k < count; k++) words[k] = null;
  return count;
}

function isApostrophe(c: number): boolean {
  return c === APOSTROPHE || c === RIGHT_QUOTE;
}

// "I'm", "Don't", "We'll": contractions are never part of a name ("O'Brien" is not one)
function isContraction(word: string): boolean {
  const n = word.length;
  if (n < 2) return false;
  const last = word.charCodeAt(n - 1);
  // 'm 'd 't
  if ((last === 0x6d || last === 0x64 || last === 0x74) && isApostrophe(word.charCodeAt(n - 2))) return true;
  if (n < 3 || !isApostrophe(word.charCodeAt(n - 3))) return false;
  const prev = word.charCodeAt(n - 2);
  // 'll 've 're
  return (prev === 0x6c && last === 0x6c) || ((prev === 0x76 || prev === 0x72) && last === 0x65);
}

function isCapitalized(word: string): boolean {
  const f = word.charCodeAt(0);
  if (f < 0x80) {
    if (f < 65 || f > 90) return false;
  } else {
    const first = word.charAt(0);
    if (first === first.toLowerCase()) return false;
  }
  if (isContraction(word)) return false;
  // ALL-CAPS words are acronyms ("SSN", "IBM"), not names
  const n = word.length;
  if (n === 1) return true;
  for (let k = 1; k < n; k++) {
    const c = word.charCodeAt(k);
    if (c >= 97 && c <= 122) return true;
    if (c >= 0x80) {
      const rest = word.slice(1);
      return rest !== rest.toUpperCase();
    }
  }
  return false;
}

/** isCapitalized of the word at token `k`, read in the text while it is ASCII */
function capitalizedAt(text: string, k: number): boolean {
  const s = starts[k];
  const e = ends[k];
  const f = text.charCodeAt(s);
  if (f >= 0x80) return isCapitalized(wordAt(text, k));
  if (f < 65 || f > 90) return false;
  if (contractionAt(text, s, e)) return false;
  if (e - s === 1) return true;
  for (let p = s + 1; p < e; p++) {
    const c = text.charCodeAt(p);
    if (c >= 97 && c <= 122) return true;
    if (c >= 0x80) return isCapitalized(wordAt(text, k));
  }
  return false;
}

/** isContraction(text.slice(s, e)) */
function contractionAt(text: string, s: number, e: number): boolean {
  const n = e - s;
  if (n < 2) return false;
  const last = text.charCodeAt(e - 1);
  if ((last === 0x6d || last === 0x64 || last === 0x74) && isApostrophe(text.charCodeAt(e - 2))) return true;
  if (n < 3 || !isApostrophe(text.charCodeAt(e - 3))) return false;
  const prev = text.charCodeAt(e - 2);
  return (prev === 0x6c && last === 0x6c) || ((prev === 0x76 || prev === 0x72) && last === 0x65);
}

export function findNames(text: string): PiiEntity[] {
  const count = tokenize(text);
  const out: PiiEntity[] = [];
  let i = 0;
  while (i < count) {
    tickCpuBudget();
    // most words start with a lower-case ASCII letter: skip them before making a string
    const f = text.charCodeAt(starts[i]);
    if (f >= 97 && f <= 122) {
      i++;
      continue;
    }
    // (read in the text: the word becomes a string only when it may start a name)
    const s = starts[i];
    const e = ends[i];
    if (!capitalizedAt(text, i) || NOT_NAME_WORDS_AT.hasAt(text, s, e) || NOT_NAME_TITLES_AT.hasAt(text, s, e)) {
      i++;
      continue;
    }
    const firstWord = wordAt(text, i);
    const run = runFrom(text, count, i);
    const length = run - i;
    const score = nameScore(text, starts[i], ends[run - 1], firstWord, length, i, run);
    if (score > 0) {
      out.push(entity("name", text, starts[i], ends[run - 1], score));
      i = run;
    } else i++;
  }
  // the word arrays keep the last text alive: let a long one go
  if (count > 4096) words.length = 0;
  return out;
}

/** Words of NOT_NAME_WORDS (street words) that are common surnames too, as written. */
const SURNAME_STREET_WORDS = new Set(["Lane"]);

/** End (exclusive token index) of the capitalised run starting at `i`, at most four words. */
function runFrom(text: string, count: number, i: number): number {
  let j = i + 1;
  let n = 1;
  while (j < count && n < 4) {
    // the gap must be one space, or ". " after an initial
    const gapStart = ends[j - 1];
    const gap = starts[j] - gapStart;
    const space = gap === 1 && text.charCodeAt(gapStart) === 32;
    const initial =
      gap === 2 && ends[j - 1] - starts[j - 1] === 1 && text.charCodeAt(gapStart) === 46 && text.charCodeAt(gapStart + 1) === 32;
    if (!space && !initial) break;
    const w = wordAt(text, j);
    // (inside a run, written with a capital too: "Youssef El Amrani", "Loïc Le Gall")
    if (
      (SURNAME_PARTICLES.has(w) || (j > i && w.length <= 3 && SURNAME_PARTICLES.has(w.toLowerCase()))) &&
      j + 1 < count &&
      isCapitalized(wordAt(text, j + 1))
    ) {
      j++;
      continue;
    }
    // "Annabel I. Zuiderveld": a capital and a period is a middle initial, even the letter "I"
    const isInitial =
      ends[j] - starts[j] === 1 &&
      text.charCodeAt(ends[j]) === 46 &&
      text.charCodeAt(ends[j] + 1) === 32 &&
      j + 1 < count &&
      isCapitalized(wordAt(text, j + 1));
    // (a street word that is a common surname goes on with a run it does not start, "Diane Lane": whether
    // the run is a person or a street is the place check's, names-extra.ts surnamePlace)
    if (!isCapitalized(w) || (NOT_NAME_WORDS.has(w) && !isInitial && !(j > i && SURNAME_STREET_WORDS.has(w)))) break;
    j++;
    n++;
  }
  // a dangling initial at the end ("John F") is more likely the start of the next sentence
  while (j - 1 > i && ends[j - 1] - starts[j - 1] === 1) j--;
  return j;
}

/**
 * A given name of one to three letters, alone, that is a function word of a language the engine reads,
 * opening a sentence before a lower-case word: the function word (Italian "Si certifica che …", Swedish
 * "Vi har flyttat …"), not "Sam: meet at …" or "… Tom, Ngozi".
 */
function shortFunctionWord(text: string, start: number, end: number, word: string, length: number): boolean {
  if (length !== 1 || word.length > 3 || text.charCodeAt(end) !== 32 || !isStopword(word)) return false;
  if (!LOWER_AT.test(text.charAt(end + 1))) return false;
  let k = start;
  while (k > 0 && (text.charCodeAt(k - 1) === 32 || text.charCodeAt(k - 1) === 9)) k--;
  return k === 0 || ".!?\n".includes(text.charAt(k - 1));
}
const LOWER_AT = /\p{Ll}/u;

function nameScore(text: string, start: number, end: number, firstWord: string, length: number, i: number, run: number): number {
  const lo = Math.max(0, start - 30);
  if (titleBefore(text, lo, start)) return 0.93;
  // capitalised everyday words ("Customer Success Lead", "New Year Sale") name nobody without a title
  if (allEveryday(text, i, run)) return 0;
  if (strongIntroBefore(text, lo, start)) return 0.9;
  const known = GIVEN_NAMES.has(firstWord);
  const ambiguous = known && (AMBIGUOUS_NAMES.has(firstWord) || shortFunctionWord(text, start, end, firstWord, length));
  if (known && !ambiguous) return length >= 2 ? 0.9 : 0.8;
  // "from June", "in May": a lone month name is a month unless a title or "my name is" says otherwise
  if (known) return length >= 2 ? 0.75 : !MONTH_NAMES.has(firstWord) && weakIntroBefore(text, lo, start) ? 0.7 : 0;
  if (firstWord.length <= 1 || isStopword(firstWord)) return 0;
  const gazetteer = isGazetteerName(firstWord);
  if (length >= 2) {
    // no everyday English word, and a gazetteer name or a middle initial among the words
    if (noEverydayWord(text, i, run) && (gazetteer || hasInitial(i, run) || anyKnownName(text, i + 1, run))) return 0.85;
    if (weakIntroBefore(text, lo, start) || personVerbAfter(text, end)) return 0.7;
    return 0;
  }
  // one word: a surname or given name alone in running text needs a cue
  const verbAfter = personVerbAfter(text, end);
  if (gazetteer && (verbAfter || (introEndsIn(SINGLE_WORDS, text, lo, start) && SINGLE_INTRO.test(text.slice(lo, start)))))
    return 0.75;
  if (
    !isEnglishWord(firstWord) &&
    (verbAfter || (introEndsIn(GREETING_WORDS, text, lo, start) && GREETING_INTRO.test(text.slice(lo, start))))
  )
    return 0.7;
  return 0;
}

/** Every word of the run is an everyday English word that is no given name. */
function allEveryday(text: string, i: number, run: number): boolean {
  for (let k = i; k < run; k++) {
    const w = wordAt(text, k);
    if (GIVEN_NAMES.has(w) || !isEnglishWord(w)) return false;
  }
  return true;
}

/** No word of the run is an everyday English word (initials aside). */
function noEverydayWord(text: string, i: number, run: number): boolean {
  for (let k = i; k < run; k++) {
    const w = wordAt(text, k);
    if (w.length > 1 && isEnglishWord(w) && !GIVEN_NAMES.has(w)) return false;
  }
  return true;
}

/** A word from `i` on is a given name or a gazetteer name. */
function anyKnownName(text: string, i: number, run: number): boolean {
  for (let k = i; k < run; k++) {
    const w = wordAt(text, k);
    if (w.length > 1 && (GIVEN_NAMES.has(w) || isGazetteerName(w))) return true;
  }
  return false;
}

/** A word of one letter inside the run (a middle initial: "Magomed A. Aliev"). */
function hasInitial(i: number, run: number): boolean {
  for (let k = i + 1; k < run - 1; k++) if (ends[k] - starts[k] === 1) return true;
  return false;
}

/**
 * Start of the ASCII word ending at `end` (not before `lo`; `end` when there is none), or -1 when
 * a non-ASCII character ends it or comes just before it: then only the regex can tell (case
 * folding, "ñ", "ß").
 */
function wordBefore(text: string, lo: number, end: number): number {
  let k = end;
  while (k > lo) {
    const c = text.charCodeAt(k - 1);
    if (isAsciiLetter(c)) k--;
    else if (c >= 0x80) return -1;
    else break;
  }
  return k;
}

/** Start of the run of `\s` ending at `end`, not before `lo`. */
function skipSpaceBack(text: string, lo: number, end: number): number {
  let k = end;
  while (k > lo && isSpace(text.charCodeAt(k - 1))) k--;
  return k;
}

// Each test below is the regex on the 30-character window before the name; the word check in
// front only skips the regex where it cannot match.

function titleBefore(text: string, lo: number, start: number): boolean {
  let k = skipSpaceBack(text, lo, start);
  if (k === start) return false;
  if (k > lo && text.charCodeAt(k - 1) === 46) k--;
  const w = wordBefore(text, lo, k);
  return (w < 0 || TITLE_WORDS.hasAt(text, w, k)) && TITLE.test(text.slice(lo, start));
}

function strongIntroBefore(text: string, lo: number, start: number): boolean {
  let k = skipSpaceBack(text, lo, start);
  if (k === lo) return false;
  const last = text.charCodeAt(k - 1);
  let w: number;
  if (last === 58) {
    // "name:", "Attn.:", "name :"
    k = skipSpaceBack(text, lo, k - 1);
    if (k > lo && text.charCodeAt(k - 1) === 46) k--;
    w = wordBefore(text, lo, k);
    if (w >= 0 && !STRONG_WORDS_BEFORE_COLON.hasAt(text, w, k)) return false;
  } else if (last === 46) {
    w = wordBefore(text, lo, k - 1);
    if (w >= 0 && !ATTN.hasAt(text, w, k - 1)) return false;
  } else {
    w = wordBefore(text, lo, k);
    if (w >= 0 && !STRONG_WORDS.hasAt(text, w, k)) return false;
  }
  return STRONG_INTRO.test(text.slice(lo, start));
}

/** How strongly the words before `start` announce a person: a title or "my name is", a weaker cue ("thanks", "spoke to"), or none. */
export function introBefore(text: string, start: number): "strong" | "weak" | null {
  const lo = Math.max(0, start - 30);
  if (titleBefore(text, lo, start) || strongIntroBefore(text, lo, start)) return "strong";
  return weakIntroBefore(text, lo, start) ? "weak" : null;
}

/**
 * Whether a phrase ending in one of `words` may end before `start` (the regexes' tail: spaces, at
 * most one ":" or ",", spaces); true too when a non-ASCII character leaves it to the regex.
 */
function introEndsIn(words: WordSet, text: string, lo: number, start: number): boolean {
  let k = skipSpaceBack(text, lo, start);
  if (k > lo && (text.charCodeAt(k - 1) === 58 || text.charCodeAt(k - 1) === 44)) k = skipSpaceBack(text, lo, k - 1);
  const w = wordBefore(text, lo, k);
  return w < 0 || words.hasAt(text, w, k);
}

/** PERSON_VERB on the 20 characters after `end`, run only when the word after the spaces may start it. */
function personVerbAfter(text: string, end: number): boolean {
  const limit = Math.min(text.length, end + 20);
  let k = end;
  while (k < limit && isSpace(text.charCodeAt(k))) k++;
  if (k === end) return false;
  let e = k;
  while (e < limit && isAsciiLetter(text.charCodeAt(e))) e++;
  // a non-ASCII letter right after: the regex decides
  if (e < limit && text.charCodeAt(e) >= 0x80) return PERSON_VERB.test(text.slice(end, limit));
  return PERSON_VERB_WORDS.hasAt(text, k, e) && PERSON_VERB.test(text.slice(end, limit));
}

function weakIntroBefore(text: string, lo: number, start: number): boolean {
  // the phrase, then spaces with at most one ":" or ","
  let k = start;
  let punctuation = 0;
  while (k > lo) {
    const c = text.charCodeAt(k - 1);
    if (c === 58 || c === 44) punctuation++;
    else if (!isSpace(c)) break;
    k--;
  }
  if (punctuation > 1) return false;
  const w = wordBefore(text, lo, k);
  if (w >= 0 && !WEAK_WORDS.hasAt(text, w, k)) return false;
  return WEAK_INTRO.test(text.slice(lo, start));
}
