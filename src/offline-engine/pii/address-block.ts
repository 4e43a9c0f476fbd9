/**
 * Addresses written as a block of lines, read by their layout: a locality line (a postcode and
 * town, a town and postcode with or without a state: "Glasgow G2 4PL", "Chicago IL 60616", or a
 * country and postcode under a town line: "Rīga\nLatvia LV-1006"), and above it up to three
 * lines that an address has there: a street line with a house number (whatever its street word,
 * or none: "8 Nyhavn", "Narva mnt 7", "Box 1142"), a unit line ("Suite 500", "Apt. 9", "Top 4"),
 * a town line. The block runs from its first such line to the locality and a country line under
 * it. On one line: a name and a number, a comma, a postcode and a town ("Pärnu maantee 10, 10148
 * Tallinn"). A line that is a sentence (more than six words, or no capitalised word) ends the walk.
 */
import { DATE_LIKE } from "./address";
import { COUNTRIES } from "./address-world";
import { isEnglishWord, isStopword } from "./gazetteer";
import { entity, type PiiEntity } from "./types";

const TOWN_WORD = "\\p{Lu}[\\p{L}\\p{M}'’]*(?:-\\p{L}[\\p{L}\\p{M}'’]*){0,3}";
const TOWN = `${TOWN_WORD}(?:[ \\t]+(?:(?:de|del|am|an|nad|la|le|sur|upon|on)[ \\t]+)?${TOWN_WORD}){0,2}`;
/** a town as a line has it: more particles ("Freiburg im Breisgau") and a prefix ("TP. Hồ Chí Minh", Vietnamese: city; "Co. Cork") */
const LINE_TOWN = `(?:(?:TP|Tp|Co)\\.[ \\t]+)?${TOWN_WORD}(?:[ \\t]+(?:(?:de|del|am|an|im|in|bei|nad|la|le|sur|upon|on)[ \\t]+)?${TOWN_WORD}){0,2}`;
const POSTCODE = "(?:[A-Z]{2}-?)?\\d{2,6}(?:[- ]\\d{2,4})?";
/** UK, Canadian and Irish (Eircode) postcodes */
const ALNUM_POSTCODE = "[A-Z]{1,2}\\d[A-Z\\d]?[ ]?\\d[A-Z]{2}|[A-Z]\\d[A-Z][ ]?\\d[A-Z]\\d|[A-Z]\\d{2}[ ]?[A-Z\\d]{4}";

/** "00100 Helsinki", "130 00 Praha 3", "LV-1050 Rīga", "1051 København K" */
const POSTCODE_TOWN_LINE = new RegExp(`^(?:${POSTCODE})[ \\t]+${LINE_TOWN}(?:[ \\t]+(?:\\d{1,2}|[A-Z]))?[ \\t]*$`, "u");
/** "Glasgow G2 4PL", "Vancouver BC V6C 3T4", "Chicago IL 60616", "Санкт-Петербург 191011", "Rīga LV-1011" */
const TOWN_POSTCODE_LINE = new RegExp(
  `^${LINE_TOWN}(?:,?[ \\t]+[A-Z]{2})?,?[ \\t]+(?:${ALNUM_POSTCODE}|${POSTCODE})(?:-\\d{4})?[ \\t]*$`,
  "u",
);
/** "Latvia LV-1006", "Estonia 10141" (under a town line) */
const COUNTRY_POSTCODE_LINE = new RegExp(`^(?:${COUNTRIES}),?[ \\t]+${POSTCODE}[ \\t]*$`, "u");
const COUNTRY_LINE = new RegExp(`^(?:${COUNTRIES})[ \\t]*$`, "u");
const TOWN_LINE = new RegExp(`^${LINE_TOWN}[ \\t]*$`, "u");
/** a district or town line between a street and its locality: "14th Cross, Indiranagar", "Bela Vista, São Paulo - SP", "Co. Cork" */
const DISTRICT_LINE = new RegExp(
  `^(?:\\d{1,3}(?:st|nd|rd|th)[ \\t]+)?${LINE_TOWN}(?:[ \\t]*[,–/-][ \\t]*(?:${LINE_TOWN}|[A-Z]{2}(?![\\p{L}]))){0,3}[ \\t]*$`,
  "u",
);
/** a postcode alone on its line, under a town line: "01310-200", "EH9 1HG", "P31 X2T6", "200030" */
const LONE_POSTCODE_LINE = new RegExp(`^(?:\\d{5}-\\d{3}|${ALNUM_POSTCODE}|\\d{4,6}|\\d{3} \\d{2}|[A-Z]{2}-\\d{4,5})$`, "u");
/** capitalised words that start a street's name, not a lead ("Am Sonnenhang 4a", "Op de Kamp 3") */
const STREET_LEADS = new Set(
  "am an auf im in zum zur unter hinter vor op aan bij na pod nad u v za pri při flat apt apartment suite unit room".split(" "),
);
const UNIT_LINE =
  /^(?:Apt\.?|Apartment|Appartement|Appartamento|Suite|Ste\.?|Flat|Floor|Unit|Room|Top|Stiege|Whg\.?|Wohnung|lgh|Piso|Dpto\.?|Bloc|Building|Bldg\.?)[ \t]?#?[\p{L}\p{N}-]{1,6}[ \t]*$/u;
