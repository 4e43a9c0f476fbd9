// A search's instances of the query's tokens in the searched bases' chunks come from FTS5's own
// index (kb_chunks_vocab, every base's instances, the others' dropped): they must be exactly the
// positions FTS5's tokenizer gives (fts-tokens.ts, as the PostgreSQL index stores them). A common
// token's phrases are counted by FTS5 instead (decodedHits): BM25 must be the same either way, and
// the same as bm25.ts computes from every chunk's tokens.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteKeyStore } from "../../src/auth/sqlite";
import { SqliteCreditLedger } from "../../src/credits/sqlite";
import { bestByBm25, hitCounts, phraseFrequencies, queryTerms } from "../../src/knowledge/bm25";
import { prepareDocuments } from "../../src/knowledge/chunking";
import { parseTsvector, tokenizeRows, tsvectorLiteral } from "../../src/knowledge/fts-tokens";
import { ftsQuery, type Instances, indexInstances, searchBm25, searchedChunks } from "../../src/knowledge/search-sqlite";
import { SqliteKnowledgeIndex } from "../../src/knowledge/sqlite";
import { openStorage } from "../../src/storage/db";
import fixture from "../fixtures/knowledge/help-center.json";
import { HELP_CENTER } from "./corpus";

const dir = mkdtempSync(join(tmpdir(), "textai-term-positions-"));
const storage = openStorage(join(dir, "kb.db"));
afterAll(() => {
  storage.close();
  rmSync(dir, { recursive: true, force: true });
});

