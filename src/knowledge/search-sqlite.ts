/**
 * Search in the embedded SQLite file, with BM25 computed from the searched bases' statistics only
 * (bm25.ts, shared with PostgreSQL): FTS5's own bm25() counts every tenant's chunks in the table,
 * so another account's documents would move scores and could be probed through them.
 *
 * For each of the query's tokens a search reads its instances (chunk, column, offset) from FTS5's
 * index through an fts5vocab table (kb_chunks_vocab) and keeps those in the searched bases'
 * chunks, whose ids and token counts are held per node and revision. From them come each
 * phrase's frequency in each chunk, the chunks holding each phrase and word, and BM25 for every
 * match; ranking.ts then scores the best. The index holds every base's instances: a token with
 * more than READ_PER_CHUNK instances per searched chunk (common in the file, or in the searched
 * bases) is not read; its phrases are counted by FTS5 within the searched bases instead, each
 * match's frequency recovered exactly from two bm25() values (decodedHits). The results never
 * depend on the rest of the file; the cost does, as FTS5's bm25() did. The same code serves
 * stored knowledge bases and the inline variant (an in-memory copy of the schema), so both rank
 * alike.
 */
import type { Database, SQLQueryBindings } from "bun:sqlite";
import { varints } from "../storage/fts5";
import { averageLength, bm25Idf, bm25LengthFactor, bm25Term, positionWeight, type QueryTerms, queryTerms } from "./bm25";
import { contentPosition, titlePosition } from "./fts-tokens";
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

export { chunkTerms } from "./ranking";

const quote = (s: string) => `"${s.replace(/"/g, "")}"`;

/**
 * The FTS5 MATCH expression for phrases (surface text, each quoted so user text is never read
 * as FTS syntax; OR-ed) in the title or content of the given knowledge bases' chunks. Null when
 * no phrase holds a token.
 */
function matchExpression(surfaces: string[], kbIds: string[]): string | null {
  if (surfaces.length === 0 || kbIds.length === 0) return null;
  return `kb_id : (${kbIds.map(quote).join(" OR ")}) AND {title content} : (${surfaces.map(quote).join(" OR ")})`;
}

/**
 * The MATCH expression for one phrase in the given bases' chunks, for decodedHits: each base by the
 * random part of its id alone (a stored id is two tokens, `kb` and 20 characters; every chunk of
 * the file holds `kb`, so matching the pair costs a pass over all of them for bm25()'s count). It
 * may match another base's chunk (ids are case-folded and stemmed there); the caller keeps to the
 * bases' chunks by id.
 */
function basesMatch(kbIds: string[], surface: string): string {
  return `kb_id : (${kbIds.map((id) => quote(id.slice(id.indexOf("_") + 1))).join(" OR ")}) AND {title content} : ${quote(surface)}`;
}

/** The MATCH expression for a natural-language query: every content word with its synonyms. */
export function ftsQuery(query: string, kbIds: string[]): string | null {
  return matchExpression(searchable(queryTerms(query)), kbIds);
}

/** The surfaces of the phrases that hold a token (as PostgreSQL's tsquery keeps them). */
const searchable = (terms: QueryTerms) => terms.surfaces.filter((_, i) => (terms.phrases[i]?.length ?? 0) > 0);

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

/** The chunks of the searched bases: what BM25 needs of them. */
export interface BaseChunks {
  /** chunk ids, ascending */
  ids: Float64Array;
  /** each chunk's FTS5 token count (BM25's document length), in the order of `ids` */
  lengths: Int32Array;
  /** their sum */
  tokens: number;
}

function readChunks(sqlite: Database, kbId: string): BaseChunks {
  // covered by kb_chunks_kb_idx (kb_id, id, tokens), in id order
  const rows = sqlite
    .query<[number, number], [string]>("SELECT id, tokens FROM kb_chunks WHERE kb_id = ? ORDER BY id")
    .values(kbId) as [number, number][];
  const ids = new Float64Array(rows.length);
  const lengths = new Int32Array(rows.length);
  let tokens = 0;
  rows.forEach(([id, n], i) => {
    ids[i] = id;
    lengths[i] = n;
    tokens += n;
  });
  return { ids, lengths, tokens };
}

/**
 * Chunks held per node, per base and revision (which moves on every document change), least
 * recently used first out; bounded by chunks held, 12 bytes each (12 MB).
 */
