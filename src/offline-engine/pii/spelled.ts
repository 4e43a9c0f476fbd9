/**
 * Numbers a person spells out (issue 41: "read text as a person would"): digits one by one with
 * blanks between ("4 1 1 1  1 1 1 1 …", "0 7 9 1 1  1 2 3 4 5 6"), and digits said as words, as a
 * voice-mail transcript or a dictated message writes them ("six one seven, five five five, zero one
 * nine two", "double five", in English, German, French, Spanish, Italian and Portuguese). The digits
 * read are then judged as the written forms are: 13 to 19 that pass Luhn are a card; nine that
 * follow the issuance rules, after an SSN word, an SSN; 7 to 15 after a phone's label or a word of
 * calling (or, said as words, anywhere: nobody reads seven digits aloud but a number) a phone.
 */
import { category, LETTER, MARK } from "./chars";
import { gateWords, SPOKEN_NUMBER, spokenWordCount } from "./keywords";
import { isLabel, spacedWord } from "./phone";
import { inStretches, knownIssuer, luhnValid, ssnValid } from "./structured";
import { entity, type PiiEntity } from "./types";
import { WordFilter } from "./word-filter";

const DIGIT_WORDS: Record<string, number> = {};
// English, German, French, Spanish, Italian, Portuguese, Dutch, Polish, Turkish, Russian, Greek,
// Arabic, Hebrew and Hindi
const WORDS_BY_DIGIT = [
  "zero oh o null zéro cero zero nought nul sıfır ноль нуль μηδέν صفر אפס शून्य", // 0
  "one eins un uno um een jeden jedna bir один ένα واحد אחת אחד एक", // 1
  "two zwei deux dos due dois twee dwa iki два δύο اثنان اثنين שתיים שניים दो", // 2
  "three drei trois tres tre três drie trzy üç три τρία ثلاثة ثلاث שלוש तीन", // 3
  "four vier quatre cuatro quattro quatro cztery dört четыре τέσσερα أربعة أربع ארבע चार", // 4
  "five fünf funf cinq cinco cinque vijf pięć beş пять πέντε خمسة خمس חמש पाँच पांच", // 5
  "six sechs seis sei zes sześć altı шесть έξι ستة ست שש छह छः", // 6
  "seven sieben sept siete sette sete zeven siedem yedi семь επτά εφτά سبعة سبع שבע सात", // 7
  "eight acht huit ocho otto oito osiem sekiz восемь οκτώ οχτώ ثمانية ثماني שמונה आठ", // 8
  "nine neun neuf nueve nove negen dziewięć dokuz девять εννέα εννιά تسعة تسع תשע नौ", // 9
];
/** digits written as Chinese or Japanese numerals, or said in Sino-Korean syllables, one a character */
const CJK_DIGITS: Record<string, number> = {};
"〇零一二三四五六七八九".split("").forEach((c, k) => {
  CJK_DIGITS[c] = Math.max(0, k - 1);
});
"공일이삼사오육칠팔구".split("").forEach((c, k) => {
  CJK_DIGITS[c] = k;
});
CJK_DIGITS.영 = 0;
WORDS_BY_DIGIT.forEach((words, digit) => {
  for (const w of words.split(" ")) DIGIT_WORDS[w] = digit;
});
/** "double five" = 55, "triple nine" = 999 */
const REPEATS: Record<string, number> = { double: 2, triple: 3, doppel: 2, doble: 2, doppio: 2 };
/** ten to nineteen: said as one number of two digits */
const TEENS: Record<string, number> = {};
"ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split(" ").forEach((w, k) => {
  TEENS[w] = 10 + k;
});
"dix onze douze treize quatorze quinze seize".split(" ").forEach((w, k) => {
  TEENS[w] = 10 + k;
});
"diez once doce trece catorce quince dieciséis diecisiete dieciocho diecinueve".split(" ").forEach((w, k) => {
  TEENS[w] = 10 + k;
});
"zehn elf zwölf dreizehn vierzehn fünfzehn sechzehn siebzehn achtzehn neunzehn".split(" ").forEach((w, k) => {
  TEENS[w] = 10 + k;
});
"dieci undici dodici tredici quattordici quindici sedici diciassette diciotto diciannove".split(" ").forEach((w, k) => {
  TEENS[w] = 10 + k;
});
/** twenty to ninety: a unit said after them joins them ("twenty two", "vingt-trois") */
const TENS: Record<string, number> = {};
for (const words of [
  "twenty thirty forty fifty sixty seventy eighty ninety",
  "vingt trente quarante cinquante soixante",
  "veinte treinta cuarenta cincuenta sesenta setenta ochenta noventa",
  "zwanzig dreißig vierzig fünfzig sechzig siebzig achtzig neunzig",
  "venti trenta quaranta cinquanta sessanta settanta ottanta novanta",
])
  words.split(" ").forEach((w, k) => {
    TENS[w] = 20 + 10 * k;
  });
