/**
 * BM25 search over the FTS5 chunk index, with metadata filters. The same SQL serves stored
 * knowledge bases and the inline variant (an in-memory copy of the schema), so both rank alike.
 */
import type { Database, SQLQueryBindings } from "bun:sqlite";
import type { FilterMetadata, Snippet } from "./schemas";
import { contentWords, expandWord, foldPhrases, termKeys } from "./text";

export interface SearchOptions {
  kbIds: string[];
  query: string;
  topK: number;
  filter?: FilterMetadata;
}

interface Row {
  id: number;
  kb_id: string;
  document_id: string;
  title: string | null;
  content: string;
  metadata: string;
  rank: number;
}

/** Title matches count double: a document titled "Refund policy" is about refunds. */
const TITLE_WEIGHT = 2;

/**
 * The FTS5 MATCH expression for a natural-language query: every content word (with its
 * synonyms) OR-ed, each quoted so user text is never read as FTS syntax. Null when the query
 * holds no searchable word.
 */
export function ftsQuery(query: string): string | null {
  const words = [...new Set(contentWords(foldPhrases(query)))].slice(0, 32);
  if (words.length === 0) return null;
  const terms = new Set<string>();
  for (const w of words) for (const e of expandWord(w)) terms.add(`"${e.replace(/"/g, "")}"`);
  return [...terms].join(" OR ");
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

/**
 * Best chunks first. BM25 picks and orders candidates; the 0-1 score is how much of the query a
 * chunk covers (share of the query's words, synonyms included, that it contains) scaled by its
 * BM25 relative to the best hit, so a score means the same on a 3-document inline search and a
 * 10,000-chunk knowledge base.
 */
export function searchChunks(sqlite: Database, opts: SearchOptions): Snippet[] {
  const match = ftsQuery(opts.query);
  if (match === null || opts.kbIds.length === 0) return [];
  const f = filterSql(opts.filter);
  const candidates = Math.max(opts.topK * 3, 20);
  const rows = sqlite
    .query<Row, SQLQueryBindings[]>(
      `SELECT c.id, c.kb_id, c.document_id, c.title, c.content, d.metadata, bm25(kb_chunks_fts, ${TITLE_WEIGHT}, 1.0) AS rank
       FROM kb_chunks_fts
       JOIN kb_chunks c ON c.id = kb_chunks_fts.rowid
       JOIN kb_documents d ON d.id = c.document_id
       WHERE kb_chunks_fts MATCH ? AND c.kb_id IN (${opts.kbIds.map(() => "?").join(", ")})${f.sql}
       ORDER BY rank LIMIT ?`,
    )
    .all(match, ...opts.kbIds, ...f.params, candidates);
  if (rows.length === 0) return [];

  const queryKeys = new Set(termKeys(opts.query));
  const best = -(rows[0] as Row).rank || 1;
  const scored = rows.map((r) => {
    const keys = new Set(termKeys(`${r.title ?? ""} ${r.content}`));
    let covered = 0;
    for (const k of queryKeys) if (keys.has(k)) covered++;
    const coverage = queryKeys.size ? covered / queryKeys.size : 0;
    const relative = Math.max(0, -r.rank) / best;
    return { r, score: coverage * (0.5 + 0.5 * relative), relative };
  });
  scored.sort((a, b) => b.score - a.score || b.relative - a.relative);
  return scored.slice(0, opts.topK).map(({ r, score }) => ({
    title: r.title,
    content: r.content,
    score: Math.round(Math.min(1, score) * 1000) / 1000,
    document_id: r.document_id,
    knowledge_base_id: r.kb_id,
    metadata: JSON.parse(r.metadata) as Record<string, unknown>,
  }));
}
