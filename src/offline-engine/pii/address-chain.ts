/**
 * Addresses written on one line as a chain of parts split by commas, read back from where they
 * end (issue 41, the fourth blind part's kinds): a locality part (a postcode and town, a town and
 * postcode, a town and a US state and ZIP code, a town and state then a postcode alone, or a town
 * or city of the list at the line's end or before a contact label), and before it up to five
 * parts that an address has (a house number or a unit, a street, a district: "14, rue des Lilas,
 * Bât. B, 69003 Lyon", "Gård 14, Hovin, 7320 Fannrem", "Plot 27, Aminu Kano Crescent, Abuja",
 * "P.O. Box 30124-00100, Nairobi"). The chain starts at its first part with a digit or an
 * address word; a part that is a sentence, a phone number, an email, or a label of something
 * else ("DOB", "tel") ends the walk, and a person's name before a house number is left out
 * ("Thabo Mokoena 45 Vilakazi Street" starts at "45").
 */
import { isPlaceName } from "./places";
import { entity, type PiiEntity } from "./types";

// (a period only after an abbreviation of up to three letters: "St. Gallen", "Ft. Worth")
const TOWN_WORD = String.raw`\p{Lu}(?:\p{L}{0,2}\.|[\p{L}\p{M}'’]{0,30}(?:-\p{L}[\p{L}\p{M}'’]{0,30}){0,3})`;
const CONNECTOR = "(?:de|do|da|das|dos|del|della|di|la|le|les|sur|sous|am|an|im|ob|der|en|upon|on|y|i|e)";
const TOWN = String.raw`${TOWN_WORD}(?:[ \t]{1,3}(?:${CONNECTOR}[ \t]{1,3}){0,2}${TOWN_WORD}){0,3}`;
const POSTCODE = String.raw`(?:[A-Z]{1,2}-)?\d{3,6}(?:-\d{3,5})?(?:[ ][A-Z]{2}(?![\p{L}]))?`;
/** a part that ends an address: "69003 Lyon", "Cluj-Napoca 400124", "CO 80807", "São Paulo - SP", "01426-001", "Tabernas (Almería)" */
const LOCALITY = new RegExp(
  String.raw`^(?:${POSTCODE}[ \t]{1,3}${TOWN}|${TOWN}(?:[ \t]{0,2}-[ \t]{0,2}[A-Z]{2})?[ \t]{1,3}\d{3,6}(?:-\d{3,4})?|[A-Z]{2}[ \t]{1,3}\d{5}(?:-\d{4})?|\d{5}-\d{3}|\d{4,6})(?:[ \t]{1,3}\([^()]{1,30}\))?(?=$|[ \t]{1,3}\p{Ll})`,
  "u",
);
/** a town and state before a postcode part: "São Paulo - SP", "Brasília-DF" */
const TOWN_STATE = new RegExp(String.raw`^${TOWN}[ \t]{0,2}-[ \t]{0,2}[A-Z]{2}$`, "u");
/** words that open a part of an address (as written, with their period) */
const ADDRESS_WORDS = new Set(
  (
    "Villa Plot Blk Block Lot Phase Unit Flat Apt Apt. Suite Tower House Bldg Building Floor No. No Moo Lieu-dit Quinta " +
    "Lugar Casilla P.O. PO Box Postbox Sector Ward District Dist. Sec. Ln. Lane Rd. Road Street St. Sokak Calle Rua Rue Via " +
    "Bd. Bd Boulevard Avenue Ave Ave. Gård Ortsteil Cortijo Hacienda Finca Rancho Estate Bloco Quadra SQN SQS Jalan Kampung " +
    "Barangay Purok Km Kampong Soi Moo. Bât. Bât Bâtiment Escalier Piso Andar Apto Apto. Top Stiege Tür County Route RD"
  ).split(" "),
);
/** what no address part says: a label of something else, a birth, a sentence's verbs */
const NOT_ADDRESS =
  /@|\b(?:tel|tél|phone|mobile|mob|fax|cell|dob|born|geboren|née|né|născut|născută|nacido|nacida|email|e-mail|ssn|iban|vat|invoice|order|attn|ph)\b/iu;
const PHONE_LIKE = /^\+?[\d ()./-]{7,}$/;
/** a date in a part ("nata il 17/10/1983", "11.11.1979"): a birth or an event, no address */
const DATE_IN = /(?<![\d./-])\d{1,2}[./-]\d{1,2}[./-](?:19|20)\d{2}(?![\d])|(?<![\d-])(?:19|20)\d{2}-\d{2}-\d{2}(?!\d)/;
/** a town before a year, not a postcode ("Baujahr 2019", "since 2021") */
const YEAR_AFTER = /\p{L}[ \t]{1,3}(?:19|20)\d{2}$/u;

interface Part {
  from: number;
  to: number;
  text: string;
}

