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
import { isEnglishWord, isGazetteerName, isStopword } from "./gazetteer";
import { isGivenName } from "./given-names";
import { AMBIGUOUS_NAMES, GIVEN_NAMES, NOT_NAME_WORDS } from "./name-lists";
import { entity, type PiiEntity } from "./types";

/** A capitalised word ("Linnéa", "Ülle", "O'Neil", "Jean-Luc"), or a run of them with middle initials. */
const CAP_RUN =
  /(?<![\p{L}\p{M}\p{N}'’@.-])\p{Lu}[\p{Ll}\p{M}]+(?:[-'’]\p{Lu}?[\p{Ll}\p{M}]+)?(?:[ \t]+(?:\p{Lu}\.[ \t]+|(?:van|von|der|den|de|del|della|di|da|dos|das|du|la|le|bin|ibn|al|el|ter|ten)[ \t]+)*\p{Lu}[\p{Ll}\p{M}]+(?:[-'’]\p{Lu}?[\p{Ll}\p{M}]+)?){0,2}(?![\p{L}\p{M}\p{N}@])/gu;

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
  return ch !== undefined && WORD_CHARS.test(ch);
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
  if (NOT_NAME_WORDS.has(word) || isStopword(word) || CONTRACTION.test(word)) return false;
  if (GREETINGS.has(word.toLowerCase())) return false;
  return !isEnglishWord(word) || GIVEN_NAMES.has(word);
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
  if (!words.every(nameLike)) return 0;
  const known = words.some((w) => knownGiven(w));
  const before = wordBefore(text, start);
  const prev = text.slice(Math.max(0, start - 2), start);
  const ls = lineStart(text, start);
  const le = lineEnd(text, end);
  const restOfLine = text.slice(end, le).trim();
  const alone = ls === start || text.slice(ls, start).trim() === "" || /^[-–—>*]+$/.test(text.slice(ls, start).trim());
  // a greeting or closing of any of the languages just before ("Hej Linnéa", "Pozdrawiam, Bożena")
  if (GREETINGS.has(before)) return 0.8;
  // alone on its line: a signature under a closing line, or the only words of the first line
  if (alone && /^[.!,]?$/.test(restOfLine)) {
    const prevLine = text
      .slice(lineStart(text, Math.max(0, ls - 1)), Math.max(0, ls - 1))
      .trim()
      .toLowerCase();
    const closing =
      /(?:regards|thanks|thank you|cheers|best|sincerely|wishes|hilsen|hälsningar|pozdrawiam|pozdravem|terveisin|grüße|cordialement|saludos|signed|yours|mvh|üdvözlettel)[,.!]?$/.test(
        prevLine,
      );
    if (closing || ls === 0 || known) return 0.8;
  }
  // after "-- " closing a line ("Who has the keys? -- Hjalmar")
  if (/[-–—]{1,2} ?$/.test(text.slice(Math.max(0, start - 3), start)) && /^[.!]?$/.test(restOfLine)) return 0.75;
  // in quotes: "Bjarne, can you…", "Tapio!"; or after said/asked ("…," said Radomír)
  if (/["“„«']$/.test(prev) && /^[,!?]/.test(text.slice(end, end + 1))) return 0.8;
  if (before === "said" || before === "asked" || before === "replied" || before === "wrote") return 0.8;
  // a surname's ending on the last of two or more words ("Jurgita Petrauskienė")
  if (words.length >= 2 && SURNAME_ENDING.test(words[words.length - 1] as string)) return 0.8;
  // a known given name in running text: after a lower-case word or a cue, or starting a sentence with a verb after it
  if (known) {
    const c = text.slice(0, start).trimEnd().slice(-1);
    if (PERSON_CUES.has(before) || /[\p{Ll},(]/u.test(c)) return 0.75;
    const next = wordAfter(text, end);
    if (next && /^\p{Ll}/u.test(next)) return 0.75;
    if (text[end] === "(" || text.slice(end, end + 2) === " (") return 0.75;
  }
  // a word no list knows after a cue that only a person takes ("ask Ratko", "this is Ratko", "Could Gunnhild take…")
  if (
    words.length === 1 &&
    (STRONG_PERSON_CUES.has(before) || (before === "is" && /\bthis\s+is\s*$/i.test(text.slice(0, start))))
  ) {
    const next = wordAfter(text, end);
    if (!MODALS.has(before) || /^\p{Ll}/u.test(next)) return 0.7;
  }
  // a word no list knows, starting a sentence, then a verb in the past tense ("Enikő presented")
  if (words.length === 1 && isGazetteerName(first) === false) {
    const next = wordAfter(text, end);
    if (/^\p{Ll}{3,}(?:ed|ised|ized)$/u.test(next) && !isEnglishWord(first)) return 0.7;
  }
  return 0;
}

/** A list of single names ("Present: Ratko, Enikő, Onni, Jurgita"): each a name when half of them are known given names. */
const NAME_LIST =
  /(?<=^|[:\n]|[:—–-] )[ \t]*(\p{Lu}[\p{Ll}\p{M}]+(?:[ \t]*,[ \t]*\p{Lu}[\p{Ll}\p{M}]+)+(?:,?[ \t]+and[ \t]+\p{Lu}[\p{Ll}\p{M}]+)?)[ \t]*(?=[.\n]|$)/gu;

/** Labels of a list of people ("Present: …", "Attendees: …"). */
const PEOPLE_LABELS = new Set(
  "present attendees participants invited invitees guests speakers members team cc to from".split(" "),
);

function findNameLists(text: string, out: PiiEntity[]): void {
  for (const m of text.matchAll(NAME_LIST)) {
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
const CHAT = /(?<=^|\n)\[?\d{1,2}:\d{2}(?::\d{2})?\]?[ \t]+(?:<([\p{L}][\p{L}\p{M}_.-]{1,30})>|(\p{Lu}[\p{Ll}\p{M}]+):)/gu;

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
  if (text.includes(":")) {
    for (const m of text.matchAll(CHAT)) {
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

export function findMoreNames(text: string): PiiEntity[] {
  const out: PiiEntity[] = [];
  for (const m of text.matchAll(CAP_RUN)) {
    let start = m.index as number;
    const end = start + m[0].length;
    let words = m[0].split(/[ \t]+/);
    // a greeting, label or function word leading the run is no part of it ("Kedves Réka", "Welcome Jurgita …")
    while (words.length > 1 && !nameLike(words[0] as string)) {
      start = text.indexOf(words[1] as string, start + (words[0] as string).length);
      words = words.slice(1);
    }
    words = words.filter((w) => /^\p{Lu}[\p{Ll}\p{M}]/u.test(w));
    if (words.length === 0 || falseName(text, start, end)) continue;
    const score = runScore(text, start, end, words);
    if (score > 0) out.push(entity("name", text, start, end, score));
  }
  findNameLists(text, out);
  findCellsAndNicks(text, out);
  findCardTop(text, out);
  return out;
}
