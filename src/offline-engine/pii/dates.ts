/**
 * Dates of birth: a calendar date (numeric or with a month name, English) that the text ties to a
 * birth ("born", "DOB", "date of birth", "birthday"). A date with no such tie is an appointment or
 * an order date, not personal data, and is left alone.
 */
import { entity, type PiiEntity } from "./types";

const MONTH =
  "(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)";
const DAY = "(?:0?[1-9]|[12]\\d|3[01])(?:st|nd|rd|th)?";
const DATE = new RegExp(
  [
    "(?<![\\d/.-])(?:0?[1-9]|[12]\\d|3[01])[/.-](?:0?[1-9]|[12]\\d|3[01])[/.-](?:\\d{4}|\\d{2})(?![\\d/.-]\\d)",
    "(?<![\\d/.-])(?:19|20)\\d{2}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\\d|3[01])(?!\\d)",
    `\\b${MONTH}\\.?\\s+${DAY},?\\s+(?:19|20)\\d{2}\\b`,
    `\\b${DAY}\\s+(?:of\\s+)?${MONTH}\\.?,?\\s+(?:19|20)\\d{2}\\b`,
  ].join("|"),
  "gi",
);
// "D.O.B.:" carries its own dots, so it is matched apart from the words that end at a boundary
const BIRTH_CONTEXT =
  /(?:\b(?:born|birth|birthdate|birthday|dob|geboren|né|née|nacido|nacida|nato|nata)\b|\bd\.\s?o\.\s?b\.?|\bb\.)[^.!?\n]{0,30}$/i;

/**
 * A text that has none of the words of BIRTH_CONTEXT anywhere (the same alternatives without their
 * word boundaries, same flags) has no date of birth: most texts are settled by this one scan.
 */
const BIRTH_WORD = /born|birth|dob|geboren|né|nacid|nat[oa]|d\.\s?o\.\s?b|b\./i;

export function findDatesOfBirth(text: string): PiiEntity[] {
  const out: PiiEntity[] = [];
  if (!BIRTH_WORD.test(text)) return out;
  for (const m of text.matchAll(DATE)) {
    const before = text.slice(Math.max(0, m.index - 45), m.index);
    if (!BIRTH_CONTEXT.test(before)) continue;
    out.push(entity("date_of_birth", text, m.index, m.index + m[0].length, 0.92));
  }
  return out;
}