TENS.vingts = 20;

/** "dot" said between the numbers of an IP address ("one nine two dot one six eight dot …") */
const DOT_WORDS = ["dot", "punto", "ponto", "punkt", "point"];

const SPOKEN_WORDS = [
  ...Object.keys(DIGIT_WORDS),
  ...Object.keys(REPEATS),
  ...Object.keys(TEENS),
  ...Object.keys(TENS),
  "plus",
  "y",
  "hundred",
  ...DOT_WORDS,
];
/** the words of spoken numbers, and "plus" before a country code, for a quick look at each word of a text */
const SPOKEN = new WordFilter(SPOKEN_WORDS);
// (the keyword pass counts them: a text of fewer than three is read for no run of them)
gateWords(SPOKEN_NUMBER, SPOKEN_WORDS);

// (letters and marks by their Unicode category beyond ASCII: "，", "،" and "…" end a word)
const isLetter = (c: number): boolean =>
  (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 0xc0 && (category(c) & (LETTER | MARK)) !== 0);

/**
 * Whether text[from, to) is what stands between two spoken numbers: blanks, one ",", "." or "-"
 * (a dash alone too: "vingt-trois"), or an ellipsis ("…", "...") that a transcript puts for a pause.
 */
function digitGap(text: string, from: number, to: number): boolean {
  if (to - from < 1 || to - from > 7) return false;
  let marks = 0;
  for (let k = from; k < to; k++) {
    const c = text.charCodeAt(k);
    // (",", ".", "-", "…", and the Arabic and ideographic commas)
    if (c === 44 || c === 46 || c === 45 || c === 0x2026 || c === 0x060c || c === 0xff0c || c === 0x3001) marks++;
    else if (c !== 32 && c !== 9) return false;
  }
  const last = text.charCodeAt(to - 1);
  if (to - from === 1 && last === 45) return true;
  const ellipsis = text.charCodeAt(from) === 0x2026 || text.startsWith("...", from);
  return (marks <= 1 || ellipsis) && (last === 32 || last === 9);
}

/** The word at [from, to) as a word of a spoken number, lower case, or null. */
function digitWordAt(text: string, from: number, to: number): string | null {
  return to - from <= 14 && SPOKEN.hasAt(text, from, to) ? text.slice(from, to).toLowerCase() : null;
}

/**
 * The digits a run of spoken words says ("twenty two thirty" 2230, "quatre-vingt-dix" 90, "double
 * five" 55, "plus four nine" +49), or null when the words do not make a number.
 */
function spokenDigits(words: string[]): string | null {
  let out = "";
  let repeat = 1;
  for (let k = 0; k < words.length; k++) {
    const w = words[k] as string;
    const next = words[k + 1];
    if (w === "plus") {
      if (k !== 0) return null;
      out += "+";
    } else if (w.startsWith("#")) out += w.slice(1);
    else if (DOT_WORDS.includes(w)) out += ".";
    else if (w === "hundred") {
      // "nine hundred" is 900 (a unit said before it)
      if (k === 0 || !((words[k - 1] as string) in DIGIT_WORDS)) return null;
      out += "00";
    } else if (w === "y") {
      // Spanish tens and units: "treinta y cuatro" (34)
      const prev = words[k - 1];
      if (prev === undefined || !(prev in TENS) || next === undefined || !(next in DIGIT_WORDS)) return null;
      out = out.slice(0, -1) + String(DIGIT_WORDS[next]);
      k++;
    } else if (w in REPEATS) repeat = REPEATS[w] as number;
    else if (w === "quatre" && (next === "vingt" || next === "vingts")) {
      // French eighty, and ninety with "dix" (or 91 to 99 with a teen) after it
      const after = words[k + 2];
      k++;
      if (after !== undefined && after in TEENS) {
        out += String(80 + (TEENS[after] as number));
        k++;
      } else if (after !== undefined && after in DIGIT_WORDS && DIGIT_WORDS[after] !== 0) {
        out += String(80 + (DIGIT_WORDS[after] as number));
        k++;
      } else out += "80";
    } else if (w in TENS) {
      const tens = TENS[w] as number;
      // "soixante-dix" 70, "soixante-douze" 72; a unit after the tens joins them
      if (w === "soixante" && next !== undefined && next in TEENS) {
        out += String(60 + (TEENS[next] as number));
        k++;
      } else if (next !== undefined && next in DIGIT_WORDS && (DIGIT_WORDS[next] as number) > 0) {
        out += String(tens + (DIGIT_WORDS[next] as number));
        k++;
      } else out += String(tens);
    } else if (w === "dix" && next !== undefined && (next === "sept" || next === "huit" || next === "neuf")) {
      out += String(10 + (DIGIT_WORDS[next] as number));
      k++;
    } else if (w in TEENS) out += String(TEENS[w]);
    else if (w in DIGIT_WORDS) {
      out += String(DIGIT_WORDS[w]).repeat(repeat);
      repeat = 1;
      continue;
    } else return null;
    if (!(w in REPEATS)) repeat = 1;
  }
  return repeat === 1 ? out : null;
}

