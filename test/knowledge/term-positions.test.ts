// A search's instances of the query's tokens in the searched bases' chunks come from FTS5's own
// index (kb_chunks_vocab, every base's instances, the others' dropped) or, when other bases hold
// far more of them, from FTS5's tokenizer run on the matches' text (fts-tokens.ts, as the
// PostgreSQL index stores them). Both must agree exactly, and so must the BM25 computed from
// either, whichever a search takes.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteKeyStore } from "../../src/auth/sqlite";
import { SqliteCreditLedger } from "../../src/credits/sqlite";
import { bestByBm25, hitCounts, phraseFrequencies, queryTerms } from "../../src/knowledge/bm25";
import { prepareDocuments } from "../../src/knowledge/chunking";
import { parseTsvector, tokenizeRows, tsvectorLiteral } from "../../src/knowledge/fts-tokens";
import {
  ftsQuery,
  type Instances,
  indexInstances,
  matchingSlots,
  searchBm25,
  searchedChunks,
  tokenizedInstances,
} from "../../src/knowledge/search";
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

test("instances read from the index equal the tokenizer's for every fixture query, and BM25 from either is the same", async () => {
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
  index.bases.addDocuments(other, theirs.id, prepareDocuments(docs.map((d) => `${d.title}. ${d.content}`)));
  index.bases.addDocuments(me, kb.id, prepareDocuments(docs.slice(0, 30)));
  index.bases.addDocuments(other, theirs.id, prepareDocuments(docs.slice(10, 40)));
  index.bases.addDocuments(me, kb.id, prepareDocuments(docs.slice(30)));
  index.bases.addDocuments(other, theirs.id, prepareDocuments(docs));

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
  for (const query of [...HELP_CENTER.queries.map((q) => q.query), ...fixture.unanswerable, ...extra]) {
    const match = ftsQuery(query, [kb.id]);
    if (match === null) continue;
    const tokens = [...new Set(queryTerms(query).phrases.flat())];
    if (queryTerms(query).phrases.some((p) => p.length > 1)) phrases++;
    const read = indexInstances(db, chunks, tokens) as Map<string, Instances>;
    const matches = matchingSlots(db, chunks, match);
    const tokenized = tokenizedInstances(db, chunks, matches, tokens);
    // the index also has a phrase's tokens where the phrase is not (money without back): no match, no count
    const inMatches = new Map(
      [...read].map(([token, inst]) => {
        const keep = inst.slots.flatMap((s, i) => (matches.includes(s) ? [i] : []));
        return [token, { slots: keep.map((i) => inst.slots[i]), positions: keep.map((i) => inst.positions[i]) }];
      }),
    );
    expect(inMatches, query).toEqual(tokenized);
    for (const inst of tokenized.values()) compared += inst.slots.length;
    // past a budget the index read stops: the other account holds two thirds of the instances
    if ((read?.get(tokens[0] as string)?.slots.length ?? 0) > 0) expect(indexInstances(db, chunks, tokens, 1)).toBeNull();

    const opts = { kbIds: [kb.id], query, topK: 10 };
    const fromIndex = searchBm25(db, opts, 30, { instances: Number.POSITIVE_INFINITY, tokenizeCost: 1 });
    const fromText = searchBm25(db, opts, 30, { instances: 0, tokenizeCost: 0 });
    expect(fromIndex.source).toBe("index");
    if (fromIndex.ranked.length > 0) expect(fromText.source, query).toBe("tokenized");
    expect({ ...fromText, source: "index" }, query).toEqual(fromIndex);
    // the default budget reads the index here (this base holds a third of the file's chunks)
    const byDefault = searchBm25(db, opts, 30);
    expect(byDefault).toEqual(fromIndex);
    expect({ ranked: fromIndex.ranked, wordHits: fromIndex.wordHits }, query).toEqual(reference(query, 30));
  }
  expect(compared).toBeGreaterThan(1000);
  expect(phrases).toBe(extra.length);
  console.log(`term positions: ${compared} instances compared`);
});
