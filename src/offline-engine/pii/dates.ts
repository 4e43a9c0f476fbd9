/**
 * Dates of birth: a calendar date (numeric or with a month name, English) that the text ties to a
 * birth ("born", "DOB", "date of birth", "birthday"). A date with no such tie is an appointment or
 * an order date, not personal data, and is left alone.
 */
import { hasNonAscii } from "./chars";
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
/** month names of other languages, as a date writes them (Polish, Czech and Russian genitives) */
const LOCAL_MONTH = [
  "stycznia lutego marca kwietnia maja czerwca lipca sierpnia września października listopada grudnia",
  "ledna února března dubna května června července srpna září října listopadu prosince",
  "januar jänner februar märz april mai juni juli august september oktober november dezember",
  "janvier février mars avril juin juillet août septembre octobre novembre décembre",
  "enero febrero marzo abril mayo junio julio agosto septiembre setiembre octubre noviembre diciembre",
  "janeiro fevereiro março maio junho julho setembro outubro dezembro",
  "gennaio febbraio aprile maggio giugno luglio settembre ottobre dicembre",
  "januari februari maart mei augustus",
  "januari februari mars maj augusti marts",
  "tammikuuta helmikuuta maaliskuuta huhtikuuta toukokuuta kesäkuuta heinäkuuta elokuuta syyskuuta lokakuuta marraskuuta joulukuuta",
  "január február március április május június július augusztus szeptember október",
  "января февраля марта апреля мая июня июля августа сентября октября ноября декабря",
  "ocak şubat mart nisan mayıs haziran temmuz ağustos eylül ekim kasım aralık",
  "siječnja veljače ožujka travnja svibnja lipnja srpnja kolovoza rujna listopada studenoga prosinca",
  "januara februara marta aprila maja juna jula avgusta septembra oktobra novembra decembra",
]
  .join(" ")
  .split(" ")
  .sort((a, b) => b.length - a.length)
  .join("|");
/**
 * Dates as other conventions write them: "1978.11.03." and "1985. március 12." (Hungarian, year
 * first), "12. 4. 1985" (Czech, blanks after the dots), "1990/04/12", "3 maja 1991", "12. März
 * 1980", "5 de mayo de 1990", "12 mars 1980".
 */
// (every alternative starts with a digit: the lookahead settles the other positions at once)
const LOCAL_DATE = new RegExp(
  `(?=\\d)(?:${[
    "(?<![\\p{N}.])(?:19|20)\\d{2}(?:\\.[ ]?|/)(?:0?[1-9]|1[0-2])(?:\\.[ ]?|/)(?:0?[1-9]|[12]\\d|3[01])\\.?(?!\\p{N})",
    "(?<![\\p{N}.])(?:0?[1-9]|[12]\\d|3[01])\\.[ ](?:0?[1-9]|1[0-2])\\.[ ]?(?:19|20)\\d{2}(?!\\p{N})",
    `(?<![\\p{L}\\p{N}])(?:0?[1-9]|[12]\\d|3[01])\\.?[ ](?:de[ ])?(?:${LOCAL_MONTH})(?![\\p{L}])\\.?,?[ ](?:de[ ])?(?:19|20)\\d{2}(?!\\p{N})`,
    `(?<![\\p{N}])(?:19|20)\\d{2}\\.[ ](?:${LOCAL_MONTH})[ ](?:0?[1-9]|[12]\\d|3[01])\\.?(?!\\p{N})`,
    // "1985年3月12日" (Chinese, Japanese), "1985년 3월 12일" (Korean)
    "(?<![\\p{N}])(?:19|20)\\d{2}(?:年[ ]?(?:0?[1-9]|1[0-2])月[ ]?(?:0?[1-9]|[12]\\d|3[01])日|년[ ]?(?:0?[1-9]|1[0-2])월[ ]?(?:0?[1-9]|[12]\\d|3[01])일)",
  ].join("|")})`,
  "giu",
);
// "D.O.B.:" carries its own dots, so it is matched apart from the words that end at a boundary
const BIRTH_CONTEXT =
  /(?:\b(?:born|birth|birthdate|birthday|dob|geboren|né|née|nacido|nacida|nato|nata)\b|\bd\.\s?o\.\s?b\.?|\bb\.)[^.!?\n]{0,30}$/i;

