/**
 * The ranking both knowledge indexes share (SQLite's FTS5 in search-sqlite.ts, PostgreSQL's tsvector in
 * search-postgres.ts): each finds candidate chunks with their BM25 and counts how many chunks hold each
 * query word; from there the score is computed here, so a query ranks alike on either back-end.
 */
import type { SearchOptions, VectorHits } from "./interface";
import { DEFAULT_MIN_SCORE, type Snippet } from "./schemas";
import { specificity } from "./specificity";
import { canonical, contentWords, expandWord, foldPhrases, stem, termKeys } from "./text";

/** A candidate chunk with its document's metadata and its BM25 (`rank`: negated, lower is better, 0 for vector-only hits). */
export interface CandidateRow {
  id: number;
  kb_id: string;
  document_id: string;
  title: string | null;
  content: string;
  terms: string;
  /** the document's metadata, as JSON text */
  metadata: string;
  embedding: Uint8Array | null;
  rank: number;
}

/** The chunks a search reads: BM25's best, then the vector hits BM25 did not find (hybrid search). */
export function candidateIds(ranked: { id: number }[], vectors?: VectorHits): { ids: number[]; vectorOnly: number[] } {
  const lexical = new Set(ranked.map((r) => r.id));
  const vectorOnly = (vectors?.nearest ?? []).map((h) => h.id).filter((id) => !lexical.has(id));
  return { ids: [...lexical, ...vectorOnly], vectorOnly };
}

/**
 * The rows read for `candidateIds`, in candidate order: BM25's best with their score as `rank`
 * (negated, lower is better), then the vector-only hits by id, rank 0. Rows a metadata filter
 * left out are skipped.
 */
export function candidatesInOrder(
  ranked: { id: number; score: number }[],
  vectorOnly: number[],
  byId: ReadonlyMap<number, CandidateRow>,
): CandidateRow[] {
  const out: CandidateRow[] = [];
  for (const r of ranked) {
    const row = byId.get(r.id);
    if (row) out.push({ ...row, rank: -r.score });
  }
  for (const id of [...vectorOnly].sort((a, b) => a - b)) {
    const row = byId.get(id);
    if (row) out.push({ ...row, rank: 0 });
  }
  return out;
}

/** Candidates per search: BM25's best this many are re-ranked. */
export const candidateLimit = (topK: number) => Math.max(topK * 3, 20);

/**
 * Version of the word keys (stemmer, synonym table, folded phrases) stored in kb_chunks.terms,
 * written as their first word. Rows written by another version, or before terms were stored
 * (migration 0003 left them empty), are read from their text at search time, so a change of
 * text.ts never leaves stored chunks matched by stale keys. Raise it whenever text.ts changes keys.
 */
export const TERMS_VERSION = "~v2";

/** The searchable keys of a chunk, stored beside it (kb_chunks.terms), after TERMS_VERSION. */
export function chunkTerms(title: string | null, content: string): string {
  return [TERMS_VERSION, ...new Set(termKeys(`${title ?? ""} ${content}`))].join(" ");
}

/** A candidate's keys: its stored terms when this version wrote them, else from its text. */
function storedKeys(r: CandidateRow): Set<string> {
  const terms = r.terms ?? "";
  if (terms === TERMS_VERSION || terms.startsWith(`${TERMS_VERSION} `)) return new Set(terms.split(" ").slice(1));
  return new Set(termKeys(`${r.title ?? ""} ${r.content}`));
}

/** The query's distinct content words (at most 32): each is counted and expanded to its synonyms. */
export function queryWords(query: string): string[] {
  return [...new Set(contentWords(foldPhrases(query)))].slice(0, 32);
}

/**
 * The full-text phrases of a query: every content word and its synonyms, in order, once each
 * (surface text, quotes removed). FTS5 OR-s them; PostgreSQL builds the same tsquery.
 */
