/**
 * Search in PostgreSQL. The tsvector of each chunk holds FTS5's tokens (fts-tokens.ts), so the
 * GIN index finds the same candidates FTS5 finds and counts the same chunks per word. BM25
 * (bm25.ts, shared with SQLite) is computed from each candidate's positions of the query's tokens
 * and the statistics of the searched bases, and ranking.ts scores the best of them, as on SQLite.
 * One difference: past MAX_CANDIDATES matching chunks, PostgreSQL's ts_rank picks which ones BM25
 * sees (SQLite scores every match).
 */

import { awaitOutsideCpuBudget } from "../offline-engine/budget";
import type { PgStorage } from "../storage/postgres";
import { bestByBm25, hitCounts, phraseFrequencies, queryTerms } from "./bm25";
import { parseTsvector, phraseQuery } from "./fts-tokens";
import type { SearchOptions, VectorHits } from "./interface";
import {
  type CandidateRow,
  candidateIds,
  candidateLimit,
  candidatesInOrder,
  keyWeightsFromCounts,
  rankCandidates,
} from "./ranking";
import type { FilterMetadata, Snippet } from "./schemas";

/** Matching chunks whose BM25 is computed per search; beyond, ts_rank preselects. */
export const MAX_CANDIDATES = 10_000;

const orQuery = (phrases: string[][]) =>
  phrases
    .filter((p) => p.length > 0)
    .map((p) => `(${phraseQuery(p)})`)
    .join(" | ");

const hasFilter = (filter: FilterMetadata | undefined) => Object.keys(filter ?? {}).length > 0;

