/**
 * BM25 as SQLite FTS5's bm25() computes it (k1 1.2, b 0.75, a title match counting double), written
 * once for both back-ends (search-sqlite.ts on SQLite, search-postgres.ts on PostgreSQL), and always from the
 * statistics of the searched knowledge bases: their chunk count, their chunks' average token count
 * and how many of their chunks hold each phrase. FTS5's own bm25() takes those from the whole
 * table, every tenant's chunks, so another account's documents would move scores and could be
 * probed through them. Each back-end finds the matching chunks and their positions of the query's
 * tokens (FTS5's tokens, fts-tokens.ts); the formula and the counting are here.
 */
import { CONTENT_OFFSET, tokenizePhrases } from "./fts-tokens";
import { queryPhrases, queryWords } from "./ranking";
import { expandWord } from "./text";

const K1 = 1.2;
const B = 0.75;
/** Column weights of FTS5's bm25(kb_chunks_fts, 0.0, 2.0, 1.0): the base id only filters, a title match counts double. */
const TITLE_WEIGHT = 2;

/** The query's full-text phrases (FTS5 tokens) and its words, each word with the phrases it expands to. */
export interface QueryTerms {
  /** surface text of each phrase (queryPhrases): what the full-text query quotes */
  surfaces: string[];
  /** FTS5's tokens of each phrase, in order (empty when the surface has none) */
  phrases: string[][];
  /** the query's content words (queryWords) */
  words: string[];
  /** per word, the indexes of its phrases: itself and its synonyms */
  expansions: number[][];
}

export function queryTerms(query: string): QueryTerms {
  const surfaces = queryPhrases(query);
  const words = queryWords(query);
  return {
    surfaces,
    phrases: tokenizePhrases(surfaces),
    words,
    expansions: words.map((w) => expandWord(w).map((e) => surfaces.indexOf(e.replace(/"/g, "")))),
  };
}

/**
 * How often each phrase occurs in a chunk, weighted by column, as FTS5 counts phrase instances:
 * `at` holds the chunk's positions of each token, ascending (fts-tokens.ts numbering: below
 * CONTENT_OFFSET the title's). A phrase's tokens must follow each other.
 */
export function phraseFrequencies(at: Map<string, number[]>, phrases: string[][]): number[] {
  const sets = new Map<string, Set<number>>();
  const positions = (token: string) => {
    let s = sets.get(token);
    if (!s) {
      s = new Set(at.get(token) ?? []);
      sets.set(token, s);
    }
    return s;
  };
  const weight = positionWeight;
  return phrases.map((tokens) => {
    if (tokens.length === 0) return 0;
    let f = 0;
    if (tokens.length === 1) {
      // one token: each distinct position (a tsvector caps positions, so neighbours may repeat)
      let prev = Number.NaN;
      for (const pos of at.get(tokens[0] as string) ?? []) {
        if (pos !== prev) f += weight(pos);
        prev = pos;
      }
      return f;
    }
    for (const pos of positions(tokens[0] as string)) {
      if (tokens.every((t, k) => k === 0 || positions(t).has(pos + k))) f += weight(pos);
    }
    return f;
  });
}

/** Chunks holding each phrase and each word (any of its phrases), counted over every match's frequencies. */
export function hitCounts(freqs: number[][], terms: QueryTerms): { phraseHits: number[]; wordHits: number[] } {
  return {
    phraseHits: terms.phrases.map((_, i) => freqs.filter((f) => (f[i] ?? 0) > 0).length),
    wordHits: terms.expansions.map((idx) => freqs.filter((f) => idx.some((i) => (f[i] ?? 0) > 0)).length),
  };
}

/** The searched bases' statistics. */
export interface Bm25Stats {
  /** chunks in the searched bases */
  chunks: number;
  /** their FTS5 tokens, all columns (base id, title, content) */
  tokens: number;
  /** chunks of the searched bases holding each phrase */
  phraseHits: number[];
}

/** A matching chunk: its token count and its weighted frequency of each phrase. */
export interface Bm25Match {
  id: number;
  tokens: number;
  freqs: number[];
}

/** The searched bases' average chunk length in tokens (1 when they hold none). */
export const averageLength = (stats: { chunks: number; tokens: number }) => (stats.chunks > 0 ? stats.tokens / stats.chunks : 1);

/** A phrase's idf among `n` chunks of which `hits` hold it, as FTS5 computes it: at least 1e-6. */
export function bm25Idf(n: number, hits: number): number {
  const v = Math.log((n - hits + 0.5) / (hits + 0.5));
  return v <= 0 ? 1e-6 : v;
}

/**
 * One phrase's part of a chunk's BM25: `f` its weighted frequency there, `length` the chunk's
 * tokens. Both back-ends add these up phrase by phrase, in the query's order, so their sums agree
 * to the last bit.
 */
export const bm25Term = (idf: number, f: number, length: number, avgdl: number) =>
  idf * ((f * (K1 + 1)) / (f + K1 * (1 - B + (B * length) / avgdl)));

/** BM25's length normalisation, K in f (k1 + 1) / (f + K), for a chunk of `length` tokens. */
export const bm25LengthFactor = (length: number, avgdl: number) => K1 * (1 - B + (B * length) / avgdl);

/** A position's weight in a phrase's frequency: a title match (positions below CONTENT_OFFSET) counts double. */
export const positionWeight = (pos: number) => (pos < CONTENT_OFFSET ? TITLE_WEIGHT : 1);

/**
 * The `limit` best matches by BM25, best first (ties by id), with their score, as FTS5's bm25()
 * computes it (negated there): for each phrase, idf log((N - hits + 0.5) / (hits + 0.5)), at
 * least 1e-6, times f (k1 + 1) / (f + k1 (1 - b + b d / avgdl)).
 */
export function bestByBm25(matches: Bm25Match[], stats: Bm25Stats, limit: number): { id: number; score: number }[] {
  const n = stats.chunks;
  const avgdl = averageLength(stats);
  const idf = stats.phraseHits.map((hit) => bm25Idf(n, hit));
  return matches
    .map((m) => {
      let score = 0;
      m.freqs.forEach((f, i) => {
        score += bm25Term(idf[i] as number, f, m.tokens, avgdl);
      });
      return { id: m.id, score };
    })
    .sort((a, b) => b.score - a.score || a.id - b.id)
    .slice(0, limit);
}