/** The comma-separated parts of the line [from, to), trimmed, after the last ": " (a label's). */
function partsOf(text: string, from: number, to: number): Part[] {
  const label = text.lastIndexOf(": ", to - 1);
  const base = label >= from ? label + 2 : from;
  const parts: Part[] = [];
  for (let at = base; at <= to; ) {
    let k = text.indexOf(",", at);
    if (k < 0 || k > to) k = to;
    let a = at;
    let b = k;
    while (a < b && isBlank(text.charCodeAt(a))) a++;
    while (b > a && isBlank(text.charCodeAt(b - 1))) b--;
    // a sentence's period after a word is no part of it ("…, 53111 Bonn."); an abbreviation's is ("Rd.")
    const c = text.charCodeAt(b - 1);
    if (b - a > 5 && (c === 46 || c === 33 || c === 63 || c === 59 || c === 58) && letters4(text, b - 5)) b--;
    if (b > a) parts.push({ from: a, to: b, text: text.slice(a, b) });
    at = k + 1;
  }
  return parts;
}

const isBlank = (c: number): boolean => c === 32 || c === 9 || c === 13;
const isLetterCode = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c >= 0xc0;

function letters4(text: string, at: number): boolean {
  for (let k = at; k < at + 4; k++) if (!isLetterCode(text.charCodeAt(k))) return false;
  return true;
}

function hasDigit(text: string, from: number, to: number): boolean {
  for (let k = from; k < to; k++) {
    const c = text.charCodeAt(k);
    if (c >= 48 && c <= 57) return true;
  }
  return false;
}

const words = (s: string): string[] => s.split(/[ \t]+/);

/** A part an address may hold between its first part and its locality. */
function addressLike(p: Part): boolean {
  if (p.text.length > 60 || NOT_ADDRESS.test(p.text) || PHONE_LIKE.test(p.text) || DATE_IN.test(p.text)) return false;
  const ws = words(p.text);
  if (ws.length > 7) return false;
  // a sentence: three or more lower-case words that are no connectors ("he moved to …")
  let lower = 0;
  for (const w of ws) if (/^\p{Ll}{2,}$/u.test(w) && !CONNECTOR_WORDS.has(w)) lower++;
  return lower < 3;
}
const CONNECTOR_WORDS = new Set(
  "de do da das dos del della di la le les sur sous am an im ob der en upon on y i e s/n nr nr. bis ter mnt tee".split(" "),
);

/** A part that may start an address: a digit, or an address word first. */
function opensAddress(p: Part): boolean {
  return /\d/.test(p.text) || ADDRESS_WORDS.has(words(p.text)[0] as string);
}

/** Past the last end of a sentence inside a part ("Thanks Helen! Shipping to …"; not an abbreviation's "nr. 104"), or 0. */
function sentenceStart(text: string): number {
  for (let k = text.length - 2; k > 0; k--) {
    const c = text.charCodeAt(k);
    if (text.charCodeAt(k + 1) !== 32) continue;
    if (c === 33 || c === 63 || (c === 46 && k >= 4 && /^\p{L}{4}$/u.test(text.slice(k - 4, k)))) return k + 2;
  }
  return 0;
}

/**
 * Where an opening part's address starts: past a person's name before its house number ("Thabo
 * Mokoena 45 Vilakazi Street"), or past the words of a sentence before it ("Mail it to 4417 …").
 */
