/**
 * FAQ matching: how likely a query asks the same thing as a stored question, as a calibrated 0-1
 * confidence. Three signals, because each catches what the others miss:
 * - word overlap on stems and synonyms, weighted by rarity in the collection (paraphrases),
 * - fuzzy word matches within a small edit distance (typos: "refnud", "shiping"),
 * - character trigram similarity of the whole question (typos and word splits).
 * A logistic score of the blend, its margin over the runner-up, the query's words the FAQ lacks
 * and the FAQ's words the query does not ask about, then the accuracy observed at that score on
 * labelled tuning sets, give the confidence (see `calibrate`), so the default `min_confidence` of
 * 0.5 keeps matches that are more likely right than wrong, and 0.8 is right about 80% of the time.
 */
import { UNSEEN_WEIGHT } from "./ranking";
import { specificity } from "./specificity";
import { canonical, contentWords, faqKeys, foldPhrases, stem, wordKey } from "./text";

export interface Faq {
  /** the entry's public id (random, `faqe_…`) */
  id: string;
  question: string;
  answer: string;
}

export interface FaqMatch {
  id: string;
  question: string;
  answer: string;
  confidence: number;
}

export const DEFAULT_MIN_CONFIDENCE = 0.5;
export const DEFAULT_TOP_N = 3;

export interface Prepared {
  faq: Faq;
  /** canonical keys (synonyms folded to their group's head) */
  keys: Set<string>;
  /** stems before synonym folding: a word matched as itself counts more than through a synonym */
  stems: Set<string>;
  answerKeys: Set<string>;
  grams: Set<string>;
  /** the trigrams of the question's words but its frame words ("offer", "included") */
  topicalGrams: Set<string>;
}

/**
 * The words of question frames: "do you offer X", "is X included", "is X available", "do you
 * accept X", "do you allow X". They say how a question asks, not what about: "do you offer a
 * warranty" shares only "offer" with "Do you offer financing?" and asks something else. When a
 * query and a FAQ share nothing but such words (no other word found in the question as itself, a
 * synonym or a likely typo, nor in the answer), those count FRAME_WEIGHT of their weight and the trigram similarity leaves them
 * out; beside a shared topic word they count in full, as before.
 */
const FRAME_WORDS = ["offer", "provide", "include", "available", "accept", "allow", "permit", "possible"];
const FRAME_WEIGHT = 0.25;
let frameKeys: ReadonlySet<string> | null = null;
/** built on first use: stemming reads the word list, which is not loaded at import */
const FRAME_KEYS = (): ReadonlySet<string> => (frameKeys ??= new Set(FRAME_WORDS.map(wordKey)));
const isFrame = (word: string) => FRAME_KEYS().has(wordKey(word));

function trigrams(text: string, topicalOnly = false): Set<string> {
  const all = contentWords(foldPhrases(text));
  const words = topicalOnly ? all.filter((w) => !isFrame(w)) : all;
  if (words.length === 0) return new Set();
  const s = ` ${words.join(" ")} `;
  const out = new Set<string>();
  for (let i = 0; i + 3 <= s.length; i++) out.add(s.slice(i, i + 3));
  return out;
}

function dice(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let both = 0;
  for (const g of a) if (b.has(g)) both++;
  return (2 * both) / (a.size + b.size);
}

/** Levenshtein distance, giving up (returning max + 1) once it must exceed `max`. */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  // The row before `prev`: a transposition reaches back two rows.
  let before: number[] = [];
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const v = Math.min((prev[j] as number) + 1, (cur[j - 1] as number) + 1, (prev[j - 1] as number) + cost);
      // Transposed neighbours ("recieve") count as one edit.
      cur.push(i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1] ? Math.min(v, (before[j - 2] as number) + 1) : v);
      rowMin = Math.min(rowMin, cur[j] as number);
    }
    if (rowMin > max) return max + 1;
    before = prev;
    prev = cur;
  }
  return prev[b.length] as number;
}

/**
 * A query word found only through the synonym table counts this much: "parcel" and "order"
 * share a group, but "when will my parcel arrive" does not ask what "after ordering" asks.
 */
