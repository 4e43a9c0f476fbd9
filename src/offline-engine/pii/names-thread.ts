/**
 * Names that the shape of a conversation gives away, in any script: the writer of a quoted mail
 * ("On …, Gianluca Ferraresi <g.ferraresi@libero.it> wrote:", "高橋 美咲 <misaki@…>:"), the
 * speakers of a chat export ("[2026-12-02 21:18] Лена К.: …", "12/3/26, 9:44 PM - Deji: …",
 * "Ahmed Raza [8:12 PM]: …", "Yoni 18:05: …"), the people of a ticket's turns ("Agent (Felipe):",
 * "Operatore Giulia:", "상담원 한지수:"), the attendees of minutes ("Present: Gwen Halloran (chair),
 * Tariq Mahmood, …", "参会人：张伟、李娜、王建国") and the signer after a closing word at the end of a
 * message ("Grazie mille! Elena", "Ευχαριστώ, Ελένη", "감사합니다. 민재 드림").
 *
 * The place is the evidence, so a name needs no list here; it must still look like one: words that
 * start with a capital (or a letter of a script without case: Han, Kana, Hangul, Arabic, Hebrew,
 * Thai, Indic, Georgian), at most four of them (an initial with its period counts as one), and
 * none of them a role, a label or a common word of the closing phrases.
 */
import { hasNonAscii } from "./chars";
import { isEnglishWord, isGazetteerName, isStopword } from "./gazetteer";
import { isFamilyName, isGivenName } from "./given-names";
import {
  ATTENDEE_WORD,
  AUTHOR_WORD,
  CLOSING_WORD,
  GREETING_WORD,
  gatedStarts,
  gateWords,
  NAME_FIELD_WORD,
  ROLE_WORD,
} from "./keywords";
import { SURNAME_WORDS } from "./name-lists";
import { FIELD_LABELS } from "./names-extra";
import { isLabel } from "./phone";
import { isPlaceName } from "./places";
import { resolveOverlaps } from "./resolve";
import { entity, type PiiEntity } from "./types";

