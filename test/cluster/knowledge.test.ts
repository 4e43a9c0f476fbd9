/**
 * The knowledge index contract, run against SQLite and PostgreSQL, and the proof that search
 * ranks alike on both: the help-center fixture indexed in each, every query of its tuning and
 * held-out sets (answerable, unanswerable, with filters, lexical and hybrid) gives the same
 * snippets with the same scores. PostgreSQL needs 127.0.0.1:5432 (see test/helpers/shared-servers.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KeyStore } from "../../src/auth/interface";
import { PostgresKeyStore } from "../../src/auth/postgres";
import { SqliteKeyStore } from "../../src/auth/sqlite";
import { PostgresCreditLedger } from "../../src/credits/postgres";
import { SqliteCreditLedger } from "../../src/credits/sqlite";
import { GatewayError } from "../../src/errors";
import { prepareDocuments } from "../../src/knowledge/chunking";
import { attachVectors, type Embedder, VectorCache, vectorHits } from "../../src/knowledge/embeddings";
import type { KnowledgeIndex } from "../../src/knowledge/interface";
import { PostgresKnowledgeIndex } from "../../src/knowledge/postgres";
import { DEFAULT_MIN_SCORE, LIMITS, type Snippet } from "../../src/knowledge/schemas";
import { SqliteKnowledgeIndex } from "../../src/knowledge/sqlite";
import { hashEmbedding } from "../../src/providers/embedding";
import { openStorage, type Storage } from "../../src/storage/db";
import type { PgStorage } from "../../src/storage/postgres";
import tuning from "../fixtures/knowledge/help-center.json";
import holdout from "../fixtures/knowledge/help-center-holdout.json";
import { storesOn } from "../helpers/pgbouncer";
import { freshDatabase, sharedServersUp } from "../helpers/shared-servers";
import { HELP_CENTER, rankingFigures } from "../knowledge/corpus";

const shared = await sharedServersUp("knowledge index contract on PostgreSQL");
const dir = mkdtempSync(join(tmpdir(), "textai-knowledge-contract-"));
let sqlite: Storage;
let pgDb: Awaited<ReturnType<typeof freshDatabase>> | null = null;
let pg: PgStorage | null = null;
/** the stores' pools: straight to the test database, or through a pooler (TEXTAI_TEST_VIA_PGBOUNCER=1) */
let pgPools: Awaited<ReturnType<typeof storesOn>> | null = null;
/** a second pool on the same database: another node */
let pg2: PgStorage | null = null;

