/**
 * Search in PostgreSQL. The tsvector of each chunk holds FTS5's tokens (fts-tokens.ts), so the
 * GIN index finds the same candidates FTS5 finds and counts the same chunks per word. BM25 is then
 * computed here with FTS5's formula (k1 1.2, b 0.75, title weight 2), from each candidate's
 * positions of the query's tokens, and ranking.ts scores the best of them, as on SQLite.
 * Differences, by design: the statistics (chunk count, average length, chunks per phrase) are
 * those of the searched bases, where FTS5 uses the whole table (every tenant's chunks); and past
 * MAX_CANDIDATES matching chunks, PostgreSQL's ts_rank picks which ones BM25 sees.
 */

import type { PgStorage } from "../storage/postgres";
import { phraseQuery, tokenizePhrases } from "./fts-tokens";
import type { SearchOptions, VectorHits } from "./interface";
import { type CandidateRow, candidateLimit, keyWeights, queryPhrases, queryWords, rankCandidates } from "./ranking";
import type { FilterMetadata, Snippet } from "./schemas";
import { expandWord } from "./text";

/** Matching chunks whose BM25 is computed per search; beyond, ts_rank preselects. */
export const MAX_CANDIDATES = 2000;

const K1 = 1.2;
const B = 0.75;
/** bm25() weights of SQLite (title 2, content 1), by tsvector weight label. */
const WEIGHT: Record<string, number> = { A: 2, B: 1 };

const orQuery = (phrases: string[][]) =>
  phrases
    .filter((p) => p.length > 0)
    .map((p) => `(${phraseQuery(p)})`)
    .join(" | ");

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
  /** [lexeme, positions, weights] of the query's tokens in the chunk */
  hits: [string, number[], string[]][];
}

/** How often each phrase occurs in a chunk, weighted by column, as FTS5 counts phrase instances. */
function phraseFrequencies(hit: Hit, phrases: string[][]): number[] {
  const at = new Map<string, Map<number, string>>();
  for (const [lexeme, positions, weights] of hit.hits) {
    at.set(lexeme, new Map(positions.map((p, i) => [p, weights[i] ?? "D"])));
  }
  return phrases.map((tokens) => {
    const first = at.get(tokens[0] ?? "");
    if (!first || tokens.length === 0) return 0;
    let f = 0;
    for (const [pos, weight] of first) {
      if (tokens.every((t, k) => k === 0 || at.get(t)?.has(pos + k))) f += WEIGHT[weight] ?? 0;
    }
    return f;
  });
}

export async function searchPostgres(pg: PgStorage, opts: SearchOptions, vectors?: VectorHits): Promise<Snippet[]> {
  if (opts.kbIds.length === 0) return [];
  const surfaces = queryPhrases(opts.query);
  const tokenized = tokenizePhrases(surfaces);
  const tokensOf = new Map(surfaces.map((s, i) => [s, tokenized[i] ?? []]));
  const phrases = surfaces.map((s) => tokensOf.get(s) ?? []);
  const words = queryWords(opts.query);
  const wordQueries = words.map((w) => orQuery(expandWord(w).map((e) => tokensOf.get(e.replace(/"/g, "")) ?? [])));
  const all = orQuery(phrases);

  // statistics of the searched bases: chunks, their total length, chunks per phrase and per word
  const counted = [...phrases.map((p) => (p.length ? phraseQuery(p) : "")), ...wordQueries];
  const [[totals], perQuery] = await Promise.all([
    pg.sql`SELECT count(*)::int AS n, coalesce(sum(tokens), 0)::float8 AS tokens FROM kb_chunks WHERE kb_id = ANY(${opts.kbIds}::text[])`,
    pg.sql`
      SELECT u.i::int AS i, CASE WHEN u.q = '' THEN 0 ELSE (
        SELECT count(*)::int FROM kb_chunks WHERE kb_id = ANY(${opts.kbIds}::text[]) AND tsv @@ u.q::tsquery) END AS n
      FROM unnest(${counted}::text[]) WITH ORDINALITY AS u(q, i)`,
  ]);
  const n = Number(totals?.n ?? 0);
  const counts = new Array<number>(counted.length).fill(0);
  for (const r of perQuery as { i: number; n: number }[]) counts[r.i - 1] = r.n;
  const dfOf = new Map(words.map((w, j) => [w, counts[phrases.length + j] ?? 0]));
  const weights = keyWeights(opts.query, n, (w) => dfOf.get(w) ?? 0);

  let ranked: { id: number; score: number }[] = [];
  if (all && n > 0) {
    const params: unknown[] = [opts.kbIds, all, [...new Set(phrases.flat())], MAX_CANDIDATES];
    const filter = filterSql(opts.filter, params);
    const join = filter ? " JOIN kb_documents d ON d.id = c.document_id" : "";
    const hits = (await pg.sql.unsafe(
      `SELECT c.id, c.tokens, (SELECT coalesce(json_agg(json_build_array(u.lexeme, u.positions, u.weights)), '[]'::json)
         FROM unnest(c.tsv) u WHERE u.lexeme = ANY($3::text[])) AS hits
       FROM kb_chunks c${join}
       WHERE c.kb_id = ANY($1::text[]) AND c.tsv @@ $2::tsquery${filter}
       ORDER BY ts_rank(c.tsv, $2::tsquery) DESC, c.id LIMIT $4`,
      params,
    )) as Hit[];
    const avgdl = Number(totals?.tokens ?? 0) / n;
    const idf = phrases.map((_, i) => {
      const hit = counts[i] ?? 0;
      const v = Math.log((n - hit + 0.5) / (hit + 0.5));
      return v <= 0 ? 1e-6 : v;
    });
    ranked = hits.map((h) => {
      const freq = phraseFrequencies({ ...h, id: Number(h.id) }, phrases);
      const d = Number(h.tokens);
      let score = 0;
      freq.forEach((f, i) => {
        score += (idf[i] as number) * ((f * (K1 + 1)) / (f + K1 * (1 - B + (B * d) / avgdl)));
      });
      return { id: Number(h.id), score };
    });
    ranked.sort((a, b) => b.score - a.score || a.id - b.id);
    ranked = ranked.slice(0, candidateLimit(opts.topK));
  }

  const lexical = new Set(ranked.map((r) => r.id));
  const vectorOnly = (vectors?.nearest ?? []).map((h) => h.id).filter((id) => !lexical.has(id));
  const ids = [...lexical, ...vectorOnly];
  if (ids.length === 0) return [];
  const params: unknown[] = [ids, opts.kbIds];
  const filter = filterSql(opts.filter, params);
  const rows = (await pg.sql.unsafe(
    `SELECT c.id, c.kb_id, c.document_id, c.title, c.content, c.terms, d.metadata::text AS metadata,
       ${vectors ? "c.embedding" : "NULL AS embedding"}
     FROM kb_chunks c JOIN kb_documents d ON d.id = c.document_id
     WHERE c.id = ANY($1::bigint[]) AND c.kb_id = ANY($2::text[])${filter}`,
    params,
  )) as CandidateRow[];
  const byId = new Map(rows.map((r) => [Number(r.id), { ...r, id: Number(r.id) }]));
  const candidates: CandidateRow[] = [];
  for (const r of ranked) {
    const row = byId.get(r.id);
    if (row) candidates.push({ ...row, rank: -r.score });
  }
  for (const id of vectorOnly.sort((a, b) => a - b)) {
    const row = byId.get(id);
    if (row) candidates.push({ ...row, rank: 0 });
  }
  return rankCandidates(candidates, weights, opts, vectors);
}
