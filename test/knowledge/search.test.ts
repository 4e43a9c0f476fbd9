import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { FORMER_MIN_SCORE } from "../../src/knowledge/schemas";
import type { TestGateway } from "../helpers/gateway";
import { HELP_CENTER, rankingFigures } from "./corpus";
import { type Client, client, roomyGateway, show } from "./helpers";

let gw: TestGateway;
let alice: Client;
let kbId: string;
/** fixture id -> stored document id */
const docIds = new Map<string, string>();

beforeAll(async () => {
  gw = await roomyGateway();
  alice = await client(gw, 10_000);
  kbId = (await alice.call("POST", "/api/v1/knowledge-bases", { name: "Northwind help center" })).json.data.result.id;
  const docs = HELP_CENTER.documents.map(({ title, content, metadata }) => ({ title, content, metadata }));
  const added = await alice.call("POST", `/api/v1/knowledge-bases/${kbId}/documents`, { documents: docs });
  expect(added.status, show(added)).toBe(201);
  for (const [i, d] of (added.json.data.result.data as { id: string }[]).entries())
    docIds.set(d.id, HELP_CENTER.documents[i]?.id as string);
});
afterAll(() => gw.close());

const search = (body: Record<string, unknown>) => alice.call("POST", `/api/v1/knowledge-bases/${kbId}/search`, body);