const SYNONYM_MATCH = 0.8;

const stems = (text: string) => contentWords(foldPhrases(text)).map(stem);

/**
 * Country and territory names in English (from the runtime's Intl data, no word list shipped):
 * a question naming a country ("do you deliver to germany?") asks what a FAQ about shipping
 * internationally or abroad answers. Names of one word only, lower-cased ("germany", "canada";
 * not "united kingdom").
 */
let countries: ReadonlySet<string> | null = null;
/** built on first use: 676 region-name lookups, and no word list loaded at import */
const COUNTRIES = (): ReadonlySet<string> => (countries ??= countryNames());
function countryNames(): ReadonlySet<string> {
  const names = new Intl.DisplayNames(["en"], { type: "region" });
  const out = new Set<string>();
  for (let a = 65; a <= 90; a++) {
    for (let b = 65; b <= 90; b++) {
      const code = String.fromCharCode(a, b);
      let name: string | undefined;
      try {
        name = names.of(code);
      } catch {
        name = undefined;
      }
      if (name && name !== code && /^\p{L}+$/u.test(name)) out.add(name.toLowerCase());
    }
  }
  return out;
}

let abroad: string | null = null;
/** The key "international", "abroad", "overseas" and "worldwide" share (their synonym group's head); stemming reads the word list, so not at import. */
const ABROAD = (): string => (abroad ??= canonical(stem("international")));

/**
 * How well one query word is found in a FAQ's question, and the question's key it matched: 1 as
 * itself, SYNONYM_MATCH through a synonym, TYPO_MATCH a likely typo, else 0.
 */
function wordMatch(word: string, wordStem: string, it: Prepared): { score: number; key?: string } {
  const keys = it.keys;
  if (keys.has(word)) return { score: it.stems.has(wordStem) ? 1 : SYNONYM_MATCH, key: word };
  if (word.length >= 4) {
    const max = word.length >= 7 ? 2 : 1;
    for (const k of keys) if (k.length >= 3 && editDistance(word, k, max) <= max) return { score: TYPO_MATCH, key: k };
  }
  return { score: 0 };
}

/** A query word within a small edit distance of a question's word counts this much. */
const TYPO_MATCH = 0.8;

/**
 * Whether the FAQ's answer holds a query word the question does not: the word itself, or a
 * country's name where the FAQ is about shipping abroad ("germany" for "Do you ship
 * internationally?"). It counts for the FAQ's side of the overlap only.
 */
function inAnswer(w: QueryWord, it: Prepared): boolean {
  return it.answerKeys.has(w.key) || (COUNTRIES().has(w.surface) && (it.keys.has(ABROAD()) || it.answerKeys.has(ABROAD())));
}

export class FaqMatcher {
  private readonly items: Prepared[];
  private readonly df = new Map<string, number>();
  /** every key of the collection's questions and answers */
  private readonly vocabulary = new Set<string>();

  constructor(faqs: Faq[]) {
    this.items = faqs.map((faq) => ({
      faq,
      keys: new Set(faqKeys(faq.question)),
      stems: new Set(stems(faq.question)),
      answerKeys: new Set(faqKeys(faq.answer)),
      grams: trigrams(faq.question),
      topicalGrams: trigrams(faq.question, true),
    }));
    for (const it of this.items) {
      for (const k of it.keys) this.df.set(k, (this.df.get(k) ?? 0) + 1);
      for (const k of [...it.keys, ...it.answerKeys]) this.vocabulary.add(k);
    }
  }

  /** Rare words decide more than words every question shares ("order" in a shop's FAQ). */
  private weight(key: string): number {
    const n = this.items.length;
    return Math.log(1 + (n + 1) / ((this.df.get(key) ?? 0) + 0.5));
  }