export const MAX_HELD_CHUNKS = 1_000_000;
const held = new WeakMap<Database, Map<string, { revision: number; chunks: BaseChunks }>>();

function baseChunks(sqlite: Database, kbId: string, revision: number | undefined): BaseChunks {
  // the inline index's base has no row, and no revision: it is read each time
  if (revision === undefined) return readChunks(sqlite, kbId);
  let cache = held.get(sqlite);
  if (!cache) {
    cache = new Map();
    held.set(sqlite, cache);
  }
  const hit = cache.get(kbId);
  if (hit && hit.revision === revision) {
    cache.delete(kbId);
    cache.set(kbId, hit);
    return hit.chunks;
  }
  const chunks = readChunks(sqlite, kbId);
  cache.delete(kbId);
  cache.set(kbId, { revision, chunks });
  let total = 0;
  for (const e of cache.values()) total += e.chunks.ids.length;
  for (const [id, e] of cache) {
    if (total <= MAX_HELD_CHUNKS || cache.size === 1) break;
    cache.delete(id);
    total -= e.chunks.ids.length;
  }
  return chunks;
}

/** The searched bases' chunks, merged in id order. */
export function searchedChunks(sqlite: Database, kbIds: string[]): BaseChunks {
  const revisions = new Map(
    sqlite
      .query<[string, number], string[]>(`SELECT id, revision FROM knowledge_bases WHERE id IN (${placeholders(kbIds.length)})`)
      .values(...kbIds) as [string, number][],
  );
  const parts = kbIds.map((id) => baseChunks(sqlite, id, revisions.get(id)));
  if (parts.length === 1) return parts[0] as BaseChunks;
  const order = parts.flatMap((p, b) => Array.from(p.ids, (id, i) => [id, b, i] as const)).sort((x, y) => x[0] - y[0]);
  const merged = { ids: new Float64Array(order.length), lengths: new Int32Array(order.length), tokens: 0 };
  order.forEach(([id, b, i], k) => {
    merged.ids[k] = id;
    merged.lengths[k] = (parts[b] as BaseChunks).lengths[i] as number;
  });
  for (const p of parts) merged.tokens += p.tokens;
  return merged;
}

/** A token's instances in the searched chunks: by slot (index in BaseChunks.ids) ascending, then by position. */
export interface Instances {
  slots: number[];
  positions: number[];
}

/** Index of `id` in the ascending `ids` at or after `from`, or -1. */
function slotOf(ids: Float64Array, id: number, from: number): number {
  let lo = from;
  let hi = ids.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = ids[mid] as number;
    if (v < id) lo = mid + 1;
    else if (v > id) hi = mid - 1;
    else return mid;
  }
  return -1;
}

/**
 * How many instances of a query token a search reads from the file's index; past it, the token's
 * phrases are counted by FTS5 within the searched bases instead (decodedHits). Reading costs about
 * 0.13 µs an instance, every base's alike; counting a phrase costs about 0.6 µs a match in the
 * searched bases, plus FTS5's own count of the chunks holding it in the whole file (bm25()'s
 * idf, about 0.03 µs each) and about 0.3 ms for the statement. So reading is cheaper while the
 * searched bases hold a good share of the file, counting when they are a small part of it and the
 * token is common. Chosen on the bench base (10,000 chunks; `--hot`: fixture words most frequent)
 * alone in its file, beside 5 and beside 20 other tenants' bases as large (`--tenants`): reading
 * up to 4 instances per searched chunk while the bases hold a tenth of the file's chunks, past
 * that half an instance per chunk (2,048 at least). A word with 5 instances per chunk of the base
 * and 30 per chunk in the file costs 9 ms counted and 40 ms read.
 */
export const READ_PER_CHUNK = { large: 4, small: 0.5, largeShare: 0.1 };
/** Instances of a token read whatever the bases' size: a small base reads a rare word's instances. */
const READ_FLOOR = 2048;

/** Instances of a token read for `chunks` searched chunks in a file of `fileChunks`. */
export function readLimit(chunks: number, fileChunks: number): number {
  const large = chunks >= READ_PER_CHUNK.largeShare * fileChunks;
  return Math.max(READ_FLOOR, (large ? READ_PER_CHUNK.large : READ_PER_CHUNK.small) * chunks);
}