/**
 * A text that has none of the words of BIRTH_CONTEXT anywhere (the same alternatives without their
 * word boundaries, same flags) has no date of birth: most texts are settled by this one scan.
 */
const BIRTH_WORD =
  /born|birth|dob|geboren|né|nacid|nac[ií]|nacqu|nat[oa]|d\.\s?o\.\s?b|b\.|szület|szül\.|naroz|narod|urodz|geburt|geb\.|syntym|syntyn|född|födel|født|fødsel|fædd|fæðing|sünni|sündi|dzimš|gimim|gimę|рожд|родил|народж|γέννησ|γεννήθ|doğum|doğdu|nascim|nascid|naissance|nacimiento|nascita|geboorte|rođen|rojstv|rojen|出生|生年月日|생년월일|ميلاد|לידה|जन्म|nasceu|nasci|sinh ngày|ngày sinh|誕生日|生日|متولد|הולדת|ծննդ|დაიბად|জন্ম|பிறந்த|เกิด/i;
/**
 * BIRTH_WORD's alternatives that are ASCII, grouped by their first letters: on a text with no
 * character outside ASCII it answers as BIRTH_WORD does (every other alternative holds a non-ASCII
 * letter), at a quarter of its cost.
 */
const BIRTH_WORD_ASCII =
  /\bb\.|born|birth|d(?:ob|\.\s?o\.\s?b)|ge(?:boren|burt|b\.|boorte)|na(?:ci|cqui|t[oa]|roz|rod|scim|scid|issance|cimiento|scita|sceu|sci)|urodz|synty[mn]|gimim|ro(?:jstv|jen)/i;
/**
 * BIRTH_WORD's alternatives with a non-ASCII letter, by their first letters and a little wider
 * ("szül" for "szület" and "szül."): a text none of them can match needs no look with BIRTH_WORD.
 */
const BIRTH_WORD_OTHER =
  /né|nací|szül|f(?:öd|ød|æd|æð)|sün[nd]i|dzimš|gimę|рожд|родил|народж|γέννησ|γεννήθ|doğ|rođen|出生|生年月日|생년월일|ميلاد|לידה|जन्म|sinh|誕生日|生日|متولد|הולדת|ծննդ|დაიბად|জন্ম|பிறந்த|เกิด/i;
/**
 * Whether a date of birth may be in the text: one of the words the birth contexts and the column
 * headers need. BIRTH_WORD matches "b." after any letter too ("Jakub."), where no context can (they
 * need "b." as a word), so the ASCII alternatives are read with that boundary; the answer is the
 * same as far as any date found goes.
 */
function mayHaveBirth(text: string): boolean {
  if (BIRTH_WORD_ASCII.test(text)) return true;
  return hasNonAscii(text) && BIRTH_WORD_OTHER.test(text) && BIRTH_WORD.test(text);
}
/** BIRTH_CONTEXT's words in the other languages, ended by the date's 40 characters before it (any script: no \b) */
const BIRTH_CONTEXT_LOCAL =
  /(?:születési|született|szül\.|narozen|narození|narodzenia|urodzon|urodzin|urodzenia|née|né|geburtsdatum|geburtstag|geb\.|syntymäaika|syntymäpäivä|syntynyt|född|födelsedatum|født|fødselsdato|fødd|fæðingardagur|fæddur|fædd|sünniaeg|sündinud|dzimšanas|gimimo|gimęs|gimusi|рождения|родился|родилась|народження|γέννησης|γεννήθηκε|doğum|doğdu|nascimento|nascido|nascida|naissance|nacimiento|nascita|geboortedatum|rođen|rođena|rođenja|narodil|narodila|narodenia|rojstva|rojen|rojena|出生|生年月日|생년월일|ميلاد|לידה|जन्म|nasceu em|nasci em|(?<!\p{L})(?:nac[ií]|nasci|nacqui)(?!\p{L})|sinh ngày|ngày sinh|誕生日|生日|متولد|יום ההולדת|ծննդյան|დაიბადა|জন্মতারিখ|பிறந்த|เกิดวันที่|วันเกิด)(?:[^.!?\n]|\.(?![ \t]*(?:\n|$|\p{Lu}))){0,14}$/iu;