  /**
   * The query's words with their weights. A word the collection never uses weighs UNSEEN_WEIGHT
   * (as in search) x the weight of a word no FAQ holds x its specificity in general English: a
   * question about something no FAQ mentions ("bitcoin", "vegan") is not answered by the FAQ that
   * shares its common word ("products"), while everyday words a paraphrase adds ("right now",
   * "again") weigh little, so they neither sink a paraphrase nor make an unrelated question look
   * answered.
   */
  private queryWords(query: string): QueryWord[] {
    const out = new Map<string, QueryWord>();
    for (const w of contentWords(foldPhrases(query))) {
      const wordStem = stem(w);
      const key = wordKey(w);
      if (out.has(key)) continue;
      const known = this.vocabulary.has(key);
      out.set(key, {
        key,
        stem: wordStem,
        surface: w,
        plainWeight: this.weight(key) * (known ? 1 : UNSEEN_WEIGHT),
        weight: this.weight(key) * (known ? 1 : UNSEEN_WEIGHT * Math.min(specificity(w), specificity(wordStem))),
      });
    }
    return [...out.values()];
  }

  /** The signals of every FAQ for a query, before calibration (also read by the calibration fit). */
  blends(query: string): ({ it: Prepared } & Signals)[] {
    const words = this.queryWords(query);
    const qGrams = trigrams(query);
    if (words.length === 0 && qGrams.size === 0) return [];
    const qTopical = trigrams(query, true);
    return this.items.map((it) => ({ it, ...this.blend(words, qGrams, qTopical, it) }));
  }

  /** Each FAQ's signals with its margin over the best other FAQ: the calibration's features. */
  features(query: string): { it: Prepared; features: Features }[] {
    const blends = this.blends(query);
    const [first, second] = blends.map((b) => b.blend).sort((x, y) => y - x);
    return blends.map(({ it, blend, missed, unasked }) => ({
      it,
      // The margin over the best other FAQ: a close runner-up makes the best one less certain.
      features: { blend, margin: blend - (blend === first ? (second ?? 0) : (first ?? 0)), missed, unasked },
    }));
  }

  match(query: string, opts: { minConfidence?: number; topN?: number } = {}): FaqMatch[] {
    const min = opts.minConfidence ?? DEFAULT_MIN_CONFIDENCE;
    const topN = opts.topN ?? DEFAULT_TOP_N;
    return this.features(query)
      .map(({ it, features }) => ({ it, confidence: Math.round(calibrate(features) * 1000) / 1000 }))
      .filter((m) => m.confidence >= min && m.confidence > 0)
      .sort((a, b) => b.confidence - a.confidence)
      .slice(0, topN)
      .map(({ it, confidence }) => ({ id: it.faq.id, question: it.faq.question, answer: it.faq.answer, confidence }));
  }

  private blend(words: QueryWord[], qGrams: Set<string>, qTopical: Set<string>, it: Prepared): Signals {
    let hit = 0;
    let frameHit = 0;
    let topical = false;
    let qWeight = 0;
    let answerHit = 0;
    let plain = 0;
    let missed = 0;
    const asked = new Set<string>();
    for (const w of words) {
      qWeight += w.weight;
      plain += w.plainWeight;
      const { score, key } = wordMatch(w.key, w.stem, it);
      if (key) asked.add(key);
      if (key !== undefined && FRAME_KEYS().has(key)) frameHit += w.weight * score;
      else {
        hit += w.weight * score;
        if (score > 0) topical = true;
      }
      if (score > 0) continue;
      if (inAnswer(w, it)) {
        answerHit += w.weight;
        // a topic word the FAQ's answer holds ("paypal" for "What payment methods do you accept?")
        if (!FRAME_KEYS().has(w.key)) topical = true;
      } else missed += w.plainWeight;
    }
    // sharing only a question's frame ("do you offer", "is ... included") is asking the same way, not the same thing
    hit += topical ? frameHit : FRAME_WEIGHT * frameHit;
    const grams = topical ? dice(qGrams, it.grams) : dice(qTopical, it.topicalGrams);
    let fWeight = 0;
    let unasked = 0;
    for (const k of it.keys) {
      fWeight += this.weight(k);
      if (!asked.has(k)) unasked += this.weight(k);
    }
    // Dice over weights: a query word found in the question counts for both sides, one found only
    // in the answer for the FAQ's side ("paypal" in the payment-methods answer).
    const overlap = qWeight + fWeight > 0 ? (2 * hit + answerHit) / (qWeight + fWeight) : 0;
    return {
      blend: 0.7 * Math.min(1, overlap) + 0.3 * grams,
      missed: plain > 0 ? missed / plain : 1,
      unasked: fWeight > 0 ? unasked / fWeight : 1,
    };
  }
}