/** a house number: "12", "41b", "21 A", "76-12", "45/47", "14." */
const HOUSE_NUMBER =
  /(?<![\p{L}\p{N}])\d{1,4}(?:[ ]?[A-Za-z](?![\p{L}\p{N}]))?(?:[ ]?[/-][ ]?\d{1,4}[A-Za-z]?)?\.?(?![\p{L}\p{N}])/u;
/** one line: a name and a number, a comma, a postcode and a town */
const ONE_LINE = new RegExp(
  `(?<![\\p{L}\\p{N}])\\p{Lu}[\\p{L}\\p{M}'’.-]{1,39}(?![\\p{L}\\p{M}'’.-])(?:[ \\t][\\p{L}\\p{M}'’.-]{1,40}(?![\\p{L}\\p{M}'’.-])){0,3}[ \\t]\\d{1,4}[A-Za-z]?(?:[/-]\\d{1,4})?,[ \\t]*(?:[A-Z]{2}-?)?(?:\\d{4,6}|\\d{3} \\d{2}|\\d{2}-\\d{3})[ \\t]+${TOWN}`,
  "gu",
);

/** one line, the town before the postcode: "Tērbatas 14-3, Rīga, LV-1011" (a country's letters before the postcode) */
const ONE_LINE_TOWN_FIRST = new RegExp(
  `(?<![\\p{L}\\p{N}])\\p{Lu}[\\p{L}\\p{M}'’.-]{1,39}(?![\\p{L}\\p{M}'’.-])(?:[ \\t][\\p{L}\\p{M}'’.-]{1,40}(?![\\p{L}\\p{M}'’.-])){0,2}[ \\t]\\d{1,4}[A-Za-z]?(?:[/-]\\d{1,4})?,[ \\t]*${TOWN},[ \\t]*[A-Z]{2}-\\d{4,5}(?![\\p{L}\\p{N}])`,
  "gu",
);

const COUNTRY_POSTCODE = /[A-Z]{2}-\d{4}/;
const isDigitAt = (text: string, at: number): boolean => {
  const c = text.charCodeAt(at);
  return c >= 48 && c <= 57;
};
const isCapitalAt = (text: string, at: number): boolean => {
  const c = text.charCodeAt(at);
  return c >= 65 && c <= 90;
};

/**
 * Whether ONE_LINE's house number's last character, its comma and its postcode's first digit occur
 * (/\d[A-Za-z]?,[ \t]*(?:[A-Z]{2}-?)?\d/): looked for at each comma (indexOf), not by a pattern along
 * the text (about 0.6 µs a KB).
 */
function numberCommaPostcode(text: string): boolean {
  for (let p = text.indexOf(","); p >= 0; p = text.indexOf(",", p + 1)) {
    const letter = (text.charCodeAt(p - 1) | 32) >= 97 && (text.charCodeAt(p - 1) | 32) <= 122;
    if (!isDigitAt(text, p - 1) && !(letter && isDigitAt(text, p - 2))) continue;
    let k = p + 1;
    while (text.charCodeAt(k) === 32 || text.charCodeAt(k) === 9) k++;
    if (isDigitAt(text, k)) return true;
    if (!isCapitalAt(text, k) || !isCapitalAt(text, k + 1)) continue;
    if (isDigitAt(text, k + 2) || (text.charCodeAt(k + 2) === 45 && isDigitAt(text, k + 3))) return true;
  }
  return false;
}

interface Line {
  start: number;
  end: number;
  text: string;
}

function linesOf(text: string): Line[] {
  const lines: Line[] = [];
  let start = 0;
  for (;;) {
    const nl = text.indexOf("\n", start);
    const end = nl < 0 ? text.length : nl;
    const raw = text.slice(start, end);
    const lead = raw.length - raw.trimStart().length;
    lines.push({ start: start + lead, end: start + raw.trimEnd().length, text: raw.trim() });
    if (nl < 0) return lines;
    start = nl + 1;
  }
}

/**
 * Where the street part of a line starts: the first segment (between ", " and ": ") holding a
 * house number, less the everyday and function words that lead it ("Send it to Vilniaus g. 31-7"),
 * with a street abbreviation's segment before it ("ул. Ленина, д. 12"); -1 when the line is no street line.
 */
