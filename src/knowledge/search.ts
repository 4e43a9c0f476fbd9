/**
 * BM25 search over the FTS5 chunk index, with metadata filters. The same SQL serves stored
 * knowledge bases and the inline variant (an in-memory copy of the schema), so both rank alike.
 */
import type { Database, SQLQueryBindings } from "bun:sqlite";
import type { FilterMetadata, Snippet } from "./schemas";
import { specificity } from "./specificity";
import { canonical, contentWords, expandWord, foldPhrases, stem, termKeys } from "./text";

export interface SearchOptions {
  kbIds: string[];
  query: string;
  topK: number;
  filter?: FilterMetadata;
  /** hits scoring below this are left out; when absent DEFAULT_MIN_SCORE, or 0 with vectors (hybrid) */
  minScore?: number;
}

/**
 * The default relevance floor of lexical search. Chosen on help-center.json's queries and its
 * unanswerable list: the lowest round floor at which at most 15% of unanswerable queries get a
 * hit (0.25 let 27% through, 0.3 lets 13%). Hybrid search has no default floor yet: the vector
 * part's scale depends on the embedding model, and no real model has been measured.
 */
export const DEFAULT_MIN_SCORE = 0.3;

/** The query's unit vector and the knowledge bases' nearest chunks to it (hybrid search). */
export interface VectorHits {
  query: Float32Array;
  nearest: { id: number; similarity: number }[];
}

interface Row {
  id: number;
  kb_id: string;
  document_id: string;
  title: string | null;
  content: string;
  terms: string;
  metadata: string;
  embedding: Uint8Array | null;
  rank: number;
}

/** bm25() column weights (kb_id, title, content): the base id only filters; a title match counts double. */
const BM25 = "bm25(kb_chunks_fts, 0.0, 2.0, 1.0)";

/** The searchable keys of a chunk, stored beside it (kb_chunks.terms). */
export function chunkTerms(title: string | null, content: string): string {
  return [...new Set(termKeys(`${title ?? ""} ${content}`))].join(" ");
}

const quote = (s: string) => `"${s.replace(/"/g, "")}"`;

/**
 * The FTS5 MATCH expression for a natural-language query: every content word (with its
 * synonyms) OR-ed, each quoted so user text is never read as FTS syntax, inside the given
 * knowledge bases. Null when the query holds no searchable word.
 */
export function ftsQuery(query: string, kbIds: string[]): string | null {
  const words = [...new Set(contentWords(foldPhrases(query)))].slice(0, 32);
  if (words.length === 0 || kbIds.length === 0) return null;
  const terms = new Set<string>();
  for (const w of words) for (const e of expandWord(w)) terms.add(quote(e));
  return `kb_id : (${kbIds.map(quote).join(" OR ")}) AND (${[...terms].join(" OR ")})`;
}

/**
 * A word no chunk of the searched bases contains counts this many times in the coverage
 * denominator (scaled by how specific it is in general English) and weighs this many times the
 * rarest word in the "known" share: a question about something the knowledge base never mentions
 * ("bitcoin", "my router") is not answered by a passage that shares its common words ("pay",
 * "reset"), while everyday words a paraphrase adds ("right now", "again") cost little.
 */
const UNSEEN_WEIGHT = 2;

interface KeyWeight {
  /** the key occurs in the searched bases */
  seen: boolean;
  /** rarity in the searched bases (BM25's idf); for an unseen word, UNSEEN_WEIGHT x the rarest, x its specificity */
  weight: number;
  /** how specific the word is in general English, 0.15-1 (specificity.ts) */
  specificity: number;
}

/**
 * Each query key's evidence: whether the searched bases contain it (counted by the FTS index over
 * the word and its synonyms), its idf log(1 + (N + 1) / (df + 0.5)) there, and its general
 * specificity. A capitalised word inside the query (a name: "Tokyo", "Java") counts as specific.
 */
