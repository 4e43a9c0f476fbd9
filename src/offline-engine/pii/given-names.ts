/**
 * Given names and family names of the naming traditions the English lists and the `humannames`
 * gazetteer cover thinly (Nordic, Finnish, Hungarian, Slavic, Baltic) and of the other scripts
 * the engine reads (Cyrillic, Greek, Arabic, Hebrew, Devanagari, Chinese, Japanese, Korean),
 * from the person-name lists of `@faker-js/faker`'s locale data (MIT), loaded on first use.
 *
 * Each name is kept as the hash of its folded form (lower case, no diacritics: gazetteer.ts
 * `fold`) in a Set of numbers: a lookup is one hash and one Set probe. The locales are read one
 * by one, the load yielding between them, so a warm-up in slices never holds the thread long.
 */
import { slicedEngine } from "../engines";
import { fold } from "./gazetteer";

interface PersonDefinitions {
  first_name?: unknown;
  last_name?: unknown;
  middle_name?: unknown;
}
type Locale = () => { faker: { rawDefinitions: { person?: PersonDefinitions } } };

// one static require a locale, so a compiled binary carries them
const LOCALES: Locale[] = [
  () => require("@faker-js/faker/locale/da"),
  () => require("@faker-js/faker/locale/nb_NO"),
  () => require("@faker-js/faker/locale/sv"),
  () => require("@faker-js/faker/locale/fi"),
  () => require("@faker-js/faker/locale/hu"),
  () => require("@faker-js/faker/locale/pl"),
  () => require("@faker-js/faker/locale/cs_CZ"),
  () => require("@faker-js/faker/locale/sk"),
  () => require("@faker-js/faker/locale/hr"),
  () => require("@faker-js/faker/locale/sr_RS_latin"),
  () => require("@faker-js/faker/locale/sl_SI"),
  () => require("@faker-js/faker/locale/lv"),
  () => require("@faker-js/faker/locale/ru"),
  () => require("@faker-js/faker/locale/uk"),
  () => require("@faker-js/faker/locale/mk"),
  () => require("@faker-js/faker/locale/el"),
  () => require("@faker-js/faker/locale/ar"),
  () => require("@faker-js/faker/locale/fa"),
  () => require("@faker-js/faker/locale/he"),
  () => require("@faker-js/faker/locale/ne"),
  () => require("@faker-js/faker/locale/zh_CN"),
  () => require("@faker-js/faker/locale/zh_TW"),
  () => require("@faker-js/faker/locale/ja"),
  () => require("@faker-js/faker/locale/ko"),
  // (2026-12-06) the Iberian, Dutch, Turkish and Indian English lists
  () => require("@faker-js/faker/locale/es"),
  () => require("@faker-js/faker/locale/pt_PT"),
  () => require("@faker-js/faker/locale/pt_BR"),
  () => require("@faker-js/faker/locale/nl"),
  () => require("@faker-js/faker/locale/tr"),
  () => require("@faker-js/faker/locale/en_IN"),
];

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

function hashOf(word: string): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), FNV_PRIME);
  return h >>> 0;
}

/** Every string in a locale's list (a flat array, or arrays by sex, or weighted entries). */
function strings(x: unknown, out: string[]): void {
  if (typeof x === "string") out.push(x);
  else if (Array.isArray(x)) for (const y of x) strings(y, out);
  else if (x !== null && typeof x === "object") {
    const o = x as Record<string, unknown>;
    if ("value" in o) strings(o.value, out);
    else for (const v of Object.values(o)) strings(v, out);
  }
}

const lists = slicedEngine("pii-given-names", function* () {
  const given = new Set<number>();
  const family = new Set<number>();
  for (const locale of LOCALES) {
    yield;
    const person = locale().faker.rawDefinitions.person ?? {};
    const first: string[] = [];
    strings(person.first_name, first);
    strings(person.middle_name, first);
    const last: string[] = [];
    strings(person.last_name, last);
    // a list entry may hold two words ("آبان دخت") or a hyphen: each word counts
    for (const name of first) for (const w of name.split(/[\s-]+/)) if (w.length >= 2 || w > "\u2e80") given.add(hashOf(fold(w)));
    for (const name of last) for (const w of name.split(/[\s-]+/)) if (w) family.add(hashOf(fold(w)));
  }
  return { given, family };
});

/**
 * hashOf(fold(word)): a word of printable ASCII folds to its lower case, hashed as it is read (no
 * copy); another word's hash is kept, as recognizers ask about the same word many times.
 */
function foldHash(word: string): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < word.length; i++) {
    let c = word.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return foldHashSlow(word);
    if (c >= 65 && c <= 90) c += 32;
    h = Math.imul(h ^ c, FNV_PRIME);
  }
  return h >>> 0;
}

/** foldHash of words with other characters, kept (emptied when it grows past FOLD_KEEP) */
const FOLD_HASHES = new Map<string, number>();
const FOLD_KEEP = 4096;

function foldHashSlow(word: string): number {
  let h = FOLD_HASHES.get(word);
  if (h === undefined) {
    if (FOLD_HASHES.size >= FOLD_KEEP) FOLD_HASHES.clear();
    h = hashOf(fold(word));
    FOLD_HASHES.set(word, h);
  }
  return h;
}

/** Whether the word (any case, diacritics or not) is a given name of the lists. */
export function isGivenName(word: string): boolean {
  return lists().given.has(foldHash(word));
}

/** Whether the word is a family name of the lists (Chinese and Korean ones are one or two characters). */
export function isFamilyName(word: string): boolean {
  return lists().family.has(foldHash(word));
}