interface QueryWord {
  key: string;
  stem: string;
  /** the word as written (lower case) */
  surface: string;
  weight: number;
  /** the weight without the general-English specificity discount (for `missed`) */
  plainWeight: number;
}

/** What a FAQ's match with a query rests on (the calibration's inputs). */
export interface Signals {
  /** the raw 0-1 blend of word overlap and trigram similarity */
  blend: number;
  /** share of the query's weight, before the specificity discount, found nowhere in the FAQ (question or answer) */
  missed: number;
  /** share of the FAQ question's weight the query does not ask about ("change", "address" for "when will my parcel arrive") */
  unasked: number;
}

/** The calibration's inputs for one FAQ: its Signals and its blend's margin over the best other FAQ. */
export interface Features extends Signals {
  margin: number;
}

/**
 * Calibration in two steps, both fitted by test/eval/fit-faq-calibration.ts on the tuning data
 * only (faq.json, faq-dev.json, and faq-nearmiss.json: a gym's FAQs with near misses, written
 * before this code was read); the held-out sets (faq-holdout*.json, faq-nearmiss-blind.json)
 * measure it. First a logistic score of the features, fitted by maximum likelihood on each query's
 * three best FAQs, right or wrong. `exact`, `synonym`, `typo` and `missed` (2026-11-26, issue 24.15) say
 * what the blend alone hid: whether a match rests on the very words, on synonyms and likely typos
 * ("i forgot my pasword"), and whether the question holds a word no part of the FAQ does ("can I
 * bring my dog" against "Can I bring a guest?": a near miss however much else it shares).
 */
export const CALIBRATION = { bias: 0, blend: 1.2, margin: 4.84, missed: -1.59, unasked: -1.33 };

/**
 * Then the score becomes a confidence through the accuracy observed at that score on the tuning
 * data (isotonic regression of right-or-wrong on the score of each query's best FAQ, each block's
 * accuracy smoothed as (right + 1) / (n + 2), interpolated between blocks): so a confidence of 0.8
 * is right about 80% of the time there, and none says more than the data shows (a typo or a
 * paraphrase is not certainty). Pairs of (score, confidence), ascending.
 */
export const RELIABILITY: readonly (readonly [number, number])[] = [
  [0.057, 0.022],
  [0.188, 0.23],
  [0.346, 0.417],
  [0.477, 0.591],
  [0.643, 0.696],
  [0.732, 0.696],
  [0.799, 0.778],
  [0.887, 0.867],
  [0.966, 0.974],
];

/** The logistic score of a FAQ's features (the first step). */
export function calibrationScore(f: Features): number {
  const z =
    CALIBRATION.bias +
    CALIBRATION.blend * f.blend +
    CALIBRATION.margin * f.margin +
    CALIBRATION.missed * f.missed +
    CALIBRATION.unasked * f.unasked;
  return 1 / (1 + Math.exp(-z));
}

/** Piecewise-linear through RELIABILITY, flat past its ends. */
export function reliability(score: number, table: readonly (readonly [number, number])[] = RELIABILITY): number {
  const first = table[0] as readonly [number, number];
  if (score <= first[0]) return first[1];
  for (let i = 1; i < table.length; i++) {
    const [x1, y1] = table[i] as readonly [number, number];
    if (score <= x1) {
      const [x0, y0] = table[i - 1] as readonly [number, number];
      return x1 > x0 ? y0 + ((y1 - y0) * (score - x0)) / (x1 - x0) : y1;
    }
  }
  return (table[table.length - 1] as readonly [number, number])[1];
}

export function calibrate(f: Features): number {
  if (f.blend <= 0) return 0;
  return reliability(calibrationScore(f));
}
