/**
 * Person names written in ALL CAPS ("JARRED WALKER" in a form) or all lower case ("hey its
 * felipe carvalho" in chat), as real text has them. The capitalised-run scanner (names.ts) reads
 * ALL-CAPS words as acronyms and skips lower-case words, so these need their own evidence: the
 * first word is a given name that is not also an everyday word, or a title or an introducing
 * phrase stands before the run. Lower-case runs are read only after such a phrase, and only
 * when the first word is a known given name: "thanks for the help" names nobody.
 */
import { isEnglishWord, isGazetteerName, isStopword } from "./gazetteer";
import { isFamilyName, isGivenName } from "./given-names";
import { CAPS_PAIR, cueStarts, gateWords, keywordFlags, NAME_CUE } from "./keywords";
import { AMBIGUOUS_NAMES, GIVEN_NAMES, NOT_NAME_WORDS, SURNAME_PARTICLES } from "./name-lists";
import { introBefore } from "./names";
import { fieldLabelBefore } from "./names-extra";
import { entity, type PiiEntity } from "./types";

// two to four upper-case words (hyphens and apostrophes inside: "IYER-SINHA", "O'NEILL"), a middle
// initial between them ("MARCUS T. WHITFIELD")
const CAPS_RUN =
  /(?<![\p{L}\p{N}])\p{Lu}(?:\p{Lu}+(?:['’-]\p{Lu}+)?|['’]\p{Lu}{2,})(?:[ \t]+(?:\p{Lu}\.[ \t]+)?\p{Lu}(?:\p{Lu}+(?:['’-]\p{Lu}+)?|['’]\p{Lu}{2,}))+(?![\p{L}\p{N}])/gu;
// a lower-case word after a phrase that introduces a person (the phrase list is names.ts's)
const LOWER_AFTER_CUE =
  /(?:\b(?:name is|name:|is|it'?s|its|i'?m|i am|thanks,?|thank you,?|regards,?|cheers,?|customer:|client:|for|to|by|from|dear|hi|hello|hey|call|contact|ask|asked|tell|told|ping|pinged|email|emailed|cc|met|meet|behalf of|neighbou?r|technician|colleague)[ \t]+)(?!(?:the|a|an|my|your|our|their|his|her|you|me|us|them|it|its|it's|is|im|i'm|be|do|get|see|this|that|all|any|some|more|help|each|again|just|here)[ \t.,!?])(\p{Ll}[\p{Ll}\p{M}'’-]*(?:[ \t]+\p{Ll}[\p{Ll}\p{M}'’-]*){1,3})/giu;

const UPPER_FIRST = /^\p{Lu}/u;

/** LOWER_AFTER_CUE tried at one place: where a word of its phrases starts (keywords.ts) */
const LOWER_AFTER_CUE_AT = new RegExp(LOWER_AFTER_CUE.source, "iuy");
// the first word of each phrase: "name is" and "name:" start at "name", "it's" at "it", "i'm" and "i am" at "i"
gateWords(
  NAME_CUE,
  "name is it its i im thanks thank regards cheers customer client for to by from dear hi hello hey call contact ask asked tell told ping pinged email emailed cc met meet behalf neighbour neighbor technician colleague".split(
    " ",
  ),
);

/** English words that end a lower-case name run ("felipe carvalho today", "ana souza and"). */
const LOWER_STOP = new Set(
  "a an the and or but to of in on at for with from by is are was were be it this that today tomorrow yesterday here there please thanks".split(
    " ",
  ),
);

/** legal forms and firm words in capitals after a run */
const ORG_CAPS = new Set(
  "GMBH AG AB AS ASA OY OYJ LTD LLC INC SA SAS SARL SRL SPA BV NV KFT ZRT SP DOO PLC CORP CO COMPANY GROUP BANK HOLDING HOLDINGS".split(
    " ",
  ),
);
/** titles written in capitals before a name in capitals */
/** labels and codes written in capitals after a name in a record ("… SSN 339 70 1842", "… DOB", "… TEL") */
const CAPS_LABELS = new Set("SSN DOB ID TIN EIN NI NHS VAT TEL FAX PH MOB CELL EMAIL EXT REF NO NR".split(" "));
const CAPS_TITLES = new Set("MR MRS MS MISS MX DR PROF HERR FRAU MME MLLE SR SRA SRTA SIG SIGRA PAN PANI".split(" "));
const titleCase = (w: string): string => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase();
/** FNV-1a of the lower case of each given name of printable ASCII: an ASCII word whose lower case is none of them is no given name in any case */
const GIVEN_ASCII_LOWER = new Set<number>();
for (const g of GIVEN_NAMES) {
  const h = asciiHashLower(g, 0, g.length);
  if (h >= 0) GIVEN_ASCII_LOWER.add(h);
}
const knownGiven = (w: string): boolean => {
  // (an ASCII word's title case is ASCII and has the same lower case: a hash settles most words without the copies)
  const h = asciiHashLower(w, 0, w.length);
  if (h >= 0 && !GIVEN_ASCII_LOWER.has(h)) return false;
  const t = titleCase(w);
  return GIVEN_NAMES.has(t) && !AMBIGUOUS_NAMES.has(t) && !NOT_NAME_WORDS.has(t);
};

/** "şaiq rəhimov", "cezar tamas": neither word an everyday English or function word, one of them a known name. */
function gazetteerPair(words: string[]): boolean {
  if (words.length < 2) return false;
  const [a, b] = words;
  if (isEnglishWord(a) || isEnglishWord(b) || isStopword(a) || isStopword(b)) return false;
  return isGazetteerName(a) || isGazetteerName(b);
}

/** The word at `i`, a middle initial, and the word after it: a given (or gazetteer) name and a family name, no everyday or function words. */
function capsNamePair(words: { w: string }[], i: number): boolean {
  // only with a middle initial between them: capitals without one are as often places ("BERLIN MUNICH")
  if (!/^\p{Lu}\.$/u.test(words[i + 1]?.w ?? "")) return false;
  const next = words[i + 2];
  if (!next) return false;
  const [a, b] = [titleCase((words[i] as { w: string }).w), titleCase(next.w)];
  if ([a, b].some((w) => isEnglishWord(w) || isStopword(w) || NOT_NAME_WORDS.has(w))) return false;
  return (isGivenName(a) || isGazetteerName(a)) && (isGazetteerName(b) || isFamilyName(b));
}

/** a lower-case name closing a line after a comma: "ship to ådalsvej 7, 0012 aalborg, carina andersson" */
const LOWER_TAIL_AT = /,[ \t]{0,4}(\p{Ll}[\p{Ll}\p{M}'’-]{0,39}[ \t]\p{Ll}[\p{Ll}\p{M}'’-]{0,39})(?=[ \t]{0,4}(?:\r?\n|$))/uy;

/** LOWER_TAIL_AT's longest match and its lookahead: ",", 4 blanks, two words of 40 and a blank, 4 blanks, "\r" */
const LOWER_TAIL_LONGEST = 1 + 4 + 40 + 1 + 40 + 4 + 1;

export function findCasedNames(text: string): PiiEntity[] {
  const out: PiiEntity[] = [];
  const gates = keywordFlags(text);
  if (gates & CAPS_PAIR)
    for (const m of text.matchAll(CAPS_RUN)) {
      const words = [...m[0].matchAll(/[^ \t]+/g)].map((w) => ({ w: w[0], at: m.index + w.index }));
      for (let i = 0; i < words.length - 1; i++) {
        const first = words[i];
        // a title is the cue, never the name's first word ("ATTN: MRS SIOBHAN O'CONNOR")
        if (CAPS_TITLES.has(first.w.replace(/\.$/, ""))) continue;
        // a title in capitals before the run ("MS ELIN HALLGREN", "HERR JONAS BERG") is a strong cue
        const titled =
          (i > 0 && CAPS_TITLES.has((words[i - 1] as { w: string }).w.replace(/\.$/, ""))) ||
          (i === 0 && fieldLabelBefore(text, first.at));
        const plain = titleCase(first.w);
        const intro =
          titled && !isEnglishWord(plain) && !isStopword(plain) && !NOT_NAME_WORDS.has(plain)
            ? "strong"
            : introBefore(text, first.at);
        // (or two names of the gazetteer, the first and the next: "HEIKKI J. LAITINEN", whose lists lack "Heikki")
        if (!knownGiven(first.w) && intro !== "strong" && !capsNamePair(words, i)) continue;
        let j = i + 1;
        while (j < words.length && j - i < 4) {
          const t = titleCase(words[j].w);
          if ((NOT_NAME_WORDS.has(t) && !SURNAME_PARTICLES.has(words[j].w.toLowerCase())) || CAPS_LABELS.has(words[j].w)) break;
          j++;
        }
        if (j - i < 2) continue;
        // a firm in capitals ("MAX MUSTERMANN GMBH", "NORDIC TRADING AS") is no person
        if (words.slice(i, j + 1).some((x) => ORG_CAPS.has(x.w.replace(/[.,]$/, "")))) {
          i = j;
          continue;
        }
        const last = words[j - 1];
        out.push(entity("name", text, first.at, last.at + last.w.length, intro ? 0.85 : 0.8));
        i = j - 1;
      }
    }
  for (const m of lowerAfterCue(text)) {
    const run = m[1];
    const start = m.index + m[0].length - run.length;
    // (LOWER_AFTER_CUE's run starts and ends with a letter or mark, "'", "’" or "-")
    const words = blankWords(run);
    // (the pattern is case-insensitive for its cues, which makes \p{Ll} take capitals too: a run
    // that starts with one is its capitalised words, not the lower-case ones after them, "from Acme
    // Corp about invoice" is at most "Acme Corp")
    if (UPPER_FIRST.test(run)) {
      const lower = words.findIndex((w) => !UPPER_FIRST.test(w));
      if (lower >= 0) words.length = lower;
    }
    // a given name of the English lists, or two words that are no everyday words, one of them a gazetteer name
    if (!knownGiven(words[0]) && !gazetteerPair(words)) continue;
    let n = 1;
    // a particle inside a surname ("ana de souza"), and Irish "o" written apart before a word that is
    // no everyday word ("sean o brien", O'Brien typed without its capitals and apostrophe)
    const particle = (k: number) =>
      SURNAME_PARTICLES.has(words[k] as string) ||
      (words[k] === "o" && k + 1 < words.length && !isEnglishWord(words[k + 1] as string));
    while (n < words.length && !LOWER_STOP.has(words[n]) && (particle(n) || words[n].length > 1)) {
      // an everyday word that is no name of the lists ends it too ("to frank jensen before friday")
      const w = words[n] as string;
      if (!particle(n) && isEnglishWord(w) && !isFamilyName(w) && !isGivenName(w)) break;
      n++;
    }
    // a surname particle does not end a name ("ana de")
    while (n > 1 && particle(n - 1)) n--;
    if (n < 2) continue;
    let length = n - 1;
    for (let k = 0; k < n; k++) length += (words[k] as string).length;
    // the run kept its own spacing: measure it in the text
    let end = start;
    for (let k = 0, seen = 0; k < run.length && seen < n; k++) {
      end = start + k + 1;
      if (k + 1 === run.length || run.charCodeAt(k + 1) === 32 || run.charCodeAt(k + 1) === 9) seen++;
    }
    if (end - start < length) continue;
    out.push(entity("name", text, start, end, 0.75));
  }
  // after each comma
  // (the match ends a line: a comma further than LOWER_TAIL_AT's longest match from the next line
  // break or the text's end is not tried)
  let lineEnd = -1;
  for (let comma = text.indexOf(","); comma >= 0; comma = text.indexOf(",", comma + 1)) {
    if (lineEnd < comma) {
      lineEnd = text.indexOf("\n", comma);
      if (lineEnd < 0) lineEnd = text.length;
    }
    if (lineEnd - comma > LOWER_TAIL_LONGEST) continue;
    LOWER_TAIL_AT.lastIndex = comma;
    const m = LOWER_TAIL_AT.exec(text);
    if (!m) continue;
    const words = m[1].split(/[ \t]/);
    // both words names: a closing "thanks a lot" or "see you" is no one
    if (!words.every((w) => knownGiven(w) || (isGazetteerName(w) && !isStopword(w)))) continue;
    const start = comma + m[0].length - m[1].length;
    out.push(entity("name", text, start, start + m[1].length, 0.7));
  }
  return out;
}

/**
 * The matches of LOWER_AFTER_CUE, as a scan of the text finds them: tried only where a word of its
 * phrases starts, when keywords.ts knows those places (the pattern can start nowhere else).
 */
function lowerAfterCue(text: string): Iterable<RegExpExecArray> {
  const starts = cueStarts(text);
  if (starts === null) return text.matchAll(LOWER_AFTER_CUE);
  const out: RegExpExecArray[] = [];
  let end = 0;
  for (const at of starts) {
    if (at < end || !mayFollowCue(text, at)) continue;
    // (one run of the pattern: a place that does not match builds no match array either)
    LOWER_AFTER_CUE_AT.lastIndex = at;
    const m = LOWER_AFTER_CUE_AT.exec(text);
    if (!m) continue;
    out.push(m);
    end = at + m[0].length;
  }
  return out;
}

/** the words of LOWER_AFTER_CUE's negative lookahead, by the hash of their lower case (hashLower) */
const CUE_STOP = new Map<number, string>(
  "the a an my your our their his her you me us them it its it's is im i'm be do get see this that all any some more help each again just here"
    .split(" ")
    .map((w) => [hashLower(w, 0, w.length), w]),
);

/** FNV-1a of text[from, to) with capitals in lower case when it is all printable ASCII; -1 otherwise */
function asciiHashLower(text: string, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return -1;
    h = Math.imul(h ^ (c >= 65 && c <= 90 ? c + 32 : c), 0x01000193);
  }
  return h >>> 0;
}

