/**
 * Which texts the offline sentiment engine can read at all. Its lexicons are English (VADER) and a
 * few hundred review words in six other languages (multilingual.ts), all in the Latin script; a text
 * in any other language, or in none, gets no word scored, so whatever it answered would be made up
 * ("最悪です" read neutral at 0.818, "Xqzt vbnm plok wertz fjdk" positive at 0.778 on one VADER
 * slang entry). Such a text is out of reach: the caller is told to configure a model.
 */
import { detectLanguage } from "../language";
import { englishShare, readsAsEnglish } from "./evidence";
import { valenceSum } from "./vader";

/** The languages with a sentiment lexicon: English and those of multilingual.ts. */
export const SENTIMENT_LANGUAGES = ["en", "fr", "de", "es", "it", "pt", "nl"] as const;
const COVERED = new Set<string>(SENTIMENT_LANGUAGES);

/**
 * The detector's confidence from which a language it names is taken as the text's: English test
 * sets (970 texts) read as another language at most 0.48, other languages' sentences 0.5 to 0.9.
 */
const SURE = 0.5;

const SAMPLE = 4000;

/** Plain English: at least this many words, at least this share of them English function words (prose: 0.3 to 0.5). */
const PLAIN_ENGLISH_WORDS = 6;
const PLAIN_ENGLISH_SHARE = 0.3;

/**
 * A text in no language the detector can name and not English is read when at least this share of
 * its words carry a valence in the lexicons ("Terrible terrible terrible awful", "Meh meh meh meh");
 * "Xqzt vbnm plok wertz fjdk" has one, a VADER slang entry, in five.
 */
const KNOWN_SHARE = 0.25;

const LATIN = /\p{Script=Latin}/gu;
const LETTER = /\p{L}/gu;
const WORD = /\p{L}+/gu;

/**
 * Why the text is beyond the sentiment lexicons, in words ("the text reads as Japanese"), or null
 * when they can read it: most of its letters outside the Latin script; a language the detector is
 * sure of that has no lexicon; or no language at all (not English by its function words, no
 * language the detector can name with any certainty, and under a quarter of its words known to a lexicon).
 */
export function beyondSentimentLexicons(text: string): string | null {
  // the opening says which language a text is in as well as the whole (the detector reads no more)
  const sample = text.length > SAMPLE ? text.slice(0, SAMPLE) : text;
  const letters = sample.match(LETTER)?.length ?? 0;
  const latin = sample.match(LATIN)?.length ?? 0;
  // plain English prose (Latin letters, a third of its words English function words) is read
  // without the language model: a gateway serving English never loads it for sentiment, and its
  // first call does not wait the half second the load takes (CI, 2026-12-06: a 200 ms request timeout)
  const words = sample.toLowerCase().match(WORD) ?? [];
  if (latin * 2 >= letters && words.length >= PLAIN_ENGLISH_WORDS && englishShare(words) >= PLAIN_ENGLISH_SHARE) return null;
  const detected = detectLanguage(sample);
  const named = detected.code === "und" ? null : detected.name;
  if (letters > 0 && latin * 2 < letters)
    return named ? `the text reads as ${named}` : "the text is written in a script the lexicons do not cover";
  if (named && detected.confidence >= SURE && !COVERED.has(baseCode(detected.code))) return `the text reads as ${named}`;
  const unsure = named === null || detected.confidence < SURE;
  if (!unsure || detected.code === "en") return null;
  // not English, no language named, and hardly a word any lexicon knows: nothing to read
  if (!readsAsEnglish(words) && valenceSum(sample).hits < words.length * KNOWN_SHARE)
    return "the text reads as no language the lexicons cover";
  return null;
}

function baseCode(code: string): string {
  return code.split(/[-_]/)[0] ?? code;
}
