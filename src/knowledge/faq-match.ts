/**
 * FAQ matching: how likely a query asks the same thing as a stored question, as a calibrated 0-1
 * confidence. Three signals, because each catches what the others miss:
 * - word overlap on stems and synonyms, weighted by rarity in the collection (paraphrases),
 * - fuzzy word matches within a small edit distance (typos: "refnud", "shiping"),
 * - character trigram similarity of the whole question (typos and word splits).
 * A logistic curve fitted on a labelled tuning set maps the blend and its margin over the
 * runner-up to a confidence (see `calibrate`), so the default `min_confidence` of 0.5 keeps
 * matches that are more likely right than wrong.
 */
import { UNSEEN_WEIGHT } from "./ranking";
import { specificity } from "./specificity";
import { canonical, contentWords, foldPhrases, stem, termKeys } from "./text";

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
}

function trigrams(text: string): Set<string> {
  const s = ` ${contentWords(foldPhrases(text)).join(" ")} `;
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

/** How well one query word is found: 1 as itself, SYNONYM_MATCH through a synonym, 0.8 a likely typo, else 0. */
function wordMatch(word: string, wordStem: string, it: Prepared): number {
  const keys = it.keys;
  if (keys.has(word)) return it.stems.has(wordStem) ? 1 : SYNONYM_MATCH;
  if (word.length < 4) return 0;
  const max = word.length >= 7 ? 2 : 1;
  for (const k of keys) if (k.length >= 3 && editDistance(word, k, max) <= max) return 0.8;
  return 0;
}

export class FaqMatcher {
  private readonly items: Prepared[];
  private readonly df = new Map<string, number>();
  /** every key of the collection's questions and answers */
  private readonly vocabulary = new Set<string>();

  constructor(faqs: Faq[]) {
    this.items = faqs.map((faq) => ({
      faq,
      keys: new Set(termKeys(faq.question)),
      stems: new Set(stems(faq.question)),
      answerKeys: new Set(termKeys(faq.answer)),
      grams: trigrams(faq.question),
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
      const key = canonical(wordStem);
      if (out.has(key)) continue;
      const known = this.vocabulary.has(key);
      out.set(key, {
        key,
        stem: wordStem,
        weight: this.weight(key) * (known ? 1 : UNSEEN_WEIGHT * Math.min(specificity(w), specificity(wordStem))),
      });
    }
    return [...out.values()];
  }

  /** The raw 0-1 blend of every FAQ for a query, before calibration (also read by the calibration fit). */
  blends(query: string): { it: Prepared; blend: number }[] {
    const words = this.queryWords(query);
    const qGrams = trigrams(query);
    if (words.length === 0 && qGrams.size === 0) return [];
    return this.items.map((it) => ({ it, blend: this.blend(words, qGrams, it) }));
  }

  match(query: string, opts: { minConfidence?: number; topN?: number } = {}): FaqMatch[] {
    const min = opts.minConfidence ?? DEFAULT_MIN_CONFIDENCE;
    const topN = opts.topN ?? DEFAULT_TOP_N;
    const blends = this.blends(query);
    const [first, second] = blends.map((b) => b.blend).sort((x, y) => y - x);
    return blends
      .map(({ it, blend }) => {
        // The margin over the best other FAQ: a close runner-up makes the best one less certain.
        const margin = blend - (blend === first ? (second ?? 0) : (first ?? 0));
        return { it, confidence: Math.round(calibrate(blend, margin) * 1000) / 1000 };
      })
      .filter((m) => m.confidence >= min && m.confidence > 0)
      .sort((a, b) => b.confidence - a.confidence)
      .slice(0, topN)
      .map(({ it, confidence }) => ({ id: it.faq.id, question: it.faq.question, answer: it.faq.answer, confidence }));
  }

  private blend(words: QueryWord[], qGrams: Set<string>, it: Prepared): number {
    let hit = 0;
    let qWeight = 0;
    let answerHit = 0;
    for (const w of words) {
      qWeight += w.weight;
      const m = wordMatch(w.key, w.stem, it);
      hit += w.weight * m;
      if (m === 0 && it.answerKeys.has(w.key)) answerHit += w.weight;
    }
    let fWeight = 0;
    for (const k of it.keys) fWeight += this.weight(k);
    // Dice over weights: a query word found in the question counts for both sides, one found only
    // in the answer for the FAQ's side ("paypal" in the payment-methods answer).
    const overlap = qWeight + fWeight > 0 ? (2 * hit + answerHit) / (qWeight + fWeight) : 0;
    return 0.7 * Math.min(1, overlap) + 0.3 * dice(qGrams, it.grams);
  }
}

interface QueryWord {
  key: string;
  stem: string;
  weight: number;
}

/**
 * Logistic map from the raw blend (0-1) and its margin over the best other FAQ to a confidence:
 * coefficients fitted by maximum likelihood on the tuning set (test/eval/fit-faq-calibration.ts
 * over faq.json: each query's three best FAQs, right or wrong), so a confidence of 0.8 is right
 * about 80% of the time there. The tuning set holds shop-related questions no FAQ answers, so a
 * lone FAQ sharing one common word with the query ("are your products vegan", 0.74) no longer
 * comes out near-certain, as it did when every negative was off-topic (0.99). `bun run eval` checks it on the held-out set (faq-holdout.json).
 */
const CALIBRATION = { blend: 7.96, margin: 5.65, bias: -3.87 };

export function calibrate(blend: number, margin: number): number {
  if (blend <= 0) return 0;
  return 1 / (1 + Math.exp(-(CALIBRATION.blend * blend + CALIBRATION.margin * margin + CALIBRATION.bias)));
}