/** Metadata filter as SQL over `d.metadata` (json), matching what SQLite's json_extract matches. */
function filterSql(filter: FilterMetadata | undefined, params: unknown[]): string {
  let out = "";
  for (const [key, want] of Object.entries(filter ?? {})) {
    // json_extract reads true as 1 and false as 0, so on SQLite a boolean and its number match each other
    const values = (Array.isArray(want) ? want : [want]).flatMap((v): (string | number | boolean)[] =>
      typeof v === "boolean" ? [v, v ? 1 : 0] : v === 1 || v === 0 ? [v, v === 1] : [v],
    );
    params.push(
      key.replace(/["\\]/g, ""),
      values.map((v) => JSON.stringify(v)),
    );
    out += ` AND (d.metadata -> $${params.length - 1}::text)::jsonb = ANY($${params.length}::text[]::jsonb[])`;
  }
  return out;
}

interface Hit {
  id: number;
  tokens: number;
  /** the chunk's tsvector cut down to the query's tokens, as text */
  hits: string;
}

/**
 * Chunks matching any phrase, each with its positions of the query's tokens (the tsvector cut
 * down in SQL: every lexeme weighted D, the query's re-weighted A, the rest filtered out). Only
 * when more than MAX_CANDIDATES match does ts_rank choose which.
 */
async function matching(
  pg: PgStorage,
  opts: SearchOptions,
  all: string,
  lexemes: string[],
  max: number,
): Promise<{ rows: Hit[]; complete: boolean }> {
  const params: unknown[] = [opts.kbIds, all, lexemes];
  const filter = filterSql(opts.filter, params);
  const join = filter ? " JOIN kb_documents d ON d.id = c.document_id" : "";
  const query = (order: string, limit: number) =>
    pg.sql.unsafe(
      `SELECT c.id, c.tokens, ts_filter(setweight(setweight(c.tsv, 'D'), 'A', $3::text[]), '{a}')::text AS hits
       FROM kb_chunks c${join}
       WHERE c.kb_id = ANY($1::text[]) AND c.tsv @@ $2::tsquery${filter}${order} LIMIT ${limit}`,
      params,
    ) as Promise<Hit[]>;
  const rows = await query("", max + 1);
  if (rows.length <= max) return { rows, complete: true };
  return { rows: await query(" ORDER BY ts_rank(c.tsv, $2::tsquery) DESC, c.id", max), complete: false };
}

export async function searchPostgres(
  pg: PgStorage,
  opts: SearchOptions,
  vectors?: VectorHits,
  maxCandidates = MAX_CANDIDATES,
): Promise<Snippet[]> {
  if (opts.kbIds.length === 0) return [];
  const terms = queryTerms(opts.query);
  const { phrases, words, expansions } = terms;
  const all = orQuery(phrases);

  // the searched bases' size and the matching chunks, in parallel
  // waits for the database are not the offline call's CPU work (awaitOutsideCpuBudget)
  const [[totals], hits] = await awaitOutsideCpuBudget(
    Promise.all([
      pg.sql`SELECT count(*)::int AS n, coalesce(sum(tokens), 0)::float8 AS tokens FROM kb_chunks WHERE kb_id = ANY(${opts.kbIds}::text[])`,
      all ? matching(pg, opts, all, [...new Set(phrases.flat())], maxCandidates) : Promise.resolve({ rows: [], complete: true }),
    ]),
  );
  const n = Number(totals?.n ?? 0);
  const freqs = hits.rows.map((h) => phraseFrequencies(parseTsvector(h.hits), phrases));

  // chunks holding each phrase and each word: counted from the matches when they are all of them
  // (no filter, not cut at the candidate bound), else in one more pass over the matches
  let phraseHits: number[];
  let wordHits: number[];
  if (!all) {
    phraseHits = phrases.map(() => 0);
    wordHits = words.map(() => 0);
  } else if (hits.complete && !hasFilter(opts.filter)) {
    ({ phraseHits, wordHits } = hitCounts(freqs, terms));
  } else {
    const wordQueries = expansions.map((idx) => orQuery(idx.map((i) => phrases[i] ?? [])));
    const counted = [...phrases.map((p) => (p.length ? phraseQuery(p) : "")), ...wordQueries];
    // one pass over the chunks matching any phrase, each tested against every phrase and word
    const params: unknown[] = [opts.kbIds, all];
    const columns = counted.map((q) => {
      if (!q) return "0";
      params.push(q);
      return `count(*) FILTER (WHERE tsv @@ $${params.length}::tsquery)::int`;
    });
    const [row] = (await awaitOutsideCpuBudget(
      pg.sql.unsafe(
        `SELECT ARRAY[${columns.join(", ")}] AS counts FROM kb_chunks WHERE kb_id = ANY($1::text[]) AND tsv @@ $2::tsquery`,
        params,
      ),
    )) as { counts: number[] }[];
    const counts = (row?.counts ?? []).map(Number);
    phraseHits = counts.slice(0, phrases.length);
    wordHits = counts.slice(phrases.length);
  }
  const weights = keyWeightsFromCounts(opts.query, n, words, wordHits);
  const ranked = bestByBm25(
    hits.rows.map((h, r) => ({ id: Number(h.id), tokens: Number(h.tokens), freqs: freqs[r] as number[] })),
    { chunks: n, tokens: Number(totals?.tokens ?? 0), phraseHits },
    candidateLimit(opts.topK),
  );

  const { ids, vectorOnly } = candidateIds(ranked, vectors);
  if (ids.length === 0) return [];
  const params: unknown[] = [ids, opts.kbIds];
  const filter = filterSql(opts.filter, params);
  const rows = (await awaitOutsideCpuBudget(
    pg.sql.unsafe(
      `SELECT c.id, c.kb_id, c.document_id, c.title, c.content, c.terms, d.metadata::text AS metadata,
       ${vectors ? "c.embedding" : "NULL AS embedding"}
     FROM kb_chunks c JOIN kb_documents d ON d.id = c.document_id
     WHERE c.id = ANY($1::bigint[]) AND c.kb_id = ANY($2::text[])${filter}`,
      params,
    ),
  )) as CandidateRow[];
  const byId = new Map(rows.map((r) => [Number(r.id), { ...r, id: Number(r.id) }]));
  return rankCandidates(candidatesInOrder(ranked, vectorOnly, byId), weights, opts, vectors);
}