test("instances read from the index equal the tokenizer's for every fixture query; BM25 is the same whether phrases are read or counted by FTS5", async () => {
  const keys = new SqliteKeyStore(storage, new SqliteCreditLedger(storage), { welcomeCredits: 0 });
  const index = new SqliteKnowledgeIndex(storage);
  const me = (await keys.createAccount()).id;
  const other = (await keys.createAccount()).id;
  // hyphenated words are phrases of two tokens (e-mail: "e" "mail"), counted where they follow each other
  const docs = [
    ...HELP_CENTER.documents.map(({ title, content, metadata }) => ({ title, content, metadata })),
    {
      title: "E-mail changes",
      content: "Change your e-mail in settings. An e mail or email, a mail e or e, mail.",
      metadata: {},
    },
    { title: "T-shirt sizes", content: "Our t-shirt runs small: t shirt, shirt t, t-shirt-t-shirt.", metadata: {} },
    { title: "Wi-Fi", content: "Free wi-fi in every store; wifi wi fi fi-wi.", metadata: {} },
  ];
  const extra = [
    "how do I change my e-mail",
    "t-shirt sizes",
    "is there wi-fi",
    "e-mail e-mail t-shirt",
    "money-back on a t-shirt",
  ];
  const kb = index.bases.create(me, { name: "help" });
  // another account's copies of the same words, before, between and after this base's chunks in the index
  const theirs = index.bases.create(other, { name: "copy" });
  await index.bases.addDocuments(other, theirs.id, prepareDocuments(docs.map((d) => `${d.title}. ${d.content}`)));
  await index.bases.addDocuments(me, kb.id, prepareDocuments(docs.slice(0, 30)));
  await index.bases.addDocuments(other, theirs.id, prepareDocuments(docs.slice(10, 40)));
  await index.bases.addDocuments(me, kb.id, prepareDocuments(docs.slice(30)));
  await index.bases.addDocuments(other, theirs.id, prepareDocuments(docs));

  const db = storage.sqlite;
  const chunks = searchedChunks(db, [kb.id]);
  // the reference: every chunk of the base tokenized as the PostgreSQL index stores it, BM25 by bm25.ts
  const rows = db
    .query<{ id: number; kb_id: string; title: string | null; content: string; tokens: number }, [string]>(
      "SELECT id, kb_id, title, content, tokens FROM kb_chunks WHERE kb_id = ? ORDER BY id",
    )
    .all(kb.id);
  const stored = tokenizeRows(rows.map((r) => ({ kbId: r.kb_id, title: r.title, content: r.content })));
  const positions = stored.map((t) => parseTsvector(tsvectorLiteral(t)));
  expect(rows.map((r) => r.tokens)).toEqual(stored.map((t) => t.count));
  const reference = (query: string, limit: number) => {
    const terms = queryTerms(query);
    const freqs = positions.map((at) => phraseFrequencies(at, terms.phrases));
    const { phraseHits, wordHits } = hitCounts(freqs, terms);
    const matches = rows.flatMap((r, i) =>
      (freqs[i] as number[]).some((f) => f > 0) ? [{ id: r.id, tokens: r.tokens, freqs: freqs[i] as number[] }] : [],
    );
    const tokens = rows.reduce((n, r) => n + r.tokens, 0);
    return { ranked: bestByBm25(matches, { chunks: rows.length, tokens, phraseHits }, limit), wordHits };
  };
  let compared = 0;
  let phrases = 0;
  let decoded = 0;
  for (const query of [...HELP_CENTER.queries.map((q) => q.query), ...fixture.unanswerable, ...extra]) {
    if (ftsQuery(query, [kb.id]) === null) continue;
    if (queryTerms(query).phrases.some((p) => p.length > 1)) phrases++;
    for (const token of new Set(queryTerms(query).phrases.flat())) {
      // each token's instances in this base's chunks: from the index, as the tokenizer numbers them
      const expected: Instances = { slots: [], positions: [] };
      positions.forEach((at, slot) => {
        for (const pos of at.get(token) ?? []) {
          expected.slots.push(slot);
          expected.positions.push(pos);
        }
      });
      expect(indexInstances(db, chunks, token), `${query}: ${token}`).toEqual(expected);
      compared += expected.slots.length;
      // past a budget the index read stops: the other account holds two thirds of the instances
      if (expected.slots.length > 0) expect(indexInstances(db, chunks, token, 1)).toBeNull();
    }

    // every phrase from positions read, every phrase counted by FTS5 (decodedHits), the default: one BM25
    const opts = { kbIds: [kb.id], query, topK: 10 };
    const read = searchBm25(db, opts, 30, Number.POSITIVE_INFINITY);
    const counted = searchBm25(db, opts, 30, 0);
    expect(read.decoded).toBe(0);
    if (read.ranked.length > 0) expect(counted.decoded, query).toBeGreaterThan(0);
    decoded += counted.decoded;
    expect({ ...counted, decoded: 0 }, query).toEqual(read);
    expect(searchBm25(db, opts, 30), query).toEqual(read);
    expect({ ranked: read.ranked, wordHits: read.wordHits }, query).toEqual(reference(query, 30));
  }
  // two bases searched together: their statistics pooled, the same whether read or counted
  const second = index.bases.create(me, { name: "more" });
  await index.bases.addDocuments(me, second.id, prepareDocuments(docs.slice(5, 25).map((d) => `${d.title}: ${d.content}`)));
  let moved = 0;
  for (const query of HELP_CENTER.queries.slice(0, 20).map((q) => q.query)) {
    const opts = { kbIds: [kb.id, second.id], query, topK: 10 };
    const read = searchBm25(db, opts, 30, Number.POSITIVE_INFINITY);
    expect(read.chunks).toBe(chunks.ids.length + searchedChunks(db, [second.id]).ids.length);
    expect({ ...searchBm25(db, opts, 30, 0), decoded: 0 }, query).toEqual(read);
    if (JSON.stringify(read.ranked) !== JSON.stringify(searchBm25(db, { ...opts, kbIds: [kb.id] }, 30).ranked)) moved++;
  }
  expect(moved).toBeGreaterThan(10);
  expect(compared).toBeGreaterThan(1000);
  expect(phrases).toBe(extra.length);
  console.log(`term positions: ${compared} instances compared; ${decoded} phrases counted by FTS5 alike`);
});