beforeAll(async () => {
  sqlite = openStorage(join(dir, "contract.db"));
  if (!shared) return;
  pgDb = await freshDatabase();
  pgPools = await storesOn(pgDb.url);
  pg = pgPools.open();
  pg2 = pgPools.open();
  await Promise.all([pg.migrated, pg2.migrated]);
});
afterAll(async () => {
  await pg?.close();
  await pg2?.close();
  await pgPools?.stop();
  await pgDb?.drop();
  sqlite.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Backend {
  index: KnowledgeIndex;
  keys: KeyStore;
  /** the same data seen by another node (PostgreSQL), or the same index (SQLite) */
  other: KnowledgeIndex;
}

/** `maxCandidates`: PostgreSQL's candidate bound (MAX_CANDIDATES unless given; SQLite has none) */
const backends: [string, boolean, (maxCandidates?: number) => Backend][] = [
  [
    "sqlite",
    true,
    () => {
      const ledger = new SqliteCreditLedger(sqlite);
      const index = new SqliteKnowledgeIndex(sqlite);
      return { index, other: index, keys: new SqliteKeyStore(sqlite, ledger, { welcomeCredits: 0 }) };
    },
  ],
  [
    "postgres",
    shared,
    (maxCandidates) => {
      const ledger = new PostgresCreditLedger(pg!);
      return {
        index: new PostgresKnowledgeIndex(pg!, maxCandidates),
        other: new PostgresKnowledgeIndex(pg2!),
        keys: new PostgresKeyStore(pg!, ledger, { welcomeCredits: 0 }),
      };
    },
  ],
];

/** The GatewayError a call throws (or rejects with), for its code, message and param. */
async function failure(run: () => unknown): Promise<GatewayError> {
  try {
    await run();
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
  throw new Error("expected a GatewayError, the call succeeded");
}

/** Hashed character trigrams (the mock provider's embeddings): deterministic, no network. */
const hashed: Embedder = { name: "hashed", model: "hashed-trigrams", embed: async (texts) => texts.map((t) => hashEmbedding(t)) };

for (const [name, enabled, make] of backends) {
  describe.skipIf(!enabled)(`KnowledgeIndex contract: ${name}`, () => {
    test("knowledge bases: create, get, list newest first with paging, update, delete; another account's id is a 404", async () => {
      const { index, keys } = make();
      const me = (await keys.createAccount()).id;
      const other = (await keys.createAccount()).id;
      const a = await index.bases.create(me, { name: "A", description: "first" });
      expect(a).toMatchObject({ name: "A", description: "first", status: "active", document_count: 0, chunk_count: 0 });
      await Bun.sleep(2);
      const b = await index.bases.create(me, { name: "B", status: "inactive" });
      expect(b.description).toBeNull();
      const page = await index.bases.list(me, { limit: 1, offset: 0 });
      expect(page).toMatchObject({ total: 2, limit: 1, offset: 0, has_more: true });
      expect(page.data.map((k) => k.id)).toEqual([b.id]);
      expect((await index.bases.list(me, { limit: 10, offset: 1 })).data.map((k) => k.id)).toEqual([a.id]);
      expect((await index.bases.list(other, { limit: 10, offset: 0 })).total).toBe(0);

      const updated = await index.bases.update(me, a.id, { name: "A2", status: "inactive" });
      expect(updated).toMatchObject({ id: a.id, name: "A2", description: "first", status: "inactive" });
      expect(await index.bases.row(me, a.id)).toMatchObject({ id: a.id, revision: 0, status: "inactive" });

      for (const run of [
        () => index.bases.get(other, a.id),
        () => index.bases.row(other, a.id),
        () => index.bases.update(other, a.id, { name: "x" }),
        () => index.bases.delete(other, a.id),
        () => index.bases.listDocuments(other, a.id, { limit: 10, offset: 0 }),
        () => index.bases.addDocuments(other, a.id, prepareDocuments(["text"])),
        () => index.bases.get(me, "kb_missing"),
      ]) {
        const err = await failure(run);
        expect(err.code).toBe("not_found");
        expect(err.message).toContain("knowledge base");
      }
      await index.bases.delete(me, a.id);
      expect((await failure(() => index.bases.get(me, a.id))).code).toBe("not_found");
      expect((await index.bases.list(me, { limit: 10, offset: 0 })).total).toBe(1);
    });

    test("the account's quota: bases, documents and bytes over all its bases, 403 past them; two nodes racing for the last place pass it once", async () => {
      const { index, other: node2, keys } = make();
      const me = (await keys.createAccount()).id;
      const a = await index.bases.create(me, { name: "A" }, 2);
      const b = await node2.bases.create(me, { name: "B" }, 2);
      const third = await failure(() => index.bases.create(me, { name: "C" }, 2));
      expect(third).toMatchObject({ code: "forbidden", param: "name" });
      expect(third.message).toContain("knowledge_bases quota");

      const quota = { documents: 3, bytes: 1000 };
      await index.bases.addDocuments(
        me,
        a.id,
        prepareDocuments(["one", { title: "Two", content: "two", metadata: { k: "v" } }]),
        quota,
      );
      // "one" (3 + 2 for {}), "Two"/"two" (3 + 3 + 9 for {"k":"v"})
      expect(await node2.bases.usage(me)).toEqual({ bases: 2, documents: 2, bytes: 20, faqCollections: 0, chatbots: 0 });
      const tooBig = await failure(() => node2.bases.addDocuments(me, b.id, prepareDocuments(["x".repeat(979)]), quota));
      expect(tooBig).toMatchObject({ code: "forbidden", param: "documents" });
      expect(tooBig.message).toContain("knowledge_bytes quota");

      // one place left: of uploads through both nodes at once, exactly one is stored
      const racing = await Promise.allSettled(
        Array.from({ length: 6 }, (_, i) =>
          (i % 2 ? index : node2).bases.addDocuments(me, i % 3 ? a.id : b.id, prepareDocuments([`racer ${i}`]), quota),
        ),
      );
      expect(racing.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      for (const r of racing) if (r.status === "rejected") expect((r.reason as GatewayError).code).toBe("forbidden");
      expect((await index.bases.usage(me)).documents).toBe(3);
      const over = await failure(() => index.bases.addDocuments(me, b.id, prepareDocuments(["more"]), quota));
      expect(over.message).toContain("knowledge_documents quota");
      // deleting frees its place
      const docs = await index.bases.listDocuments(me, a.id, { limit: 10, offset: 0 });
      await index.bases.deleteDocument(me, a.id, docs.data[0]?.id as string);
      expect((await index.bases.addDocuments(me, b.id, prepareDocuments(["more"]), quota)).length).toBe(1);
    });

    test("documents: added all or none, listed oldest first, deleted; counts and revision follow", async () => {
      const { index, keys } = make();
      const me = (await keys.createAccount()).id;
      const kb = await index.bases.create(me, { name: "docs" });
      const long = "Refunds are issued within thirty days of purchase. ".repeat(60);
      const added = await index.bases.addDocuments(
        me,
        kb.id,
        prepareDocuments([{ title: "Refunds", content: long, metadata: { lang: "en", n: 1 } }, "Shipping takes three days."]),
      );
      expect(added).toHaveLength(2);
      expect(added[0]).toMatchObject({ knowledge_base_id: kb.id, title: "Refunds", metadata: { lang: "en", n: 1 } });
      expect(added[0]?.chunk_count).toBeGreaterThan(1);
      expect(added[0]?.characters).toBe(long.length);
      expect(added[1]).toMatchObject({ title: null, metadata: {}, chunk_count: 1, preview: "Shipping takes three days." });
      const view = await index.bases.get(me, kb.id);
      expect(view.document_count).toBe(2);
      expect(view.chunk_count).toBe((added[0]?.chunk_count ?? 0) + 1);
      expect((await index.bases.row(me, kb.id)).revision).toBe(1);

      // one document without text: nothing of the upload is stored, the revision stays
      const bad = prepareDocuments(["Fine text.", "x"]);
      (bad[1] as { chunks: string[] }).chunks = [];
      const err = await failure(() => index.bases.addDocuments(me, kb.id, bad));
      expect(err.code).toBe("invalid_request");
      expect(err.message).toContain("no text");
      expect((await index.bases.get(me, kb.id)).document_count).toBe(2);
      expect((await index.bases.row(me, kb.id)).revision).toBe(1);

      const listed = await index.bases.listDocuments(me, kb.id, { limit: 1, offset: 0 });
      expect(listed).toMatchObject({ total: 2, has_more: true });
      const all = await index.bases.listDocuments(me, kb.id, { limit: 10, offset: 0 });
      expect(new Set(all.data.map((d) => d.id))).toEqual(new Set(added.map((d) => d.id)));

      await index.bases.deleteDocument(me, kb.id, added[0]?.id as string);
      expect((await index.bases.get(me, kb.id)).document_count).toBe(1);
      expect((await index.bases.row(me, kb.id)).revision).toBe(2);
      expect((await failure(() => index.bases.deleteDocument(me, kb.id, added[0]?.id as string))).message).toContain("document");
      // recall-first: the other document may share a word ("days"); the deleted one never comes back
      const after = await index.search({ kbIds: [kb.id], query: "refunds issued within thirty days", topK: 5 });
      expect(after.map((h) => h.document_id)).not.toContain(added[0]?.id);
    });

    test("search: best chunk first, only the given bases, metadata filters; no hit without a meaningful shared word", async () => {
      const { index, keys } = make();
      const me = (await keys.createAccount()).id;
      const kb = await index.bases.create(me, { name: "help" });
      const elsewhere = await index.bases.create(me, { name: "other" });
      await index.bases.addDocuments(
        me,
        kb.id,
        prepareDocuments([
          { title: "Refund policy", content: "Refunds are issued within 30 days of purchase.", metadata: { topic: "billing" } },
          { title: "Shipping", content: "Orders ship worldwide within two days.", metadata: { topic: "shipping", fast: true } },
          { title: "Passwords", content: "Reset your password from the login page.", metadata: { topic: "account" } },
        ]),
      );
      await index.bases.addDocuments(me, elsewhere.id, prepareDocuments(["Refunds for gift cards are never issued."]));

      const hits = await index.search({ kbIds: [kb.id], query: "how do I get a refund?", topK: 5 });
      expect(hits[0]).toMatchObject({ title: "Refund policy", knowledge_base_id: kb.id, metadata: { topic: "billing" } });
      expect(hits.every((h) => h.knowledge_base_id === kb.id && h.score >= DEFAULT_MIN_SCORE)).toBe(true);

      const both = await index.search({ kbIds: [kb.id, elsewhere.id], query: "refunds issued", topK: 5, minScore: 0 });
      expect(new Set(both.map((h) => h.knowledge_base_id))).toEqual(new Set([kb.id, elsewhere.id]));

      const filtered = await index.search({
        kbIds: [kb.id],
        query: "refund shipping password",
        topK: 5,
        minScore: 0,
        filter: { topic: ["shipping", "account"] },
      });
      expect(filtered.map((h) => h.title).sort()).toEqual(["Passwords", "Shipping"]);
      const flagged = await index.search({ kbIds: [kb.id], query: "orders ship", topK: 5, minScore: 0, filter: { fast: true } });
      expect(flagged.map((h) => h.title)).toEqual(["Shipping"]);

      expect(await index.search({ kbIds: [kb.id], query: "the of and", topK: 5 })).toEqual([]);
      expect(await index.search({ kbIds: [], query: "refund", topK: 5 })).toEqual([]);
      expect(await index.search({ kbIds: [kb.id], query: "bitcoin wallet mining", topK: 5 })).toEqual([]);
    });

    test("hybrid: stored vectors come back per base; a misspelt query finds its chunk through them", async () => {
      const { index, keys } = make();
      const me = (await keys.createAccount()).id;
      const kb = await index.bases.create(me, { name: "vectors" });
      const prepared = prepareDocuments(["Refunds are issued within 30 days.", "Orders ship worldwide."]);
      await attachVectors(hashed, prepared);
      await index.bases.addDocuments(me, kb.id, prepared);
      const stored = await index.chunkVectors(kb.id, 64);
      expect(stored).toHaveLength(2);
      expect(stored.every((v) => v.embedding.byteLength === 256)).toBe(true);
      expect(await index.chunkVectors(kb.id, 32)).toEqual([]);

      const base = await index.bases.row(me, kb.id);
      // misspelt past BM25; the hashed vectors put it nearer the refunds chunk (cosine 0.18) than the
      // other (-0.18). A chunk found by vector alone with no similarity (cosine <= 0) is left out.
      const query = "refundss issuedd";
      const vectors = await vectorHits(index, hashed, new VectorCache(), [base], query);
      expect(vectors?.nearest).toHaveLength(2);
      const hits = await index.search({ kbIds: [kb.id], query, topK: 1 }, vectors);
      expect(hits[0]?.content).toBe("Refunds are issued within 30 days.");
    });

    test("FAQ collections: create with FAQs in order, get, list with counts, delete; another account's id is a 404", async () => {
      const { index, keys } = make();
      const me = (await keys.createAccount()).id;
      const other = (await keys.createAccount()).id;
      const c = await index.faqs.create(me, {
        name: "support",
        faqs: [
          { question: " How do refunds work? ", answer: "Within 30 days. " },
          { question: "Do you ship abroad?", answer: "Yes, worldwide." },
        ],
      });
      expect(c).toMatchObject({ name: "support", faq_count: 2 });
      expect(c.faqs?.map((f) => [f.question, f.answer])).toEqual([
        ["How do refunds work?", "Within 30 days."],
        ["Do you ship abroad?", "Yes, worldwide."],
      ]);
      const faqs = await index.faqs.faqs(me, c.id);
      expect(faqs.map((f) => f.id)).toEqual(c.faqs?.map((f) => f.id) ?? []);
      expect(faqs.every((f) => /^faqe_[0-9a-f]{32}$/.test(String(f.id)))).toBe(true);
      const listed = await index.faqs.list(me, { limit: 10, offset: 0 });
      expect(listed.data).toEqual([{ id: c.id, name: "support", faq_count: 2, created_at: c.created_at }]);
      for (const run of [
        () => index.faqs.get(other, c.id),
        () => index.faqs.faqs(other, c.id),
        () => index.faqs.delete(other, c.id),
      ]) {
        expect((await failure(run)).message).toContain("FAQ collection");
      }
      await index.faqs.delete(me, c.id);
      expect((await failure(() => index.faqs.get(me, c.id))).code).toBe("not_found");
    });

    test("the per-account limit holds when two nodes race for its last places", async () => {
      const { index, other, keys } = make();
      const me = (await keys.createAccount()).id;
      const faqs = [{ question: "q?", answer: "a" }];
      for (let i = 0; i < LIMITS.faqCollectionsPerAccount - 2; i++) await index.faqs.create(me, { name: `c${i}`, faqs });
      const raced = await Promise.allSettled(
        Array.from({ length: 6 }, async (_, i) => (i % 2 ? other : index).faqs.create(me, { name: `r${i}`, faqs })),
      );
      expect(raced.filter((r) => r.status === "fulfilled").length).toBe(2);
      for (const r of raced.filter((r) => r.status === "rejected")) {
        expect(String((r as PromiseRejectedResult).reason.message)).toContain(
          `at most ${LIMITS.faqCollectionsPerAccount} FAQ collections`,
        );
      }
      expect((await other.faqs.list(me, { limit: 1, offset: 0 })).total).toBe(LIMITS.faqCollectionsPerAccount);
    });

    test("chatbots: bases must be the account's (the first bad one named), active bases in the bot's order", async () => {
      const { index, keys } = make();
      const me = (await keys.createAccount()).id;
      const other = (await keys.createAccount()).id;
      const a = await index.bases.create(me, { name: "a" });
      const b = await index.bases.create(me, { name: "b" });
      const theirs = await index.bases.create(other, { name: "theirs" });
      const err = await failure(() =>
        index.chatbots.create(me, { name: "bot", mode: "support", knowledge_base_ids: [a.id, theirs.id] }),
      );
      expect(err.code).toBe("not_found");
      expect(err.param).toBe("knowledge_base_ids[1]");
      expect((await index.chatbots.list(me, { limit: 10, offset: 0 })).total).toBe(0);

      const bot = await index.chatbots.create(me, { name: "bot", mode: "assistant", knowledge_base_ids: [b.id, a.id] });
      expect(bot).toMatchObject({ name: "bot", mode: "assistant", knowledge_base_ids: [b.id, a.id] });
      expect(await index.chatbots.get(me, bot.id)).toEqual(bot);
      expect((await index.chatbots.list(me, { limit: 10, offset: 0 })).data).toEqual([bot]);
      expect((await failure(() => index.chatbots.get(other, bot.id))).message).toContain("chatbot");

      expect(await index.chatbots.activeKnowledgeBases(me, bot.knowledge_base_ids)).toEqual([
        { id: b.id, revision: 0 },
        { id: a.id, revision: 0 },
      ]);
      await index.bases.update(me, b.id, { status: "inactive" });
      await index.bases.delete(me, a.id);
      expect(await index.chatbots.activeKnowledgeBases(me, bot.knowledge_base_ids)).toEqual([]);
      expect(await index.chatbots.activeKnowledgeBases(other, [theirs.id, b.id])).toEqual([{ id: theirs.id, revision: 0 }]);
      await index.chatbots.delete(me, bot.id);
      expect((await failure(() => index.chatbots.delete(me, bot.id))).code).toBe("not_found");
    });
  });
}

/** The fixture's documents, indexed in a back-end; snippets name the fixture's document ids. */
async function fixtureIndex(b: Backend, vectors: boolean) {
  const me = (await b.keys.createAccount()).id;
  const kb = await b.index.bases.create(me, { name: "help center" });
  const prepared = prepareDocuments(
    HELP_CENTER.documents.map((d) => ({ title: d.title, content: d.content, metadata: d.metadata })),
  );
  if (vectors) await attachVectors(hashed, prepared);
  const added = await b.index.bases.addDocuments(me, kb.id, prepared);
  const fixtureId = new Map(added.map((d, i) => [d.id, HELP_CENTER.documents[i]?.id ?? "?"]));
  const base = await b.index.bases.row(me, kb.id);
  const cache = new VectorCache();
  return async (query: string, filter?: Record<string, string>, minScore?: number) => {
    const hits = vectors ? await vectorHits(b.index, hashed, cache, [base], query) : undefined;
    const found = await b.index.search({ kbIds: [kb.id], query, topK: 5, filter, minScore }, hits);
    return found.map((s: Snippet) => ({ ...s, document_id: fixtureId.get(s.document_id ?? "") ?? "?", knowledge_base_id: "kb" }));
  };
}

describe.skipIf(!shared)("search ranks alike on SQLite and PostgreSQL (help-center fixture)", () => {
  const queries = [
    ...tuning.queries.map((q) => q.query),
    ...tuning.unanswerable,
    ...holdout.queries.map((q) => q.query),
    ...holdout.unanswerable,
  ];

  for (const vectors of [false, true]) {
    test(`${vectors ? "hybrid (hashed-trigram vectors)" : "lexical"}: the same snippets and scores for all ${queries.length} queries and the filter cases`, async () => {
      // the SQLite file also holds the contract tests' chunks (other accounts): BM25 counts the searched base only
      const onSqlite = await fixtureIndex((backends[0] as (typeof backends)[0])[2](), vectors);
      const onPostgres = await fixtureIndex((backends[1] as (typeof backends)[1])[2](), vectors);
      const differ: string[] = [];
      for (const q of queries) {
        const [s, p] = [await onSqlite(q, undefined, 0), await onPostgres(q, undefined, 0)];
        if (JSON.stringify(s) !== JSON.stringify(p))
          differ.push(
            `${q}\n  sqlite   ${JSON.stringify(s.map((x) => [x.document_id, x.score]))}\n  postgres ${JSON.stringify(p.map((x) => [x.document_id, x.score]))}`,
          );
      }
      for (const f of HELP_CENTER.filters) {
        const [s, p] = [await onSqlite(f.query, f.filter_metadata), await onPostgres(f.query, f.filter_metadata)];
        if (JSON.stringify(s) !== JSON.stringify(p)) differ.push(`filter ${f.query}`);
      }
      expect(differ, differ.join("\n")).toEqual([]);

      // past PostgreSQL's candidate bound (12 here, 10,000 in service) ts_rank preselects: the best
      // hit mostly stays (SQLite scores every match)
      const capped = await fixtureIndex((backends[1] as (typeof backends)[1])[2](12), vectors);
      let sameBest = 0;
      for (const q of queries) if ((await capped(q))[0]?.document_id === (await onPostgres(q))[0]?.document_id) sameBest++;
      console.log(
        `${vectors ? "hybrid " : "lexical"} postgres capped at 12 candidates: same best hit for ${sameBest} of ${queries.length} queries`,
      );
      expect(sameBest / queries.length).toBeGreaterThan(0.8);

      const figures = async (search: typeof onSqlite, set: { query: string; expected: string }[], unanswerable: string[]) => {
        const rankings = [];
        for (const q of set) rankings.push({ expected: q.expected, ranked: (await search(q.query)).map((s) => s.document_id) });
        let empty = 0;
        for (const q of unanswerable) if ((await search(q)).length === 0) empty++;
        const f = rankingFigures(rankings);
        return `recall@1 ${f.recallAt1.toFixed(3)}, MRR ${f.mrr.toFixed(3)}, unanswerable left empty ${(empty / unanswerable.length).toFixed(3)}`;
      };
      for (const [label, search] of [
        ["sqlite", onSqlite],
        ["postgres", onPostgres],
      ] as const) {
        console.log(
          `${vectors ? "hybrid " : "lexical"} ${label.padEnd(8)} tuning: ${await figures(search, tuning.queries, tuning.unanswerable)}; held-out: ${await figures(search, holdout.queries, holdout.unanswerable)}`,
        );
      }
    }, 60_000);
  }
});