function streetStart(line: Line): number {
  const segments = [...line.text.matchAll(/[^,:;]+/g)];
  for (let k = 0; k < segments.length; k++) {
    const seg = segments[k] as RegExpMatchArray;
    if (!HOUSE_NUMBER.test(seg[0])) continue;
    const words = seg[0].trim().split(/[ \t]+/);
    // the number alone after the street's name: "вул. Хрещатик, 22", "Av. Paulista, 1578"
    const previous = segments[k - 1];
    if (words.length === 1 && /^\d/.test(words[0] as string) && previous && k - 1 === 0) {
      const name = previous[0].trim().split(/[ \t]+/);
      if (name.length <= 4 && (/^\p{Ll}{1,4}\.$/u.test(name[0] as string) || name.every((w) => /^\p{Lu}/u.test(w))))
        return line.start + (previous.index as number) + previous[0].search(/\S/);
    }
    if (words.length > 6 || !words.some((w) => /^\p{Lu}/u.test(w) || /^\p{Ll}{1,4}\.$/u.test(w))) return -1;
    // a phone number or a date is no house number
    if ((seg[0].match(/\d/g) ?? []).length > 8) return -1;
    let skip = 0;
    while (skip < words.length - 1 && /^\p{L}/u.test(words[skip] as string) && isLead(words[skip] as string)) skip++;
    let at = (seg.index as number) + seg[0].indexOf(words[skip] as string);
    const before = segments[k - 1];
    if (skip === 0 && before && /^\s*\p{Ll}{1,4}\.\s/u.test(before[0])) at = (before.index as number) + before[0].search(/\S/);
    return line.start + at;
  }
  return -1;
}

function isLead(word: string): boolean {
  let n = word.length;
  while (n > 0 && (word[n - 1] === "." || word[n - 1] === ":")) n--;
  const bare = word.slice(0, n);
  if (n === word.length && STREET_LEADS.has(bare.toLowerCase()) && /^\p{Lu}/u.test(bare)) return false;
  return /^\p{Ll}/u.test(bare)
    ? isStopword(bare) || isEnglishWord(bare)
    : isStopword(bare) || (isEnglishWord(bare) && !/\d/.test(bare));
}

function localityKind(text: string): "postcode" | "country" | "alone" | null {
  // a sentence's full stop or a comma may end the line
  const line = text.replace(/[.,]$/, "");
  if (COUNTRY_POSTCODE_LINE.test(line)) return "country";
  if (POSTCODE_TOWN_LINE.test(line) || TOWN_POSTCODE_LINE.test(line)) return "postcode";
  if (LONE_POSTCODE_LINE.test(line)) return "alone";
  return null;
}

function findBlocks(text: string, out: PiiEntity[]): void {
  const lines = linesOf(text);
  for (let i = 1; i < lines.length; i++) {
    const locality = lines[i] as Line;
    const kind = localityKind(locality.text);
    if (kind === null) continue;
    let start = -1;
    let hasStreet = false;
    // district and town lines between the street and the locality (a postcode alone needs one)
    let districts = 0;
    for (let k = i - 1, n = 0; k >= 0 && n < 4; k--, n++) {
      const line = lines[k] as Line;
      if (n === 0 && kind === "country" && TOWN_LINE.test(line.text)) continue;
      if (UNIT_LINE.test(line.text)) {
        start = line.start;
        continue;
      }
      const s = streetStart(line);
      if (s < 0 && !hasStreet && districts < 2 && DISTRICT_LINE.test(line.text)) {
        districts++;
        continue;
      }
      if (s < 0 || (kind === "alone" && districts === 0)) break;
      start = s;
      hasStreet = true;
      // a street line that starts after a label or lead words is the block's first line
      if (s > line.start) break;
    }
    if (!hasStreet || start < 0) continue;
    let end = /[.,]$/.test(locality.text) ? locality.end - 1 : locality.end;
    const next = lines[i + 1];
    if (next && COUNTRY_LINE.test(next.text)) end = next.end;
    out.push(entity("address", text, start, end, 0.93));
  }
}

export function findAddressBlocks(text: string): PiiEntity[] {
  const out: PiiEntity[] = [];
  if (text.includes("\n")) findBlocks(text, out);
  if (text.includes(","))
    for (const re of [ONE_LINE, ONE_LINE_TOWN_FIRST]) {
      // the town-first line ends in a country's letters and a postcode ("LV-1011"): run only where one occurs
      if (re === ONE_LINE_TOWN_FIRST && !COUNTRY_POSTCODE.test(text)) continue;
      // the one-line address has a house number, a comma and a postcode's digits in a row: one quick scan for that first
      if (re === ONE_LINE && !numberCommaPostcode(text)) continue;
      for (const m of text.matchAll(re)) {
        // "June 18, 1965 Phone", "Tue Mar 04, 2026\nHas": a date, its year no postcode
        if (DATE_LIKE.test(m[0])) continue;
        const words = m[0].split(/[ \t]+/);
        // the address starts after the last function word ("Hannah Haddad lives at Lindenweg 20, …")
        let skip = 0;
        for (let k = 0; k < words.length - 3; k++) if (isLead(words[k] as string)) skip = k + 1;
        const at = (m.index as number) + m[0].indexOf(words[skip] as string);
        out.push(entity("address", text, at, (m.index as number) + m[0].length, 0.9));
      }
    }
  return out;
}
