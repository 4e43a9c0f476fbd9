/**
 * Numbers a person spells out (issue 41: "read text as a person would"): digits one by one with
 * blanks between ("4 1 1 1  1 1 1 1 …", "0 7 9 1 1  1 2 3 4 5 6"), and digits said as words, as a
 * voice-mail transcript or a dictated message writes them ("six one seven, five five five, zero one
 * nine two", "double five", in English, German, French, Spanish, Italian and Portuguese). The digits
 * read are then judged as the written forms are: 13 to 19 that pass Luhn are a card; nine that
 * follow the issuance rules, after an SSN word, an SSN; 7 to 15 after a phone's label or a word of
 * calling (or, said as words, anywhere: nobody reads seven digits aloud but a number) a phone.
 */
import { luhnValid, ssnValid } from "./structured";
import { entity, type PiiEntity } from "./types";
import { WordFilter } from "./word-filter";

const DIGIT_WORDS: Record<string, number> = {};
const WORDS_BY_DIGIT = [
  "zero oh o null zéro cero zero nought", // 0
  "one eins un uno um", // 1
  "two zwei deux dos due dois", // 2
  "three drei trois tres tre três", // 3
  "four vier quatre cuatro quattro quatro", // 4
  "five fünf funf cinq cinco cinque", // 5
  "six sechs seis sei", // 6
  "seven sieben sept siete sette sete", // 7
  "eight acht huit ocho otto oito", // 8
  "nine neun neuf nueve nove", // 9
];
WORDS_BY_DIGIT.forEach((words, digit) => {
  for (const w of words.split(" ")) DIGIT_WORDS[w] = digit;
});
/** "double five" = 55, "triple nine" = 999 */
const REPEATS: Record<string, number> = { double: 2, triple: 3, doppel: 2, doble: 2, doppio: 2 };

/** the digit words and repeats, for a quick look at each word of a text */
const SPOKEN = new WordFilter([...Object.keys(DIGIT_WORDS), ...Object.keys(REPEATS)]);

const isLetter = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 0xc0 && c !== 0xd7 && c !== 0xf7);

/** Whether text[from, to) is what stands between two spoken digits: blanks, and one ",", "." or "-" before a blank. */
function digitGap(text: string, from: number, to: number): boolean {
  if (to - from < 1 || to - from > 7) return false;
  let marks = 0;
  for (let k = from; k < to; k++) {
    const c = text.charCodeAt(k);
    if (c === 44 || c === 46 || c === 45) marks++;
    else if (c !== 32 && c !== 9) return false;
  }
  const last = text.charCodeAt(to - 1);
  return marks <= 1 && (last === 32 || last === 9);
}

/** The word at [from, to) as a digit word or a repeat, lower case, or null. */
function digitWordAt(text: string, from: number, to: number): string | null {
  return to - from <= 7 && SPOKEN.hasAt(text, from, to) ? text.slice(from, to).toLowerCase() : null;
}

/** Runs of seven or more digit words in a row (blanks, a comma, a dot or a dash between): [start, end, digits]. */
function spokenRuns(text: string): [number, number, string][] {
  const runs: [number, number, string][] = [];
  let runStart = -1;
  let runEnd = -1;
  let words = 0;
  let digits = "";
  let repeat = 1;
  const close = () => {
    if (words >= 7 && repeat === 1) runs.push([runStart, runEnd, digits]);
    runStart = -1;
    words = 0;
    digits = "";
    repeat = 1;
  };
  for (let i = 0; i < text.length; ) {
    if (!isLetter(text.charCodeAt(i))) {
      i++;
      continue;
    }
    const from = i;
    while (i < text.length && isLetter(text.charCodeAt(i))) i++;
    const w = digitWordAt(text, from, i);
    if (w === null) {
      if (runStart >= 0) close();
      continue;
    }
    if (runStart >= 0 && !digitGap(text, runEnd, from)) close();
    if (runStart < 0) runStart = from;
    runEnd = i;
    words++;
    if (w in REPEATS) repeat = REPEATS[w] as number;
    else {
      digits += String(DIGIT_WORDS[w]).repeat(repeat);
      repeat = 1;
    }
  }
  if (runStart >= 0) close();
  return runs;
}

/** single digits with one or two blanks (or a dash) between */
const DIGIT_RUN = /(?<![\p{N}])\d(?:(?:[ \t]{1,2}|[ \t]?-[ \t]?)\d){6,18}(?![\p{N}])/gu;

const CALL_CONTEXT =
  /(?:phone|tel|telephone|call|ring|mobile|cell|number|fax|whatsapp|text|sms|reach|dial|nummer|numéro|número|numero|telefon|téléphone|teléfono|telefono|handy|portable|móvil|cellulare)[^\n\d]{0,24}$/iu;
const CARD_CONTEXT = /(?:card|visa|mastercard|amex|credit|debit|karte|carte|tarjeta|carta|cartão)[^\n\d]{0,24}$/iu;
const SSN_CONTEXT = /(?:ssn|social security|social|soc\.? sec)[^\n\d]{0,24}$/iu;

const COUNTING = "0123456789012345678901234";
const COUNTING_DOWN = "9876543210987654321098765";

/** The kind of value `digits` read at `start` are, with its score, or null. */
function judge(text: string, start: number, digits: string, said: boolean): [PiiEntity["type"], number] | null {
  // counting ("one, two, three, …") is no number
  if (COUNTING.includes(digits) || COUNTING_DOWN.includes(digits)) return null;
  const before = text.slice(Math.max(0, start - 40), start);
  const n = digits.length;
  // (digits one by one make a card only after a card's word: a list of small numbers passes Luhn one time in ten)
  const cardWord = CARD_CONTEXT.test(before);
  if (n >= 13 && n <= 19 && luhnValid(digits) && (said || cardWord)) return ["credit_card", cardWord ? 0.95 : 0.85];
  if (n === 9 && SSN_CONTEXT.test(before) && ssnValid(digits.slice(0, 3), digits.slice(3, 5), digits.slice(5)))
    return ["ssn", 0.95];
  if (n >= 7 && n <= 15 && (said || CALL_CONTEXT.test(before))) return ["phone_number", 0.85];
  return null;
}

/** Cards, SSNs and phones spelled out (see above). */
export function findSpelledNumbers(text: string): PiiEntity[] {
  const out: PiiEntity[] = [];
  for (const m of text.matchAll(DIGIT_RUN)) {
    const digits = m[0].replace(/\D/g, "");
    const kind = judge(text, m.index as number, digits, false);
    if (kind) out.push(entity(kind[0], text, m.index as number, (m.index as number) + m[0].length, kind[1]));
  }
  for (const [start, end, digits] of spokenRuns(text)) {
    const kind = judge(text, start, digits, true);
    if (kind) out.push(entity(kind[0], text, start, end, kind[1]));
  }
  return out;
}
