/**
 * SQLite FTS5's own tokenizer (porter unicode61 remove_diacritics 2, as drizzle/0004 declares it),
 * used outside SQLite: the PostgreSQL index stores exactly these tokens in its tsvector, so both
 * back-ends match the same words (PostgreSQL's english configuration stems differently and drops
 * stop words). An in-memory FTS5 table reads them back through fts5vocab, with their offsets.
 */
import { Database } from "bun:sqlite";
import { yieldToLoop } from "./slices";

let db: Database | null = null;

function tokenizer(): Database {
  if (!db) {
    db = new Database(":memory:");
    db.exec(
      "CREATE VIRTUAL TABLE t USING fts5(kb_id, title, content, tokenize = 'porter unicode61 remove_diacritics 2');" +
        "CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance');",
    );
  }
  return db;
}

export interface ChunkTokens {
  title: string[];
  content: string[];
  /** tokens of the whole FTS5 row (base id, title, content): the document length BM25 uses */
  count: number;
}

/** Rows per round: bounds the in-memory table on a large upload. */
const BATCH = 500;

/** FTS5's tokens of each row, in order, per column. */
export function tokenizeRows(rows: { kbId: string; title: string | null; content: string }[]): ChunkTokens[] {
  const run = tokenizeBatches(rows, BATCH);
  for (;;) {
    const step = run.next();
    if (step.done) return step.value;
  }
}

/** Rows per slice of an upload's tokenizing: about 50 KB of text, a few milliseconds. */
const SLICE_ROWS = 50;

/** tokenizeRows for an upload, SLICE_ROWS at a time with the event loop free between them. */
export async function tokenizeRowsInSlices(
  rows: { kbId: string; title: string | null; content: string }[],
): Promise<ChunkTokens[]> {
  const run = tokenizeBatches(rows, SLICE_ROWS);
  for (;;) {
    const step = run.next();
    if (step.done) return step.value;
    await yieldToLoop();
  }
}

/**
 * Tokenizes `batchRows` rows at a time, pausing between batches; returns every row's tokens. Each
 * batch leaves the shared table empty, so uploads tokenizing at once never see each other's rows.
 */
function* tokenizeBatches(
  rows: { kbId: string; title: string | null; content: string }[],
  batchRows: number,
): Generator<void, ChunkTokens[], void> {
  const t = tokenizer();
  const insert = t.query("INSERT INTO t (rowid, kb_id, title, content) VALUES (?, ?, ?, ?)");
  const read = t.query<{ doc: number; col: string; term: string }, []>("SELECT doc, col, term FROM v ORDER BY doc, col, offset");
  const out: ChunkTokens[] = rows.map(() => ({ title: [], content: [], count: 0 }));
  for (let at = 0; at < rows.length; at += batchRows) {
    if (at > 0) yield;
    const batch = rows.slice(at, at + batchRows);
    t.transaction(() => {
      batch.forEach((r, i) => {
        insert.run(at + i + 1, r.kbId, r.title, r.content);
      });
    })();
    for (const { doc, col, term } of read.all()) {
      const tokens = out[doc - 1] as ChunkTokens;
      tokens.count++;
      if (col === "title") tokens.title.push(term);
      else if (col === "content") tokens.content.push(term);
    }
    t.exec("DELETE FROM t");
  }
  return out;
}

/** The tokens of each phrase as FTS5 reads a quoted phrase of a MATCH expression. */
export function tokenizePhrases(phrases: string[]): string[][] {
  return tokenizeRows(phrases.map((p) => ({ kbId: "", title: null, content: p }))).map((t) => t.content);
}

/** tsvector positions run up to 16,383; chunks are far shorter (about 200 tokens). */
const MAX_POSITION = 16_383;

/**
 * Where the content's positions start. Titles (500 characters at most) stay below it, so a
 * position tells its column and no phrase spans title and content.
 */
export const CONTENT_OFFSET = 1024;

/** The position of a title's i-th token (from 0), as the tsvector and BM25's phrase counting number it. */
export const titlePosition = (i: number) => Math.min(i + 1, CONTENT_OFFSET - 1);
/** The position of the content's i-th token (from 0). */
export const contentPosition = (i: number) => Math.min(CONTENT_OFFSET + i, MAX_POSITION);

/** PostgreSQL refuses longer lexemes; FTS5 keeps them, but no query word is that long. */
const MAX_LEXEME_BYTES = 2046;

const lexeme = (s: string) => `'${s.replace(/\\/g, "\\\\").replace(/'/g, "''")}'`;

/**
 * The tsvector literal of a chunk: each token with its positions, the title's at weight A and
 * the content's at weight B (so PostgreSQL's own ts_rank also prefers title matches).
 */
export function tsvectorLiteral(tokens: ChunkTokens): string {
  const positions = new Map<string, string[]>();
  const add = (term: string, pos: number, weight: string) => {
    if (Buffer.byteLength(term) > MAX_LEXEME_BYTES) return;
    const list = positions.get(term) ?? [];
    if (list.length === 0) positions.set(term, list);
    list.push(`${pos}${weight}`);
  };
  tokens.title.forEach((term, i) => {
    add(term, titlePosition(i), "A");
  });
  tokens.content.forEach((term, i) => {
    add(term, contentPosition(i), "B");
  });
  return [...positions].map(([term, list]) => `${lexeme(term)}:${list.join(",")}`).join(" ");
}

/** Positions by lexeme, read back from a tsvector's text form ('lex':1A,1030A ...). */
export function parseTsvector(text: string): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const m of text.matchAll(/'((?:[^']|'')*)'(?::([0-9A-D,]+))?/g)) {
    const term = (m[1] as string).replace(/''/g, "'").replace(/\\\\/g, "\\");
    out.set(
      term,
      (m[2] ?? "")
        .split(",")
        .filter(Boolean)
        .map((p) => Number.parseInt(p, 10)),
    );
  }
  return out;
}

/** A phrase as a tsquery: its tokens next to each other (`<->`), as an FTS5 phrase matches. */
export function phraseQuery(tokens: string[]): string {
  return tokens.map(lexeme).join(" <-> ");
}