function keyWeights(sqlite: Database, opts: SearchOptions): Map<string, KeyWeight> {
  const weights = new Map<string, KeyWeight>();
  if (opts.kbIds.length === 0) return weights;
  const kbs = `kb_id : (${opts.kbIds.map(quote).join(" OR ")})`;
  const n =
    sqlite
      .query<{ n: number }, string[]>(`SELECT count(*) AS n FROM kb_chunks WHERE kb_id IN (${placeholders(opts.kbIds.length)})`)
      .get(...opts.kbIds)?.n ?? 0;
  const count = sqlite.query<{ n: number }, [string]>("SELECT count(*) AS n FROM kb_chunks_fts WHERE kb_chunks_fts MATCH ?");
  const idf = (df: number) => Math.log(1 + (n + 1) / (df + 0.5));
  const folded = foldPhrases(opts.query);
  const names = properNouns(folded);
  for (const w of [...new Set(contentWords(folded))].slice(0, 32)) {
    const key = canonical(stem(w));
    if (weights.has(key)) continue;
    const df = count.get(`${kbs} AND (${expandWord(w).map(quote).join(" OR ")})`)?.n ?? 0;
    const spec = names.has(w) ? 1 : Math.min(specificity(w), specificity(stem(w)));
    weights.set(key, { seen: df > 0, weight: df > 0 ? idf(df) : UNSEEN_WEIGHT * idf(1) * spec, specificity: spec });
  }
  return weights;
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

/** Metadata keys become JSON paths; quoting the key keeps dots and spaces in it literal. */
const jsonPath = (key: string) => `$."${key.replace(/["\\]/g, "")}"`;

function filterSql(filter: FilterMetadata | undefined): { sql: string; params: SQLQueryBindings[] } {
  const parts: string[] = [];
  const params: SQLQueryBindings[] = [];
  for (const [key, want] of Object.entries(filter ?? {})) {
    const values = Array.isArray(want) ? want : [want];
    parts.push(`json_extract(d.metadata, ?) IN (${values.map(() => "?").join(", ")})`);
    params.push(jsonPath(key), ...values.map((v) => (typeof v === "boolean" ? (v ? 1 : 0) : v)));
  }
  return { sql: parts.map((p) => ` AND ${p}`).join(""), params };
}

const ROW = "c.id, c.kb_id, c.document_id, c.title, c.content, c.terms, d.metadata, c.embedding";
const placeholders = (n: number) => Array.from({ length: n }, () => "?").join(", ");

/**
 * Candidates, best BM25 first. Without a metadata filter FTS5 ranks on its own and only the
 * winners are joined to their rows; a filter needs the documents' metadata, so it joins first.
 * The exact kb_id check stays: FTS5 tokens are case-folded, ids are not.
 */
function candidates(sqlite: Database, match: string, opts: SearchOptions, limit: number): Row[] {
  const kbIn = `c.kb_id IN (${placeholders(opts.kbIds.length)})`;
  if (opts.filter && Object.keys(opts.filter).length > 0) {
    const f = filterSql(opts.filter);
    return sqlite
      .query<Row, SQLQueryBindings[]>(
        `SELECT ${ROW}, ${BM25} AS rank FROM kb_chunks_fts
         JOIN kb_chunks c ON c.id = kb_chunks_fts.rowid JOIN kb_documents d ON d.id = c.document_id
         WHERE kb_chunks_fts MATCH ? AND ${kbIn}${f.sql} ORDER BY rank LIMIT ?`,
      )
      .all(match, ...opts.kbIds, ...f.params, limit);
  }
  return sqlite
    .query<Row, SQLQueryBindings[]>(
      `SELECT ${ROW}, top.rank FROM (SELECT rowid, ${BM25} AS rank FROM kb_chunks_fts WHERE kb_chunks_fts MATCH ? ORDER BY rank LIMIT ?) AS top
       JOIN kb_chunks c ON c.id = top.rowid JOIN kb_documents d ON d.id = c.document_id
       WHERE ${kbIn} ORDER BY top.rank`,
    )
    .all(match, limit, ...opts.kbIds);
}

/** Rows of vector hits BM25 did not find, under the same base and metadata restrictions. */
function vectorOnlyRows(sqlite: Database, opts: SearchOptions, ids: number[]): Row[] {
  if (ids.length === 0) return [];
  const f = filterSql(opts.filter);
  return sqlite
    .query<Row, SQLQueryBindings[]>(
      `SELECT ${ROW}, 0 AS rank FROM kb_chunks c JOIN kb_documents d ON d.id = c.document_id
       WHERE c.id IN (${placeholders(ids.length)}) AND c.kb_id IN (${placeholders(opts.kbIds.length)})${f.sql}`,
    )
    .all(...ids, ...opts.kbIds, ...f.params);
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
 * above ones that repeat one of its words. With vectors (hybrid), the vector search's nearest
 * chunks join the candidates and the score blends the lexical score with the cosine similarity
 * (LEXICAL_WEIGHT), so a paraphrase or a misspelling BM25 cannot match still ranks.
 */
export function searchChunks(sqlite: Database, opts: SearchOptions, vectors?: VectorHits): Snippet[] {
  const match = ftsQuery(opts.query, opts.kbIds);
  const rows = match === null || opts.kbIds.length === 0 ? [] : candidates(sqlite, match, opts, Math.max(opts.topK * 3, 20));
  if (vectors) {
    const seen = new Set(rows.map((r) => r.id));
    rows.push(
      ...vectorOnlyRows(
        sqlite,
        opts,
        vectors.nearest.map((h) => h.id).filter((id) => !seen.has(id)),
      ),
    );
  }
  if (rows.length === 0) return [];

  const { coverageBase, known } = queryEvidence(keyWeights(sqlite, opts));
  const queryKeys = new Set(termKeys(opts.query));
  const best = Math.max(1e-9, ...rows.map((r) => -r.rank));
  const scored = rows.map((r) => {
    const keys = new Set(r.terms.split(" "));
    let covered = 0;
    for (const k of queryKeys) if (keys.has(k)) covered++;
    const coverage = coverageBase > 0 ? Math.min(1, covered / coverageBase) : 0;
    const relative = Math.max(0, -r.rank) / best;
    const lexical = coverage * (0.5 + 0.5 * relative) * known;
    const score = vectors ? LEXICAL_WEIGHT * lexical + (1 - LEXICAL_WEIGHT) * similarity(vectors.query, r.embedding) : lexical;
    return { r, score, relative };
  });
  scored.sort((a, b) => b.score - a.score || b.relative - a.relative);
  const min = opts.minScore ?? (vectors ? 0 : DEFAULT_MIN_SCORE);
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
