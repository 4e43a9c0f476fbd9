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

/** a run of digit words (and repeats) with blanks, commas, dashes or dots between */
const WORD_RUN =
  /(?<![\p{L}\p{N}])(?:(?:double|triple|doppel|doble|doppio)[ \t]{1,3})?\p{L}{1,7}(?:[ \t]{0,3}[,.-]?[ \t]{1,3}(?:(?:double|triple|doppel|doble|doppio)[ \t]{1,3})?\p{L}{1,7}){6,24}(?![\p{L}])/giu;
/** a quick test: two digit words in a row */
const TWO_WORDS =
  /(?<![\p{L}])(?:zero|oh|one|two|three|four|five|six|seven|eight|nine|null|eins|zwei|drei|vier|fünf|sechs|sieben|acht|neun|zéro|deux|trois|quatre|cinq|sept|huit|neuf|cero|uno|dos|tres|cuatro|cinco|seis|siete|ocho|nueve|due|tre|quattro|cinque|sei|sette|otto|nove|um|dois|três|quatro|sete|oito|double|triple)[ \t]{0,3}[,.-]?[ \t]{1,3}(?:zero|oh|one|two|three|four|five|six|seven|eight|nine|null|eins|zwei|drei|vier|fünf|sechs|sieben|acht|neun|zéro|deux|trois|quatre|cinq|sept|huit|neuf|cero|uno|dos|tres|cuatro|cinco|seis|siete|ocho|nueve|due|tre|quattro|cinque|sei|sette|otto|nove|um|dois|três|quatro|sete|oito)(?![\p{L}])/iu;
/** single digits with one or two blanks (or a dash) between */
const DIGIT_RUN = /(?<![\p{N}])\d(?:(?:[ \t]{1,2}|[ \t]?-[ \t]?)\d){6,18}(?![\p{N}])/gu;

const CALL_CONTEXT =
  /(?:phone|tel|telephone|call|ring|mobile|cell|number|fax|whatsapp|text|sms|reach|dial|nummer|numéro|número|numero|telefon|téléphone|teléfono|telefono|handy|portable|móvil|cellulare)[^\n\d]{0,24}$/iu;
const CARD_CONTEXT = /(?:card|visa|mastercard|amex|credit|debit|karte|carte|tarjeta|carta|cartão)[^\n\d]{0,24}$/iu;
const SSN_CONTEXT = /(?:ssn|social security|social|soc\.? sec)[^\n\d]{0,24}$/iu;

/** The digits a run of words says, or null when a word of it is no digit word. */
function wordDigits(run: string): string | null {
  let digits = "";
  let repeat = 1;
  for (const raw of run.toLowerCase().split(/[ \t]*[,.-]?[ \t]+/)) {
    const w = raw.replace(/[,.-]$/, "");
    if (w in REPEATS) {
      repeat = REPEATS[w] as number;
      continue;
    }
    const d = DIGIT_WORDS[w];
    if (d === undefined) return null;
    digits += String(d).repeat(repeat);
    repeat = 1;
  }
  return repeat === 1 ? digits : null;
}

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
  if (TWO_WORDS.test(text)) {
    for (const m of text.matchAll(WORD_RUN)) {
      const found = longestDigitRun(m[0]);
      if (!found) continue;
      const start = (m.index as number) + found.from;
      const kind = judge(text, start, found.digits, true);
      if (kind) out.push(entity(kind[0], text, start, start + found.text.length, kind[1]));
    }
  }
  return out;
}

/** The longest stretch of a run of short words that are all digit words: its text, offset and digits. */
function longestDigitRun(run: string): { from: number; text: string; digits: string } | null {
  let best: { from: number; text: string; digits: string } | null = null;
  // the words and where each starts; a stretch breaks at a word that is no digit word
  const words = [...run.matchAll(/\p{L}+/gu)];
  let i = 0;
  while (i < words.length) {
    let j = i;
    while (j < words.length && isDigitWord((words[j] as RegExpMatchArray)[0])) j++;
    if (j - i >= 7) {
      const from = (words[i] as RegExpMatchArray).index as number;
      const last = words[j - 1] as RegExpMatchArray;
      const text = run.slice(from, (last.index as number) + last[0].length);
      const digits = wordDigits(text);
      if (digits && (!best || digits.length > best.digits.length)) best = { from, text, digits };
    }
    i = j + 1;
  }
  return best;
}

function isDigitWord(w: string): boolean {
  const l = w.toLowerCase();
  return l in DIGIT_WORDS || l in REPEATS;
}
