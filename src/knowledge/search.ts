/**
 * Search in the embedded SQLite file: FTS5 finds the candidates with their BM25 and counts the
 * chunks holding each query word; ranking.ts scores them. The same SQL serves stored knowledge
 * bases and the inline variant (an in-memory copy of the schema), so both rank alike.
 */
import type { Database, SQLQueryBindings } from "bun:sqlite";
import type { SearchOptions, VectorHits } from "./interface";
import { type CandidateRow, candidateLimit, type KeyWeight, queryPhrases, rankCandidates, keyWeights as weigh } from "./ranking";
import type { FilterMetadata, Snippet } from "./schemas";
import { expandWord } from "./text";

export { chunkTerms, DEFAULT_MIN_SCORE } from "./ranking";

type Row = CandidateRow;

/** bm25() column weights (kb_id, title, content): the base id only filters; a title match counts double. */
const BM25 = "bm25(kb_chunks_fts, 0.0, 2.0, 1.0)";

const quote = (s: string) => `"${s.replace(/"/g, "")}"`;

/**
 * The FTS5 MATCH expression for a natural-language query: every content word (with its
 * synonyms) OR-ed, each quoted so user text is never read as FTS syntax, inside the given
 * knowledge bases. Null when the query holds no searchable word.
 */
export function ftsQuery(query: string, kbIds: string[]): string | null {
  const phrases = queryPhrases(query);
  if (phrases.length === 0 || kbIds.length === 0) return null;
  return `kb_id : (${kbIds.map(quote).join(" OR ")}) AND (${phrases.map(quote).join(" OR ")})`;
}

/** Each query word's evidence (ranking.ts), its chunk count taken from the FTS index over the word and its synonyms. */
function keyWeights(sqlite: Database, opts: SearchOptions): Map<string, KeyWeight> {
  if (opts.kbIds.length === 0) return new Map();
  const kbs = `kb_id : (${opts.kbIds.map(quote).join(" OR ")})`;
  const n =
    sqlite
      .query<{ n: number }, string[]>(`SELECT count(*) AS n FROM kb_chunks WHERE kb_id IN (${placeholders(opts.kbIds.length)})`)
      .get(...opts.kbIds)?.n ?? 0;
  const count = sqlite.query<{ n: number }, [string]>("SELECT count(*) AS n FROM kb_chunks_fts WHERE kb_chunks_fts MATCH ?");
  return weigh(opts.query, n, (w) => count.get(`${kbs} AND (${expandWord(w).map(quote).join(" OR ")})`)?.n ?? 0);
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

/** Best chunks first (see rankCandidates). */
export function searchChunks(sqlite: Database, opts: SearchOptions, vectors?: VectorHits): Snippet[] {
  const match = ftsQuery(opts.query, opts.kbIds);
  const rows = match === null || opts.kbIds.length === 0 ? [] : candidates(sqlite, match, opts, candidateLimit(opts.topK));
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
  return rankCandidates(rows, keyWeights(sqlite, opts), opts, vectors);
}