/** one word of a name at a position: capitalised, or of a script without case, or an initial */
const WORD_AT = /\p{Lu}\.(?=[ \t,:：;)]|$)|\p{Lu}[\p{Ll}\p{Lu}\p{Lt}\p{Lm}\p{M}'’-]{0,30}|\p{Lo}[\p{Lo}\p{Lm}\p{M}]{0,30}/uy;
/** a letter of a script without case (general category Lo) */
const UNCASED = /^\p{Lo}/u;
/** a letter or a mark (what may not touch a name's ends) */
const LETTER = /[\p{L}\p{M}\p{N}_@]/u;

/**
 * The score of a name its place gives away: above the 0.85 to 0.9 of the other name recognizers by
 * more than resolve.ts's margin, so that "Giulia" wins over "Operatore Giulia" and "Zezé" over "Dona Zezé".
 */
const STRONG = 0.96;

/** letters of scripts written without blanks between words (Han, Kana, Thai): a cue there is no word of its own */
const NO_BLANKS = /[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]/;

/** NO_BLANKS.test of the text findThreadNames reads (six of its finders ask), while it reads it */
let blanklessText: string | null = null;
let blankless = false;

/**
 * The matches of a cue pattern (global; each of its cues starts with a word of its list `flag`, after
 * no letter), as matchAll gives them: tried only where such a word starts (keywords.ts), or over
 * the whole text when it holds a script written without blanks, where a cue is not a word of its own.
 * (An array, not a generator: most texts hold no cue, and a generator's frames cost more than the matches.)
 */
function cues(text: string, [pattern, sticky, flag]: readonly [RegExp, RegExp, number]): RegExpExecArray[] {
  if (text === blanklessText ? blankless : NO_BLANKS.test(text)) return [...text.matchAll(pattern)];
  const out: RegExpExecArray[] = [];
  let end = 0;
  for (const at of gatedStarts(text, flag)) {
    if (at < end) continue;
    sticky.lastIndex = at;
    const m = sticky.exec(text);
    if (!m) continue;
    end = at + m[0].length;
    out.push(m);
  }
  return out;
}

/** Words that take a name's place in a conversation without being one (roles, closings, labels), lower case. */
const NOT_NAMES = new Set(
  (
    "me you i we us system bot admin administrator moderator customer client user agent support service team " +
    "staff operator helpdesk info noreply no-reply sales office contact hello chat line kakaotalk whatsapp " +
    "telegram wechat group all everyone note internal re fw fwd subject date from to cc bcc sent " +
    "thanks thank regards cheers best confirmed great ok okay noted done sure yes no hi hello dear " +
    "tack takk tak kiitos danke merci grazie gracias obrigado obrigada bedankt dank díky děkuji dziękuję " +
    "köszönöm mulțumesc hvala спасибо дякую благодарю ευχαριστώ teşekkürler sağol terima kasih makasih " +
    "salamat asante siap recibido received perfecto perfetto parfait super prima gut bien bom " +
    "mvh hälsningar pozdrawiam saludos cordialmente atentamente cordiali distinti grüße gruß " +
    "segreteria secretaría secretariat reception recepción empfang rezeption kundenservice kundendienst " +
    "caller callee operador operadora operatore opérateur agente cliente clienta kunde kundin klant klient " +
    "asiakas medewerker medarbejder mitarbeiter advisor interviewer interviewee speaker moderator host guest " +
    "doctor patient nurse teacher student parent dispatcher driver courier seller buyer landlord tenant " +
    "mr mrs ms miss mx dr prof professor sr sra srta herr frau hr fr mme mlle sig sir madam ma'am ing mag dipl " +
    "bonjour bonsoir salut hola buenas buongiorno buonasera ciao hallo moin servus hej hei labas sveiki tere " +
    "szia cześć ahoj zdravo merhaba selam olá oi salam habari jambo sawubona gamarjoba barev namaste mabuhay " +
    "مرحبا سلام שלום नमस्ते নমস্কার வணக்கம் 안녕하세요 안녕 привет привіт здравствуйте γεια " +
    // honorifics of scripts without case, which take a name's place in a run of words
    "خانم آقای السيد السيدة الأستاذ الأستاذة الحاج المرحوم مرحوم حاج คุณ นาย นาง นางสาว श्री श्रीमती सुश्री திரு திருமதி κα κος"
  ).split(" "),
);

/** Whether `word` (as written) can be part of a name here; `inside`: after the name's first word ("Emma Hall"). */
function nameWord(word: string, inside = false): boolean {
  const bare = word.endsWith(".") ? word.slice(0, -1) : word;
  const lower = bare.toLowerCase();
  if (NOT_NAMES.has(lower)) return false;
  if (inside && SURNAME_WORDS.has(bare)) return true;
  // an initial ("К.", "J.") is one, and a Han or Hangul syllable ("林 美穂", "松本 葵"); any other word of one letter is not
  if (bare.length === 1) return word.endsWith(".") ? !UNCASED.test(bare) : /[\p{sc=Han}\p{sc=Hangul}]/u.test(bare);
  if (UNCASED.test(bare)) return true;
  // a capitalised common word ("Present", "Great") is no name; a name that is also a word ("Line", "Mai") is lost here
  return !(isStopword(bare) || (isEnglishWord(bare) && bare.length > 3 && bare !== bare.toUpperCase()));
}

/** Lower-case particles inside a name ("Joris de Wit", "Nurul Aisyah binti Kamarudin"). */
const PARTICLE_AT =
  /(?:de|da|do|dos|das|del|della|di|du|van|von|der|den|ter|te|la|le|bin|binti|bint|ibn|al|el|ben|bat)[ \t](?=\p{Lu})/uy;

/** The words of a name read forwards from `at`: [start, end] of up to `max` words with one blank between, or null. */
function nameAfter(text: string, at: number, max = 4): [number, number] | null {
  let end = -1;
  let i = at;
  let uncased: boolean | null = null;
  for (let n = 0; n < max; n++) {
    // a particle between two words of the name
    if (n > 0) {
      PARTICLE_AT.lastIndex = i;
      if (PARTICLE_AT.test(text)) i = PARTICLE_AT.lastIndex;
    }
    WORD_AT.lastIndex = i;
    const m = WORD_AT.exec(text);
    if (!m || !nameWord(m[0], n > 0)) break;
    // the words of one script kind: "Kevin Liu 待办" is "Kevin Liu"
    const lo = UNCASED.test(m[0]);
    if (uncased !== null && lo !== uncased) break;
    uncased = lo;
    if (LETTER.test(text.charAt(i + m[0].length)) && !m[0].endsWith(".")) return end < 0 ? null : [at, end];
    end = i + m[0].length;
    if (text.charCodeAt(end) !== 32) break;
    i = end + 1;
  }
  return end < 0 ? null : [at, end];
}

/** The start of the name that ends at `end` (up to `max` words, one blank between), or -1. */
function nameBefore(text: string, end: number, max = 4): number {
  let start = -1;
  let i = end;
  for (let n = 0; n < max; n++) {
    // back over one word: letters, marks, "'", "’", "-", and an initial's period
    let j = i;
    if (text.charAt(j - 1) === ".") j--;
    while (j > 0 && /[\p{L}\p{M}'’-]/u.test(text.charAt(j - 1))) j--;
    if (j === i || (j > 0 && LETTER.test(text.charAt(j - 1)))) break;
    WORD_AT.lastIndex = j;
    const m = WORD_AT.exec(text);
    if (!m || j + m[0].length !== i || !nameWord(m[0])) break;
    start = j;
    if (j < 2 || text.charCodeAt(j - 1) !== 32 || text.charCodeAt(j - 2) === 32) break;
    i = j - 1;
  }
  return start;
}

/** Words before an attribution's name that belong to the attribution ("كتب" wrote, "מאת" from). */
const ATTRIBUTION_WORDS = new Set(["كتب", "מאת", "ο/η", "de", "from", "von", "od", "от"]);

/** "Name <address@host>" and "Name (<address@host>)": the name before a mail address in brackets. */
function mailNames(text: string, out: PiiEntity[]): void {
  for (let at = text.indexOf("<"); at >= 0; at = text.indexOf("<", at + 1)) {
    const close = text.indexOf(">", at);
    if (close < 0 || close - at > 80) continue;
    const address = text.slice(at + 1, close).replace(/[\u200e\u200f\u202a-\u202e]/g, "");
    const sign = address.indexOf("@");
    if (sign <= 0 || /\s/.test(address)) continue;
    // a role address ("info@", "support@") carries a team's name, not a person's
    if (NOT_NAMES.has(address.slice(0, sign).toLowerCase())) continue;
    let end = at;
    if (text.charAt(end - 1) === "(") end--;
    while (end > 0 && (text.charCodeAt(end - 1) === 32 || /[\u200e\u200f\u202a-\u202e]/.test(text.charAt(end - 1)))) end--;
    if (end === at) continue;
    let start = nameBefore(text, end);
    if (start < 0) continue;
    // an attribution's own word before the name is no part of it
    while (start < end) {
      const space = text.indexOf(" ", start);
      if (space < 0 || space >= end || !ATTRIBUTION_WORDS.has(text.slice(start, space).toLowerCase())) break;
      start = space + 1;
    }
    // "Kowalski, Piotr <…>": a surname, a comma, a given name
    if (text.startsWith(", ", start - 2)) {
      const before = nameBefore(text, start - 2, 1);
      if (before >= 0 && !text.slice(start, end).includes(" ")) start = before;
    }
    out.push(entity("name", text, start, end, STRONG));
  }
}

/** A time of day as chat exports write it ("9:44 PM", "21:18", "14:20:07", "오후 7:12", "下午4:51"). */
const TIME = String.raw`(?:(?:오전|오후|上午|下午|午前|午後)[ \t]?)?\d{1,2}[:.]\d{2}(?:[:.]\d{2})?(?:[ \t]?[AaPp]\.?[Mm]\.?)?`;
/** A date before the time ("12/3/26,", "[2026-12-02", "06.12.2026", "2026년 12월 3일", "2026/12/04(金)"). */
const DATE = String.raw`(?:\d{1,4}[./-]\d{1,2}[./-]\d{1,4}|\d{4}년[ \t]?\d{1,2}월[ \t]?\d{1,2}일|\d{4}年\d{1,2}月\d{1,2}日)(?:[ \t]?\([^)\n]{1,4}\))?`;
/** "[DATE, TIME] ", "DATE, TIME - ", "TIME ", "DATE TIME\t" before a speaker */
const STAMP_BEFORE = new RegExp(
  String.raw`(?<![\p{L}\p{N}])\[?(?:${DATE},?[ \t]+)?${TIME}\]?(?:[ \t]*[-–][ \t]*|[ \t]+|\t)`,
  "gu",
);
/** what ends a speaker's name after the stamp: ":" (Korean exports put a blank before it) or a tab */
const SPEAKER_END = /[ \t]?[:：]|\t/y;
/** " [TIME]:", " (TIME):", " TIME:" after a speaker, or " TIME " when the speaker starts its line */
const STAMP_AFTER = new RegExp(
  String.raw`(?:,?[ \t]{1,4}|[ \t](?:→|->|to)[ \t][^\n:]{1,40}?[ \t])(?:\[${TIME}\]|\(${TIME}\)|(?:\d{1,2}[./-]\d{1,2}[ \t]+)?${TIME})(?:[ \t]?[:：]|(?=[ \t]))`,
  "uy",
);

/** KakaoTalk's speaker in brackets before the stamp's brackets ("[이수민] [오후 9:41]") */
const KAKAO_SPEAKER = new RegExp(String.raw`\[([^\]\n]{1,30})\][ \t]\[${TIME}\]`, "gu");

const isDigitAt = (text: string, at: number): boolean => {
  const c = text.charCodeAt(at);
  return c >= 48 && c <= 57;
};

/**
 * Whether /(?<![\d.])\d{1,2}[:.]\d\d(?!\d)/ matches with `mark` as its ":" or ".": looked for at each
 * `mark` (indexOf), not by the pattern along the text (about 0.7 µs a KB).
 */
function timeIn(text: string, mark: string): boolean {
  const free = (at: number) => !isDigitAt(text, at) && text.charCodeAt(at) !== 46;
  for (let p = text.indexOf(mark); p >= 0; p = text.indexOf(mark, p + 1)) {
    if (!isDigitAt(text, p + 1) || !isDigitAt(text, p + 2) || isDigitAt(text, p + 3) || !isDigitAt(text, p - 1)) continue;
    // one digit before the mark, or two
    if (free(p - 2) || (isDigitAt(text, p - 2) && free(p - 3))) return true;
  }
  return false;
}

/** The speakers of a chat export's lines. */
function chatNames(text: string, out: PiiEntity[]): void {
  // (a time, not a part of an IP address or a version: "192.168.14.27")
  if (!timeIn(text, ":") && !timeIn(text, ".")) return;
  // a stamp, then the speaker, then ":" or a tab
  for (const m of text.matchAll(STAMP_BEFORE)) {
    const at = m.index + m[0].length;
    const name = nameAfter(text, at);
    if (!name) continue;
    SPEAKER_END.lastIndex = name[1];
    if (!SPEAKER_END.test(text) || labelSpeaker(text.slice(name[0], name[1]))) continue;
    out.push(entity("name", text, name[0], name[1], STRONG));
  }
  // the speaker, then its stamp: at a line's start, or after the stamp's colon of the message before
  for (let line = 0; line >= 0 && line < text.length; line = text.indexOf("\n", line) + 1 || -1) {
    const name = nameAfter(text, line);
    if (!name) continue;
    STAMP_AFTER.lastIndex = name[1];
    if (!STAMP_AFTER.test(text)) continue;
    out.push(entity("name", text, name[0], name[1], STRONG));
  }
  // "<sven_ekdahl> …": an IRC nick made of a name's parts
  for (const m of text.matchAll(/(?<![\p{L}\p{N}])<([\p{Ll}]{2,20}(?:[._][\p{Ll}]{1,20}){1,2})>/gu))
    if (nameHandle(m[1])) out.push(entity("name", text, m.index + 1, m.index + 1 + m[1].length, 0.9));
  // "[이수민] [오후 9:41]": KakaoTalk's speaker in brackets before the stamp
  for (const m of text.matchAll(KAKAO_SPEAKER)) {
    const name = nameAfter(text, m.index + 1);
    if (name && name[1] === m.index + 1 + m[1].length) out.push(entity("name", text, name[0], name[1], STRONG));
  }
}

/** A ticket's agent or customer by role, in the languages the engine reads. */
const ROLES = String.raw`(?:agent|agente|agents|operator|operatore|operatrice|operador|operadora|opérateur|opératrice|conseiller|conseillère|advisor|adviser|medewerker|medewerkster|medarbejder|mitarbeiter|mitarbeiterin|sachbearbeiter|work note|reply by|replied by|assigned to|handled by|customer|client|cliente|klant|kunde|kundin|asiakas|klient|клиент|клієнт|consultor|consultora|atendente|nhân viên|khách hàng|상담원|고객|客服|客户|顾客|担当|お客様|الموظف|الموظفة|العميل|پشتیبان|مشتری|נציג|נציגה|לקוח|לקוחה|พนักงาน|ลูกค้า)`;
/** A role word alone ("Клиент", "고객", "العميل"): a ticket's label before its turn, no name. */
const ROLE_ONLY = new RegExp(String.raw`^${ROLES}$`, "iu");
/**
 * Kinship words (a closed class, in the languages the engine reads): before a colon they are a form's
 * field ("Madre: …", "Σύζυγος: …") or a contact saved by its tie ("Mamá: …", "Babička: …"), no name.
 */
const KIN = new Set(
  (
    "mother father mom mum dad mama mamma mamá mamã papa papá pappa mãe pai madre padre mère père mutter vater moeder vader " +
    "matka otec ojciec babička dědeček babcia dziadek mor far farmor mormor farfar morfar äiti isä mummo anya apa nagymama " +
    "nagypapa мама папа мать отец бабушка дедушка мамо тато μητέρα πατέρας σύζυγος γιαγιά παππούς wife husband esposa esposo " +
    "marido mulher ehefrau ehemann echtgenote echtgenoot épouse époux moglie marito grandma grandpa granny abuela abuelo avó avô " +
    "oma opa nonna nonno mamie papi bunica bunicul"
  ).split(" "),
);
/** A speaker's place held by a role or a kinship word: a label. */
const labelSpeaker = (word: string): boolean => ROLE_ONLY.test(word) || KIN.has(word.toLowerCase());
/** "Agent (Felipe):", "客服（小杨）：", "Operatore Giulia:", "상담원 한지수:" */
const ROLE_NAME = new RegExp(String.raw`(?<![\p{L}])${ROLES}[ \t]*(?:[(（]|(?=[ \t]))`, "giu");
const ROLE_NAME_CUE = [ROLE_NAME, new RegExp(ROLE_NAME.source, "iuy"), ROLE_WORD] as const;

function roleNames(text: string, out: PiiEntity[]): void {
  if (!/[:：]/.test(text)) return;
  for (const m of cues(text, ROLE_NAME_CUE)) {
    // a role that opens a turn: not after a word of a cased script ("Reply to this customer (Greek):")
    let k = m.index;
    while (k > 0 && (text.charCodeAt(k - 1) === 32 || text.charCodeAt(k - 1) === 9)) k--;
    if (k > 0 && /[\p{Lu}\p{Ll}\p{Lt}]/u.test(text.charAt(k - 1))) continue;
    let at = m.index + m[0].length;
    const bracket = m[0].endsWith("(") || m[0].endsWith("（");
    while (text.charCodeAt(at) === 32 || text.charCodeAt(at) === 9) at++;
    const name = nameAfter(text, at, bracket ? 4 : 2);
    if (!name) continue;
    let end = name[1];
    if (bracket) {
      if (!/[)）]/.test(text.charAt(end))) continue;
      end++;
    }
    while (text.charCodeAt(end) === 32) end++;
    if (!/[:：]/.test(text.charAt(end))) continue;
    out.push(entity("name", text, name[0], name[1], STRONG));
  }
}

/** The labels of minutes' lists of people. */
const ATTENDEES =
  /(?<![\p{L}])(?:present|attendees|attendance|attending|participants|apologies|absent|regrets|anwesend|teilnehmer|teilnehmende|entschuldigt|присутствовали|присутні|отсутствовали|aanwezig|afwezig|présents|présentes|excusés|presentes|ausentes|presenti|assenti|obecni|nieobecni|přítomni|omluveni|jelen vannak|til stede|närvarande|tilstede|fraværende|läsnä|poissa|παρόντες|απόντες|الحضور|الغائبون|נוכחים|נעדרים|उपस्थित|অনুপস্থিত|উপস্থিত|கலந்துகொண்டோர்|参会人|参会人员|与会人员|出席者|欠席者|出席|참석자|참석|불참|katılımcılar|katılanlar|hadir|peserta|ผู้เข้าร่วมประชุม|ผู้เข้าร่วม|thành phần|tham dự)[ \t]*[:：]/giu;
const ATTENDEES_CUE = [ATTENDEES, new RegExp(ATTENDEES.source, "iuy"), ATTENDEE_WORD] as const;
/** an honorific before a name in a list ("Fr. Dr.", "Hr.", "Dona", "Sr.") or a role after it ("(chair)") */
const HONORIFIC_AT =
  /(?:(?:Mr|Mrs|Ms|Dr|Prof|Fr|Hr|Sr|Sra|Srta|Mme|Mlle|M|Sig|Sig\.ra|Ing|Mag|Dipl)\.|(?:Mr|Mrs|Ms|Miss|Mx|Dr|Professor|Prof|Herr|Frau|Dona|Dom|Don|Doña|Madame|Monsieur|Pani|Pan|Sir|Madam|Ma'am|Kyrios|κ\.|г-н|г-жа)(?![\p{L}]))[ \t]{1,4}/uy;

function attendeeNames(text: string, out: PiiEntity[]): void {
  if (!/[:：]/.test(text)) return;
  for (const m of cues(text, ATTENDEES_CUE)) {
    let at = m.index + m[0].length;
    // the list ends at its line's end or where the next label ("Action:", "待办：") starts
    let stop = text.indexOf("\n", at);
    if (stop < 0) stop = text.length;
    stop = labelStart(text, at, stop);
    while (at < stop) {
      while (at < stop && /[ \t,，、;；،]/.test(text.charAt(at))) at++;
      at = pastHonorifics(text, at);
      const item = itemEnd(text, at, stop);
      const name = nameAfter(text, at);
      if (name && name[1] <= item && itemRest(text.slice(name[1], item)))
        out.push(entity("name", text, name[0], name[1], STRONG));
      at = item;
    }
  }
}

/** `at` moved past the honorifics that stand there ("Fr. Dr. ", "Dona "). */
function pastHonorifics(text: string, at: number): number {
  for (;;) {
    HONORIFIC_AT.lastIndex = at;
    const h = HONORIFIC_AT.exec(text);
    if (!h) return at;
    at += h[0].length;
  }
}

/** Where the next label of a line ("Action:", "TOP 3:", "待办：") starts in [at, stop), or `stop`. */
function labelStart(text: string, at: number, stop: number): number {
  for (let colon = at; colon < stop; colon++) {
    const c = text.charCodeAt(colon);
    if (c !== 58 && c !== 0xff1a) continue;
    // back over a blank, digits, a blank, then the label's letters
    let k = colon;
    if (text.charCodeAt(k - 1) === 32 || text.charCodeAt(k - 1) === 9) k--;
    while (k > at && text.charCodeAt(k - 1) >= 48 && text.charCodeAt(k - 1) <= 57) k--;
    if (k < colon && (text.charCodeAt(k - 1) === 32 || text.charCodeAt(k - 1) === 9)) k--;
    const end = k;
    while (k > at && /[\p{L}\p{M}]/u.test(text.charAt(k - 1))) k--;
    if (k < end) return k;
  }
  return stop;
}

/** Where the list item at `at` ends: its separator, or `stop`. */
function itemEnd(text: string, at: number, stop: number): number {
  for (let i = at; i < stop; i++) if (/[,，、;；،]/.test(text.charAt(i))) return i;
  return stop;
}

/** What may follow a name in its item: nothing, a role in brackets, blanks. */
function itemRest(rest: string): boolean {
  return /^(?:[(（][^)）]{0,30}[)）])?\.?$/u.test(rest.trim());
}

/** A closing phrase before a message's signer. */
const CLOSING =
  /(?<![\p{L}])(?:thanks(?: again)?|thank you|many thanks|cheers|regards|best|confirmed|will do|great|noted|grazie(?: mille)?|gracias|recibido, gracias|merci|danke|vielen dank|tack|takk|tak|kiitos|díky|děkuji|dziękuję|köszönöm|mulțumesc|hvala|bedankt|obrigad[oa]|спасибо|дякую|ευχαριστώ|teşekkürler|terima kasih|siap, bu|salamat|asante|cảm ơn(?: [\p{L}]+){0,2}|תודה|شكرا(?:ً)?(?: لك| لكم| جزيلا| جزيلاً)?|ممنون|감사합니다|ありがとう(?:ございます)?|承知しました|谢谢|謝謝|好的，收到|ขอบคุณ(?:ครับ|ค่ะ)?|პატივისცემით|Հարգանքով|শুভেচ্ছান্তে|ধন্যবাদ|நன்றி|धन्यवाद|सादर|с уважением|з повагою|z poważaniem|s pozdravem|üdvözlettel|με εκτίμηση|saygılarımla|hormat saya|trân trọng|敬具|此致|드림)[!.,，。！、،՝ \t]*/giu;
const CLOSING_CUE = [CLOSING, new RegExp(CLOSING.source, "iuy"), CLOSING_WORD] as const;

/** The signer after a closing phrase, last on its line or in the text ("Grazie mille! Elena", "… 민재 드림"). */
function signerNames(text: string, out: PiiEntity[]): void {
  for (const m of cues(text, CLOSING_CUE)) {
    let at = m.index + m[0].length;
    if (text.charAt(at) === "/") at++;
    const name = nameAfter(text, at, 2);
    if (!name) continue;
    let end = name[1];
    // Korean "드림"/"올림" ("from") after the name
    const rest = text.slice(end, end + 4).replace(/^[ \t]?(?:드림|올림)/u, "");
    end += text.slice(end, end + 4).length - rest.length;
    if (!/^[ \t.!]*(?:\n|$)/u.test(text.slice(end, end + 3)) && !/^[ \t]*(?:\n|$)/.test(text.slice(end))) continue;
    out.push(entity("name", text, name[0], name[1], 0.8));
  }
}

/** where the next mention ("@Tâm", "u/ciara_mcgrath") starts at or after `from`: its "@" or "u/", or -1 */
function mentionAt(text: string, from: number): number {
  let at = text.indexOf("@", from);
  let slash = text.indexOf("u/", from);
  while (at >= 0 || slash >= 0) {
    const i = slash < 0 || (at >= 0 && at < slash) ? at : slash;
    const sign = i === at ? 1 : 2;
    // an address's "@" has its local part before it; "u/" starts a word
    if ((i === 0 || !MENTION_BEFORE.test(text.charAt(i - 1))) && /\p{L}/u.test(text.charAt(i + sign))) return i;
    if (i === at) at = text.indexOf("@", at + 1);
    else slash = text.indexOf("u/", slash + 1);
  }
  return -1;
}
const MENTION_BEFORE = /[\p{L}\p{N}_.@/]/u;
/** a handle in lower case made of a name's parts: "lisa.haberl", "sven_ekdahl", "marta.kowalczyk" */
const HANDLE_AT = /[\p{Ll}]{2,20}(?:[._][\p{Ll}]{1,20}){1,2}(?![\p{L}\p{N}_]|\.[\p{L}\p{N}])/uy;
/** the author of a comment or post: "by stefan_kraus:", "Posted by gavin_mcleod »", "تعليق من …:", "תגובה של …:", "โดย …" */
const AUTHOR =
  /(?<![\p{L}])(?:(?:posted|replied|reply #?\d{1,5}|forum reply|comment|answer|written|sent|post) by|(?:коментар|комментарий|kommentar|commentaire|comentario|commento|komentarz)(?:[ \t]*:)?|تعليق من|رد من|پاسخ|תגובה של|ความคิดเห็นที่ \d{1,5} โดย|โดย)[ \t]+/giu;
const AUTHOR_CUE = [AUTHOR, new RegExp(AUTHOR.source, "iuy"), AUTHOR_WORD] as const;

/** Whether a word is a name of the lists (given names, the gazetteer's given names and surnames). */
const listedName = (word: string): boolean => isGivenName(word) || isFamilyName(word) || isGazetteerName(word);

/** Whether every word of `name` is a listed name (a script without case has no list here: never). */
function personish(name: string): boolean {
  return name.split(" ").every((w) => !UNCASED.test(w) && listedName(w.replace(/\.$/, "")));
}

/** Whether a lower-case handle is made of a person's name: one part of it a given name or a family name. */
function nameHandle(handle: string): boolean {
  const parts = handle.split(/[._]/);
  // every part a name or an initial ("linnea.h", "p.ferreira"), one of them no everyday word ("tiger_lily" is an alias)
  return (
    parts.every((p) => p.length <= 2 || listedName(p)) && parts.some((p) => p.length >= 3 && !isEnglishWord(p) && !isStopword(p))
  );
}

/** Mentions and authors whose handle or name is a person's. */
function mentionNames(text: string, out: PiiEntity[]): void {
  for (let sign = mentionAt(text, 0); sign >= 0; sign = mentionAt(text, sign + 1)) {
    const at = sign + (text.charCodeAt(sign) === 64 ? 1 : 2);
    HANDLE_AT.lastIndex = at;
    const handle = HANDLE_AT.exec(text);
    if (handle) {
      if (nameHandle(handle[0])) out.push(entity("name", text, at, at + handle[0].length, 0.9));
      continue;
    }
    // "@Tâm", "@张晓明：", "@ปิยะนุช": one word of a name (two for scripts with blanks between name parts: "@Raúl Díaz")
    const uncased = UNCASED.test(text.charAt(at));
    const name = nameAfter(text, at, uncased ? 1 : 2);
    // (a name in a script without blanks between words is short: "@は半角に変えてください" is a sentence)
    if (
      name &&
      !(uncased && name[1] - name[0] > 8 && /[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Thai}]/u.test(text.charAt(at)))
    )
      out.push(entity("name", text, name[0], name[1], 0.9));
  }
  for (const m of cues(text, AUTHOR_CUE)) {
    const at = m.index + m[0].length;
    HANDLE_AT.lastIndex = at;
    const handle = HANDLE_AT.exec(text);
    if (handle) {
      if (nameHandle(handle[0])) out.push(entity("name", text, at, at + handle[0].length, 0.9));
      continue;
    }
    const name = nameAfter(text, at, 3);
    if (name && /^[ \t]*(?:[:：»]|به|@|\n|$)/u.test(text.slice(name[1], name[1] + 3)))
      out.push(entity("name", text, name[0], name[1], 0.9));
  }
}

/**
 * "Vusi: ukhona?\nNomsa Khumalo: ngikhona": speakers at the starts of lines, without stamps, in a
 * text that is a dialogue: two lines or more start so, and a speaker comes back or one is a
 * given name of the lists (a form's labels, "Telefon:", "Adresse:", are neither).
 */
function dialogueNames(text: string, out: PiiEntity[]): void {
  if (!text.includes("\n")) return;
  const found: [number, number, string][] = [];
  for (let line = 0; line >= 0 && line < text.length; line = text.indexOf("\n", line) + 1 || -1) {
    const name = nameAfter(text, line, 3);
    if (!name || !/^[ \t]?[:：]/.test(text.slice(name[1], name[1] + 2))) continue;
    // (a ticket's "Клиент:" or "고객:" is a role, a form's "Madre:" a tie, not a speaker's name)
    if (labelSpeaker(text.slice(name[0], name[1]))) continue;
    found.push([name[0], name[1], text.slice(name[0], name[1])]);
  }
  if (found.length < 2) return;
  const names = found.map((f) => f[2]);
  const repeated = (n: string) => names.filter((m) => m === n).length > 1;
  // a dialogue: a speaker comes back, or one of them is a person's name of the lists
  // (not a form: "Név:", "Nachname:" are labels)
  if (names.some((n) => FIELD_LABELS.has(n.toLowerCase()))) return;
  if (!names.some((n) => repeated(n) || personish(n))) return;
  for (const [start, end, name] of found) if (repeated(name) || personish(name)) out.push(entity("name", text, start, end, 0.9));
}

/** Greetings before a name ("Habari Juma", "Gamarjoba Nino!", "Привіт, Андрію!", "مرحبا Sami،"). */
const GREETING =
  /(?<![\p{L}])(?:hi|hey|hello|dear|yo|oye|hola|buenas|ciao|salve|salut|coucou|bonjour|hallo|moin|servus|hej|hei|moi|terve|szia|cześć|ahoj|bok|zdravo|merhaba|selam|olá|oi|uy|yaar|arre|namaste|नमस्ते|habari|jambo|sawubona|kia ora|talofa|mabuhay|gamarjoba|barev|salam|привет|привіт|здравствуйте|вітаю|γεια(?: σου)?|שלום|مرحبا|السلام عليكم|سلام|你好|こんにちは|안녕|สวัสดี|xin chào|chào|ごめん|sorry)(?![\p{L}\p{M}])[ \t]*[,،!]?[ \t]*/giu;
const GREETING_CUE = [GREETING, new RegExp(GREETING.source, "iuy"), GREETING_WORD] as const;
/** Honorifics and kin words after a name spoken to ("Farhad jan", "Tanvir bhai", "Priyanka di", "Ankit bhai"). */
const AFTER_VOCATIVE =
  /^[ \t](?:jan|joon|bhai|bhaiya|di|didi|dada|ji|sahib|saab|bey|hanım|abi|abla|khanum|anna|akka|ssi|kun|chan|san|sama|po|ate|kuya)[ \t]?[,!،]/u;

/** A name spoken to: after a greeting, or at a message's start before a comma or a kin word ("Lars, hast du …"). */
function vocativeNames(text: string, out: PiiEntity[]): void {
  for (const m of cues(text, GREETING_CUE)) {
    // a greeting opens a message: at the text's or a line's start, or after a sentence or a quote
    if (m.index > 0 && !/(?:^|[\n.!?:"“«>—-])[ \t]*$/u.test(text.slice(Math.max(0, m.index - 4), m.index))) continue;
    const at = pastHonorifics(text, m.index + m[0].length);
    const name = nameAfter(text, at, 2);
    if (!name) continue;
    const after = text.slice(name[1], name[1] + 8);
    if (!/^[ \t]*[,،!?:.]/.test(after) && !AFTER_VOCATIVE.test(after)) continue;
    out.push(entity("name", text, name[0], name[1], STRONG));
  }
  // "Lars, …", "Tanvir bhai, …" at the start of the text or a line: a listed given name, or a kin word after it
  for (let line = 0; line >= 0 && line < text.length; line = text.indexOf("\n", line) + 1 || -1) {
    const name = nameAfter(text, line, 1);
    if (!name) continue;
    const after = text.slice(name[1], name[1] + 8);
    const kin = AFTER_VOCATIVE.test(after);
    if (!(kin || (/^[,،!][ \t]/.test(after) && isGivenName(text.slice(name[0], name[1]))))) continue;
    out.push(entity("name", text, name[0], name[1], STRONG));
  }
}

/** A given name in Latin letters glued to a word of another script ("Alex你好", "Kevinさん", "พี่Tomคะ", "ごめんEmma、"). */
const GLUED =
  /(?<=[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}\p{sc=Thai}]|^|[ \t])\p{Lu}\p{Ll}{1,15}(?=[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}\p{sc=Thai}、，])/gu;

function gluedNames(text: string, out: PiiEntity[]): void {
  if (!/[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]/.test(text)) return;
  for (const m of text.matchAll(GLUED))
    if (isGivenName(m[0])) out.push(entity("name", text, m.index, m.index + m[0].length, 0.9));
}

// the first word of each cue of CLOSING, GREETING, AUTHOR, ROLES and ATTENDEES, a list each (keywords.ts hashes the first run of letters)
gateWords(
  CLOSING_WORD,
  "thanks thank many cheers regards best confirmed will great noted grazie gracias recibido merci danke vielen tack takk tak kiitos díky děkuji dziękuję köszönöm mulțumesc hvala bedankt obrigado obrigada спасибо дякую ευχαριστώ teşekkürler terima siap salamat asante cảm תודה شكراً شكرا ممنون 감사합니다 ありがとう ありがとうございます 承知しました 谢谢 謝謝 好的 ขอบคุณ ขอบคุณครับ ขอบคุณค่ะ პატივისცემით Հարգանքով শুভেচ্ছান্তে ধন্যবাদ நன்றி धन्यवाद सादर с з z s üdvözlettel με saygılarımla hormat trân 敬具 此致 드림".split(
    " ",
  ),
);
gateWords(
  GREETING_WORD,
  "hi hey hello dear yo oye hola buenas ciao salve salut coucou bonjour hallo moin servus hej hei moi terve szia cześć ahoj bok zdravo merhaba selam olá oi uy yaar arre namaste नमस्ते habari jambo sawubona kia talofa mabuhay gamarjoba barev salam привет привіт здравствуйте вітаю γεια שלום مرحبا السلام سلام 你好 こんにちは 안녕 สวัสดี xin chào ごめん sorry".split(
    " ",
  ),
);
gateWords(
  AUTHOR_WORD,
  "posted replied reply forum comment answer written sent post коментар комментарий kommentar commentaire comentario commento komentarz تعليق رد پاسخ תגובה ความคิดเห็นที่ โดย".split(
    " ",
  ),
);
gateWords(
  ROLE_WORD,
  "reply replied agent agente agents operator operatore operatrice operador operadora opérateur opératrice conseiller conseillère advisor adviser medewerker medewerkster medarbejder mitarbeiter mitarbeiterin sachbearbeiter work assigned handled customer client cliente klant kunde kundin asiakas klient клиент клієнт consultor consultora atendente nhân khách 상담원 고객 客服 客户 顾客 担当 お客様 الموظف الموظفة العميل پشتیبان مشتری נציג נציגה לקוח พนักงาน ลูกค้า".split(
    " ",
  ),
);
gateWords(
  ATTENDEE_WORD,
  "present attendees attendance attending participants apologies absent regrets anwesend teilnehmer teilnehmende entschuldigt присутствовали присутні отсутствовали aanwezig afwezig présents présentes excusés presentes ausentes presenti assenti obecni nieobecni přítomni omluveni jelen til närvarande tilstede fraværende läsnä poissa παρόντες απόντες الحضور الغائبون נוכחים נעדרים उपस्थित অনুপস্থিত উপস্থিত கலந்துகொண்டோர் 参会人 参会人员 与会人员 出席者 欠席者 出席 참석자 참석 불참 katılımcılar katılanlar hadir peserta ผู้เข้าร่วมประชุม ผู้เข้าร่วม thành tham".split(
    " ",
  ),
);

/** Name fields' labels in the scripts and languages the engine reads, before a colon ("Имя:", "الاسم الكامل:", "이름:", "Nom :"). */
const NAME_FIELD =
  /(?<![\p{L}\p{M}])(?:full name|first name|last name|given name|surname|name|имя|фамилия|фио|ім'я|прізвище|الاسم الكامل|الاسم|اسم|نام و نام خانوادگی|نام خانوادگی|نام|שם מלא|שם פרטי|שם משפחה|שם|पूरा नाम|नाम|পূর্ণ নাম|নাম|பெயர்|სახელი|გვარი|Անուն|Ազգանուն|ชื่อ-นามสกุล|ชื่อ|นามสกุล|이름|성명|姓名|名前|氏名|nom|prénom|nombre|apellidos?|nome|cognome|sobrenome|vorname|nachname|naam|voornaam|achternaam|imię|nazwisko|jméno|příjmení|név|soyadı|soyad|adı|họ và tên|họ tên|tên)[ \t]?[:：][ \t]*/giu;
const NAME_FIELD_CUE = [NAME_FIELD, new RegExp(NAME_FIELD.source, "iuy"), NAME_FIELD_WORD] as const;
// the first word of each label ("ім'я" is gated on "ім", as keywords.ts cuts words)
gateWords(
  NAME_FIELD_WORD,
  "full first last given surname name имя фамилия фио ім'я прізвище الاسم اسم نام שם पूरा नाम পূর্ণ নাম பெயர் სახელი გვარი Անուն Ազգանուն ชื่อ นามสกุล 이름 성명 姓名 名前 氏名 nom prénom nombre apellido apellidos nome cognome sobrenome vorname nachname naam voornaam achternaam imię nazwisko jméno příjmení név soyadı soyad adı họ tên".split(
    " ",
  ),
);
/** a word of a name field's value, of any case ("ayşe demirtaş" typed in lower case) */
const VALUE_WORD_AT = /[\p{L}][\p{L}\p{M}'’-]{0,30}\.?/uy;

/** The value of a name field: up to four words on its line, ending before the next label ("Имя: Ольга Фамилия: …"). */
function fieldNames(text: string, out: PiiEntity[]): void {
  if (!text.includes(":") && !text.includes("：")) return;
  for (const m of cues(text, NAME_FIELD_CUE)) {
    const at = m.index + m[0].length;
    let end = -1;
    let i = at;
    for (let n = 0; n < 4; n++) {
      VALUE_WORD_AT.lastIndex = i;
      const w = VALUE_WORD_AT.exec(text);
      if (!w) break;
      const after = i + w[0].length;
      // the next field's label ("Фамилия:", "Prénom :") ends the value, as does a word that is no name
      // ("and"), or one in lower case after a capitalised one ("Ada Quist and patient: …")
      if (/^[ \t]?[:：]/.test(text.slice(after, after + 2)) || NOT_NAMES.has(w[0].toLowerCase())) break;
      const particle = TOKEN_PARTICLES.has(w[0]) && /^[ \t]\p{Lu}/u.test(text.slice(after, after + 2));
      if (n > 0 && !particle && /^\p{Lu}/u.test(text.charAt(at)) && /^\p{Ll}/u.test(w[0])) break;
      if (LETTER.test(text.charAt(after))) break;
      end = after;
      // a surname in capitals, a comma, the given names ("FERNÁNDEZ, Lucía Belén")
      if (
        n === 0 &&
        text.startsWith(", ", after) &&
        w[0].length > 1 &&
        w[0] === w[0].toUpperCase() &&
        /\p{Lu}/u.test(text.charAt(after + 2))
      ) {
        i = after + 2;
        continue;
      }
      if (text.charCodeAt(after) !== 32) break;
      i = after + 1;
    }
    if (end > at) out.push(entity("name", text, at, end, STRONG));
  }
}

/** Name parts joined into one token, as file names, URLs, log fields and handles write them ("CV_Anna_Berg_2026.pdf", "user=aoife.brennan", "name=Leila%20Farahani"). */
const JOINED = /(?<![\p{L}\p{M}\p{N}])[\p{L}\p{M}]{1,20}(?:(?:[_.+]|%20)[\p{L}\p{M}]{1,20}){1,5}/gu;
const JOINED_SEPARATOR = /[_.+]|%20/g;
/** particles that may stand between a name's parts in a token ("nguyen_van_long", "van_der_berg") */
const TOKEN_PARTICLES = new Set(["van", "von", "der", "den", "de", "da", "di", "du", "del", "la", "le", "bin", "al", "el"]);

function joinedNames(text: string, out: PiiEntity[]): void {
  if (!text.includes("_") && !text.includes("%20") && !text.includes("=") && !text.includes("/") && !text.includes("]")) return;
  for (const m of text.matchAll(JOINED)) {
    // the parts with their offsets
    const parts: [number, string][] = [];
    let from = 0;
    for (const sep of m[0].matchAll(JOINED_SEPARATOR)) {
      parts.push([from, m[0].slice(from, sep.index)]);
      from = sep.index + sep[0].length;
    }
    parts.push([from, m[0].slice(from)]);
    // the longest run of listed name parts (an initial or a particle inside or at an end), one of them a given or family name
    let best: [number, number] = [0, -1];
    for (let a = 0; a < parts.length; a++) {
      let b = a;
      let strong = false;
      let named = 0;
      for (; b < parts.length; b++) {
        const p = (parts[b] as [number, string])[1];
        if (p.length === 1) continue;
        if (TOKEN_PARTICLES.has(p.toLowerCase()) && b > a) continue;
        if (!listedName(p) || (isEnglishWord(p) && !isGivenName(p))) break;
        named++;
        if (isGivenName(p) || isFamilyName(p)) strong = true;
      }
      const last = b - 1;
      if (named >= 2 || (named === 1 && last > a && strong)) {
        if (strong && last - a > best[1] - best[0]) best = [a, last];
      }
    }
    if (best[1] <= best[0]) continue;
    const start = m.index + (parts[best[0]] as [number, string])[0];
    const lastPart = parts[best[1]] as [number, string];
    // (an e-mail's local part is the e-mail's)
    if (text.charAt(m.index + lastPart[0] + lastPart[1].length) === "@") continue;
    out.push(entity("name", text, start, m.index + lastPart[0] + lastPart[1].length, 0.85));
  }
}

/** a word no list says is everyday (stop words, English, the words that take a name's place) */
const plainName = (w: string): boolean => !NOT_NAMES.has(w) && !isStopword(w) && !isEnglishWord(w);
/** months that are given names too ("june", "may") */
const MONTHS = new Set([
  "january",
  "february",
  "march",
  "april",
  "may",
  "june",
  "july",
  "august",
  "september",
  "october",
  "november",
  "december",
]);
/** a street word after a name ("nathan rd", "king st") */
const STREET_AFTER_NAME =
  /^[ \t](?:rd|road|st|street|ave|avenue|ln|lane|dr|drive|blvd|way|pl|place|ct|court|str|straße|strasse|ul|cd|cad)\b/iu;

/**
 * Whether at most one word in eight starts with a capital, by one pass over the characters (the
 * words' pattern runs only then): a word starts at a letter after no letter; a capital is a letter
 * that differs from its lower case.
 */
function mostlyLowerCase(text: string): boolean {
  let words = 0;
  let capitals = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const ascii = c < 0x80;
    const upper = ascii ? c >= 65 && c <= 90 : false;
    const letter = ascii ? upper || (c >= 97 && c <= 122) : c >= 0xc0 && c !== 0xd7 && c !== 0xf7;
    if (!letter) {
      inWord = false;
      continue;
    }
    if (inWord) continue;
    inWord = true;
    words++;
    if (upper || (!ascii && c < 0x2000 && String.fromCharCode(c) !== String.fromCharCode(c).toLowerCase())) capitals++;
    // (settled early on a text of capitalised words)
    if (capitals > 4 && capitals * 8 > words) return false;
  }
  return words >= 4 && capitals * 8 <= words;
}

/** the words of a cased script, for lowerCaseNames */
const CASED_WORD =
  /(?<![\p{L}\p{M}\p{N}@._/-])[\p{Ll}\p{Lu}][\p{Ll}\p{Lu}\p{M}'’-]{1,30}(?![\p{L}\p{M}\p{N}@_/]|\.[\p{L}\p{N}])/gu;

/**
 * Names in a text written all in lower case (texting: "yo is kai still at 14 elm st", "настя скинь
 * номер"): where at most one word in eight starts with a capital, a word of a given-name list that
 * is no everyday word, with a surname of the lists after it.
 */
function lowerCaseNames(text: string, out: PiiEntity[]): void {
  if (!mostlyLowerCase(text)) return;
  const words: RegExpExecArray[] = [];
  let capitals = 0;
  for (const m of text.matchAll(CASED_WORD)) {
    words.push(m);
    if (/^\p{Lu}/u.test(m[0])) capitals++;
  }
  if (words.length < 4 || capitals * 8 > words.length) return;
  for (let k = 0; k < words.length; k++) {
    const m = words[k] as RegExpExecArray;
    const w = m[0];
    if (w.length < 3 || /^\p{Lu}/u.test(w) || !plainName(w) || !isGivenName(w) || isPlaceName(w) || MONTHS.has(w)) continue;
    let end = m.index + w.length;
    // "fatma zehra yılmaz", "noor elkhatib": more names of the lists right after it
    for (let n = 0; n < 3; n++) {
      const next = words[k + 1];
      if (!next || next.index !== end + 1 || !plainName(next[0]) || !(isGivenName(next[0]) || isFamilyName(next[0]))) break;
      end = next.index + next[0].length;
      k++;
    }
    // "12 nathan rd": a street's name
    if (STREET_AFTER_NAME.test(text.slice(end, end + 9))) continue;
    // "gold rose sharply", "please mark the invoice": a given name that is an everyday word is a
    // name with a name of no such word after it, a word before it that reaches a person, or a verb of speech after it
    if (end === m.index + w.length && EVERYDAY_NAME_WORDS.has(w.toLowerCase()) && !personAround(text, m.index, end)) continue;
    if (end !== m.index + w.length && EVERYDAY_NAME_WORDS.has(w.toLowerCase()) && everydayOnly(text.slice(m.index, end)))
      continue;
    out.push(entity("name", text, m.index, end, 0.75));
  }
}

/**
 * Given names that are everyday English words, in lower case ("rose", "mark", "grant", "frank"):
 * in a text written all in lower case they are read as words unless something reaches a person.
 * Not the given names that are rare as words ("max", "amara", "hana", "lane" as a name's first
 * word): those stay names as before.
 */
const EVERYDAY_NAME_WORDS: ReadonlySet<string> = new Set(
  (
    "will may mark june grant bill art sue pat hope joy rich frank jack faith grace charity chance dawn summer autumn " +
    "april august rose lily iris ivy holly ruby pearl amber crystal jade olive violet daisy heather page gene guy ray " +
    "rob don dean drew earl rex miles wade chase hunter mason cole gray grey reed rusty sandy stormy sunny harmony " +
    "honor justice liberty mercy patience prudence trinity destiny precious happy lucky merry noble worth worthy win " +
    "free fair glad ban care fan gun keen bliss glory jewel serene sunshine hardy major young price long brown white " +
    "green black bishop church hall baker cook miller sterling royal king prince duke bud buddy cliff rod sky rain " +
    "storm stone wolf fox bear hawk robin wren jay lark dove star echo ocean river brook forest field heath moss sage " +
    "case else ginger candy brandy cherry lemon pepper honey sugar angel baby doll dusty misty windy junior senior " +
    "red blue sun love park"
  ).split(" "),
);

/** every word of a lower-case run an everyday word ("may grant") */
const everydayOnly = (run: string): boolean => run.split(/[ \t]+/).every((w) => EVERYDAY_NAME_WORDS.has(w.toLowerCase()));

/** words before a lower-case name that reach or address a person ("hi mark", "ask bill", "with rose"), or close a letter ("respectfully,\nivy") */
const PERSON_BEFORE =
  /(?:^|[^\p{L}])(?:hi|hey|hiya|hello|yo|dear|thanks|thx|ty|cc|with|ask|asked|tell|told|call|called|text|texted|ping|met|meet|love|miss|friend|bro|sis|mom|dad|aunt|uncle|cousin|boss|regards|respectfully|sincerely|faithfully|yours|cheers|best|xo|xx)[ \t]*,?[ \t\n]+$/iu;
/** verbs of speech after one ("rose called", "mark said") */
const SPEECH_AFTER =
  /^[ \t]+(?:said|says|called|calls|texted|texts|asked|asks|told|tells|wrote|writes|replied|emailed|messaged|mentioned)\b/iu;

/** the word before a list's comma or "and" */
const NAME_BEFORE = /(?<![\p{L}\p{M}])(\p{L}[\p{L}\p{M}'’-]{1,30})(?:,[ \t]*|[ \t]+(?:and|&)[ \t]+)$/u;

/**
 * Whether a word of PERSON_BEFORE stands before text[from, to), a verb of speech after it, another
 * name beside it in a list, or it is a line's greeting ("mark, ...").
 */
function personAround(text: string, from: number, to: number): boolean {
  if (PERSON_BEFORE.test(text.slice(Math.max(0, from - 12), from))) return true;
  if (SPEECH_AFTER.test(text.slice(to, to + 12))) return true;
  // beside another name in a list or a surname first ("alison, mark and …", "tom and rose", "bellamy, rose")
  const before = NAME_BEFORE.exec(text.slice(Math.max(0, from - 40), from));
  if (before && !EVERYDAY_NAME_WORDS.has(before[1].toLowerCase()) && (isGivenName(before[1]) || isFamilyName(before[1])))
    return true;
  return /^[,!][ \t]/.test(text.slice(to, to + 2)) && /(?:^|\n)[ \t]*$/.test(text.slice(Math.max(0, from - 4), from));
}

export function findThreadNames(text: string): PiiEntity[] {
  const out: PiiEntity[] = [];
  blanklessText = text;
  // (an ASCII text is known as such already: fold.ts)
  blankless = hasNonAscii(text) && NO_BLANKS.test(text);
  try {
    lowerCaseNames(text, out);
    fieldNames(text, out);
    joinedNames(text, out);
    if (text.includes("@") && text.includes("<")) mailNames(text, out);
    mentionNames(text, out);
    dialogueNames(text, out);
    vocativeNames(text, out);
    gluedNames(text, out);
    chatNames(text, out);
    roleNames(text, out);
    attendeeNames(text, out);
    signerNames(text, out);
  } finally {
    blanklessText = null;
  }
  return out;
}

/**
 * Later mentions of a name found whole ("Present: Tariq Mahmood, … Action: Tariq to email …"): the
 * first word of a name of two words or more (a given name in most of the world's orders), or a
 * given name of the lists in any place, as a whole word elsewhere; a name in Han or Hangul (no
 * blanks between its parts) as a whole, wherever it recurs. Occurrences inside another entity are left to it.
 */
export function coverNameRepeats(text: string, found: PiiEntity[]): PiiEntity[] {
  const entities = withContacts(text, withoutFalseWords(text, found));
  const parts = new Set<string>();
  for (const e of entities) {
    if (e.type !== "name" || e.score < 0.85) continue;
    const words = e.text.split(/[ \t]+/);
    // Han and Hangul names recur whole ("李娜将合同…"); their parts are not words of their own
    if (/^[\p{sc=Han}\p{sc=Hangul}]/u.test(e.text)) {
      if (words.length === 1 && /^[\p{sc=Han}\p{sc=Hangul}]{2,4}$/u.test(e.text)) parts.add(e.text);
      continue;
    }
    if (words.length === 1) continue;
    for (const [k, w] of words.entries()) {
      const bare = w.replace(/[.,]$/, "");
      if (bare.length < 3 || !nameWord(bare)) continue;
      const uncased = UNCASED.test(bare);
      if (!uncased && !/^\p{Lu}\p{Ll}/u.test(bare)) continue;
      // a given name of the lists anywhere in the name; the first word of a name found by its place
      if (isGivenName(bare) || (k === 0 && e.score >= STRONG)) parts.add(bare);
    }
  }
  if (parts.size === 0) return entities;
  const added: PiiEntity[] = [];
  let k = 0;
  const sorted = entities;
  for (const p of parts) {
    const cjk = /^[\p{sc=Han}\p{sc=Hangul}]/u.test(p);
    for (let at = text.indexOf(p); at >= 0; at = text.indexOf(p, at + 1)) {
      const end = at + p.length;
      if (!cjk && (WORD_CHAR.test(text.charAt(at - 1)) || WORD_CHAR.test(text.charAt(end)))) continue;
      // inside or across an entity: left to it
      while (k > 0 && (sorted[k - 1] as PiiEntity).end > at) k--;
      while (k < sorted.length && (sorted[k] as PiiEntity).end <= at) k++;
      if (k < sorted.length && (sorted[k] as PiiEntity).start < end) continue;
      added.push(entity("name", text, at, end, 0.7));
    }
  }
  if (added.length === 0) return entities;
  // (two parts may meet in one place: the entities stay apart)
  return resolveOverlaps([...entities, ...added]);
}

/**
 * The names with leading words that are never a name taken off ("Teşekkürler Elif" is "Elif",
 * "Medewerker Femke" is "Femke"), and those that are nothing else ("Ευχαριστώ", "Hr").
 */
function withoutFalseWords(text: string, entities: PiiEntity[]): PiiEntity[] {
  let out: PiiEntity[] | null = null;
  for (const [k, e] of entities.entries()) {
    if (e.type !== "name") continue;
    // the display name of a role address is a team's ("Amministrazione <info@…>")
    const role = text.slice(e.end, e.end + 4).includes("<") ? ROLE_ADDRESS.exec(text.slice(e.end, e.end + 24)) : null;
    if (role && NOT_NAMES.has((role[1] as string).toLowerCase())) {
      out ??= [...entities];
      out[k] = null as unknown as PiiEntity;
      continue;
    }
    let { start, end } = e;
    const words = e.text.split(" ");
    const falseWord = (w: string) => NOT_NAMES.has(w.replace(/[.,:!]$/, "").toLowerCase());
    while (words.length > 0 && falseWord(words[0] as string)) start += (words.shift() as string).length + 1;
    // (a last word is trimmed only when it is all there is: "Kwame Asante" is a name, "asante" a thanks)
    if (words.length === 1 && falseWord(words[0] as string)) end -= (words.pop() as string).length + 1;
    if (start === e.start && end === e.end) continue;
    out ??= [...entities];
    out[k] =
      words.length === 0
        ? (null as unknown as PiiEntity)
        : { ...e, start, end, text: e.text.slice(start - e.start, end - e.start) };
  }
  return out ? out.filter((e) => e !== null) : entities;
}

/** a phone number's short label between a name and it ("cel.", "Tel:", "☎", "mob") */
const CONTACT_LABEL =
  /(?:[ \t,:;–—-]{1,3}|[ \t]\()(?:(?:tel|tél|cel|cell|mob|mobil|móvil|hp|ph|phone|tlf|puh|тел|τηλ)\.?:?[ \t]?|☎[ \t]?|📞[ \t]?)?$/iu;
/** honorifics before a contact's name, in the scripts without case too ("κα", "أ.", "خانم", "Ibu", "คุณ", "श्रीमती") */
const TITLE_BEFORE =
  /(?:^|[ \t:(])(?:κα|κος|κ\.|أ\.|الأستاذ|الأستاذة|السيد|السيدة|خانم|آقای|ibu|bapak|pak|bu|cik|encik|kak|mas|mbak|chị|anh|cô|ông|bà|คุณ|นาย|นาง|นางสาว|श्री|श्रीमती|सुश्री|स्व\.|திரு\.|திருமதி|mr|mrs|ms|dr|herr|frau|sr|sra|d\.|dña\.)[ \t]?$/iu;

/**
 * The contact's name right before a phone number ("… Σπύρος 697 403 2215", "Tiina 040 512 8836",
 * "Lupita Hernández cel. 55 4312 8876"): one to three words of listed names, the first a given
 * name and the whole no place ("Bergen 55 30 12 77"), or (scripts without case, which have no lists
 * here) one or two words after an honorific. A phone's label is never the name.
 */
function withContacts(text: string, entities: PiiEntity[]): PiiEntity[] {
  const added: PiiEntity[] = [];
  for (const [k, e] of entities.entries()) {
    if (e.type !== "phone_number") continue;
    const before = text.slice(Math.max(0, e.start - 16), e.start);
    const label = CONTACT_LABEL.exec(before);
    if (!label) continue;
    const end = e.start - label[0].length;
    const previous = entities[k - 1];
    if (previous && previous.end > end - 40 && previous.type === "name") continue;
    const start = nameBefore(text, end, 3);
    if (start < 0 || (previous && previous.end > start)) continue;
    const name = text.slice(start, end);
    const words = name.split(" ");
    if (words.some((w) => isLabel(w.toLowerCase()) || FIELD_LABELS.has(w.toLowerCase()))) continue;
    if (UNCASED.test(name)) {
      // one or two words after an honorific ("خانم نسرین کاظمی", "คุณวรรณา")
      if (words.length > 2 || !TITLE_BEFORE.test(text.slice(Math.max(0, start - 12), start))) continue;
    } else if (
      !personish(name) ||
      !isGivenName(words[0] as string) ||
      isPlaceName(name) ||
      (words.length === 1 && name === name.toUpperCase())
    )
      continue;
    added.push(entity("name", text, start, end, 0.85));
  }
  return added.length === 0 ? entities : resolveOverlaps([...entities, ...added]);
}

/** a mail address in brackets right after a name: its local part */
const ROLE_ADDRESS = /^[ \t]*\(?<([^@\s<>]{1,20})@/;

/** what may not touch a repeated part: a letter, a digit, "_", "'" or "-" ("Jan" in "Pieter-Jan" is none) */
const WORD_CHAR = /[\p{L}\p{M}\p{N}_'’-]/u;