/**
 * The Chinese numerals or Sino-Korean digit syllables that end a run of letters (or open it, a
 * particle glued after: "…칠팔구공이에요"), two or more, as "#" and their digits, or null.
 */
function cjkDigitsIn(text: string, from: number, to: number): { from: number; to: number; digits: string } | null {
  const isDigit = (k: number) => (text[k] as string) in CJK_DIGITS;
  let a = from;
  let b = from;
  if (isDigit(from)) while (b < to && isDigit(b)) b++;
  else {
    b = to;
    a = to;
    while (a > from && isDigit(a - 1)) a--;
  }
  if (b - a < 2) return null;
  let digits = "#";
  for (let k = a; k < b; k++) digits += String(CJK_DIGITS[text[k] as string]);
  return { from: a, to: b, digits };
}

/** Runs of spoken-number words that say seven digits or more (see digitGap for what may stand between): [start, end, digits]. */
function spokenRuns(text: string): [number, number, string][] {
  const runs: [number, number, string][] = [];
  let runStart = -1;
  let runEnd = -1;
  let words: string[] = [];
  const close = () => {
    const digits = words.length >= 3 ? spokenDigits(words) : null;
    if (digits && digits.replace(/[+.]/g, "").length >= 7) runs.push([runStart, runEnd, digits.replace("+", "")]);
    runStart = -1;
    words = [];
  };
  for (let i = 0; i < text.length; ) {
    if (!isLetter(text.charCodeAt(i))) {
      i++;
      continue;
    }
    let from = i;
    while (i < text.length && isLetter(text.charCodeAt(i))) i++;
    let w = digitWordAt(text, from, i);
    // (Chinese numerals and Hangul are at 0x3000 and above: a word that neither starts nor ends there holds none at its ends)
    if (w === null && (text.charCodeAt(from) >= 0x3000 || text.charCodeAt(i - 1) >= 0x3000)) {
      const cjk = cjkDigitsIn(text, from, i);
      if (cjk) {
        // a run before the digits' start is no part of theirs ("我的电话是一三九 …")
        if (cjk.from > from && runStart >= 0) close();
        [from, i, w] = [cjk.from, cjk.to, cjk.digits];
      }
    }
    if (w === null) {
      if (runStart >= 0) close();
      continue;
    }
    if (runStart >= 0 && !digitGap(text, runEnd, from)) close();
    // "plus" only opens a run
    if (w === "plus" && runStart >= 0) close();
    if (runStart < 0) runStart = from;
    runEnd = i;
    words.push(w);
  }
  if (runStart >= 0) close();
  return runs;
}

/** single digits in groups of four, two blanks between the groups */
const IN_FOURS = /^\d(?: \d){3}(?: {2}\d(?: \d){3}){2,3}(?: {2}\d(?: \d){0,2})?$/;
/**
 * single digits with one or two blanks (or a dash) between: what GROUP_SEPARATOR reads through, so a
 * match lies in one of the keyword pass's digit stretches (structured.ts inStretches), and is looked for there only
 */
const DIGIT_RUN = /(?<![\p{N}])\d(?:(?:[ \t]{1,2}|[ \t]?-[ \t]?)\d){6,18}(?![\p{N}])/gu;

const isDigitCode = (c: number): boolean => c >= 48 && c <= 57;

/**
 * Whether text[start, end) holds `enough` digits that no digit touches: every digit of a DIGIT_RUN
 * match is one (no digit before its first, a blank or a dash after every other but its last, no
 * digit after that), so a stretch of groups ("4111 1111 …", "020 7946 0958") is not read by it.
 */