export function queryPhrases(query: string): string[] {
  const out = new Set<string>();
  for (const w of queryWords(query)) for (const e of expandWord(w)) out.add(e.replace(/"/g, ""));
  return [...out];
}

/**
 * A word no chunk of the searched bases contains counts this many times in the coverage
 * denominator (scaled by how specific it is in general English) and weighs this many times the
 * rarest word in the "known" share: a question about something the knowledge base never mentions
 * ("bitcoin", "my router") is not answered by a passage that shares its common words ("pay",
 * "reset"), while everyday words a paraphrase adds ("right now", "again") cost little.
 */
export const UNSEEN_WEIGHT = 2;

export interface KeyWeight {
  /** the key occurs in the searched bases */
  seen: boolean;
  /** rarity in the searched bases (BM25's idf); for an unseen word, UNSEEN_WEIGHT x the rarest, x its specificity */
  weight: number;
  /** how specific the word is in general English, 0.15-1 (specificity.ts) */
  specificity: number;
}

/**
 * Each query key's evidence: whether the searched bases contain it (`df`: chunks holding the word
 * or a synonym, counted by the index), its idf log(1 + (N + 1) / (df + 0.5)) there, and its
 * general specificity. A capitalised word inside the query (a name: "Tokyo", "Java") counts as specific.
 */
export function keyWeights(query: string, n: number, df: (word: string) => number): Map<string, KeyWeight> {
  const weights = new Map<string, KeyWeight>();
  const idf = (d: number) => Math.log(1 + (n + 1) / (d + 0.5));
  const names = properNouns(foldPhrases(query));
  for (const w of queryWords(query)) {
    const key = canonical(stem(w));
    if (weights.has(key)) continue;
    const d = df(w);
    const spec = names.has(w) ? 1 : Math.min(specificity(w), specificity(stem(w)));
    weights.set(key, { seen: d > 0, weight: d > 0 ? idf(d) : UNSEEN_WEIGHT * idf(1) * spec, specificity: spec });
  }
  return weights;
}

/** keyWeights from the counts a back-end read: `wordHits[j]` chunks hold `words[j]` (or a synonym). */
export function keyWeightsFromCounts(query: string, n: number, words: string[], wordHits: number[]): Map<string, KeyWeight> {
  const dfOf = new Map(words.map((w, j) => [w, wordHits[j] ?? 0]));
  return keyWeights(query, n, (w) => dfOf.get(w) ?? 0);
}

/** Lower-cased words written with a capital inside a sentence (not its first word). */
function properNouns(text: string): Set<string> {
  const out = new Set<string>();
  // the capital first: a lookbehind tried at every position rescans each run of spaces (quadratic)
  for (const m of text.matchAll(/\p{Lu}(?<=[\p{L}\p{N},;:]\s+\p{Lu})[\p{L}\p{N}]+/gu)) out.add(m[0].toLowerCase());
  return out;
}

/**
 * The query-level parts of the score. `coverageBase`: the number of query keys a passage must
 * cover for full coverage, where each unseen key counts UNSEEN_WEIGHT x its specificity (so
 * ranking among passages is unchanged: only the covered count differs between them). `known`:
 * the square root of the share of the query's weight the bases contain.
 */
function queryEvidence(weights: Map<string, KeyWeight>): { coverageBase: number; known: number } {
  let coverageBase = 0;
  let total = 0;
  let seen = 0;
  for (const w of weights.values()) {
    coverageBase += w.seen ? 1 : UNSEEN_WEIGHT * w.specificity;
    total += w.weight;
    if (w.seen) seen += w.weight;
  }
  return { coverageBase, known: total > 0 ? Math.sqrt(seen / total) : 0 };
}

/**
 * Share of the lexical score in the hybrid score. Tuned on the help-center fixture with the
 * mock's hashed-trigram vectors (0.8 beat 0.7 and 0.6 on plain and misspelled queries); not yet
 * measured with a semantic embedding model, which would likely earn the vectors more weight.
 */
const LEXICAL_WEIGHT = 0.8;

function similarity(query: Float32Array, blob: Uint8Array | null): number {
  if (!blob || blob.byteLength !== query.length * 4) return 0;
  const v = new Float32Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength));
  let dot = 0;
  for (let i = 0; i < query.length; i++) dot += (v[i] as number) * (query[i] as number);
  return Math.max(0, dot);
}

/**
 * Best chunks first. BM25 picks and orders candidates; the lexical 0-1 score is how much of the
 * query a chunk covers (share of the query's words, synonyms included, that it contains) scaled
 * by its BM25 relative to the best hit, so a score means the same on a 3-document inline search
 * and a 10,000-chunk knowledge base. Re-ranking by it puts chunks that answer the whole question
 * above ones that repeat one of its words.
 *
 * With vectors (hybrid), the vector search's nearest chunks join the candidates. A lexical match
 * scores the larger of its lexical score and the blend of it with the cosine similarity
 * (LEXICAL_WEIGHT), so vectors that agree raise it and vectors that disagree (or carry no meaning,
 * like a test simulator's hashed words) never lower it; and lexical matches rank above the chunks
 * found by vector alone, which fill the remaining places with (1 - LEXICAL_WEIGHT) x their
 * similarity, and only when it is above 0. So a configured embedding provider never does worse
 * than none: it can only add passages a paraphrase or a misspelling BM25 cannot match would miss.
 */
export function rankCandidates(
  rows: CandidateRow[],
  weights: Map<string, KeyWeight>,
  opts: SearchOptions,
  vectors?: VectorHits,
): Snippet[] {
  if (rows.length === 0) return [];
  const { coverageBase, known } = queryEvidence(weights);
  const queryKeys = new Set(termKeys(opts.query));
  const best = Math.max(1e-9, ...rows.map((r) => -r.rank));
  const scored = rows.flatMap((r) => {
    const keys = storedKeys(r);
    let covered = 0;
    for (const k of queryKeys) if (keys.has(k)) covered++;
    const coverage = coverageBase > 0 ? Math.min(1, covered / coverageBase) : 0;
    const relative = Math.max(0, -r.rank) / best;
    const lexical = coverage * (0.5 + 0.5 * relative) * known;
    // a BM25 candidate shares a meaningful word with the query; a vector-only one (rank 0) does not
    const matched = r.rank < 0;
    if (!vectors) return [{ r, score: lexical, relative, matched }];
    const cosine = similarity(vectors.query, r.embedding);
    if (!matched && cosine <= 0) return [];
    const blend = LEXICAL_WEIGHT * lexical + (1 - LEXICAL_WEIGHT) * cosine;
    return [{ r, score: matched ? Math.max(lexical, blend) : blend, relative, matched }];
  });
  scored.sort((a, b) => Number(b.matched) - Number(a.matched) || b.score - a.score || b.relative - a.relative);
  const min = opts.minScore ?? DEFAULT_MIN_SCORE;
  return scored
    .filter((s) => s.score >= min)
    .slice(0, opts.topK)
    .map(({ r, score }) => ({
      title: r.title,
      content: r.content,
      score: Math.round(Math.min(1, score) * 1000) / 1000,
      document_id: r.document_id,
      knowledge_base_id: r.kb_id,
      metadata: JSON.parse(r.metadata) as Record<string, unknown>,
    }));
}