/** run.split(/[ \t]+/) of a run that neither starts nor ends with a blank */
function blankWords(run: string): string[] {
  const words: string[] = [];
  let from = 0;
  for (let k = 0; k < run.length; k++) {
    const c = run.charCodeAt(k);
    if (c !== 32 && c !== 9) continue;
    words.push(run.slice(from, k));
    while (k + 1 < run.length && (run.charCodeAt(k + 1) === 32 || run.charCodeAt(k + 1) === 9)) k++;
    from = k + 1;
  }
  words.push(run.slice(from));
  return words;
}

/** FNV-1a of text[from, to) with ASCII capitals in lower case */
function hashLower(text: string, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    h = Math.imul(h ^ (c >= 65 && c <= 90 ? c + 32 : c), 0x01000193);
  }
  return h >>> 0;
}

const isAsciiLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const isBlank = (c: number) => c === 32 || c === 9;

/**
 * Whether LOWER_AFTER_CUE may match at `at`, the start of an ASCII word of its phrases (a
 * necessary condition, so that most places are not tried): one of the phrases that may start
 * with that word, the blanks after it, a word that is none of the lookahead's, then blanks and a
 * letter. Where the phrase ends is read from the characters after the word, looser than the
 * phrases (so never stricter): right after the word ("for"); after a "," or ":" ("thanks,",
 * "name:"); after "'" and a letter ("it's", "i'm"); after a word of two letters when the word is
 * "name", "i" or "behalf" ("name is", "i am", "behalf of"), of three when it is "thank" ("thank
 * you", "thank you,"). Characters outside ASCII count as letters. No string is made.
 */
