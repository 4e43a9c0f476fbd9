/**
 * Search in the embedded SQLite file, with BM25 computed from the searched bases' statistics only
 * (bm25.ts, shared with PostgreSQL): FTS5's own bm25() counts every tenant's chunks in the table,
 * so another account's documents would move scores and could be probed through them.
 *
 * A search reads, for each of the query's tokens, its instances (chunk, column, offset) from FTS5's
 * index through an fts5vocab table (kb_chunks_vocab), keeps those in the searched bases' chunks
 * (their ids and token counts are held per node and revision), and from them counts each phrase
 * in each chunk, the chunks holding each phrase and word, and BM25 for every match; ranking.ts
 * then scores the best. No MATCH query runs: the instances are the matches. The index holds
 * every base's instances, so when other bases hold far more of them than the searched ones could
 * (READ_PER_CHUNK), the searched bases' matches are found by FTS5 and tokenized instead
 * (fts-tokens.ts), whichever costs less. The same code serves stored knowledge bases and the
 * inline variant (an in-memory copy of the schema), so both rank alike.
 */
import type { Database, SQLQueryBindings } from "bun:sqlite";
import { averageLength, bm25Idf, bm25Term, positionWeight, type QueryTerms, queryTerms } from "./bm25";
import { contentPosition, termPositions, titlePosition } from "./fts-tokens";
import type { SearchOptions, VectorHits } from "./interface";
import { type CandidateRow, candidateLimit, keyWeights, rankCandidates } from "./ranking";
import type { FilterMetadata, Snippet } from "./schemas";

export { chunkTerms, DEFAULT_MIN_SCORE } from "./ranking";

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
 * Instances of the query's tokens read from the file's index, per chunk of the searched bases,
 * before a search asks whether tokenizing their matches would cost less (other bases may hold far
 * more of those instances than the searched ones). In the 10,000-chunk bench base, alone in its
 * file, a query's tokens have about 0.7 instances per chunk, at most 4.
 */
export const READ_PER_CHUNK = 16;
/** Instances read before that question is asked at all: about what tokenizing 20 chunks costs. */
const READ_FLOOR = 1024;
/** Tokenizing a chunk costs about as much as reading this many instances from the index (about 14 µs against 0.25). */
export const TOKENIZE_COST = 50;

/** How much a search reads from the index before it considers tokenizing (tests force either way). */
export interface ReadBudget {
  /** instances read before the question */
  instances: number;
  /** what tokenizing a match costs, in instances read */
  tokenizeCost: number;
}

/** How a search found its positions (tests look). */
export type PositionSource = "index" | "tokenized";

/**
 * Each token's instances in the searched chunks, read from FTS5's index (kb_chunks_vocab) up to
 * `limit` instances in all; null past it. Every base's instances are read and those of other
 * bases dropped here, so the cost, never the result, depends on the rest of the file.
 */
export function indexInstances(
  sqlite: Database,
  chunks: BaseChunks,
  tokens: string[],
  limit = Number.POSITIVE_INFINITY,
): Map<string, Instances> | null {
  const out = new Map<string, Instances>();
  const read = sqlite.query<[number, number, number], [string, number]>(
    "SELECT doc, col = 'title', offset FROM kb_chunks_vocab WHERE term = ? AND col <> 'kb_id' LIMIT ?",
  );
  let left = limit;
  for (const token of tokens) {
    const rows = read.values(token, Number.isFinite(left) ? left + 1 : -1) as [number, number, number][];
    left -= rows.length;
    if (left < 0) return null;
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
    out.set(token, { slots, positions });
  }
  return out;
}

/** The searched bases' chunks matching any phrase, found by FTS5 (ids ascending, kept to the bases exactly). */
export function matchingSlots(sqlite: Database, chunks: BaseChunks, match: string): number[] {
  const slots: number[] = [];
  for (const [id] of sqlite
    .query<[number], [string]>("SELECT rowid FROM kb_chunks_fts WHERE kb_chunks_fts MATCH ? ORDER BY rowid")
    .values(match) as [number][]) {
    const slot = slotOf(chunks.ids, id, 0);
    if (slot >= 0) slots.push(slot);
  }
  return slots;
}

/** The same instances from the matches' text, run through FTS5's tokenizer (fts-tokens.ts). */
export function tokenizedInstances(
  sqlite: Database,
  chunks: BaseChunks,
  slots: number[],
  tokens: string[],
): Map<string, Instances> {
  const ids = slots.map((s) => chunks.ids[s] as number);
  const text = new Map(
    sqlite
      .query<{ id: number; title: string | null; content: string }, [string]>(
        "SELECT id, title, content FROM kb_chunks WHERE id IN (SELECT value FROM json_each(?))",
      )
      .all(JSON.stringify(ids))
      .map((r) => [r.id, r]),
  );
  const found = termPositions(
    ids.map((id) => text.get(id) ?? { title: null, content: "" }),
    tokens,
  );
  const out = new Map<string, Instances>(tokens.map((t) => [t, { slots: [], positions: [] }]));
  found.forEach((at, r) => {
    for (const [token, positions] of at) {
      const list = out.get(token) as Instances;
      for (const pos of positions) {
        list.slots.push(slots[r] as number);
        list.positions.push(pos);
      }
    }
  });
  return out;
}