function openingStart(part: Part): number {
  const cut = sentenceStart(part.text);
  const p = cut > 0 ? { from: part.from + cut, to: part.to, text: part.text.slice(cut) } : part;
  if (ADDRESS_WORDS.has(words(p.text)[0] as string)) return p.from;
  const m = /^((?:\p{Lu}[\p{Ll}\p{M}'’-]+[ \t]){2,3})(\d{1,5}[A-Za-z]?[ \t]+\p{Lu})/u.exec(p.text);
  if (m) return p.from + (m[1] as string).length;
  return p.from + leadIn(p.text);
}

/**
 * The length of the words before an address in its opening part (a label or a sentence: "osoite
 * Puistokatu 3", "Hannah Haddad lives at Lindenweg 20", "Mail it to 4417 …", "… EH2 1JX to Calle
 * Mayor 92"): up to after the last lower-case word (no connector, street or unit word) before a
 * capitalised word, or else before a digit; 0 when there is none ("Tallinna mnt 22", "via Roma 12").
 */
function leadIn(text: string): number {
  let beforeCapital = -1;
  let beforeDigit = -1;
  for (const m of text.matchAll(/(?<![\p{L}\p{M}\p{N}])(\p{Ll}[\p{Ll}\p{M}]+)[ \t]+(?=(\p{Lu})|\d)/gu)) {
    const w = m[1] as string;
    if (STREET_WORDS_LOWER.has(w)) continue;
    const end = (m.index as number) + m[0].length;
    // a connector inside a name ("Calle de Alcalá") is no lead-in; before a street word, or after a
    // lower-case word, it is ("Trimiteți la Strada …", "The shop is on Bağdat Caddesi …")
    if (CONNECTOR_WORDS.has(w)) {
      const next = (/^[\p{L}\p{M}]+/u.exec(text.slice(end)) ?? [""])[0].toLowerCase();
      // the word before it: back over the blanks, then to the blank before that word
      let b = m.index as number;
      while (b > 0 && isBlank(text.charCodeAt(b - 1))) b--;
      let a = b;
      while (a > 0 && !isBlank(text.charCodeAt(a - 1))) a--;
      const insideName = b > a && /^\p{Lu}/u.test(text.slice(a, b)) && !STREET_WORDS_LOWER.has(next);
      if (insideName) continue;
    }
    if (m[2]) beforeCapital = end;
    else beforeDigit = end;
  }
  return beforeCapital >= 0 ? beforeCapital : Math.max(beforeDigit, 0);
}
const STREET_WORDS_LOWER = new Set(
  (
    "via rue rua calle viale corso strada ulica ul avenida avenue boulevard bulevar bulevardul piazza largo travessa " +
    "apto apt piso andar bloco lote casa sala loja depto dpto int interior esc escalera puerta planta etg bis ter"
  ).split(" "),
);

/**
 * Where part k ends an address (its locality's end: a sentence may go on after it, "… TX 79022
 * please"), or -1: a locality, or a known town at the line's end or before a contact part.
 */
function addressEnd(parts: Part[], k: number): number {
  const p = parts[k] as Part;
  // every locality holds three digits in a row, or is a known town (a capital first, short)
  if (!threeDigits(p.text)) {
    if (p.text.length > 40 || !/^\p{Lu}/u.test(p.text) || !isPlaceName(p.text)) return -1;
    return k === parts.length - 1 || NOT_ADDRESS.test((parts[k + 1] as Part).text) ? p.to : -1;
  }
  const m = LOCALITY.exec(p.text);
  if (m) {
    const end = p.from + m[0].length;
    // a postcode alone only after a town and state ("São Paulo - SP, 01426-001"), a state and ZIP only after a town
    if (/^\d+(?:-\d+)?$/.test(m[0])) return k > 0 && TOWN_STATE.test((parts[k - 1] as Part).text) ? end : -1;
    if (/^[A-Z]{2}[ \t]/.test(m[0])) return k > 0 && /^\p{Lu}/u.test((parts[k - 1] as Part).text) ? end : -1;
    return YEAR_AFTER.test(m[0]) ? -1 : end;
  }
  return -1;
}

/** three digits in a row: the pattern's native scan, about five times as fast as a loop over the characters here */
const THREE_DIGITS = /\d{3}/;

function threeDigits(s: string): boolean {
  return THREE_DIGITS.test(s);
}

/** Addresses of one line each, as chains of parts (see above). */
export function findAddressChains(text: string): PiiEntity[] {
  if (!text.includes(",")) return [];
  const out: PiiEntity[] = [];
  for (let from = 0; from < text.length; ) {
    let to = text.indexOf("\n", from);
    if (to < 0) to = text.length;
    const comma = text.indexOf(",", from);
    // (every chain holds a digit: in its locality, or in the part that opens it but an address word's)
    if (comma >= 0 && comma < to && hasDigit(text, from, to)) chainsOfLine(text, from, to, out);
    from = to + 1;
  }
  return out;
}

function chainsOfLine(text: string, from: number, to: number, out: PiiEntity[]): void {
  const parts = partsOf(text, from, to);
  for (let k = 1; k < parts.length; k++) {
    const end = addressEnd(parts, k);
    if (end < 0) continue;
    // back over the parts an address holds; the chain starts at the earliest that opens one
    let opening: Part | null = null;
    for (let j = k - 1; j >= 0 && k - j <= 5; j--) {
      const p = parts[j] as Part;
      // an earlier address's locality, a sentence going on after it ("08019 Barcelona to 94 rue Nationale")
      const earlier = LOCALITY.exec(p.text);
      const rest = earlier ? p.text.slice(earlier[0].length).trimStart() : "";
      if (earlier && rest) {
        const tail = { from: p.to - rest.length, to: p.to, text: rest };
        if (addressLike(tail) && opensAddress(tail)) opening = tail;
        break;
      }
      if (!addressLike(p)) break;
      if (opensAddress(p)) {
        opening = p;
        // words of a sentence before it: the address starts there ("… EH2 1JX to Calle Mayor 92")
        if (leadIn(p.text) > 0) break;
      }
    }
    if (!opening) continue;
    const start = openingStart(opening);
    out.push(entity("address", text, start, end, 0.85));
  }
}
