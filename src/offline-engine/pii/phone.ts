/**
 * Phone numbers in international (+CC / 00CC) and common national formats (NANP, UK, EU).
 * A candidate is any run of digits and separators; the validator decides from its shape, its
 * digit count (E.164 allows 7..15) and words such as "call" or "tel" just before it.
 */
import { isSpace } from "./chars";
import { entity, type PiiEntity } from "./types";

const CANDIDATE =
  /(?:(?<![\p{L}\p{N}+\-./]|[^\p{L}]:)|(?<=\p{L}-))(?:\+|00)?\(?\d[\d(). \u00A0-]{5,22}\d(?:\s*(?:ext\.?|x|#)\s*\d{1,6})?(?![\p{N}]|\.\d|-\d|\/\d)/giu;
const CONTEXT =
  /\b(?:phone|tel|telephone|call|mobile|cell|cellphone|fax|whatsapp|text|sms|reach|contact|number|ph|mob|hotline|landline|dial|pager)\b[.:#]?\s*(?:(?:me|us|him|her|is|at|on|to|back|number|no\.?|me at)\s*){0,3}[:#]?\s*\(?$/i;
/**
 * Labels of a number in the languages the engine reads ("Tél", "tlf", "puh", "телефон", "τηλ",
 * "电话", "फ़ोन"...), before it (with a colon or not) or right after it ("… (office)", "… mobile").
 */
const LOCAL_LABEL =
  "tel|tél|tele?fon(?:as|o|e)?|teléfono|téléphone|tlf|puh(?:elin)?|mobil(?:e|tel|iltelefon)?|handy|gsm|office|kontor|bureau|work|home|landline|fax|telefax|cell|numer(?:o|oon)?|número|nummer|számo?m?|szám|phone|whatsapp|телефон|тел|номер|моб|τηλ|τηλέφωνο|κιν|טלפון|נייד|هاتف|جوال|फ़ोन|फोन|नंबर|मोबाइल|电话|手机|電話|携帯|전화|휴대폰";
const LABEL_BEFORE = new RegExp(`(?:^|[^\\p{L}])(?:${LOCAL_LABEL})\\.?\\s*(?:\\([^)]{1,12}\\))?\\s*[:：#-]?\\s*\\(?$`, "iu");
const LABEL_AFTER = new RegExp(`^[ \\t]*(?:[(,/-][ \\t]*)?(?:${LOCAL_LABEL})(?![\\p{L}])`, "iu");
/** A label glued to the number by a hyphen ("fax-0 40 3218 771", "Mobile-+420 …"): the word before the hyphen. */
const GLUED_LABEL = new RegExp(`(?:^|[^\\p{L}])(?:${LOCAL_LABEL})-$`, "iu");
/** European groupings: groups of two or three digits (the first up to four), one kind of separator, 8 to 10 digits. */
const EUROPEAN = /^(?:0|\d{2,4})(?:([ .-])\d{2,3})(?:\1\d{2,3}){1,3}$/;
const NANP = /^(?:\+?1[\s.-]?)?(?:\(\d{3}\)\s?|\d{3}[\s.-])\d{3}[\s.-]\d{4}$/;
const DATE_SHAPE = /^(?:\d{1,2}[.\- ]\d{1,2}[.\- ](?:19|20)\d{2}|(?:19|20)\d{2}[.\- ]\d{1,2}[.\- ]\d{1,2})$/;
// 3-2-4 with dashes is how SSNs are written, never phone numbers
const SSN_SHAPE = /^\d{3}-\d{2}-\d{4}$/;
const EXTENSION = /(?<!\s)\s*(?:ext\.?|x|#)\s*\d{1,6}$/i;

export function findPhoneNumbers(text: string): PiiEntity[] {
  const out: PiiEntity[] = [];
  for (const m of text.matchAll(CANDIDATE)) {
    let raw = m[0];
    // a leading "(" belongs to the number only when it closes later
    let start = m.index;
    if (raw.startsWith("(") && !raw.includes(")")) {
      raw = raw.slice(1);
      start++;
    }
    // after "word-": only a label glued to its number ("fax-0 40 3218 771"), not a reference ("INV-2024 …")
    if (text.charCodeAt(start - 1) === 45 && !GLUED_LABEL.test(text.slice(Math.max(0, start - 16), start))) continue;
    const score = phoneScore(raw, text, start);
    if (score > 0) out.push(entity("phone_number", text, start, start + raw.length, score));
  }
  return out;
}

/**
 * Score of a candidate at `start` in `text`. One pass over the characters counts digits,
 * parentheses and the groups between separators (whitespace, ".", "(", ")", "-"); the context
 * words before the number are looked at only when the shape alone does not settle it.
 */
function phoneScore(raw: string, text: string, start: number): number {
  let main = raw;
  if (raw.includes("x") || raw.includes("X") || raw.includes("#")) main = raw.replace(EXTENSION, "");
  // the trunk zero in brackets after a country code ("+33 (0)1 42 68 53 00") is no group of its own
  if (main.includes("(0)")) main = main.replace(/^((?:\+|00)\d{1,3}) ?\(0\) ?/, "$1 ");
  const international = main.startsWith("+") || main.startsWith("00");
  // groups are counted after the international prefix
  const from = main.startsWith("+") ? 1 : main.startsWith("00") ? 2 : 0;
  let digits = 0;
  let open = 0;
  let close = 0;
  let previousSpace = false;
  let groups = 0;
  let group = 0;
  let shortLaterGroup = false;
  for (let i = 0; i < main.length; i++) {
    const c = main.charCodeAt(i);
    const space = isSpace(c);
    // two whitespace characters in a row: two numbers side by side
    if (space && previousSpace) return 0;
    previousSpace = space;
    if (c >= 48 && c <= 57) digits++;
    else if (c === 40) open++;
    else if (c === 41) close++;
    if (i < from) continue;
    if (space || c === 46 || c === 40 || c === 41 || c === 45) {
      if (group > 0) {
        if (groups >= 2 && group < 2) shortLaterGroup = true;
        groups++;
      }
      group = 0;
    } else group++;
  }
  if (group > 0) {
    if (groups >= 2 && group < 2) shortLaterGroup = true;
    groups++;
  }
  if (digits < 7 || digits > 15) return 0;
  if (open !== close) return 0;
  // single digits after the first two groups are lists or versions, not phone numbers
  if (shortLaterGroup || groups > 6) return 0;
  // (every test above and these two give 0 alike: the shapes are tested once the counts let the number through)
  if (DATE_SHAPE.test(main) || SSN_SHAPE.test(main)) return 0;
  const context = () => {
    const before = text.slice(Math.max(0, start - 30), start);
    if (CONTEXT.test(before) || LABEL_BEFORE.test(before)) return true;
    return LABEL_AFTER.test(text.slice(start + raw.length, start + raw.length + 16));
  };
  if (international) return digits >= 8 ? 0.9 + (context() ? 0.05 : 0) : 0;
  if (NANP.test(main)) return 0.88 + (context() ? 0.05 : 0);
  if (/^\(\d{2,5}\)/.test(main) && digits >= 8) return 0.85 + (context() ? 0.05 : 0);
  // trunk prefix 0 with separators: UK "020 7946 0958", FR "01 23 45 67 89", DE "030 1234567"
  if (/^0[1-9]/.test(main) && groups >= 2 && digits >= 9 && digits <= 12) return 0.8 + (context() ? 0.05 : 0);
  if ((groups >= 2 || digits === 10) && context()) return 0.75;
  // "22 41 87 36", "33.12.47.90", "948 22 117": how European numbers are written, no label needed
  if (digits >= 8 && digits <= 10 && groups >= 3 && EUROPEAN.test(main)) return 0.72;
  // one run of digits ("call me back 0117133") only right after a word that says it is a number
  if (groups === 1 && digits <= 12 && context()) return 0.7;
  return 0;
}