/**
 * Each token's instances in the searched chunks: from the index, or, when other bases hold far
 * more of them, from the text of the searched bases' matches, whichever costs less. Past the
 * budget, the matches are found (FTS5, within the bases) and tokenizing them is priced: if that is
 * no more than what was read, they are tokenized; else the index is read on, up to that price, and
 * only past it are they tokenized. A search so costs at most about twice the cheaper way, plus the
 * budget.
 */
function instancesOf(
  sqlite: Database,
  chunks: BaseChunks,
  tokens: string[],
  match: string,
  read: ReadBudget,
): { instances: Map<string, Instances>; source: PositionSource } {
  const first = indexInstances(sqlite, chunks, tokens, read.instances);
  if (first) return { instances: first, source: "index" };
  const slots = matchingSlots(sqlite, chunks, match);
  const tokenizing = slots.length * read.tokenizeCost;
  const all = tokenizing > read.instances ? indexInstances(sqlite, chunks, tokens, tokenizing) : null;
  if (all) return { instances: all, source: "index" };
  return { instances: tokenizedInstances(sqlite, chunks, slots, tokens), source: "tokenized" };
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
  source: PositionSource;
  /** the best `limit` matches, best first, with their BM25 */
  ranked: { id: number; score: number }[];
  /** the query's words (queryWords) and the chunks of the searched bases holding each (or a synonym) */
  words: string[];
  wordHits: number[];
  chunks: number;
}

/**
 * BM25 of the searched bases' matches of the query, from their statistics alone; the `limit` best
 * (ties by id). `read`: only for tests.
 */
export function searchBm25(sqlite: Database, opts: SearchOptions, limit: number, read?: ReadBudget): Bm25Result {
  const kbIds = [...new Set(opts.kbIds)];
  const chunks = searchedChunks(sqlite, kbIds);
  const n = chunks.ids.length;
  const terms = queryTerms(opts.query);
  const { phrases, expansions } = terms;
  const match = matchExpression(searchable(terms), kbIds);
  const tokens = [...new Set(phrases.flat())];
  const { instances, source } =
    match === null || n === 0
      ? { instances: new Map(), source: "index" as const }
      : instancesOf(
          sqlite,
          chunks,
          tokens,
          match,
          read ?? { instances: Math.max(READ_FLOOR, READ_PER_CHUNK * n), tokenizeCost: TOKENIZE_COST },
        );

  // a phrase twice in the query (two words with one stem) is counted once, and scores twice, as in FTS5
  const counted = new Map<string, PhraseHits>();
  const hits = phrases.map((p) => {
    const key = p.join(" ");
    let h = counted.get(key);
    if (!h) {
      h = p.length === 0 ? { slots: [], freqs: [] } : phraseHits(p, instances);
      counted.set(key, h);
    }
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
  const avgdl = averageLength({ chunks: n, tokens: chunks.tokens });
  const scores = new Float64Array(n);
  const matched = new Uint8Array(n);
  let slots: number[] = [];
  for (const h of hits) {
    const idf = bm25Idf(n, h.slots.length);
    h.slots.forEach((s, k) => {
      scores[s] += bm25Term(idf, h.freqs[k] as number, chunks.lengths[s] as number, avgdl);
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
  return { source, ranked, words: terms.words, wordHits, chunks: n };
}

function search(sqlite: Database, opts: SearchOptions, vectors?: VectorHits): Snippet[] {
  const { ranked, words, wordHits, chunks } = searchBm25(sqlite, opts, candidateLimit(opts.topK));
  const dfOf = new Map(words.map((w, j) => [w, wordHits[j] ?? 0]));
  const weights = keyWeights(opts.query, chunks, (w) => dfOf.get(w) ?? 0);

  const lexical = new Set(ranked.map((r) => r.id));
  const vectorOnly = (vectors?.nearest ?? []).map((h) => h.id).filter((id) => !lexical.has(id));
  const byId = rowsOf(sqlite, opts, [...lexical, ...vectorOnly]);
  const candidates: CandidateRow[] = [];
  for (const r of ranked) {
    const row = byId.get(r.id);
    if (row) candidates.push({ ...row, rank: -r.score });
  }
  for (const id of vectorOnly.sort((a, b) => a - b)) {
    const row = byId.get(id);
    if (row) candidates.push(row);
  }
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