/**
 * One token's instances in the searched chunks, read from FTS5's index (kb_chunks_vocab), or null
 * when the index holds more than `limit`. Every base's instances are read and those of other bases
 * dropped here, so the cost, never the result, depends on the rest of the file.
 */
export function indexInstances(
  sqlite: Database,
  chunks: BaseChunks,
  token: string,
  limit = Number.POSITIVE_INFINITY,
): Instances | null {
  const rows = sqlite
    .query<[number, number, number], [string, number]>(
      "SELECT doc, col = 'title', offset FROM kb_chunks_vocab WHERE term = ? AND col <> 'kb_id' LIMIT ?",
    )
    .values(token, Number.isFinite(limit) ? limit + 1 : -1) as [number, number, number][];
  if (rows.length > limit) return null;
  const slots: number[] = [];
  const positions: number[] = [];
  let from = 0;
  let lastDoc = -1;
  let slot = -1;
  for (const [doc, title, offset] of rows) {
    if (doc !== lastDoc) {
      // rows come in chunk order: each search starts where the last one ended
      if (doc < lastDoc) from = 0;
      slot = slotOf(chunks.ids, doc, from);
      if (slot >= 0) from = slot;
      lastDoc = doc;
    }
    if (slot < 0) continue;
    slots.push(slot);
    positions.push(title ? titlePosition(offset) : contentPosition(offset));
  }
  return { slots, positions };
}

/** The file's chunks and their average length, as bm25() reads them from FTS5's averages record (kb_chunks_fts_data, id 1: the rows in the table, then each column's tokens, as varints). */
function fileTotals(sqlite: Database): { rows: number; avgdl: number } {
  const block = sqlite.query<{ block: Uint8Array }, []>("SELECT block FROM kb_chunks_fts_data WHERE id = 1").get()?.block;
  const [rows = 0, ...columns] = block ? varints(block) : [];
  return { rows, avgdl: rows > 0 ? columns.reduce((a, b) => a + b, 0) / rows : 1 };
}

/** One phrase's weighted frequency in each chunk holding it (as FTS5 counts phrase instances; bm25.ts phraseFrequencies). */
interface PhraseHits {
  slots: number[];
  freqs: number[];
}

function phraseHits(tokens: string[], instances: Map<string, Instances>): PhraseHits {
  const out: PhraseHits = { slots: [], freqs: [] };
  const first = instances.get(tokens[0] ?? "");
  if (!first) return out;
  const rest = tokens.slice(1).map((t) => instances.get(t) ?? { slots: [], positions: [] });
  // where each slot's positions start in each further token's list
  const starts = rest.map((inst) => {
    const at = new Map<number, number>();
    inst.slots.forEach((s, i) => {
      if (!at.has(s)) at.set(s, i);
    });
    return at;
  });
  /** whether the k-th further token is at `pos` in chunk `slot` */
  const holds = (k: number, slot: number, pos: number) => {
    const inst = rest[k] as Instances;
    let i = starts[k]?.get(slot);
    if (i === undefined) return false;
    for (; i < inst.slots.length && inst.slots[i] === slot; i++) {
      const p = inst.positions[i] as number;
      if (p === pos) return true;
      if (p > pos) return false;
    }
    return false;
  };
  const { slots, positions } = first;
  let slot = -1;
  let f = 0;
  let prev = Number.NaN;
  for (let i = 0; i <= slots.length; i++) {
    const s = i < slots.length ? (slots[i] as number) : -1;
    if (s !== slot) {
      if (f > 0) {
        out.slots.push(slot);
        out.freqs.push(f);
      }
      slot = s;
      f = 0;
      prev = Number.NaN;
    }
    if (s < 0) break;
    // each distinct position once (positions are capped, so neighbours may repeat)
    const pos = positions[i] as number;
    if (pos === prev) continue;
    prev = pos;
    let whole = true;
    for (let k = 0; whole && k < rest.length; k++) whole = holds(k, s, pos + k + 1);
    if (whole) f += positionWeight(pos);
  }
  return out;
}