/**
 * "geboren" after the date, in its clause: German and Dutch put the participle last ("Ich bin am
 * 03.04.1985 geboren", "Ik ben op 3 april 1985 in Utrecht geboren").
 */
const BORN_AFTER = /^[^.!?\n]{0,30}?(?<!\p{L})geboren(?!\p{L})/iu;

/** Whether the date at text[start, end) is tied to a birth: a birth word before it, or "geboren" after it. */
function tiedToBirth(text: string, start: number, end: number): boolean {
  const before = text.slice(Math.max(0, start - 45), start);
  return BIRTH_CONTEXT.test(before) || BIRTH_CONTEXT_LOCAL.test(before.slice(-40)) || BORN_AFTER.test(text.slice(end, end + 40));
}

export function findDatesOfBirth(text: string): PiiEntity[] {
  const out: PiiEntity[] = [];
  if (!mayHaveBirth(text)) return out;
  for (const m of text.matchAll(DATE)) {
    if (!tiedToBirth(text, m.index, m.index + m[0].length)) continue;
    out.push(entity("date_of_birth", text, m.index, m.index + m[0].length, 0.92));
  }
  for (const m of text.matchAll(LOCAL_DATE)) {
    if (!tiedToBirth(text, m.index, m.index + m[0].length)) continue;
    // a date the first pattern found already
    if (out.some((e) => e.start < m.index + m[0].length && m.index < e.end)) continue;
    out.push(entity("date_of_birth", text, m.index, m.index + m[0].length, 0.92));
  }
  if (text.includes("\n") && BIRTH_HEADER_WORD.test(text)) birthColumn(text, out);
  return out;
}

const BIRTH_HEADER =
  /^[ \t"]*(?:dob|d\.o\.b\.?|date[ _]of[ _]birth|birth[ _]?date|birthday|born|geburtsdatum|date de naissance|fecha de nacimiento|data de nascimento|data di nascita|syntymäaika|födelsedatum|fødselsdato|születési dátum|datum narození|data urodzenia|дата рождения)[ \t"]*$/i;
/** a word one of BIRTH_HEADER's cells needs: a text without one has no date-of-birth column */
const BIRTH_HEADER_WORD =
  /dob|d\.o\.b|birth|born|geburtsdatum|naissance|nacimiento|nascimento|nascita|syntymäaika|födelsedatum|fødselsdato|születési|narození|urodzenia|рождения/i;
const WHOLE_DATE = new RegExp(`^(?:${DATE.source}|${LOCAL_DATE.source})$`, "iu");

/** The cells under a date-of-birth column of a delimited table ("name,ssn,dob\n…,1979-08-22"). */
function birthColumn(text: string, out: PiiEntity[]): void {
  let column = -1;
  let delimiter = "";
  let at = 0;
  for (let n = 0; at <= text.length && n < 200; n++) {
    const nl = text.indexOf("\n", at);
    const end = nl < 0 ? text.length : nl;
    const line = text.slice(at, end).replace(/\r$/, "");
    if (column < 0) {
      for (const d of [",", ";", "\t", "|"]) {
        if (!line.includes(d)) continue;
        const k = line.split(d).findIndex((cell) => BIRTH_HEADER.test(cell));
        if (k >= 0) {
          column = k;
          delimiter = d;
          break;
        }
      }
    } else {
      const cells = line.split(delimiter);
      const cell = cells[column];
      if (cell !== undefined) {
        let from = at;
        for (let k = 0; k < column; k++) from += (cells[k] as string).length + 1;
        const lead = cell.length - cell.trimStart().length;
        const value = cell.trim();
        if (value.length <= 40 && WHOLE_DATE.test(value) && !out.some((e) => e.start === from + lead))
          out.push(entity("date_of_birth", text, from + lead, from + lead + value.length, 0.9));
      }
    }
    if (nl < 0) break;
    at = nl + 1;
  }
}
