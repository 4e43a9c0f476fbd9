/**
 * Person names the capitalised-run scanner (names.ts) leaves: a given name or surname alone in
 * running text, after a greeting or closing in another language ("Hej Linnéa", "Pozdrawiam,
 * Bożena"), after a quote, alone on a signature line, in a list of names, as a cell of a
 * delimited row beside an email, as a chat nick; and lower-case names at the top of a contact
 * card. Each needs evidence beyond the capital letter: a cue, a place in the text that only a
 * name takes, a given name of the lists (name-lists.ts, given-names.ts), or a surname's ending.
 * `falseName` is the other side: runs that a street, square, bridge, ship or organisation word
 * follows or precedes are no person.
 */
import { isEnglishWord, isGazetteerName, isStopword, isStopwordLower } from "./gazetteer";
import { isGivenName } from "./given-names";
import { nameTokens, tokenEnds, tokenStarts } from "./keywords";
import { AMBIGUOUS_NAMES, GIVEN_NAMES, NOT_NAME_WORDS } from "./name-lists";
import { entity, type PiiEntity } from "./types";

/** Greetings and closings of the languages the engine reads, lower case: a name may follow them. */
const GREETINGS = new Set(
  (
    "hi hello hey dear thanks thank thx cheers regards best sincerely yours welcome congrats congratulations ps " +
    "hej hei heippa moi terve tere labas sveiki szia sziasztok kedves ahoj čau cau cześć czesc witam hallo servus moin " +
    "lieber liebe bonjour salut coucou hola ciao olá ola oi zdravo bok pozdrav pozdrawiam pozdravem pozdravljeni " +
    "grüße gruss gruß grüsse cordialement amicalement hälsningar hilsen terveisin üdvözlettel saludos saluti " +
    "tervehdys groeten dag beste"
  ).split(" "),
);
/** Lower-case words after which a capitalised word is the object or subject of a person's act. */
const PERSON_CUES = new Set(
  "ask asked thank thanks invite invited tell told said says asked replied wrote cc with and to for by is was it's its this from meet".split(
    " ",
  ),
);
/** Cues before a single word no list knows: only a person is asked, thanked, invited, or asked about with a modal. */
const MODALS = new Set("could can would will should did does may might shall".split(" "));
const STRONG_PERSON_CUES = new Set(["ask", "asked", "thank", "invite", "invited", "tell", "it's", "its", "cc", ...MODALS]);
/** Words after a run that make it a place, a ship or an organisation, not a person (lower case). */
const PLACE_AFTER = new Set(
  (
    "square street st road rd avenue ave boulevard blvd lane drive way route highway parkway northway bridge park plaza " +
    "platz straße strasse gasse haus hall center centre station airport university college school hospital museum " +
    "church cathedral tower square's memorial stadium arena theatre theater library institute foundation services " +
    "service solutions holdings partners group inc ltd llc corp company bank capital web cloud labs ventures " +
    "tér utca út körút náměstí ulice plac aleja gatan gata gate vej katu tie iela prospekt"
  ).split(" "),
);
/** Words before a run that make it a place or a ship (as written). */
const PLACE_BEFORE = new Set(
  "USS HMS HMCS Place Plac Piazza Plaza Rue Via Gran Calle Avenida Rua Boulevard Platz Mount Lake Fort Saint St Port Cape".split(
    " ",
  ),
);

/** Endings of family names in the traditions the gazetteers cover thinly (Baltic, Slavic, Nordic, Finnish...). */
const SURNAME_ENDING =
  /(?:ienė|aitė|ytė|utė|ūtė|iūtė|auskas|evičius|avičius|enko|chuk|czuk|owski|owska|ewski|ewska|ński|ńska|wicz|ović|ević|vić|ić|ová|ská|ský|ovský|ovich|ovna|evna|ova|eva|sson|dóttir|dottir|sdóttir|sen|nen|lä|ld|stad|rud|aas|heim|iņš|iņa|ējs|elis|ulis|ytė|oglu|oğlu|ızı|idis|ides|opoulos|opoulou|akis|ou)$/u;

const WORD_CHARS = /[\p{L}\p{M}]/u;

function isWordChar(ch: string | undefined): boolean {
  if (ch === undefined) return false;
  const c = ch.charCodeAt(0);
  if (c < 0x80) return (c >= 97 && c <= 122) || (c >= 65 && c <= 90);
  return WORD_CHARS.test(ch);
}