/**
 * One phrase's weighted frequency in each chunk of the searched bases holding it, counted by FTS5
 * within those bases (a MATCH on their ids) instead of read from positions: for a common token,
 * whose instances in the file are many more than the searched bases' matches. bm25() with the
 * title and content weights (2, 1) and doubled (4, 2) gives each match s(f) and s(2f), where
 * s(f) = idf f (k1 + 1) / (f + K), K = k1 (1 - b + b length / average length in the file); their
 * ratio r = 2 (f + K) / (2f + K) leaves out FTS5's whole-table idf, and f = K (2 - r) / (2 (r - 1)).
 * f is a whole number (a sum of weights 2 and 1); null if one is not (the caller reads positions).
 */
function decodedHits(sqlite: Database, chunks: BaseChunks, match: string, avgdl: number): PhraseHits | null {
  const out: PhraseHits = { slots: [], freqs: [] };
  const rows = sqlite
    .query<[number, number, number], [string]>(
      "SELECT rowid, bm25(kb_chunks_fts, 0.0, 2.0, 1.0), bm25(kb_chunks_fts, 0.0, 4.0, 2.0) FROM kb_chunks_fts WHERE kb_chunks_fts MATCH ?",
    )
    .values(match) as [number, number, number][];
  let from = 0;
  let last = -1;
  for (const [id, once, twice] of rows) {
    // rows come in id order, as in indexInstances
    if (id < last) from = 0;
    last = id;
    const slot = slotOf(chunks.ids, id, from);
    if (slot < 0) continue;
    from = slot;
    const k = bm25LengthFactor(chunks.lengths[slot] as number, avgdl);
    const r = twice / once;
    const f = (k * (2 - r)) / (2 * (r - 1));
    const whole = Math.round(f);
    if (!(whole >= 1 && Math.abs(f - whole) < 1e-6 * whole)) return null;
    out.slots.push(slot);
    out.freqs.push(whole);
  }
  return out;
}

/** The chunk ids among `ids` whose document passes the metadata filter. */
function passingFilter(sqlite: Database, ids: number[], filter: FilterMetadata): Set<number> {
  const f = filterSql(filter);
  return new Set(
    sqlite
      .query<[number], SQLQueryBindings[]>(
        `SELECT c.id FROM kb_chunks c JOIN kb_documents d ON d.id = c.document_id
         WHERE c.id IN (SELECT value FROM json_each(?))${f.sql}`,
      )
      .values(JSON.stringify(ids), ...f.params)
      .map(([id]) => id as number),
  );
}

/** Full rows of the given chunks, under the same base and metadata restrictions. */
function rowsOf(sqlite: Database, opts: SearchOptions, ids: number[]): Map<number, CandidateRow> {
  if (ids.length === 0) return new Map();
  const f = filterSql(opts.filter);
  const rows = sqlite
    .query<CandidateRow, SQLQueryBindings[]>(
      `SELECT ${ROW}, 0 AS rank FROM kb_chunks c JOIN kb_documents d ON d.id = c.document_id
       WHERE c.id IN (${placeholders(ids.length)}) AND c.kb_id IN (${placeholders(opts.kbIds.length)})${f.sql}`,
    )
    .all(...ids, ...opts.kbIds, ...f.params);
  return new Map(rows.map((r) => [r.id, r]));
}

/** What a search computed before ranking (tests compare it). */
export interface Bm25Result {
  /** the best `limit` matches, best first, with their BM25 */
  ranked: { id: number; score: number }[];
  /** the query's words (queryWords) and the chunks of the searched bases holding each (or a synonym) */
  words: string[];
  wordHits: number[];
  chunks: number;
  /** phrases counted by FTS5 within the bases (decodedHits), not from positions read */
  decoded: number;
}

/**
 * BM25 of the searched bases' matches of the query, from their statistics alone; the `limit` best
 * (ties by id). `perChunk` (instances of a token read from the index, per searched chunk, before
 * FTS5 counts its phrases): only for tests.
 */