describe("stored knowledge base search", () => {
  test(`paraphrased questions find their article first (${HELP_CENTER.documents.length} documents, ${HELP_CENTER.queries.length} queries)`, async () => {
    const rankings = [];
    for (const q of HELP_CENTER.queries) {
      // Ranking alone: no floor (the relevance floor is tested below and measured by `bun run eval`).
      const r = await search({ query: q.query, top_k: 10, min_score: 0 });
      expect(r.status, show(r)).toBe(200);
      rankings.push({
        expected: q.expected,
        ranked: r.json.data.result.results.map((s: { document_id: string }) => docIds.get(s.document_id) as string),
      });
    }
    const f = rankingFigures(rankings);
    console.log(
      `knowledge search: recall@1 ${f.recallAt1.toFixed(3)}, MRR ${f.mrr.toFixed(3)} over ${rankings.length} queries; misses:\n  ${f.misses.join("\n  ")}`,
    );
    expect(f.recallAt1).toBeGreaterThanOrEqual(0.8);
    expect(f.mrr).toBeGreaterThanOrEqual(0.85);
  });

  test("snippets carry title, content, document and a 0-1 score, best first; top_k bounds them; 3 credits, provider local", async () => {
    const before = await alice.balance();
    const r = await search({ query: "free shipping minimum order", top_k: 3 });
    expect(r.status, show(r)).toBe(200);
    const results = r.json.data.result.results;
    expect(results.length).toBeGreaterThan(0);
    expect(results.length).toBeLessThanOrEqual(3);
    expect(results[0]).toMatchObject({
      title: "Shipping rates and free shipping",
      knowledge_base_id: kbId,
      metadata: { category: "shipping" },
    });
    for (const s of results) expect(s.score >= 0 && s.score <= 1).toBe(true);
    const scores = results.map((s: { score: number }) => s.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(r.json.meta).toMatchObject({ credits_deducted: 3, provider: "local" });
    expect(await alice.balance()).toBe(before - 3);
    // default top_k is 5
    const wide = await search({ query: "order shipping delivery return refund" });
    expect(wide.json.data.result.results).toHaveLength(5);
  });

  test("metadata filters keep only matching documents", async () => {
    for (const f of HELP_CENTER.filters) {
      const r = await search({ query: f.query, filter_metadata: f.filter_metadata, min_score: 0 });
      const results = r.json.data.result.results;
      expect(results.length, show(r)).toBeGreaterThan(0);
      expect(docIds.get(results[0].document_id)).toBe(f.expected);
      for (const s of results) expect(s.metadata).toMatchObject(f.filter_metadata);
    }
    const anyOf = await search({
      query: "order",
      filter_metadata: { category: ["stores", "orders"] },
      top_k: 20,
      min_score: 0,
    });
    const categories = new Set(
      anyOf.json.data.result.results.map((s: { metadata: { category: string } }) => s.metadata.category),
    );
    expect([...categories].sort(), show(anyOf)).toEqual(["orders", "stores"]);
    const none = await search({ query: "refund", filter_metadata: { category: "no-such-category" } });
    expect(none.json.data.result.results).toEqual([]);
  });

  test("query text with FTS syntax is searched as words, not parsed", async () => {
    for (const query of ['"unbalanced', "refund* OR NEAR(a b)", "-- ; DROP TABLE kb_chunks", "^^^"]) {
      const r = await search({ query });
      expect(r.status, show(r)).toBe(200);
    }
  });

  test("a document added after a search is found by the next identical search (no stale cache)", async () => {
    const q = { query: "llama trekking permits" };
    expect((await search(q)).json.data.result.results).toEqual([]);
    const repeat = await search(q);
    expect(repeat.headers.get("x-cache"), "an identical search is served from the cache").toBe("HIT");
    await alice.call("POST", `/api/v1/knowledge-bases/${kbId}/documents`, {
      documents: [{ title: "Llama trekking", content: "Llama trekking permits are issued by the park office." }],
    });
    const again = await search(q);
    expect(again.json.data.result.results[0]?.title, show(again)).toBe("Llama trekking");
    expect(again.headers.get("x-cache")).toBe("MISS");
  });

  test("bad search requests are 400 naming the field", async () => {
    for (const [body, param] of [
      [{}, "query"],
      [{ query: "x", top_k: 0 }, "top_k"],
      [{ query: "x", top_k: 51 }, "top_k"],
      [{ query: "x", filter_metadata: { k: { nested: true } } }, "filter_metadata.k"],
      [{ query: "x", min_score: 1.5 }, "min_score"],
      [{ query: "x", min_score: "high" }, "min_score"],
    ] as const) {
      const r = await search(body);
      expect(r.json.error, show(r)).toMatchObject({ code: "invalid_request", param });
    }
  });
});

describe("relevance floor", () => {
  // Questions the help center does not answer, written for this test (not in the tuning or held-out sets).
  const offTopic = [
    "bitcoin",
    "do you take ethereum or dogecoin",
    "what is the wifi password in the café",
    "how do I update the firmware on my router",
    "can you recommend a lasagne recipe",
  ];

  // Search is recall-first (CONTRACT section 5, issue 24.14): it no longer hides weak hits by
  // default, so "nothing answers this" is asserted where it is decided, by a support chatbot
  // (test/knowledge/chatbots.test.ts), and here only through the scores: a question nothing
  // answers scores below the former default floor, which a caller can still ask for as min_score.
  test("a question the knowledge base does not answer scores low, stored and inline alike; min_score 0.3 leaves it empty", async () => {
    const documents = HELP_CENTER.documents.map(({ title, content, metadata }) => ({ title, content, metadata }));
    for (const query of offTopic) {
      const stored = await search({ query, top_k: 10 });
      const inline = await alice.call("POST", "/api/v1/ai/knowledge-bases", { query, documents, top_k: 10 });
      const scores = (r: typeof stored) => r.json.data.result.results.map((s: { score: number }) => s.score);
      expect(scores(inline), `${query}: ${show(inline)}`).toEqual(scores(stored));
      for (const s of scores(stored)) expect(s, `${query}: ${show(stored)}`).toBeLessThan(FORMER_MIN_SCORE);
      const floored = await search({ query, min_score: FORMER_MIN_SCORE });
      expect(floored.json.data.result.results, `${query}: ${show(floored)}`).toEqual([]);
    }
  });

  test("in-domain questions answer first, scoring above the former floor; min_score is honoured", async () => {
    for (const [query, expected] of [
      ["how long does standard delivery take", "shipping-times"],
      ["I forgot my password", "reset-password"],
      ["what payment methods do you accept", "payment-methods"],
    ] as const) {
      const r = await search({ query });
      const results = r.json.data.result.results;
      expect(docIds.get(results[0]?.document_id), `${query}: ${show(r)}`).toBe(expected);
      expect(results[0]?.score, show(r)).toBeGreaterThanOrEqual(FORMER_MIN_SCORE);
    }
    const wide = await search({ query: "order shipping delivery return refund", min_score: 0, top_k: 20 });
    const scores: number[] = wide.json.data.result.results.map((s: { score: number }) => s.score);
    const cut = scores[Math.floor(scores.length / 2)] as number;
    const strict = await search({ query: "order shipping delivery return refund", min_score: cut, top_k: 20 });
    const kept: number[] = strict.json.data.result.results.map((s: { score: number }) => s.score);
    expect(kept.length, show(strict)).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(scores.length);
    for (const s of kept) expect(s).toBeGreaterThanOrEqual(cut);
  });
});

describe("inline search (POST /api/v1/ai/knowledge-bases)", () => {
  test("ranks the documents sent with the request, charges 3 credits", async () => {
    const documents = HELP_CENTER.documents.map(({ title, content, metadata }) => ({ title, content, metadata }));
    const rankings = [];
    for (const q of HELP_CENTER.queries) {
      const r = await alice.call("POST", "/api/v1/ai/knowledge-bases", { query: q.query, documents, top_k: 10, min_score: 0 });
      expect(r.status, show(r)).toBe(200);
      const ranked = r.json.data.result.results.map(
        (s: { document_index: number }) => HELP_CENTER.documents[s.document_index]?.id as string,
      );
      rankings.push({ expected: q.expected, ranked });
    }
    const f = rankingFigures(rankings);
    console.log(`inline search: recall@1 ${f.recallAt1.toFixed(3)}, MRR ${f.mrr.toFixed(3)} over ${rankings.length} queries`);
    expect(f.recallAt1).toBeGreaterThanOrEqual(0.8);
    expect(f.mrr).toBeGreaterThanOrEqual(0.85);
    const before = await alice.balance();
    const r = await alice.call("POST", "/api/v1/ai/knowledge-bases", {
      query: "can I get my money back?",
      documents: [
        "Refunds are issued within 30 days of purchase.",
        { title: "Shipping", content: "We ship worldwide.", metadata: { category: "shipping" } },
      ],
    });
    expect(r.json.data.result.results[0], show(r)).toMatchObject({
      title: null,
      content: "Refunds are issued within 30 days of purchase.",
      document_index: 0,
      document_id: null,
    });
    expect(r.json.meta).toMatchObject({ credits_deducted: 3, provider: "local" });
    expect(await alice.balance()).toBe(before - 3);
    const filtered = await alice.call("POST", "/api/v1/ai/knowledge-bases", {
      query: "refund shipping",
      documents: [
        "Refunds and shipping",
        { title: "Shipping", content: "Shipping and refunds.", metadata: { category: "shipping" } },
      ],
      filter_metadata: { category: "shipping" },
    });
    expect(filtered.json.data.result.results.map((s: { document_index: number }) => s.document_index)).toEqual([1]);
  }, 20_000); // 140 charged calls in a row: several seconds on PostgreSQL behind a pooler

  test("documents is required and bounded", async () => {
    const missing = await alice.call("POST", "/api/v1/ai/knowledge-bases", { query: "x" });
    expect(missing.json.error).toMatchObject({ code: "invalid_request", param: "documents" });
    const tooMany = await alice.call("POST", "/api/v1/ai/knowledge-bases", {
      query: "x",
      documents: Array.from({ length: 1001 }, () => "d"),
    });
    expect(tooMany.json.error).toMatchObject({ code: "invalid_request", param: "documents" });
  });
});