function mayFollowCue(text: string, at: number): boolean {
  const n = text.length;
  let e = at;
  while (e < n && isAsciiLetter(text.charCodeAt(e))) e++;
  if (e >= n) return false;
  const length = e - at;
  const first = text.charCodeAt(at) | 32;
  const c = text.charCodeAt(e);
  if (isBlank(c)) {
    if (nameWordsAfter(text, e)) return true;
    // "name is", "i am", "behalf of"
    if ((length === 1 || (length === 4 && first === 0x6e) || (length === 6 && first === 0x62)) && isBlank(text.charCodeAt(e + 3)))
      return nameWordsAfter(text, e + 3);
    // "thank you", "thank you,"
    if (length === 5 && first === 0x74)
      return (
        (isBlank(text.charCodeAt(e + 4)) && nameWordsAfter(text, e + 4)) ||
        (isBlank(text.charCodeAt(e + 5)) && nameWordsAfter(text, e + 5))
      );
    return false;
  }
  if (c === 44 || c === 58) return isBlank(text.charCodeAt(e + 1)) && nameWordsAfter(text, e + 1);
  if (c === 39) return isBlank(text.charCodeAt(e + 2)) && nameWordsAfter(text, e + 2);
  return false;
}

/** After the blanks at `blank`: a word that is none of CUE_STOP, then blanks and a letter (LOWER_AFTER_CUE after its phrase). */
function nameWordsAfter(text: string, blank: number): boolean {
  const n = text.length;
  let p = blank;
  while (p < n && isBlank(text.charCodeAt(p))) p++;
  if (p >= n) return false;
  const first = text.charCodeAt(p);
  if (!isAsciiLetter(first) && first < 0x80) return false;
  // the lookahead's words are letters and "'", followed by a blank or ".,!?"
  let r = p;
  while (r < n && (isAsciiLetter(text.charCodeAt(r)) || text.charCodeAt(r) === 39)) r++;
  if (r < n && r - p <= 5) {
    const d = text.charCodeAt(r);
    if (isBlank(d) || d === 46 || d === 44 || d === 33 || d === 63) {
      const stop = CUE_STOP.get(hashLower(text, p, r));
      if (stop !== undefined && sameLower(text, p, r, stop)) return false;
    }
  }
  // the word: letters, marks, "'", "’" and "-"; then blanks and a letter
  let q = p + 1;
  for (; q < n; q++) {
    const c = text.charCodeAt(q);
    if (!(isAsciiLetter(c) || c === 39 || c === 45 || c >= 0x80)) break;
  }
  if (q >= n || !isBlank(text.charCodeAt(q))) return false;
  while (q < n && isBlank(text.charCodeAt(q))) q++;
  return q < n && (isAsciiLetter(text.charCodeAt(q)) || text.charCodeAt(q) >= 0x80);
}

/** text[from, to) in lower case (ASCII capitals) is `word` */
function sameLower(text: string, from: number, to: number, word: string): boolean {
  if (to - from !== word.length) return false;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if ((c >= 65 && c <= 90 ? c + 32 : c) !== word.charCodeAt(i - from)) return false;
  }
  return true;
}
