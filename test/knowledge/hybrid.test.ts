import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { TestGateway } from "../helpers/gateway";
import { HELP_CENTER, rankingFigures } from "./corpus";
import { type Client, client, roomyGateway, show } from "./helpers";

/** The mock provider embeds (hashed words and trigrams), which turns hybrid search on. */
const MOCK = `[[providers]]\nname = "mock"\ntype = "mock"\n`;

let hybrid: TestGateway;
let offline: TestGateway;
interface Loaded {
  c: Client;
  kbId: string;
  docIds: Map<string, string>;
}
const kbs = new Map<TestGateway, Loaded>();
const loaded = (gw: TestGateway) => kbs.get(gw) as Loaded;

async function load(gw: TestGateway) {
  const c = await client(gw, 10_000);
  const kbId = (await c.call("POST", "/api/v1/knowledge-bases", { name: "help" })).json.data.result.id;
  const docs = HELP_CENTER.documents.map(({ title, content, metadata }) => ({ title, content, metadata }));
  const added = await c.call("POST", `/api/v1/knowledge-bases/${kbId}/documents`, { documents: docs });
  expect(added.status, show(added)).toBe(201);
  const docIds = new Map<string, string>();
  for (const [i, d] of (added.json.data.result.data as { id: string }[]).entries())
    docIds.set(d.id, HELP_CENTER.documents[i]?.id as string);
  kbs.set(gw, { c, kbId, docIds });
}

beforeAll(async () => {
  hybrid = await roomyGateway(MOCK);
  offline = await roomyGateway();
  await load(hybrid);
  await load(offline);
});
afterAll(async () => {
  await hybrid.close();
  await offline.close();
});

/** The loaded base's stored vectors of the mock's 64 dimensions, read through the knowledge index. */
const vectorsStored = async (gw: TestGateway) => (await gw.deps.knowledge.chunkVectors(loaded(gw).kbId, 64)).length;

describe("hybrid search (a provider with embeddings is configured)", () => {
  test("chunks are stored with vectors only when a provider embeds", async () => {
    expect(await vectorsStored(hybrid)).toBeGreaterThanOrEqual(HELP_CENTER.documents.length);
    expect(await vectorsStored(offline)).toBe(0);
  });

  test("a query sharing no word with the corpus still finds passages by vector, offline finds none", async () => {
    const query = "refnud polcy"; // misspelled: no token matches BM25
    const h = loaded(hybrid);
    const o = loaded(offline);
    const withVectors = await h.c.call("POST", `/api/v1/knowledge-bases/${h.kbId}/search`, { query });
    const bm25Only = await o.c.call("POST", `/api/v1/knowledge-bases/${o.kbId}/search`, { query });
    expect(bm25Only.json.data.result.results).toEqual([]);
    expect(withVectors.json.data.result.results.length, show(withVectors)).toBeGreaterThan(0);
    expect(withVectors.json.meta).toMatchObject({ provider: "local", credits_deducted: 3 });
  });

  test("ranking of paraphrased questions holds with vectors fused in", async () => {
    const { c, kbId, docIds } = loaded(hybrid);
    const rankings = [];
    for (const q of HELP_CENTER.queries) {
      const r = await c.call("POST", `/api/v1/knowledge-bases/${kbId}/search`, { query: q.query, top_k: 10 });
      rankings.push({
        expected: q.expected,
        ranked: r.json.data.result.results.map((s: { document_id: string }) => docIds.get(s.document_id) as string),
      });
    }
    const f = rankingFigures(rankings);
    console.log(`hybrid search (mock hashed vectors): recall@1 ${f.recallAt1.toFixed(3)}, MRR ${f.mrr.toFixed(3)}`);
    expect(f.recallAt1).toBeGreaterThanOrEqual(0.8);
    expect(f.mrr).toBeGreaterThanOrEqual(0.85);
  });

  test("metadata filters and scoping still hold for vector hits", async () => {
    const { c, kbId } = loaded(hybrid);
    const r = await c.call("POST", `/api/v1/knowledge-bases/${kbId}/search`, {
      query: "refnud polcy",
      filter_metadata: { lang: "es" },
      top_k: 10,
    });
    expect(r.json.data.result.results.length, show(r)).toBeGreaterThan(0);
    for (const s of r.json.data.result.results) expect(s.metadata.lang, show(r)).toBe("es");
    const other = await client(hybrid);
    const own = (await other.call("POST", "/api/v1/knowledge-bases", { name: "other" })).json.data.result.id;
    await other.call("POST", `/api/v1/knowledge-bases/${own}/documents`, {
      documents: ["Completely different text about volcanoes."],
    });
    const mine = await other.call("POST", `/api/v1/knowledge-bases/${own}/search`, {
      query: "refnud polcy return policy",
      top_k: 10,
    });
    expect(mine.json.data.result.results.length, show(mine)).toBeGreaterThan(0);
    for (const s of mine.json.data.result.results) expect(s.knowledge_base_id, show(mine)).toBe(own);
  });
});