function singleDigits(text: string, start: number, end: number, enough: number): boolean {
  let n = 0;
  for (let i = start; i < end; i++)
    if (
      isDigitCode(text.charCodeAt(i)) &&
      !isDigitCode(text.charCodeAt(i - 1)) &&
      !isDigitCode(text.charCodeAt(i + 1)) &&
      ++n >= enough
    )
      return true;
  return false;
}

/** an area code in brackets, its digits one by one, right before a run of them: "( 3 1 2 )  ", "(0 3 0) " */
const SPACED_AREA = /\([ \t]?\d(?:[ \t]\d){1,4}[ \t]?\)[ \t]{0,2}$/;

const CALL_CONTEXT =
  /(?:phone|tel|telephone|call|ring|mobile|cell|number|fax|whatsapp|text|sms|reach|dial|nummer|numéro|número|numero|telefon|téléphone|teléfono|telefono|handy|portable|móvil|cellulare)[^\n\d]{0,24}$/iu;
const CARD_CONTEXT = /(?:card|visa|mastercard|amex|credit|debit|karte|carte|tarjeta|carta|cartão)[^\n\d]{0,24}$/iu;
const SSN_CONTEXT = /(?:ssn|social security|social|soc\.? sec)[^\n\d]{0,24}$/iu;

const IPV4_SAID = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

// counting said as numbers: "one, two, … nine, ten, eleven"
const COUNTING = Array.from({ length: 30 }, (_, k) => k).join("");

/** A phone's label spaced out by a scanner right before `start`, past blanks and ":" ("T e l e p h o n e :  "). */
function spacedLabelBefore(text: string, start: number): boolean {
  let k = start;
  while (k > 0 && start - k < 4 && (text.charCodeAt(k - 1) === 32 || text.charCodeAt(k - 1) === 58)) k--;
  const word = k < start ? spacedWord(text, k) : null;
  return word !== null && isLabel(word);
}

/** The kind of value `digits` read at `start` are, with its score, or null. */
function judge(text: string, start: number, digits: string, said: boolean, inFours = false): [PiiEntity["type"], number] | null {
  // an IP address said aloud; dots in anything else make no number
  if (digits.includes(".")) return IPV4_SAID.test(digits) ? ["ip_address", 0.9] : null;
  // counting ("one, two, three, …") is no number
  if (COUNTING.includes(digits)) return null;
  const before = text.slice(Math.max(0, start - 40), start);
  const n = digits.length;
  // (digits one by one make a card only after a card's word: a list of small numbers passes Luhn one time in ten)
  const cardWord = CARD_CONTEXT.test(before);
  // (or in fours, a known issuer's: "4 5 4 7  2 1 9 0  8 8 3 3  1 6 4 8", as a scanner spaces a card)
  if (n >= 13 && n <= 19 && luhnValid(digits) && (said || cardWord || (inFours && knownIssuer(digits))))
    return ["credit_card", cardWord ? 0.95 : 0.85];
  if (n === 9 && SSN_CONTEXT.test(before) && ssnValid(digits.slice(0, 3), digits.slice(3, 5), digits.slice(5)))
    return ["ssn", 0.95];
  if (n >= 7 && n <= 15 && (said || CALL_CONTEXT.test(before) || spacedLabelBefore(text, start))) return ["phone_number", 0.85];
  return null;
}

/** Cards, SSNs and phones spelled out (see above). */
export function findSpelledNumbers(text: string): PiiEntity[] {
  const out: PiiEntity[] = [];
  for (const m of inStretches(text, DIGIT_RUN, 7, 2, (start, end) => singleDigits(text, start, end, 7))) {
    let start = m.index as number;
    let digits = m[0].replace(/\D/g, "");
    // an area code in brackets before it, spaced out too ("( 3 1 2 )  5 5 5 - 0 1 9 1"): a part of it
    if (text.charCodeAt(start - 1) === 32 || text.charCodeAt(start - 1) === 41) {
      const area = SPACED_AREA.exec(text.slice(Math.max(0, start - 16), start));
      if (area) {
        start -= area[0].length;
        digits = area[0].replace(/\D/g, "") + digits;
      }
    }
    const kind = judge(text, start, digits, false, IN_FOURS.test(m[0]));
    if (kind) out.push(entity(kind[0], text, start, (m.index as number) + m[0].length, kind[1]));
  }
  // a run is three spoken words or more (a word of Chinese numerals or Hangul is not ASCII: then the count is Infinity)
  if (spokenWordCount(text) < 3) return out;
  for (const [start, end, digits] of spokenRuns(text)) {
    const kind = judge(text, start, digits, true);
    if (kind) out.push(entity(kind[0], text, start, end, kind[1]));
  }
  return out;
}