/** The lower-case word that ends at `end` (before spaces and one "," or ":"), or "". */
function wordBefore(text: string, end: number): string {
  let k = end;
  while (k > 0 && (text[k - 1] === " " || text[k - 1] === "\t")) k--;
  if (k > 0 && (text[k - 1] === "," || text[k - 1] === ":")) k--;
  while (k > 0 && (text[k - 1] === " " || text[k - 1] === "\t")) k--;
  let s = k;
  while (s > 0 && (isWordChar(text[s - 1]) || text[s - 1] === "'" || text[s - 1] === "’")) s--;
  return text.slice(s, k).toLowerCase();
}

/** The word right after `at` past blanks (as written), or "". */
function wordAfter(text: string, at: number): string {
  let k = at;
  while (k < text.length && (text[k] === " " || text[k] === "\t")) k++;
  let e = k;
  while (e < text.length && (isWordChar(text[e]) || text[e] === "'" || text[e] === "’")) e++;
  return text.slice(k, e);
}

function lineStart(text: string, at: number): number {
  return text.lastIndexOf("\n", at - 1) + 1;
}

function lineEnd(text: string, at: number): number {
  const n = text.indexOf("\n", at);
  return n < 0 ? text.length : n;
}

/** A given name of the lists: the English and international ones (not those that are also words), or the locales' (given-names.ts). */
function knownGiven(word: string): boolean {
  if (GIVEN_NAMES.has(word)) return !AMBIGUOUS_NAMES.has(word);
  return !isEnglishWord(word) && isGivenName(word);
}