export function searchBm25(sqlite: Database, opts: SearchOptions, limit: number, perChunk?: number): Bm25Result {
  const kbIds = [...new Set(opts.kbIds)];
  const chunks = searchedChunks(sqlite, kbIds);
  const n = chunks.ids.length;
  const terms = queryTerms(opts.query);
  const { phrases, expansions } = terms;

  // each token's instances, unless it is common: then its phrases are counted by FTS5
  const file = n === 0 ? { rows: 0, avgdl: 1 } : fileTotals(sqlite);
  const budget = perChunk === undefined ? readLimit(n, file.rows) : perChunk * n;
  const instances = new Map<string, Instances>();
  const common = new Set<string>();
  for (const token of new Set(n === 0 ? [] : phrases.flat())) {
    const read = indexInstances(sqlite, chunks, token, budget);
    if (read) instances.set(token, read);
    else common.add(token);
  }
  let decoded = 0;
  const counted = new Map<string, PhraseHits>();
  const hits = phrases.map((p, i) => {
    const key = p.join(" ");
    let h = counted.get(key);
    if (h) return h;
    if (p.some((t) => common.has(t))) {
      h = decodedHits(sqlite, chunks, basesMatch(kbIds, terms.surfaces[i] as string), file.avgdl) ?? undefined;
      if (h) decoded++;
      // not whole numbers (never seen): the phrase's positions, however many
      else for (const t of p) if (!instances.has(t)) instances.set(t, indexInstances(sqlite, chunks, t) as Instances);
    }
    h ??= p.length === 0 ? { slots: [], freqs: [] } : phraseHits(p, instances);
    // a phrase twice in the query (two words with one stem) is counted once, and scores twice, as in FTS5
    counted.set(key, h);
    return h;
  });

  // chunks holding each word: any of its phrases
  const stamp = new Int32Array(n);
  const wordHits = expansions.map((idx, j) => {
    let count = 0;
    for (const i of idx) {
      for (const s of hits[i]?.slots ?? []) {
        if (stamp[s] !== j + 1) {
          stamp[s] = j + 1;
          count++;
        }
      }
    }
    return count;
  });

  // BM25, phrase by phrase in the query's order (as bestByBm25 adds them up)
  const avgLength = averageLength({ chunks: n, tokens: chunks.tokens });
  const scores = new Float64Array(n);
  const matched = new Uint8Array(n);
  let slots: number[] = [];
  for (const h of hits) {
    const idf = bm25Idf(n, h.slots.length);
    h.slots.forEach((s, k) => {
      scores[s] += bm25Term(idf, h.freqs[k] as number, chunks.lengths[s] as number, avgLength);
      if (matched[s] === 0) {
        matched[s] = 1;
        slots.push(s);
      }
    });
  }
  if (Object.keys(opts.filter ?? {}).length > 0 && slots.length > 0) {
    const pass = passingFilter(
      sqlite,
      slots.map((s) => chunks.ids[s] as number),
      opts.filter as FilterMetadata,
    );
    slots = slots.filter((s) => pass.has(chunks.ids[s] as number));
  }
  if (slots.length > limit) {
    // the limit-th best score: only chunks scoring at least that are sorted
    const sorted = Float64Array.from(slots, (s) => scores[s] as number).sort();
    const floor = sorted[sorted.length - limit] as number;
    slots = slots.filter((s) => (scores[s] as number) >= floor);
  }
  const ranked = slots
    .map((s) => ({ id: chunks.ids[s] as number, score: scores[s] as number }))
    .sort((a, b) => b.score - a.score || a.id - b.id)
    .slice(0, limit);
  return { ranked, words: terms.words, wordHits, chunks: n, decoded };
}

function search(sqlite: Database, opts: SearchOptions, vectors?: VectorHits): Snippet[] {
  const { ranked, words, wordHits, chunks } = searchBm25(sqlite, opts, candidateLimit(opts.topK));
  const weights = keyWeightsFromCounts(opts.query, chunks, words, wordHits);

  const { ids, vectorOnly } = candidateIds(ranked, vectors);
  const candidates = candidatesInOrder(ranked, vectorOnly, rowsOf(sqlite, opts, ids));
  if (candidates.length === 0) return [];
  return rankCandidates(candidates, weights, opts, vectors);
}

/** Best chunks first (see rankCandidates), read in one transaction: the statistics and the matches agree. */
export function searchChunks(sqlite: Database, opts: SearchOptions, vectors?: VectorHits): Snippet[] {
  if (opts.kbIds.length === 0) return [];
  if (sqlite.inTransaction) return search(sqlite, opts, vectors);
  sqlite.exec("BEGIN");
  try {
    return search(sqlite, opts, vectors);
  } finally {
    sqlite.exec("COMMIT");
  }
}
