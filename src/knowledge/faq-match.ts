/**
 * FAQ matching: how likely a query asks the same thing as a stored question, as a calibrated 0-1
 * confidence. Three signals, because each catches what the others miss:
 * - word overlap on stems and synonyms, weighted by rarity in the collection (paraphrases),
 * - fuzzy word matches within a small edit distance (typos: "refnud", "shiping"),
 * - character trigram similarity of the whole question (typos and word splits).
 * A logistic curve maps the blend to a confidence: ~0.9 for a paraphrase, below 0.3 for an
 * unrelated question, so the default `min_confidence` of 0.5 separates them.
 */
import { contentWords, foldPhrases, termKeys } from "./text";

export interface Faq {
  id: number;
  question: string;
  answer: string;
}

export interface FaqMatch {
  id: number;
  question: string;
  answer: string;
  confidence: number;
}

export const DEFAULT_MIN_CONFIDENCE = 0.5;
export const DEFAULT_TOP_N = 3;

interface Prepared {
  faq: Faq;
  keys: Set<string>;
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

/** How well one query word is found among `keys`: 1 exact, 0.8 a likely typo, else 0. */
function wordMatch(word: string, keys: Set<string>): number {
  if (keys.has(word)) return 1;
  if (word.length < 4) return 0;
  const max = word.length >= 7 ? 2 : 1;
  for (const k of keys) if (k.length >= 3 && editDistance(word, k, max) <= max) return 0.8;
  return 0;
}

export class FaqMatcher {
  private readonly items: Prepared[];
  private readonly df = new Map<string, number>();

  constructor(faqs: Faq[]) {
    this.items = faqs.map((faq) => ({
      faq,
      keys: new Set(termKeys(faq.question)),
      answerKeys: new Set(termKeys(faq.answer)),
      grams: trigrams(faq.question),
    }));
    for (const it of this.items) for (const k of it.keys) this.df.set(k, (this.df.get(k) ?? 0) + 1);
  }

  /** Rare words decide more than words every question shares ("order" in a shop's FAQ). */
  private weight(key: string): number {
    const n = this.items.length;
    return Math.log(1 + (n + 1) / ((this.df.get(key) ?? 0) + 0.5));
  }

  match(query: string, opts: { minConfidence?: number; topN?: number } = {}): FaqMatch[] {
    const min = opts.minConfidence ?? DEFAULT_MIN_CONFIDENCE;
    const topN = opts.topN ?? DEFAULT_TOP_N;
    const qKeys = [...new Set(termKeys(query))];
    const qGrams = trigrams(query);
    if (qKeys.length === 0 && qGrams.size === 0) return [];
    return this.items
      .map((it) => ({ it, confidence: this.confidence(qKeys, qGrams, it) }))
      .filter((m) => m.confidence >= min && m.confidence > 0)
      .sort((a, b) => b.confidence - a.confidence)
      .slice(0, topN)
      .map(({ it, confidence }) => ({ id: it.faq.id, question: it.faq.question, answer: it.faq.answer, confidence }));
  }

  private confidence(qKeys: string[], qGrams: Set<string>, it: Prepared): number {
    let hit = 0;
    let qWeight = 0;
    let answerHit = 0;
    for (const k of qKeys) {
      const w = this.weight(k);
      qWeight += w;
      const m = wordMatch(k, it.keys);
      hit += w * m;
      if (m === 0 && it.answerKeys.has(k)) answerHit += w;
    }
    let fWeight = 0;
    for (const k of it.keys) fWeight += this.weight(k);
    // Dice over weights: a query word found counts for both sides; answer words help a little.
    const overlap = qWeight + fWeight > 0 ? (2 * hit + 0.5 * answerHit) / (qWeight + fWeight) : 0;
    const blend = 0.7 * Math.min(1, overlap) + 0.3 * dice(qGrams, it.grams);
    return Math.round(calibrate(blend) * 1000) / 1000;
  }
}

/** Logistic map from the raw blend (0-1) to a confidence; midpoint and slope set by hand, checked on test/fixtures/knowledge/faq.json. */
export function calibrate(blend: number): number {
  if (blend <= 0) return 0;
  return 1 / (1 + Math.exp(-12 * (blend - 0.33)));
}
