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
import { hasNonAscii } from "./chars";
import { isEnglishWord, isEnglishWordAt, isGazetteerName, isStopword, isStopwordLower } from "./gazetteer";
import { isFamilyName, isGivenName } from "./given-names";
import { nameTokens, tokenEnds, tokenStarts } from "./keywords";
import { AMBIGUOUS_NAMES, GIVEN_NAMES, NOT_NAME_WORDS, NOT_NAME_WORDS_AT } from "./name-lists";
import { introBefore } from "./names";
import { knownPlace, placeAfterNumber } from "./names-place";
import { entity, type PiiEntity } from "./types";

/** Greetings and closings of the languages the engine reads, lower case: a name may follow them. */
const GREETINGS = new Set(
  (
    "hi hello hey dear thanks thank thx cheers regards best sincerely yours welcome congrats congratulations ps " +
    "hej hei heippa moi terve tere labas sveiki szia sziasztok kedves ahoj čau cau cześć czesc witam hallo servus moin " +
    "lieber liebe bonjour salut coucou hola ciao olá ola oi zdravo bok pozdrav pozdrawiam pozdravem pozdravljeni " +
    "grüße gruss gruß grüsse cordialement amicalement hälsningar hilsen terveisin üdvözlettel saludos saluti " +
    "tervehdys groeten dag beste " +
    // openings and closings of letters, and thanks, in more languages ("Caro Rui", "Srdačan pozdrav, Ante")
    "caro cara querido querida estimado estimada szanowna szanowny szanowni vážená vážený vazena vazeny poštovani " +
    "poštovana poštovanje spoštovana spoštovani merci cumprimentos atenciosamente obrigado obrigada gracias grazie " +
    "danke tak takk tack kiitos köszönöm dziękuję děkuji ďakujem hvala ačiū paldies aitäh sveiks sveika labdien " +
    "merhaba selam chào namaste saygılarımla groet mvh lp üdv tisztelettel serdecznie poważaniem lugupidamisega " +
    "cieņu pagarbiai trọng atentamente salutations gruß grüßen grüssen mfg " +
    "поздрав привет здравствуйте здраво вітаю здравей поздрави χαίρετε γεια"
  ).split(" "),
);
/**
 * Titles and forms of address of other languages, as written inside a sentence ("pani Agnieszko",
 * "gospodine Babić", "paní Procházková", "Sayın Kemal Aydın"): the words after them are a name.
 */
const ADDRESS_TITLES = new Set(
  (
    "pani pan paní pán panie pane panu pana gospodine gospodin gospođo gospođa gospa gospod gospe sayın bay bayan " +
    "fru herra rouva neiti úr asszony senhor senhora señor señora doña signor signora signorina ponas ponia kungs kundze " +
    "härra proua holder cardholder kortholder kortinnehaver kortinnehavare karteninhaber kontoinhaber titular titulaire " +
    "intestatario posiadacz držitel držiteľ vlasnik imetnik kártyabirtokos haltija " +
    // kin and respect before a given name in Vietnamese and Filipino ("chị Lan", "Kuya Jun")
    "chị cô chú bác ông bà kuya tita tito lola lolo manong manang"
  ).split(" "),
);
/** Abbreviated titles before a name ("ga. Zupančič", "Sr. Zubiaurre", "Ing. Beneš"), lower case, without the period. */
const ABBREVIATED_TITLES = new Set("ga g gđa gđo gosp sr sra srta sig dott ing mgr hr fr p pí sz".split(" "));
/**
 * Phrases that introduce oneself or name someone, in the languages the engine reads ("me llamo",
 * "jeg heter", "nazywam się", "tôi là"): the capitalised words after them are a name.
 */
const SELF_INTRO = (
  "zovem se|zovu me|nazywam się|mam na imię|jmenuji se|volám sa|me llamo|mi chiamo|je m'appelle|je suis|ich heiße|" +
  "ich heisse|jeg heter|jag heter|jeg hedder|ég heiti|nimeni on|olen|mă numesc|meu nome é|chamo-me|me chamo|benim adım|" +
  "adım|mano vardas|esu|mani sauc|esmu|minu nimi on|a nevem|nevem|tôi là|tôi tên là|em là|anh là|chị là|name on card|" +
  "name on the card|soy|sono|sou|jestem|jsem"
).split("|");

/** The last word of each phrase, lower case: a phrase can end before a name only when the word before it is one. */
const lastWords = (phrases: readonly string[]): Set<string> => new Set(phrases.map((p) => p.slice(p.lastIndexOf(" ") + 1)));
const SELF_INTRO_LAST = lastWords(SELF_INTRO);

/** Whether `window` ends, past blanks and one ":" or ",", in one of `phrases` (lower case) that starts a word. */
function endsInPhrase(window: string, phrases: readonly string[]): boolean {
  let k = window.length;
  while (k > 0 && (window[k - 1] === " " || window[k - 1] === "\t")) k--;
  if (k > 0 && (window[k - 1] === ":" || window[k - 1] === ",")) k--;
  while (k > 0 && (window[k - 1] === " " || window[k - 1] === "\t")) k--;
  const head = window.slice(0, k).toLowerCase();
  for (const p of phrases) {
    if (!head.endsWith(p)) continue;
    const at = head.length - p.length;
    if (at === 0 || !isWordChar(head[at - 1])) return true;
  }
  return false;
}

