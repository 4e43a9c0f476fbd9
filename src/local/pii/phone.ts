/**
 * Phone numbers in international (+CC / 00CC) and common national formats (NANP, UK, EU).
 * A candidate is any run of digits and separators; the validator decides from its shape, its
 * digit count (E.164 allows 7..15) and words such as "call" or "tel" just before it.
 */
import { entity, type PiiEntity } from "./types";

const CANDIDATE =
  /(?<![\p{L}\p{N}+\-./:])(?:\+|00)?\(?\d[\d(). \u00A0-]{5,22}\d(?:\s*(?:ext\.?|x|#)\s*\d{1,6})?(?![\p{N}]|\.\d|-\d|\/\d)/giu;
const CONTEXT =
  /\b(?:phone|tel|telephone|call|mobile|cell|cellphone|fax|whatsapp|text|sms|reach|contact|number|ph|mob|hotline|landline|dial|pager)\b[.:#]?\s*(?:(?:me|us|him|her|is|at|on|number|no\.?|me at)\s*){0,3}[:#]?\s*\(?$/i;
const NANP = /^(?:\+?1[\s.-]?)?(?:\(\d{3}\)\s?|\d{3}[\s.-])\d{3}[\s.-]\d{4}$/;
const DATE_SHAPE = /^(?:\d{1,2}[.\- ]\d{1,2}[.\- ](?:19|20)\d{2}|(?:19|20)\d{2}[.\- ]\d{1,2}[.\- ]\d{1,2})$/;
// 3-2-4 with dashes is how SSNs are written, never phone numbers
const SSN_SHAPE = /^\d{3}-\d{2}-\d{4}$/;
const EXTENSION = /\s*(?:ext\.?|x|#)\s*\d{1,6}$/i;

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
    const score = phoneScore(raw, CONTEXT.test(text.slice(Math.max(0, start - 30), start)));
    if (score > 0) out.push(entity("phone_number", text, start, start + raw.length, score));
  }
  return out;
}

function phoneScore(raw: string, context: boolean): number {
  const main = raw.replace(EXTENSION, "");
  if (/\s{2,}/.test(main) || DATE_SHAPE.test(main) || SSN_SHAPE.test(main)) return 0;
  const digits = main.replace(/\D/g, "");
  if (digits.length < 7 || digits.length > 15) return 0;
  if ((main.match(/\(/g)?.length ?? 0) !== (main.match(/\)/g)?.length ?? 0)) return 0;
  const international = main.startsWith("+") || main.startsWith("00");
  const groups = main
    .replace(/^(?:\+|00)/, "")
    .split(/[\s.()\u00A0-]+/)
    .filter(Boolean);
  // single digits after the first two groups are lists or versions, not phone numbers
  if (groups.slice(2).some((g) => g.length < 2) || groups.length > 6) return 0;
  const bonus = context ? 0.05 : 0;
  if (international) return digits.length >= 8 ? 0.9 + bonus : 0;
  if (NANP.test(main)) return 0.88 + bonus;
  if (/^\(\d{2,5}\)/.test(main) && digits.length >= 8) return 0.85 + bonus;
  // trunk prefix 0 with separators: UK "020 7946 0958", FR "01 23 45 67 89", DE "030 1234567"
  if (/^0[1-9]/.test(main) && groups.length >= 2 && digits.length >= 9 && digits.length <= 12) return 0.8 + bonus;
  if (context && (groups.length >= 2 || digits.length === 10)) return 0.75;
  return 0;
}