const CONTRACTION = /['’](?:re|ve|ll|d|s|t|m)$/i;

/** Whether a word may be a name at all: no everyday English word, no function word, no label. */
function nameLike(word: string): boolean {
  if (NOT_NAME_WORDS.has(word)) return false;
  // the cheapest tests first: an everyday word (one hash) rejects most capitalised words of English text
  if (isEnglishWord(word) && !GIVEN_NAMES.has(word)) return false;
  // (most words have no apostrophe: the pattern is tried only on those that do)
  if ((word.includes("'") || word.includes("’")) && CONTRACTION.test(word)) return false;
  const lower = word.toLowerCase();
  return !isStopwordLower(lower) && !GREETINGS.has(lower);
}

/** A run that a place, ship or organisation word follows or precedes ("Rosa Parks Square", "USS Nimitz", "… Holdings"), or owned by someone ("Buffett's Berkshire Hathaway"). */
export function falseName(text: string, start: number, end: number): boolean {
  const after = wordAfter(text, end).toLowerCase();
  if (PLACE_AFTER.has(after)) return true;
  // the run's own last word is such a word ("Rosa Parks Square"), or its first a place's ("Gran Vía")
  let w = end;
  while (w > start && isWordChar(text[w - 1])) w--;
  if (w > start && PLACE_AFTER.has(text.slice(w, end).toLowerCase())) return true;
  let f = start;
  while (f < end && isWordChar(text[f])) f++;
  if (f < end && PLACE_BEFORE.has(text.slice(start, f))) return true;
  let k = start;
  while (k > 0 && text[k - 1] === " ") k--;
  if (k >= 3 && text[k - 1] === "s" && (text[k - 2] === "'" || text[k - 2] === "’")) {
    // a capitalised owner ("Buffett's"), not a contraction ("it's", "that's")
    let o = k - 2;
    while (o > 0 && isWordChar(text[o - 1])) o--;
    if (o < k - 2 && /^\p{Lu}/u.test(text[o] as string)) return true;
  }
  let s = k;
  while (s > 0 && isWordChar(text[s - 1])) s--;
  if (k < start && PLACE_BEFORE.has(text.slice(s, k))) return true;
  // the run is followed by a capitalised organisation word ("Amazon Web Services")
  return false;
}

/** The evidence for a capitalised run at [start, end): a score, or 0. */
function runScore(text: string, start: number, end: number, words: string[]): number {
  const first = words[0] as string;
  const before = wordBefore(text, start);
  // a greeting or closing of any of the languages just before ("Hej Linnéa", "Pozdrawiam, Bożena")
  if (GREETINGS.has(before)) return 0.8;
  const known = words.some((w) => knownGiven(w));
  const ls = aloneFrom(text, start);
  const lineRest = restIsBare(text, end);
  // alone on its line: a signature under a closing line, or the only words of the first line
  if (ls >= 0 && lineRest) {
    const prevLine = text
      .slice(lineStart(text, Math.max(0, ls - 1)), Math.max(0, ls - 1))
      .trim()
      .toLowerCase();
    if (ls === 0 || known || CLOSING_LINE.test(prevLine)) return 0.8;
  }
  // after "-- " closing a line ("Who has the keys? -- Hjalmar")
  if (lineRest && /[-–—]{1,2} ?$/.test(text.slice(Math.max(0, start - 3), start))) return 0.75;
  // in quotes: "Bjarne, can you…", "Tapio!"; or after said/asked ("…," said Radomír)
  if (QUOTES.includes(text[start - 1] as string) && /^[,!?]/.test(text.slice(end, end + 1))) return 0.8;
  if (before === "said" || before === "asked" || before === "replied" || before === "wrote") return 0.8;
  // a surname's ending on the last of two or more words ("Jurgita Petrauskienė")
  if (words.length >= 2 && SURNAME_ENDING.test(words[words.length - 1] as string)) return 0.8;
  // a known given name in running text: after a lower-case word or a cue, or starting a sentence with a verb after it
  if (known) {
    let k = start;
    while (k > 0 && (text[k - 1] === " " || text[k - 1] === "\t")) k--;
    if (PERSON_CUES.has(before) || (k > 0 && /[\p{Ll},(]/u.test(text[k - 1] as string))) return 0.75;
    const next = wordAfter(text, end);
    if (next && /^\p{Ll}/u.test(next)) return 0.75;
    if (text[end] === "(" || text.slice(end, end + 2) === " (") return 0.75;
  }
  if (words.length !== 1) return 0;
  // a word no list knows after a cue that only a person takes ("ask Ratko", "this is Ratko", "Could Gunnhild take…")
  if (
    STRONG_PERSON_CUES.has(before) ||
    (before === "is" && /\bthis\s+is\s*$/i.test(text.slice(Math.max(0, start - 12), start)))
  ) {
    if (!MODALS.has(before) || /^\p{Ll}/u.test(wordAfter(text, end))) return 0.7;
  }
  // a word no list knows, starting a sentence, then a verb in the past tense ("Enikő presented")
  if (/^\p{Ll}{3,}(?:ed|ised|ized)$/u.test(wordAfter(text, end)) && !isGazetteerName(first) && !isEnglishWord(first)) return 0.7;
  return 0;
}

const QUOTES = "\"“„«'";
const CLOSING_LINE =
  /(?:regards|thanks|thank you|cheers|best|sincerely|wishes|hilsen|hälsningar|pozdrawiam|pozdravem|terveisin|grüße|cordialement|saludos|signed|yours|mvh|üdvözlettel)[,.!]?$/;

/** Start of the line when only blanks or a dash or quote mark ("-- ", "> ") stand before `start` on it; -1 otherwise. */
function aloneFrom(text: string, start: number): number {
  let k = start;
  while (k > 0) {
    const c = text[k - 1] as string;
    if (c === "\n") return k;
    if (c !== " " && c !== "\t" && c !== "-" && c !== "–" && c !== "—" && c !== ">" && c !== "*") return -1;
    k--;
  }
  return 0;
}

/** Whether only blanks and at most one ".", "!" or "," follow `end` on its line. */
function restIsBare(text: string, end: number): boolean {
  let k = end;
  let marks = 0;
  for (; k < text.length && text[k] !== "\n"; k++) {
    const c = text[k];
    if (c === "." || c === "!" || c === ",") marks++;
    else if (c !== " " && c !== "\t" && c !== "\r") return false;
    if (marks > 1) return false;
  }
  return true;
}

/** A list of single names ("Present: Ratko, Enikő, Onni, Jurgita"): each a name when half of them are known given names. */
const NAME_LIST_AT =
  /(\p{Lu}[\p{Ll}\p{M}]{1,40}(?:,[ \t]?\p{Lu}[\p{Ll}\p{M}]{1,40})+(?:,? and \p{Lu}[\p{Ll}\p{M}]{1,40})?)(?=[ \t]?(?:[.\n]|$))/uy;

/** Labels of a list of people ("Present: …", "Attendees: …"). */
const PEOPLE_LABELS = new Set(
  "present attendees participants invited invitees guests speakers members team cc to from".split(" "),
);

/** Where a list may start: the text's start, a line start, after ":" or a dash. */
function listStarts(text: string): number[] {
  const at = [0];
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) at.push(i + 1);
  for (let i = text.indexOf(":"); i >= 0; i = text.indexOf(":", i + 1)) at.push(i + 1);
  for (const dash of ["- ", "— ", "– "]) for (let i = text.indexOf(dash); i >= 0; i = text.indexOf(dash, i + 1)) at.push(i + 2);
  return at;
}

function findNameLists(text: string, out: PiiEntity[]): void {
  if (!text.includes(",")) return;
  for (const from of listStarts(text)) {
    let first = from;
    while (text[first] === " " || text[first] === "\t") first++;
    NAME_LIST_AT.lastIndex = first;
    const m = NAME_LIST_AT.exec(text);
    if (!m) continue;
    const list = m[1] as string;
    const at = (m.index as number) + m[0].indexOf(list);
    const items = [...list.matchAll(/\p{Lu}[\p{Ll}\p{M}]+/gu)];
    if (!items.every((w) => nameLike(w[0]))) continue;
    const label = wordBefore(text, at);
    if (!PEOPLE_LABELS.has(label) && items.filter((w) => knownGiven(w[0])).length * 2 < items.length) continue;
    for (const w of items) out.push(entity("name", text, at + (w.index as number), at + (w.index as number) + w[0].length, 0.8));
  }
}

/** A cell of a delimited row on a line that holds an email: "3;Jurgita Vaitkienė;jurgita.v@…". */
const CELL = /(?<=^|[;\t|,])(\p{Lu}[\p{Ll}\p{M}]+(?: \p{Lu}[\p{Ll}\p{M}'’-]+){1,2})(?=[;\t|,])/gmu;
/** A chat nick: "09:12 <ratko>", or a speaker after a time stamp: "[10:05] Raimonds:". */
const CHAT = /\[?\d{1,2}:\d{2}(?::\d{2})?\]?[ \t]+(?:<([\p{L}][\p{L}\p{M}_.-]{1,30})>|(\p{Lu}[\p{Ll}\p{M}]+):)/uy;

function findCellsAndNicks(text: string, out: PiiEntity[]): void {
  if (text.includes("@") && /[;\t|]/.test(text)) {
    for (const m of text.matchAll(CELL)) {
      const le = lineEnd(text, m.index as number);
      if (!text.slice(lineStart(text, m.index as number), le).includes("@")) continue;
      const cell = m[1] as string;
      if (!cell.split(/[ \t]+/).every(nameLike)) continue;
      const at = (m.index as number) + m[0].indexOf(cell);
      out.push(entity("name", text, at, at + cell.length, 0.8));
    }
  }
  if (!text.includes(":")) return;
  for (let line = 0; line >= 0; line = text.indexOf("\n", line) + 1 || -1) {
    const c = text.charCodeAt(line);
    if (!((c >= 48 && c <= 57) || c === 91)) continue;
    CHAT.lastIndex = line;
    const m = CHAT.exec(text);
    if (m) {
      const nick = (m[1] ?? m[2]) as string;
      const at = (m.index as number) + m[0].lastIndexOf(nick);
      if (m[2] !== undefined && !nameLike(nick)) continue;
      out.push(entity("name", text, at, at + nick.length, 0.8));
    }
  }
}

/**
 * A lower-case name on the first line of a contact card ("riikka laaksonen" above a title, a
 * phone number or an email): one to three words, none an everyday or function word, the first a
 * known given name or one of the gazetteer.
 */
const CARD_TOP = /^[ \t]*(\p{Ll}[\p{Ll}\p{M}'’-]+(?:[ \t]+\p{Ll}[\p{Ll}\p{M}'’-]+){0,2})[ \t]*\n(?=[^\n]*(?:@|\d{2}|\p{Lu}))/u;

function findCardTop(text: string, out: PiiEntity[]): void {
  const m = CARD_TOP.exec(text);
  if (!m) return;
  const line = m[1] as string;
  const words = line.split(/[ \t]+/);
  if (words.some((w) => isEnglishWord(w) || isStopword(w))) return;
  const title = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);
  const last = words[words.length - 1] as string;
  const surname = words.length >= 2 && SURNAME_ENDING.test(last);
  if (!surname && !knownGiven(title(words[0] as string)) && !isGazetteerName(words[0] as string)) return;
  // the card goes on with an email or a phone number
  if (!/@|\+?\d[\d ().-]{6,}/.test(text.slice(m[0].length - 1))) return;
  const at = m.index + m[0].indexOf(line);
  out.push(entity("name", text, at, at + line.length, 0.8));
}

/** Whether text[at] starts a capitalised word: an upper-case letter, then a lower-case one. */
function capitalisedAt(text: string, at: number, end: number): boolean {
  if (end - at < 2) return false;
  const f = text.charCodeAt(at);
  const g = text.charCodeAt(at + 1);
  if (f < 0x80 && g < 0x80) return f >= 65 && f <= 90 && g >= 97 && g <= 122;
  return CAPITALISED.test(text.slice(at, at + 2));
}
const CAPITALISED = /^\p{Lu}[\p{Ll}\p{M}]/u;
const PARTICLES = new Set("van von der den de del della di da dos das du la le bin ibn al el ter ten".split(" "));

/**
 * The end (token index, exclusive) of the run of capitalised words from token `i` (the keyword
 * pass's words, keywords.ts): up to three words a blank apart, with middle initials ("K.") and
 * particles ("van der") between them.
 */
function runEnd(text: string, count: number, i: number): number {
  let j = i + 1;
  let n = 1;
  while (j < count && n < 3) {
    const gapStart = tokenEnds[j - 1] as number;
    const gap = (tokenStarts[j] as number) - gapStart;
    const blank = gap === 1 && (text[gapStart] === " " || text[gapStart] === "\t");
    const initial =
      gap === 2 &&
      text[gapStart] === "." &&
      text[gapStart + 1] === " " &&
      (tokenEnds[j - 1] as number) - (tokenStarts[j - 1] as number) === 1;
    if (!blank && !initial) break;
    const s = tokenStarts[j] as number;
    const e = tokenEnds[j] as number;
    if (e - s === 1 && text[e] === "." && text[e + 1] === " ") {
      j++;
      continue;
    }
    if (PARTICLES.has(text.slice(s, e)) && j + 1 < count) {
      j++;
      continue;
    }
    if (!capitalisedAt(text, s, e)) break;
    j++;
    n++;
  }
  // a trailing initial or particle is no part of the run
  while (j - 1 > i && !capitalisedAt(text, tokenStarts[j - 1] as number, tokenEnds[j - 1] as number)) j--;
  return j;
}

export function findMoreNames(text: string): PiiEntity[] {
  const out: PiiEntity[] = [];
  const count = nameTokens(text);
  let i = 0;
  while (i < count) {
    const start = tokenStarts[i] as number;
    const firstEnd = tokenEnds[i] as number;
    // most words start with a lower-case ASCII letter: passed over before anything else
    const f = text.charCodeAt(start);
    if ((f >= 97 && f <= 122) || !capitalisedAt(text, start, firstEnd)) {
      i++;
      continue;
    }
    // part of an email, a host name or a code ("maria.Keller@", "x-Ray")
    const p = text.charCodeAt(start - 1);
    if (p === 64 || p === 46 || p === 45 || (p >= 48 && p <= 57) || text.charCodeAt(firstEnd) === 64) {
      i++;
      continue;
    }
    if (!nameLike(text.slice(start, firstEnd))) {
      i++;
      continue;
    }
    const j = runEnd(text, count, i);
    const end = tokenEnds[j - 1] as number;
    const words: string[] = [];
    for (let k = i; k < j; k++) {
      const s = tokenStarts[k] as number;
      const e = tokenEnds[k] as number;
      if (capitalisedAt(text, s, e)) words.push(text.slice(s, e));
    }
    if (!words.every(nameLike) || text.charCodeAt(end) === 64 || falseName(text, start, end)) {
      i++;
      continue;
    }
    const score = runScore(text, start, end, words);
    if (score > 0) {
      out.push(entity("name", text, start, end, score));
      i = j;
    } else i++;
  }
  findNameLists(text, out);
  findCellsAndNicks(text, out);
  findCardTop(text, out);
  return out;
}