/** Words after which a single capitalised word is a place, not a person ("from Tallinn", "i Rīga", "nach Wien"). */
const PLACE_PREPOSITIONS = new Set(
  (
    "in at to from into onto near via towards toward through across around outside inside i på til fra från mot " +
    "w we v ve na do ze od ku pod nad przez przy en à au aux dans vers chez em no nos para pelo pela de del da di dal " +
    "dalla nella nel al alla a nach aus bei zu im am vom zum zur ins ab ja ir iz u k kod kroz ka prema ve te uit naar " +
    "bij op aan tot om voor van der den des the of street road"
  ).split(" "),
);
/** Labels of a form's or a label's name field ("Vorname:", "Příjmení:", "Saaja:", "Consignee:"), lower case. */
export const FIELD_LABELS: ReadonlySet<string> = new Set(
  (
    "vorname nachname fornavn etternavn efternavn förnamn efternamn navn namn nimi etunimi sukunimi név vezetéknév " +
    "keresztnév imię nazwisko jméno příjmení meno priezvisko ime prezime nombre apellido apellidos nome sobrenome " +
    "apelido naam voornaam achternaam nom prénom cognome soyad soyadı vardas pavardė vārds uzvārds eesnimi " +
    "perekonnanimi surname forename firstname lastname holder recipient consignee addressee saaja vastaanottaja " +
    "modtager mottaker mottagare empfänger destinataire destinatario destinatário ontvanger odbiorca příjemce " +
    "adresát prijemca címzett alıcı gavėjas saņēmējs viðtakandi prejemnik primatelj primalac kontaktperson " +
    "ansprechpartner yhteyshenkilö kapcsolattartó titular tên " +
    // senders, and the people a record is about ("Nadawca:", "Absender:", "Patient:", "Tenant:")
    "sender nadawca absender afsender avsender avsändare lähettäjä feladó odesílatel odosielateľ expéditeur remitente " +
    "mittente remetente afzender gönderen siuntėjas sūtītājs saatja pošiljatelj pošiljalac patient tenant guest " +
    "passenger employee applicant candidate attendee attn"
  ).split(" "),
);
/** Whether a form's name label and a colon end right before `start` ("Cardholder: ", "Příjmení: "). */
export function fieldLabelBefore(text: string, start: number): boolean {
  if (!colonBefore(text, start)) return false;
  const label = wordBefore(text, start);
  return FIELD_LABELS.has(label) || ADDRESS_TITLES.has(label);
}
/** /:[ \t]*$/ on the four characters before `start`: a ":" and blanks end right before it. */
function colonBefore(text: string, start: number): boolean {
  const lo = Math.max(0, start - 4);
  let k = start;
  while (k > lo && isBlankCode(text.charCodeAt(k - 1))) k--;
  return k > lo && text.charCodeAt(k - 1) === 58;
}
/** Phrases that ask for a person ("fråga efter", "spør etter", "pitajte za", "ask for"): the word after is a name. */
const ASKED_FOR = (
  "fråga efter|frågade efter|spør etter|spørg efter|spørg om|pitajte za|pitaj za|zeptejte se na|pytaj o|zapytaj o|" +
  "ask for|ask after|frag nach|fragen sie nach|demandez|pregunta por|pregunte por|chiedi di|chiedete di|pergunte por|" +
  "pergunta por|vraag naar|kysy|kysykää"
).split("|");
const ASKED_FOR_LAST = lastWords(ASKED_FOR);
/** Words with a person ("con Ferraretti", "med Bakke", "mit Tjark", "z Tomaszem"): a name may follow them. */
const WITH_WORDS = new Set("with con med mit avec com z s sa kanssa ile ar su și cu".split(" "));
/** Lower-case words after which a capitalised word is the object or subject of a person's act. */
const PERSON_CUES = new Set(
  "ask asked thank thanks invite invited tell told said says asked replied wrote cc with and to for by is was it's its this from meet".split(
    " ",
  ),
);
/** Cues before a single word no list knows: only a person is asked, thanked, invited, or asked about with a modal. */
const MODALS = new Set("could can would will should did does may might shall".split(" "));
const STRONG_PERSON_CUES = new Set([
  "ask",
  "asked",
  "thank",
  "invite",
  "invited",
  "tell",
  "it's",
  "its",
  "cc",
  // chat and office verbs whose object is a person ("ping Ossi", "thx Björn", "call Jouko")
  "ping",
  "pinged",
  "thx",
  "ty",
  "dm",
  "pm",
  "remind",
  "reminded",
  "congrats",
  ...MODALS,
]);
/** Words after a run that make it a place, a ship or an organisation, not a person (lower case). */
const PLACE_AFTER = new Set(
  (
    "square street st road rd avenue ave boulevard blvd lane drive way route highway parkway northway bridge park plaza " +
    "platz straße strasse gasse haus hall center centre station airport university college school hospital museum " +
    "church cathedral tower square's memorial stadium arena theatre theater library institute foundation services " +
    "service solutions holdings partners group inc ltd llc corp company bank capital web cloud labs ventures " +
    "logistics consulting systems technologies software media motors airlines pharma energy foods logistik azure " +
    "tér utca út körút náměstí ulice plac aleja gatan gata gate vej katu tie iela prospekt " +
    // places and their parts, after the place's name ("Ho Chi Minh City", "Camella Homes", "Yenişehir Mah.")
    "city homes village estate crescent district ward barangay mah mahalle mahallesi county province " +
    // a firm's sites after the town they are in ("the Lyon office"; not branch or campus, which are surnames too)
    "office offices site warehouse depot headquarters hq"
  ).split(" "),
);
/** Words of PLACE_AFTER that are common surnames too (Hall, Park, Lane, Ward: England's and Korea's). */
const SURNAME_PLACE_WORDS = new Set(["hall", "park", "lane", "ward"]);
/**
 * Words (lower case) before a run that reach or name a person, not a place: "I met Emma Hall",
 * "ask Jisoo Park", "Manager: Diane Lane". (Prepositions, "to", "from", "with", "at", stand before
 * places as often: they are not here.)
 */
const PERSON_BEFORE = new Set(
  (
    "met meet meeting ask asked contact contacted email emailed tell told cc bcc introduce " +
    "introducing thank thanks hi hello hey dear manager supervisor owner agent contact assignee reporter author recipient " +
    "sender host speaker teacher doctor lawyer landlord tenant colleague coworker boss"
  ).split(" "),
);
/** Verbs (as written) after a run that a person does and a hall or a park does not ("Emma Hall called"). */
const SPEECH_AFTER = new Set(
  "said says told asked asks wrote writes replied replies called calls emailed phoned texted messaged mentioned confirmed explained agreed thinks thought believes signed".split(
    " ",
  ),
);

/**
 * Whether the run at [start, end), which ends in a word of SURNAME_PLACE_WORDS, is a person's name:
 * a title or strong cue before it, a verb of SPEECH_AFTER right after it, or a word of
 * PERSON_BEFORE right before it when its first word is a listed given name ("Emma", not
 * "Carnegie"). A possessive is no evidence ("Albert Hall's acoustics").
 */
function surnamePlace(text: string, start: number, end: number): boolean {
  if (introBefore(text, start) === "strong" || SPEECH_AFTER.has(wordAfter(text, end))) return true;
  if (!PERSON_BEFORE.has(wordBefore(text, start))) return false;
  let f = start;
  while (f < end && wordCharAt(text, f)) f++;
  return knownGiven(text.slice(start, f));
}
/** Legal forms after a firm's name, as written ("Nordkraft AS", "Kone Oyj", "Musterfirma GmbH"). */
const COMPANY_FORMS = new Set(
  "AS ASA AB AG SA SE GmbH Oy Oyj BV NV Kft Zrt Bt SRL Srl SpA ApS UAB SIA OÜ AD DOO LLP PLC Plc".split(" "),
);
/** Prepositions of place before a single word (lower case): "à Lyon", "im Breisgau", "w Gdańsku". */
const LOCATIVES = new Set("à au aux dans im nach aus ins på w we v ve na nel nella em no en in at near".split(" "));
/** Street and square words before a name, as a sentence has them (lower case): "placu Marszałka …", "route Napoléon". */
const STREET_BEFORE = new Set(
  "route rue via strada ulica ulicy ulice ul al aleja alei aleje placu plac place piazza plaza praça praca rua calle avenida avenue trg trgu náměstí namesti náměstím tér utca út iela gatve prospekt prospekta bulevar bulevardul boulevard".split(
    " ",
  ),
);
/** Words before a run that make it a place or a ship (as written). */
const PLACE_BEFORE = new Set(
  (
    "USS HMS HMCS Place Plac Piazza Plaza Rue Via Gran Calle Avenida Rua Boulevard Platz Mount Lake Fort Saint St Port Cape " +
    // a saint's name makes a town's ("São Paulo", "Sankt Pölten", "Sint Maarten"), and Vietnam's units of an address
    // make a place of the name after them ("phường Bến Thành", "quận Đống Đa", "xã Yên Phong", "KCN Tân Bình")
    "São Sankt Sint phường Phường quận Quận huyện Huyện xã Xã tỉnh Tỉnh phố Phố đường Đường thị Thị viện KCN"
  ).split(" "),
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

/** isWordChar of the code unit at `at` of the text (an ASCII one by its code) */
function wordCharAt(text: string, at: number): boolean {
  const c = text.charCodeAt(at);
  if (c < 0x80) return (c >= 97 && c <= 122) || (c >= 65 && c <= 90);
  return !Number.isNaN(c) && WORD_CHARS.test(text[at] as string);
}

/** wordBefore's last answer (the run's checks and its score ask about the same place), forgotten with the text */
let lastBeforeText: string | null = null;
let lastBeforeEnd = -1;
let lastBefore = "";

/** The lower-case word that ends at `end` (before spaces and one "," or ":"), or "". */
function wordBefore(text: string, end: number): string {
  if (end === lastBeforeEnd && text === lastBeforeText) return lastBefore;
  const word = wordBeforeRead(text, end);
  lastBeforeText = text;
  lastBeforeEnd = end;
  lastBefore = word;
  return word;
}

function wordBeforeRead(text: string, end: number): string {
  // (read by character code: it runs for every run the pass weighs)
  let k = end;
  while (k > 0 && isBlankCode(text.charCodeAt(k - 1))) k--;
  if (k > 0 && (text.charCodeAt(k - 1) === 44 || text.charCodeAt(k - 1) === 58)) k--;
  while (k > 0 && isBlankCode(text.charCodeAt(k - 1))) k--;
  let s = k;
  while (s > 0) {
    const c = text.charCodeAt(s - 1);
    if (
      c < 0x80
        ? (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 39
        : c === 0x2019 || WORD_CHARS.test(text[s - 1] as string)
    )
      s--;
    else break;
  }
  return s === k ? "" : text.slice(s, k).toLowerCase();
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
  // a Vietnamese syllable folds onto other languages' names ("Đơn" -> "don"): the lists say nothing of it
  return !isEnglishWord(word) && !VIETNAMESE_LETTER.test(word) && isGivenName(word);
}
/** Letters that only Vietnamese writes (horn, hook and dot below, đ). */
const VIETNAMESE_LETTER = /[ơưđĐƠƯạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ]/i;

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

/** nameLike(text.slice(from, to)), the copy made only for a word that the first tests leave open */
function nameLikeAt(text: string, from: number, to: number): boolean {
  if (NOT_NAME_WORDS_AT.hasAt(text, from, to)) return false;
  const word = text.slice(from, to);
  if (isEnglishWordAt(text, from, to) && !GIVEN_NAMES.has(word)) return false;
  if ((word.includes("'") || word.includes("’")) && CONTRACTION.test(word)) return false;
  const lower = word.toLowerCase();
  return !isStopwordLower(lower) && !GREETINGS.has(lower);
}

const isBlankCode = (c: number) => c === 32 || c === 9;

/** Whether text[from, to) holds a blank or a tab. */
function hasBlank(text: string, from: number, to: number): boolean {
  for (let k = from; k < to; k++) if (isBlankCode(text.charCodeAt(k))) return true;
  return false;
}

/** /^[ \t]*&/ on the three characters from `end`. */
function ampersandAfter(text: string, end: number): boolean {
  const hi = Math.min(text.length, end + 3);
  for (let k = end; k < hi; k++) {
    const c = text.charCodeAt(k);
    if (c === 38) return true;
    if (!isBlankCode(c)) return false;
  }
  return false;
}

/** /&[ \t]*$/ on the three characters before `start`. */
function ampersandBefore(text: string, start: number): boolean {
  const lo = Math.max(0, start - 3);
  for (let k = start - 1; k >= lo; k--) {
    const c = text.charCodeAt(k);
    if (c === 38) return true;
    if (!isBlankCode(c)) return false;
  }
  return false;
}

/**
 * Answers about the runs [start, end) of the text last asked about, each worked out once: every
 * recognizer that finds a run asks falseName and trimName about it again.
 */
class SpanAnswers<T> {
  private text: string | null = null;
  private readonly answers = new Map<number, T>();

  constructor(private readonly work: (text: string, start: number, end: number) => T) {}

  get(text: string, start: number, end: number): T {
    if (text !== this.text) {
      this.answers.clear();
      this.text = text;
    }
    const key = start * (text.length + 1) + end;
    let answer = this.answers.get(key);
    if (answer === undefined) {
      answer = this.work(text, start, end);
      this.answers.set(key, answer);
    }
    return answer;
  }

  forget(): void {
    this.text = null;
    this.answers.clear();
  }
}

const falseNames = new SpanAnswers(placeOrFirm);
const trimmedNames = new SpanAnswers(trimmedSpan);

/** Lets the last text go (detectPii calls it when done). */
export function forgetFalseNames(): void {
  falseNames.forget();
  trimmedNames.forget();
  lastBeforeText = null;
  lastBeforeEnd = -1;
}

/** A run that a place, ship or organisation word follows or precedes ("Rosa Parks Square", "USS Nimitz", "… Holdings"), or owned by someone ("Buffett's Berkshire Hathaway"). */
export function falseName(text: string, start: number, end: number): boolean {
  return falseNames.get(text, start, end);
}

/** falseName, worked out. */
function placeOrFirm(text: string, start: number, end: number): boolean {
  const afterAsWritten = wordAfter(text, end);
  const after = afterAsWritten.toLowerCase();
  if (PLACE_AFTER.has(after) || COMPANY_FORMS.has(afterAsWritten)) return true;
  // a firm of two names ("Ernst & Young", "Marks & Spencer")
  // (the character tests below read the text in place: they were patterns on slices)
  if (ampersandAfter(text, end) || ampersandBefore(text, start)) return true;
  const blankBefore = start > 0 && isBlankCode(text.charCodeAt(start - 1));
  // one word after a preposition of place ("à Lyon", "im Breisgau", "nach Wien")
  const prev = blankBefore ? wordBefore(text, start) : "";
  if (blankBefore && !hasBlank(text, start, end) && LOCATIVES.has(prev)) return true;
  // a street or square word before the run, in the language's case ("placu Marszałka …", "Route Napoléon"),
  // or before the capitalised word before it ("na placu Marszałka Józefa Piłsudskiego")
  if (blankBefore) {
    if (STREET_BEFORE.has(prev)) return true;
    let p = start - 1;
    while (p > 0 && (text[p - 1] === " " || text[p - 1] === "\t")) p--;
    const prevStart = p - prev.length;
    if (
      prev &&
      prevStart > 0 &&
      upperAt(text, prevStart) &&
      isBlankCode(text.charCodeAt(prevStart - 1)) &&
      STREET_BEFORE.has(wordBefore(text, prevStart))
    )
      return true;
  }
  // the run's own last word is such a word ("Rosa Parks Square"), or its first a place's ("Gran Vía")
  let w = end;
  while (w > start && wordCharAt(text, w - 1)) w--;
  if (w > start) {
    const last = text.slice(w, end).toLowerCase();
    // (a place word that is a common surname too ends a person's name when the run reads as one:
    // "My name is Emma Hall.", "Dear Sun Park,", "I met Emma Hall", "John Ward called")
    if (PLACE_AFTER.has(last) && !(SURNAME_PLACE_WORDS.has(last) && surnamePlace(text, start, end))) return true;
  }
  let f = start;
  while (f < end && wordCharAt(text, f)) f++;
  if (f < end && PLACE_BEFORE.has(text.slice(start, f))) return true;
  let k = start;
  while (k > 0 && text.charCodeAt(k - 1) === 32) k--;
  if (k >= 3 && text.charCodeAt(k - 1) === 115 && (text.charCodeAt(k - 2) === 39 || text.charCodeAt(k - 2) === 0x2019)) {
    // a capitalised owner ("Buffett's"), not a contraction ("it's", "that's")
    let o = k - 2;
    while (o > 0 && wordCharAt(text, o - 1)) o--;
    if (o < k - 2 && upperAt(text, o)) return true;
  }
  let s = k;
  while (s > 0 && wordCharAt(text, s - 1)) s--;
  if (k < start && PLACE_BEFORE.has(text.slice(s, k))) return true;
  // Vietnam's "TP." (city) before the name, or the name closing a list of units after a comma ("quận Đống Đa, Hà Nội")
  if (k >= 3 && text.charCodeAt(k - 1) === 46 && text.slice(k - 3, k - 1) === "TP") return true;
  if (k > 0 && text.charCodeAt(k - 1) === 44 && VIETNAMESE_UNIT.test(text.slice(Math.max(0, k - 40), k))) return true;
  // after a house number, a postcode or a flat, where an address names its place ("69003 Lyon", "Tower 3, Taikoo Shing"),
  // or a town or city of the list with no person's cue before it ("Addis Ababa")
  return placeAfterNumber(text, start, end) || knownPlace(text, start, end);
}

/** Payment card schemes whose names are given names or words too ("Troy", "Мир", "Maestro", "Elo"). */
const CARD_SCHEMES = new Set([
  "troy",
  "мир",
  "mir",
  "maestro",
  "elo",
  "visa",
  "mastercard",
  "amex",
  "jcb",
  "rupay",
  "unionpay",
  "hipercard",
]);
const CARD_NEAR = /\d{4}|\b(?:card|kart|karte|carte|kort|kaart|karta|tarjeta|cart[aã]o)|карт/iu;

/**
 * A card scheme's name beside a card's digits or a card word ("Troy kart 9792 …", "карта Мир 2200 …",
 * "(Troy)" after the number): no person.
 */
export function cardScheme(text: string, start: number, end: number): boolean {
  if (end - start > 10 || !CARD_SCHEMES.has(text.slice(start, end).toLowerCase())) return false;
  return CARD_NEAR.test(text.slice(Math.max(0, start - 24), Math.min(text.length, end + 24)));
}

/** A unit of a Vietnamese address, before its name ("phường Bến Thành, quận 1,"). */
const VIETNAMESE_UNIT = /(?:phường|quận|huyện|xã|tỉnh)[ \t][^,\n]{1,20},$/iu;

/** /\p{Lu}/u on the code unit at `at` (an ASCII one by its code) */
function upperAt(text: string, at: number): boolean {
  const c = text.charCodeAt(at);
  return c < 0x80 ? c >= 65 && c <= 90 : UPPER.test(text[at] as string);
}
const UPPER = /\p{Lu}/u;

/** The evidence for a capitalised run at [start, end): a score, or 0. */
function runScore(text: string, start: number, end: number, words: string[]): number {
  const first = words[0] as string;
  const before = wordBefore(text, start);
  // a greeting or closing of any of the languages just before ("Hej Linnéa", "Pozdrawiam, Bożena"), or a
  // title or form of address ("pani Agnieszko", "gospodine Babić", "kortholder Torbjørn Aasland")
  if (GREETINGS.has(before) || ADDRESS_TITLES.has(before)) return 0.8;
  if (FIELD_LABELS.has(before) && colonBefore(text, start)) return 0.85;
  // "Given name(s): Athanasia"
  if (text[start - 2] === ":" && /name\(s\):[ \t]*$/i.test(text.slice(Math.max(0, start - 10), start))) return 0.85;
  // a person's field of a note or a ticket ("Owner: Szilvia", "Apologies: Dovilė")
  if (
    PERSON_FIELDS.has(before) &&
    colonBefore(text, start) &&
    (words.length >= 2 || isGazetteerName(first) || knownGiven(first) || isFamilyName(first))
  )
    return 0.8;
  const window = text.slice(Math.max(0, start - 24), start);
  // (each pattern or phrase list is tried only where the character or word before can end it)
  if (text[start - 2] === ".") {
    const abbreviated = /([\p{L}]{1,4})\.[ \t]*$/u.exec(window);
    if (abbreviated && ABBREVIATED_TITLES.has((abbreviated[1] as string).toLowerCase())) return 0.8;
  }
  if (SELF_INTRO_LAST.has(before) && endsInPhrase(window, SELF_INTRO)) return 0.85;
  const known = words.some((w) => knownGiven(w));
  const ls = aloneFrom(text, start);
  const lineRest = restIsBare(text, end);
  // alone on its line: a signature under a closing line, or the only words of the first line
  if (ls >= 0 && lineRest) {
    const prevLine = text
      .slice(lineStart(text, Math.max(0, ls - 1)), Math.max(0, ls - 1))
      .trim()
      .toLowerCase();
    // (the first line's words alone are a document's title as often as a card's name: "Arbeitszeugnis",
    // "Lejekontrakt"; there a word of the lists is the evidence)
    if (known || CLOSING_LINE.test(prevLine)) return 0.8;
    if (ls === 0 && (firstLineCard(text, end) || words.some((w) => isGazetteerName(w) || isGivenName(w) || isFamilyName(w))))
      return 0.8;
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
  // a given name under a case ending ("Gergőt", "Tomaszem"), after a comma, a person's cue or "with"
  if (
    words.length === 1 &&
    (PERSON_CUES.has(before) || WITH_WORDS.has(before) || text[start - 2] === "," || /\p{Ll}/u.test(text[start - 2] ?? "")) &&
    !PLACE_PREPOSITIONS.has(before) &&
    knownInflected(first)
  )
    return 0.7;
  // someone asked for ("fråga efter Ingegerd", "pitajte za Ivanu", "ask for Nadia")
  if (ASKED_FOR_LAST.has(before) && endsInPhrase(window, ASKED_FOR)) return 0.8;
  // the last word of a message, alone after its last sentence ("… podklady. Zdeňka", "came. Onni")
  if (
    words.length === 1 &&
    lineRest &&
    text.slice(end).trim().length <= 1 &&
    /[.!?][ \t]+$/.test(text.slice(Math.max(0, start - 3), start))
  )
    if (isGazetteerName(first) || isGivenName(first) || isFamilyName(first)) return 0.7;
  // a family name of the lists, or two words that end in a surname's ending, after a person's cue
  if (words.length >= 2 && PERSON_CUES.has(before) && words.every((w) => isGazetteerName(w) || isGivenName(w) || isFamilyName(w)))
    return 0.75;
  if (words.length !== 1) return 0;
  return oneWordScore(text, start, end, words, before, window);
}

/** runScore's cases for one word (a given or family name alone) past those of any length. */
function oneWordScore(text: string, start: number, end: number, words: string[], before: string, window: string): number {
  const first = words[0] as string;
  // one word inside a sentence, a name of the gazetteer or the lists, after a comma or "with" and
  // before a verb or the sentence's end ("Hej Ebbe, Lindholm har redan betalat", "ho parlato con
  // Ferraretti stamattina"): a place takes a preposition ("from Tallinn"), not these
  if (
    insideSentence(text, start, before) &&
    (isGazetteerName(first) || isFamilyName(first) || isGivenName(first) || SURNAME_ENDING.test(first))
  )
    return 0.7;
  // a speaker or an assignee opening a line or a dashed item ("Tiina: is the VPN down?", "- Eszter: update the budget")
  if (
    text[end] === ":" &&
    /^[ \t]+\p{Ll}/u.test(text.slice(end + 1, end + 4)) &&
    opensItem(text, start) &&
    (isGazetteerName(first) || knownGiven(first) || isFamilyName(first))
  )
    return 0.75;
  // "me and Tarmo": a person beside oneself; "Liisa and Jaan": beside a known given name
  if (before === "and") {
    const pair = /(\p{L}+)[ \t]+and[ \t]+$/u.exec(window);
    const other = pair ? (pair[1] as string) : "";
    if (/^(?:me|you|him|her|us)$/i.test(other)) return 0.7;
    if (knownGiven(other) && (isGazetteerName(first) || isFamilyName(first))) return 0.7;
  }
  // "my colleague Tarmo", "her husband Jouko": a relative or colleague after a possessive
  if (KIN.has(before) && /(?:^|[^\p{L}])(?:my|our|his|her|their|your)[ \t]+\p{L}+[ \t]+$/iu.test(window)) return 0.75;
  // met, called, emailed: a person of the lists or the gazetteer ("I met Radosław"; "call Vodafone" is a firm)
  if (REACH_VERBS.has(before) && (isGazetteerName(first) || knownGiven(first) || isFamilyName(first))) return 0.7;
  // the object of a person's act: "credit to Mehdi", "spoke to …", "hosted by Fernández", "signed for by K. Virtanen"
  if (
    (before === "to" || before === "by") &&
    PERSON_TO_BY.test(window) &&
    words.every((w) => isGazetteerName(w) || knownGiven(w) || isFamilyName(w))
  )
    return 0.7;
  // a word no list knows after a cue that only a person takes ("ask Ratko", "this is Ratko", "Could Gunnhild take…")
  if (
    STRONG_PERSON_CUES.has(before) ||
    (before === "is" && /\bthis\s+is\s*$/i.test(text.slice(Math.max(0, start - 12), start)))
  ) {
    if (!MODALS.has(before) || /^\p{Ll}/u.test(wordAfter(text, end))) return 0.7;
  }
  // a given or family name of the locale lists starting a sentence, then a verb only a person's act takes
  // ("Tarık reviews", "Kowalska approved"; a name the gazetteer alone knows may be a city: "Warsaw changed the rules")
  const after = wordAfter(text, end);
  if (PERSON_VERBS.has(after) && sentenceStart(text, start) && (isFamilyName(first) || knownGiven(first))) return 0.7;
  // a word no list knows, starting a sentence, then a verb in the past tense ("Enikő presented")
  if (/^\p{Ll}{3,}(?:ed|ised|ized)$/u.test(after) && !isGazetteerName(first) && !isEnglishWord(first)) return 0.7;
  return 0;
}

const QUOTES = "\"“„«'";
/** Fields of notes and tickets that hold a person, lower case ("Owner:", "Assignee:", "Apologies:"). */
const PERSON_FIELDS = new Set(
  "contact owner owners assignee assignees reporter author requester organizer organiser presenter presenters chair apologies absent moderator approver reviewer reviewers attendee".split(
    " ",
  ),
);
/** Verbs whose object after "to" or "by" is a person. */
const PERSON_TO_BY =
  /(?:^|[^\p{L}])(?:(?:credit|thanks|talk|talked|talking|spoke|speak|speaking|reply|replied|introduce|introduced|forwarded|handed|assigned|reassigned)[ \t]+to|(?:hosted|signed|signed[ \t]+for|led|organi[sz]ed|presented|approved|reviewed|reported|requested|owned|chaired|moderated)[ \t]+by)[ \t]*$/iu;

/** Honorifics written after a name (Turkish "Hanım", "Bey"; "-san" as a word): no part of it. */
const POST_HONORIFICS = new Set("hanım hanim bey beyefendi hanımefendi efendi san sama kun chan ji sahib saheb".split(" "));

const GREETING_LONGEST = Math.max(...[...GREETINGS].map((w) => w.length));
const HONORIFIC_LONGEST = Math.max(...[...POST_HONORIFICS].map((w) => w.length));

/**
 * A name found by any recognizer, less a greeting that opens it ("Chào Linh") and an honorific
 * that ends it ("Elif Hanım"); null when nothing is left.
 */
export function trimName(text: string, e: PiiEntity): PiiEntity | null {
  const span = trimmedNames.get(text, e.start, e.end);
  if (span === null) return null;
  const [start, end] = span;
  if (start === e.start && end === e.end) return e;
  return { ...e, start, end, text: text.slice(start, end) };
}

/** trimName's span of the run [start, end), or null when nothing is left. */
function trimmedSpan(text: string, from: number, to: number): readonly [number, number] | null {
  let start = from;
  let end = to;
  // (the blanks are looked for inside the name only: a search of the whole text per name cost a scan each)
  let firstBlank = -1;
  for (let k = start; k < end; k++) {
    const c = text.charCodeAt(k);
    if (c === 32 || c === 9) {
      firstBlank = k;
      break;
    }
  }
  // (lower case never shortens a word: a word longer than every greeting is none)
  if (
    firstBlank > start &&
    firstBlank - start <= GREETING_LONGEST &&
    GREETINGS.has(text.slice(start, firstBlank).toLowerCase())
  ) {
    start = firstBlank;
    while (start < end && (text[start] === " " || text[start] === "\t")) start++;
  }
  let lastBlank = -1;
  for (let k = end - 1; k > start; k--) {
    const c = text.charCodeAt(k);
    if (c === 32 || c === 9) {
      lastBlank = k;
      break;
    }
  }
  if (
    lastBlank > start &&
    end - lastBlank - 1 <= HONORIFIC_LONGEST &&
    POST_HONORIFICS.has(text.slice(lastBlank + 1, end).toLowerCase())
  ) {
    end = lastBlank;
    while (end > start && (text[end - 1] === " " || text[end - 1] === "\t")) end--;
  }
  // "Xin chào" (Vietnamese: hello) opens a message, it names no one
  if (text.charCodeAt(end) === 32 && text.startsWith("chào", end + 1) && !text.slice(start, end).includes(" ")) return null;
  if ((start !== from || end !== to) && end - start < 2) return null;
  return [start, end];
}

/** Relatives and colleagues, lower case: after "my", "her"... the word that follows is a name. */
const KIN = new Set(
  "father mother husband wife son daughter brother sister colleague coworker friend manager boss partner grandfather grandmother uncle aunt neighbour neighbor landlord landlady tenant intern assistant".split(
    " ",
  ),
);
/** The verbs of meeting and reaching someone, lower case. */
const REACH_VERBS = new Set("met meet call called email emailed phoned texted messaged".split(" "));
/** Verbs (lower case) after a sentence's first word that make it a person. */
const PERSON_VERBS = new Set(
  "said says asked asks wants wanted owns owned changed moved joined left sent signed reviewed reviews approved approves presented presents called calls emailed emails wrote writes replied replies thinks thought knows knew agreed agrees confirmed confirms promised promises mentioned mentions suggested suggests".split(
    " ",
  ),
);

/** Whether `start` opens the text, a line or a sentence (after ".", "!", "?" or ":"). */
function sentenceStart(text: string, start: number): boolean {
  let k = start;
  while (k > 0 && (text[k - 1] === " " || text[k - 1] === "\t")) k--;
  if (k === 0) return true;
  const c = text[k - 1];
  return c === "\n" || ((c === "." || c === "!" || c === "?" || c === ":") && k < start);
}

/**
 * The line under a closing line ("Ystävällisin terveisin\nSatu Nieminen", "Srdačan pozdrav,\nAnte
 * Jurić"): two or three capitalised words, the first a given name of the locale lists, the last a
 * surname the gazetteer or the lists know, even when a word is also a word of some language
 * ("satu" is Indonesian, "ante" English).
 */
const SIGNATURE_LINE = /^[ \t]*(\p{Lu}[\p{Ll}\p{M}'’-]{1,30}(?:[ \t]\p{Lu}[\p{Ll}\p{M}'’-]{1,30}){1,2})[ \t]*$/u;

function findSignatureLines(text: string, out: PiiEntity[]): void {
  // the previous line, as [from, to) (its trimmed lower case is made only under a line that may be a signature)
  let prevFrom = -1;
  let prevTo = -1;
  for (let at = 0; at <= text.length; ) {
    const end = lineEnd(text, at);
    const line = text.slice(at, end).replace(/\r$/, "");
    const m = prevFrom < 0 ? null : SIGNATURE_LINE.exec(line);
    if (m) {
      const prev = text.slice(prevFrom, prevTo).replace(/\r$/, "").trim().toLowerCase();
      if (prev !== "" && CLOSING_LINE.test(prev)) {
        const name = m[1] as string;
        const words = name.split(/[ \t]/);
        const last = words[words.length - 1] as string;
        // a given name and a family name of the lists, or (the lists miss many: "Torstein Aas", "Ion
        // Ionescu") one word a name of them and none a greeting or a label
        const listed = isGivenName(words[0] as string) && (isGazetteerName(last) || isFamilyName(last));
        const partly =
          words.some((w) => isGazetteerName(w) || (isFamilyName(w) && !isStopword(w))) &&
          words.every((w) => !GREETINGS.has(w.toLowerCase()) && !FIELD_LABELS.has(w.toLowerCase()));
        if ((listed || partly) && !falseName(text, at + m[0].indexOf(name), at + m[0].indexOf(name) + name.length)) {
          const s = at + m[0].indexOf(name);
          out.push(entity("name", text, s, s + name.length, 0.8));
        }
      }
    }
    prevFrom = at;
    prevTo = end;
    if (end >= text.length) break;
    at = end + 1;
  }
}

/** The family names most Vietnamese people bear, and the middle names that mark a person's name. */
const VIETNAMESE_FAMILY = new Set(
  "Nguyễn Trần Lê Phạm Hoàng Huỳnh Phan Vũ Võ Đặng Bùi Đỗ Hồ Ngô Dương Lý Đinh Trương Đoàn Lâm Mai Trịnh Cao Lương Tạ".split(" "),
);
const VIETNAMESE_RUN =
  /(?<![\p{L}\p{M}\p{N}])(\p{Lu}[\p{Ll}\p{M}]{0,6})((?:[ \t]\p{Lu}[\p{Ll}\p{M}]{0,6}){1,3})(?![\p{L}\p{M}])/gu;
/** words after a Vietnamese run that make it a street, a place or a firm ("Nguyễn Huệ street", "… Securities") */
const VIETNAMESE_NOT_PERSON =
  /^[ \t]*(?:street|st\b|road|avenue|boulevard|đường|phố|city|district|province|securities|bank|group|company|corp|hotel|school|university|bridge|market)/i;

/**
 * Vietnamese names without a cue: a family name of the list, then one to three syllables, with
 * "Thị" or "Văn" among them or three or more syllables in all ("Vũ Thị Lan Anh", "Đỗ Thu Hà"
 * after a label is found by the label); not before a street, place or firm word, not after a number.
 */
function findVietnameseNames(text: string, out: PiiEntity[]): void {
  for (const m of text.matchAll(VIETNAMESE_RUN)) {
    if (!VIETNAMESE_FAMILY.has(m[1] as string)) continue;
    const rest = (m[2] as string).trim().split(/[ \t]/);
    if (!(rest.includes("Thị") || rest.includes("Văn") || rest.length >= 2)) continue;
    const start = m.index as number;
    const end = start + m[0].length;
    if (VIETNAMESE_NOT_PERSON.test(text.slice(end, end + 16))) continue;
    if (/\d[ \t]*$/.test(text.slice(Math.max(0, start - 4), start)) || falseName(text, start, end)) continue;
    out.push(entity("name", text, start, end, 0.8));
  }
}

/** Whether `start` opens a line or an item after a dash or bullet ("- Eszter: …"). */
function opensItem(text: string, start: number): boolean {
  let k = start;
  while (k > 0 && (text[k - 1] === " " || text[k - 1] === "\t")) k--;
  if (k === 0 || text[k - 1] === "\n") return true;
  const c = text[k - 1];
  if (c !== "-" && c !== "*" && c !== "•" && c !== "–") return false;
  return k - 1 === 0 || /[\s]/.test(text[k - 2] as string);
}
const CLOSING_LINE =
  /(?:regards|thanks|thank you|cheers|best|sincerely|wishes|hilsen|hälsningar|pozdrawiam|pozdravem|terveisin|grüße|cordialement|saludos|signed|yours|mvh|üdvözlettel|groet|groeten|pozdrav|serdecznie|poważaniem|saygılarımla|atenciosamente|cumprimentos|saludo|atentamente|saluti|salutations|grüßen|grüssen|gruß|lugupidamisega|cieņu|pagarbiai|trọng|tisztelettel|üdv|lp|mfg|lg|vg|rgds|ciao|obrigado|obrigada|gracias|grazie|danke|takk|tack|tak|kiitos|paldies|ačiū|aitäh|hvala|dziękuję|děkuji|köszönöm|merci|br|stimă|stima|pozdrowienia|pozdravom|poštovanjem|srdačno|üdvözlet|hälsning|vriendelijke groet)[,.!]?$/;

/**
 * Whether a single word at `start` stands inside a sentence where a person is named: after a
 * comma that closes a clause (not a list of places), or after a word that goes with a person ("con",
 * "med"), and before a lower-case word or the sentence's end; never after a preposition of place.
 */
function insideSentence(text: string, start: number, before: string): boolean {
  if (PLACE_PREPOSITIONS.has(before)) return false;
  let k = start;
  while (k > 0 && (text[k - 1] === " " || text[k - 1] === "\t")) k--;
  if (k === start || k === 0) return false;
  const prev = text[k - 1] as string;
  const afterComma = prev === ",";
  if (!afterComma && !WITH_WORDS.has(before) && !(before === "o" && /\p{Ll}/u.test(prev))) return false;
  // the word after: lower case (a verb, an adverb), or the clause's end
  let e = start;
  while (e < text.length && isWordChar(text[e])) e++;
  const next = wordAfter(text, e);
  if (next) return /^\p{Ll}/u.test(next) && !isEnglishWordLower(next);
  const c = text[e];
  return c === undefined || c === "." || c === "!" || c === "?" || (c === "," && !afterComma) || c === "\n";
}

/** An everyday English word in lower case after a name: the sentence is English, and "…, Madrid is" a place as often. */
function isEnglishWordLower(word: string): boolean {
  return ENGLISH_VERBS_AFTER.has(word) ? false : isStopwordLower(word) && /^[a-z]+$/.test(word) && ENGLISH_FUNCTION.has(word);
}
const ENGLISH_VERBS_AFTER = new Set(["approved", "said", "says", "wrote", "asked", "will", "is", "was", "has", "had"]);
const ENGLISH_FUNCTION = new Set("and or of in on at to for from the a an".split(" "));

/**
 * A given name of the lists under a case ending (Hungarian "Gergőt", "Zoltánnal", Polish
 * "Tomaszem", "Agnieszko", Czech "Lenkou", Croatian "Ivanu", Russian "Ивану"): the word with the
 * ending taken off, or the nominative's "a" put back, is one.
 */
function knownInflected(word: string): boolean {
  // a word the gazetteer knows as it is ("Rome", "Paris") is no inflected form of another name
  if (word.length < 4 || isEnglishWord(word) || isGazetteerName(word)) return false;
  for (const [ending, stems] of INFLECTIONS) {
    if (!word.endsWith(ending) || word.length - ending.length < 3) continue;
    const stem = word.slice(0, word.length - ending.length);
    for (const add of stems) if (knownGiven(stem + add)) return true;
  }
  return false;
}
/** Case endings and what the nominative ends in instead (Latin script and Cyrillic). */
const INFLECTIONS: [string, string[]][] = [
  ["nal", [""]],
  ["nel", [""]],
  ["val", [""]],
  ["vel", [""]],
  ["nak", [""]],
  ["nek", [""]],
  ["tól", [""]],
  ["től", [""]],
  ["hoz", [""]],
  ["hez", [""]],
  ["höz", [""]],
  ["ot", [""]],
  ["et", [""]],
  ["öt", [""]],
  ["t", [""]],
  ["em", ["", "a"]],
  ["om", ["", "a"]],
  ["ovi", [""]],
  ["ou", ["a"]],
  ["iu", ["ia"]],
  ["u", ["a", ""]],
  ["o", ["a"]],
  ["e", ["", "a"]],
  ["y", ["a"]],
  ["ę", ["a"]],
  ["ą", ["a"]],
  ["у", ["а", ""]],
  ["е", ["а", ""]],
  ["ой", ["а"]],
  ["ом", [""]],
  ["ю", ["я"]],
];

/** Whether the first line ending at or after `end` is the whole text, or a card's number or address follows on the next line. */
function firstLineCard(text: string, end: number): boolean {
  const nl = text.indexOf("\n", end);
  if (nl < 0 || text.slice(nl).trim() === "") return true;
  const next = text.slice(nl + 1, nl + 41).trimStart();
  return /^[+(\d]/.test(next) || /^\S+@/.test(next);
}

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
  "present attendees participants invited invitees guests guest list speakers members team cc to from apologies absent".split(
    " ",
  ),
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
    // the items: one word each, or two in the last ("…, Maud and Pieter-Jan Claes")
    const items = [
      ...list.matchAll(/\p{Lu}[\p{Ll}\p{M}]+(?:-\p{Lu}[\p{Ll}\p{M}]+)?(?: \p{Lu}[\p{Ll}\p{M}]+(?:-\p{Lu}[\p{Ll}\p{M}]+)?)?/gu),
    ];
    if (!items.every((w) => w[0].split(" ").every(nameLike))) continue;
    const label = wordBefore(text, at);
    if (!PEOPLE_LABELS.has(label) && items.filter((w) => knownGiven(w[0])).length * 2 < items.length) continue;
    for (const w of items) out.push(entity("name", text, at + (w.index as number), at + (w.index as number) + w[0].length, 0.8));
  }
}

/** A cell of a delimited row on a line that holds an email: "3;Jurgita Vaitkienė;jurgita.v@…". */
const CELL = /(?<=^|[;\t|,])(\p{Lu}[\p{Ll}\p{M}]+(?: \p{Lu}[\p{Ll}\p{M}'’-]+){1,2})(?=[;\t|,])/gmu;
/** A chat line with a nick and no time stamp: "<dusan> on it". */
const NICK_ONLY = /<([\p{L}][\p{L}\p{M}\p{N}_.-]{1,30})>/uy;
/** A capitalised word and ":" or "," opening a chat message: the person spoken to. */
const ADDRESSEE = /^[ \t]+(\p{Lu}[\p{Ll}\p{M}]{1,30})[:,][ \t]/u;
/** A chat nick: "09:12 <ratko>", or a speaker after a time stamp: "[10:05] Raimonds:". */
const CHAT = /\[?\d{1,2}:\d{2}(?::\d{2})?\]?[ \t]+(?:<([\p{L}][\p{L}\p{M}_.-]{1,30})>|(\p{Lu}[\p{Ll}\p{M}]+):)/uy;

/** A column header that holds names, lower case ("First Name", "prénom", "Nachname", "фамилия"). */
const NAME_COLUMN =
  /^(?:(?:full|first|last|given|family|middle|customer|contact|client|employee)[ _]?name|name|names|surname|forename|firstname|lastname|nimi|etunimi|sukunimi|navn|fornavn|etternavn|efternavn|förnamn|efternamn|namn|név|vezetéknév|keresztnév|imię|imie|nazwisko|jméno|příjmení|meno|priezvisko|ime|prezime|nombre|apellidos?|nome|sobrenome|cognome|naam|voornaam|achternaam|nom|prénom|prenom|vorname|nachname|ad|soyad|soyadı|vardas|pavardė|vārds|uzvārds|eesnimi|perekonnanimi|фио|имя|фамилия|ім'я|прізвище|όνομα|επώνυμο|الاسم|姓名|名前|氏名|이름)$/u;
const NO_NAME_CELL = /[\d@:/\\<>=]/;

/**
 * The cells under a name column of a delimited table ("nom;prénom;tél\nLefebvre;Anaïs;06 …",
 * "First Name,Last Name,Email\nBjørn,Sæther,…"): a header line with a name column, then rows
 * with as many cells.
 */
function findTableColumns(text: string, out: PiiEntity[]): void {
  const firstBreak = text.indexOf("\n");
  if (firstBreak < 0) return;
  let lineAt = 0;
  let header: { sep: string; cells: number; names: number[] } | null = null;
  while (lineAt <= text.length) {
    const le = lineEnd(text, lineAt);
    const line = text.slice(lineAt, le);
    if (header === null) {
      const sep = [";", "\t", "|", ","].find((d) => line.includes(d));
      if (sep !== undefined && line.length <= 200) {
        const cells = line.split(sep).map((c) => c.trim().toLowerCase());
        const names = cells.flatMap((c, k) => (NAME_COLUMN.test(c) ? [k] : []));
        if (names.length > 0 && cells.length >= 2) header = { sep, cells: cells.length, names };
      }
    } else {
      const cells = line.split(header.sep);
      if (cells.length !== header.cells) header = null;
      else {
        let at = lineAt;
        for (let k = 0; k < cells.length; k++) {
          const cell = cells[k] as string;
          const trimmed = cell.trim();
          const words = trimmed.split(/\s+/);
          if (header.names.includes(k) && trimmed && !NO_NAME_CELL.test(trimmed) && words.length <= 4 && words.every(nameLike)) {
            const s = at + cell.indexOf(trimmed);
            out.push(entity("name", text, s, s + trimmed.length, 0.85));
          }
          at += cell.length + header.sep.length;
        }
      }
    }
    if (le >= text.length) break;
    lineAt = le + 1;
  }
}

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
    if (!((c >= 48 && c <= 57) || c === 91 || c === 60)) continue;
    const chat = c === 60 ? NICK_ONLY : CHAT;
    chat.lastIndex = line;
    const m = chat.exec(text);
    if (m) {
      // the person a chat line speaks to: "<r00t_> Vesa: the staging box is back"
      const to = ADDRESSEE.exec(text.slice(m.index + m[0].length, m.index + m[0].length + 44));
      if (to && nameLike(to[1] as string)) {
        const at = m.index + m[0].length + to[0].indexOf(to[1] as string);
        out.push(entity("name", text, at, at + (to[1] as string).length, 0.75));
      }
      const nick = (m[1] ?? m[2]) as string;
      const at = (m.index as number) + m[0].lastIndexOf(nick);
      if (m[2] !== undefined && !nameLike(nick)) continue;
      // a nick of letters alone ("<ratko>"), not a handle ("<r00t_>", "<deskbot>", "<mtw>")
      if (m[1] !== undefined && !nickLike(nick)) continue;
      out.push(entity("name", text, at, at + nick.length, 0.8));
    }
  }
}

function isSpaceCode(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13;
}

function nickLike(nick: string): boolean {
  if (!/^[\p{L}\p{M}]{3,}$/u.test(nick) || /bot$/i.test(nick) || !/[aeiouyäöüåæøáéíóúőűěěąęàèìòù]/i.test(nick)) return false;
  return !isEnglishWord(nick) && !isStopword(nick);
}

/**
 * A lower-case name on the first line of a contact card ("riikka laaksonen" above a title, a
 * phone number or an email): one to three words, none an everyday or function word, the first a
 * known given name or one of the gazetteer.
 */
const CARD_TOP = /^[ \t]*(\p{Ll}[\p{Ll}\p{M}'’-]+(?:[ \t]+\p{Ll}\.)?(?:[ \t]+\p{Ll}[\p{Ll}\p{M}'’-]+){0,2})[ \t]*(?:\n|[|·•])/u;

function findCardTop(text: string, out: PiiEntity[]): void {
  const m = CARD_TOP.exec(text);
  if (!m) return;
  const line = m[1] as string;
  const words = line.split(/[ \t]+/).filter((w) => !w.endsWith("."));
  if (words.some((w) => isEnglishWord(w) || isStopword(w))) return;
  const title = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);
  const last = words[words.length - 1] as string;
  const surname = words.length >= 2 && SURNAME_ENDING.test(last);
  if (!surname && !knownGiven(title(words[0] as string)) && !isGazetteerName(words[0] as string)) return;
  // the card goes on with an email, a phone number or an address's numbers
  if (!/@|\d[\d ().-]{4,}\d/.test(text.slice(m[0].length - 1))) return;
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
const PARTICLE_LONGEST = Math.max(...[...PARTICLES].map((w) => w.length));

/** Whether text[s, e) is one of PARTICLES (each lower case, ASCII): a capitalised or long word is settled without a copy. */
function particleAt(text: string, s: number, e: number): boolean {
  const f = text.charCodeAt(s);
  return f >= 97 && f <= 122 && e - s <= PARTICLE_LONGEST && PARTICLES.has(text.slice(s, e));
}

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
    const s = tokenStarts[j] as number;
    const e = tokenEnds[j] as number;
    // a Dutch "'t" between the particle and the surname ("Sanne van 't Hof")
    const apostropheT =
      e - s === 1 &&
      text[s] === "t" &&
      gap === 2 &&
      text[gapStart] === " " &&
      (text[gapStart + 1] === "'" || text[gapStart + 1] === "’") &&
      j > i + 1 &&
      particleAt(text, tokenStarts[j - 1] as number, tokenEnds[j - 1] as number);
    if (!blank && !initial && !apostropheT) break;
    if (e - s === 1 && text[e] === "." && text[e + 1] === " ") {
      j++;
      continue;
    }
    if (apostropheT && j + 1 < count) {
      j++;
      continue;
    }
    if (particleAt(text, s, e) && j + 1 < count) {
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

/** Whether a form's name label and a colon end right before `start` ("Card holder: "). */
function nameLabelBefore(text: string, start: number): boolean {
  return colonBefore(text, start) && FIELD_LABELS.has(wordBefore(text, start));
}

/**
 * Whether a word of the run that starts at `start` may be a name: by nameLike, or after a form's
 * name label ("Card holder: Ville Hakala"), as a given name of the lists that is also a function
 * word of some language ("ville", "satu"). (The label is read first: most runs are under none,
 * and the lists are then not asked.)
 */
function nameInRun(text: string, start: number, word: string): boolean {
  return nameLike(word) || (nameLabelBefore(text, start) && !isEnglishWord(word) && isGivenName(word));
}

/** nameInRun of the word text[from, to) */
function nameInRunAt(text: string, start: number, from: number, to: number): boolean {
  return (
    nameLikeAt(text, from, to) ||
    (nameLabelBefore(text, start) && !isEnglishWordAt(text, from, to) && isGivenName(text.slice(from, to)))
  );
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
    // part of an email, a host name or a code ("maria.Keller@", "x-Ray"); a dash after a blank signs a message ("! -Tuulikki")
    const p = text.charCodeAt(start - 1);
    const signDash = p === 45 && (start === 1 || isSpaceCode(text.charCodeAt(start - 2)));
    if (p === 64 || p === 46 || (p === 45 && !signDash) || (p >= 48 && p <= 57) || text.charCodeAt(firstEnd) === 64) {
      i++;
      continue;
    }
    if (!nameInRunAt(text, start, start, firstEnd)) {
      i++;
      continue;
    }
    const j = runEnd(text, count, i);
    let end = tokenEnds[j - 1] as number;
    const words: string[] = [];
    // a surname after a particle may be a function word elsewhere ("Sanne van der Meer"): it is read as a surname
    let afterParticle: Set<string> | null = null;
    for (let k = i; k < j; k++) {
      const s = tokenStarts[k] as number;
      const e = tokenEnds[k] as number;
      if (!capitalisedAt(text, s, e)) continue;
      const w = text.slice(s, e);
      words.push(w);
      if (k > i && particleAt(text, tokenStarts[k - 1] as number, tokenEnds[k - 1] as number) && !isEnglishWord(w))
        (afterParticle ??= new Set()).add(w);
    }
    // a run that goes on into an everyday word ("Card holder: Ville Hakala Card no.") keeps its words before it
    // (the first word is nameInRun's already; words[cut], when kept, is the one that is not)
    let cut = words.length;
    for (let k = 1; k < words.length; k++)
      if (!nameInRun(text, start, words[k] as string) && !afterParticle?.has(words[k] as string)) {
        cut = k;
        break;
      }
    if (cut < words.length) {
      let k = i;
      for (let seen = 0; k < j; k++) {
        if (capitalisedAt(text, tokenStarts[k] as number, tokenEnds[k] as number) && ++seen > cut) break;
      }
      // a trailing initial or particle is no part of the run
      while (k - 1 > i && !capitalisedAt(text, tokenStarts[k - 1] as number, tokenEnds[k - 1] as number)) k--;
      if (nameLabelBefore(text, start) && k > i) {
        words.length = cut;
        end = tokenEnds[k - 1] as number;
      }
    }
    if (cut < words.length || text.charCodeAt(end) === 64 || falseName(text, start, end)) {
      i++;
      continue;
    }
    // a middle or first initial before the run ("name on card M. Kowalczyk"): the cues are read before it
    const initial =
      start >= 3 &&
      text[start - 1] === " " &&
      text[start - 2] === "." &&
      /\p{Lu}/u.test(text[start - 3] as string) &&
      !isWordChar(text[start - 4]);
    const from = initial ? start - 3 : start;
    const score = runScore(text, from, end, words);
    if (score > 0) {
      out.push(entity("name", text, from, end, score));
      i = j;
    } else i++;
  }
  findNameLists(text, out);
  if (text.includes("\n")) findSignatureLines(text, out);
  if (hasNonAscii(text) && VIETNAMESE_LETTER.test(text)) findVietnameseNames(text, out);
  findCellsAndNicks(text, out);
  if (text.includes("\n")) findTableColumns(text, out);
  findCardTop(text, out);
  if (text.includes("/")) findTravelNames(text, out);
  return out;
}

/** The surname before the slash of a booking's name, sticky at the word's start. */
const TRAVEL_NAME_AT =
  /(\p{Lu}[\p{Lu}'-]{1,24})\/(\p{Lu}[\p{Lu}'-]{1,24})(?: (\p{Lu}[\p{Lu}'-]{1,24}))?(?: (MRS|MR|MS|MISS|MSTR|DR))?(?![\p{L}\p{N}/])/uy;
const TRAVEL_TITLES = new Set(["MRS", "MR", "MS", "MISS", "MSTR", "DR"]);
const isCapital = (c: string | undefined): boolean => c !== undefined && c !== c.toLowerCase();
const listedPart = (w: string): boolean => {
  const cased = (w.charAt(0) + w.slice(1).toLowerCase()) as string;
  return !isEnglishWord(cased) && (isGazetteerName(cased) || isGivenName(cased) || isFamilyName(cased));
};

/**
 * A passenger's or guest's name as airlines and hotels write it, in capitals, surname before a slash
 * ("FERREIRA/CLARA MRS", "KOVAC/MARKO MR", "AKSOY/SELIN"): with a title after it, or both parts names
 * of the lists and no everyday word ("AND/OR", "TCP/IP" are none). A second given name is taken only
 * before a title ("AKSOY/SELIN KART 5247": "KART" is the card's word).
 */
function findTravelNames(text: string, out: PiiEntity[]): void {
  for (let slash = text.indexOf("/"); slash > 0; slash = text.indexOf("/", slash + 1)) {
    if (!isCapital(text[slash - 1]) || !isCapital(text[slash + 1])) continue;
    let from = slash - 1;
    while (from > 0 && (isCapital(text[from - 1]) || text[from - 1] === "'" || text[from - 1] === "-")) from--;
    if (from > 0 && /[\p{L}\p{N}/]/u.test(text[from - 1] as string)) continue;
    TRAVEL_NAME_AT.lastIndex = from;
    const m = TRAVEL_NAME_AT.exec(text);
    if (!m) continue;
    const surname = m[1] as string;
    const given = m[2] as string;
    let second: string | undefined = m[3];
    let title: string | undefined = m[4];
    // ("ESTER MRS": the title read as a second given name)
    if (!title && second && TRAVEL_TITLES.has(second)) [second, title] = [undefined, second];
    if (!title && !(listedPart(surname) && listedPart(given))) continue;
    const keep = second !== undefined && title !== undefined;
    const end = from + surname.length + 1 + given.length + (keep ? 1 + (second as string).length : 0);
    out.push(entity("name", text, from, end, 0.8));
  }
}
