/**
 * Knowledge storage has a quota and a price (issue 25, item 6): the plan caps an account's bases,
 * documents and bytes over all its bases (403, nothing stored, nothing charged, even for uploads
 * racing each other); indexing costs credits per started 10,000 characters; the embeddings of an
 * upload are charged to the account and held before the provider is called (402 and no embedding
 * call when the balance does not cover them); a large upload leaves the event loop free.
 * Runs on PostgreSQL too with TEXTAI_TEST_KNOWLEDGE=postgres (test/knowledge/helpers.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { freshDatabase } from "../helpers/shared-servers";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";
import { type Client, client, ON_POSTGRES, show } from "./helpers";

/** A gateway on SQLite, or on a fresh PostgreSQL database when the knowledge tests run there. */
async function gateway(configText: string): Promise<TestGateway> {
  if (!ON_POSTGRES) return startGateway({ configText });
  const db = await freshDatabase();
  const gw = await startGateway({ configText, env: { TEXTAI_DATABASE_URL: db.url } });
  await gw.deps.services.ready();
  return {
    ...gw,
    async close() {
      await gw.close();
      await db.drop();
    },
  };
}

const RATES = `[plans.free.rate_limits]\nstandard = 10000\nheavy = 10000\nbulk = 10000\n`;

/** The account's ledger, as usage reads it: credits per function. */
async function creditsBy(c: Client): Promise<Record<string, number>> {
  const r = await c.call("GET", "/api/v1/account/usage");
  expect(r.status, show(r)).toBe(200);
  return Object.fromEntries(
    (r.json.data.result.by_function as { function: string; credits: number }[]).map((f) => [f.function, f.credits]),
  );
}

const newBase = async (c: Client, name: string): Promise<string> => {
  const r = await c.call("POST", "/api/v1/knowledge-bases", { name });
  expect(r.status, show(r)).toBe(201);
  return r.json.data.result.id;
};

const documentsIn = async (c: Client, kbId: string): Promise<number> =>
  (await c.call("GET", `/api/v1/knowledge-bases/${kbId}`)).json.data.result.document_count;

describe("the plan's knowledge quota", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await gateway(`[plans.free]\nknowledge_bases = 2\nknowledge_documents = 4\nknowledge_bytes = 3000\n${RATES}`);
  });
  afterAll(() => gw.close());

  test("a base past knowledge_bases is 403 naming the quota; nothing created", async () => {
    const c = await client(gw);
    await newBase(c, "one");
    await newBase(c, "two");
    const third = await c.call("POST", "/api/v1/knowledge-bases", { name: "three" });
    expect(third.status, show(third)).toBe(403);
    expect(third.json.error, show(third)).toMatchObject({ code: "forbidden", param: "name" });
    expect(third.json.error.message).toContain("knowledge_bases quota");
    expect((await c.call("GET", "/api/v1/knowledge-bases")).json.data.result.total).toBe(2);
  });

  test("documents and bytes are counted over all the account's bases; past them 403, nothing stored or charged", async () => {
    const c = await client(gw);
    const a = await newBase(c, "a");
    const b = await newBase(c, "b");
    const ok = await c.call("POST", `/api/v1/knowledge-bases/${a}/documents`, {
      documents: ["first text", "second text", "third"],
    });
    expect(ok.status, show(ok)).toBe(201);
    const balance = await c.balance();

    // a fourth and fifth document in the other base: 5 > 4
    const many = await c.call("POST", `/api/v1/knowledge-bases/${b}/documents`, { documents: ["fourth", "fifth"] });
    expect(many.status, show(many)).toBe(403);
    expect(many.json.error, show(many)).toMatchObject({ code: "forbidden", param: "documents" });
    expect(many.json.error.message).toContain("knowledge_documents quota");
    expect(many.json.meta.credits_deducted).toBe(0);

    // one document of 3,000 bytes: past the 3,000 the account has room for less what it holds
    const big = await c.call("POST", `/api/v1/knowledge-bases/${b}/documents`, { content: "é".repeat(1400) + "x".repeat(200) });
    expect(big.status, show(big)).toBe(403);
    expect(big.json.error.message, show(big)).toContain("knowledge_bytes quota");

    expect(await documentsIn(c, b)).toBe(0);
    expect(await documentsIn(c, a)).toBe(3);
    expect(await c.balance()).toBe(balance);
  });

  test("uploads racing for the last place: exactly one is stored and charged", async () => {
    const c = await client(gw);
    const a = await newBase(c, "a");
    const b = await newBase(c, "b");
    expect((await c.call("POST", `/api/v1/knowledge-bases/${a}/documents`, { documents: ["x", "y", "z"] })).status).toBe(201);
    const balance = await c.balance();
    const racing = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        c.call("POST", `/api/v1/knowledge-bases/${i % 2 ? a : b}/documents`, { content: `racer ${i}` }),
      ),
    );
    const statuses = racing.map((r) => r.status).sort();
    expect(statuses, racing.map(show).join("\n")).toEqual([201, 403, 403, 403, 403, 403]);
    expect((await documentsIn(c, a)) + (await documentsIn(c, b))).toBe(4);
    expect(await c.balance()).toBe(balance - 1);
  });
});

describe("indexing and embeddings are charged to the account", () => {
  let sim: Upstream;
  let gw: TestGateway;
  const embeddingCalls = () => sim.calls.requests.filter((r) => r.path === "/v1/embeddings").length;
  beforeAll(async () => {
    sim = await startUpstream();
    gw = await gateway(
      `${simProvider({ url: `${sim.url}/v1`, model: "sim-model", extra: 'embedding_model = "sim-embed"' })}\n${RATES}`,
    );
  });
  afterAll(async () => {
    await gw.close();
    await sim.close();
  });

  test("indexing: 1 credit per started 10,000 characters; embedding: 1 per started 10,000 characters embedded; both in the ledger", async () => {
    const c = await client(gw, 100);
    const kb = await newBase(c, "kb");
    const before = embeddingCalls();
    // 25,000 characters of content: 3 units to index; the chunks sent to embed (with overlap and
    // the title) are longer than the content, 3 or 4 units
    const r = await c.call("POST", `/api/v1/knowledge-bases/${kb}/documents`, {
      documents: [
        { title: "T", content: "word ".repeat(3000) },
        { title: "U", content: "text ".repeat(2000) },
      ],
    });
    expect(r.status, show(r)).toBe(201);
    expect(embeddingCalls()).toBeGreaterThan(before);
    const ledger = await creditsBy(c);
    expect(ledger["knowledge-indexing"], JSON.stringify(ledger)).toBe(3);
    expect(ledger["knowledge-embedding"], JSON.stringify(ledger)).toBeGreaterThanOrEqual(3);
    const charged = (ledger["knowledge-indexing"] ?? 0) + (ledger["knowledge-embedding"] ?? 0);
    expect(r.json.meta).toMatchObject({ credits_deducted: charged, credits_remaining: 100 - charged });
    expect(await c.balance()).toBe(100 - charged);
    // hybrid: every chunk carries the provider's vector (the simulator's have 64 dimensions)
    const chunks = (r.json.data.result.data as { chunk_count: number }[]).reduce((n, d) => n + d.chunk_count, 0);
    expect((await gw.deps.knowledge.chunkVectors(kb, 64)).length).toBe(chunks);
  });

  test("a balance short of indexing plus embedding: 402 before the embedding provider is called; nothing stored or charged", async () => {
    const c = await client(gw, 3);
    const kb = await newBase(c, "kb");
    const before = embeddingCalls();
    // 15,000 characters: 2 to index, at least 2 to embed
    const r = await c.call("POST", `/api/v1/knowledge-bases/${kb}/documents`, { content: "word ".repeat(3000) });
    expect(r.status, show(r)).toBe(402);
    expect(r.json.error, show(r)).toMatchObject({ code: "insufficient_credits" });
    expect(r.json.error.message).toContain("embedding");
    expect(embeddingCalls()).toBe(before);
    expect(await documentsIn(c, kb)).toBe(0);
    expect(await c.balance()).toBe(3);
    expect(await creditsBy(c)).toEqual({});
  });

  test("the embedding provider failing: the documents are indexed for keyword search, only indexing is charged", async () => {
    const c = await client(gw, 100);
    const kb = await newBase(c, "kb");
    sim.program([{ status: 503, times: 5 }]);
    const r = await c.call("POST", `/api/v1/knowledge-bases/${kb}/documents`, { content: "word ".repeat(100) });
    sim.reset();
    expect(r.status, show(r)).toBe(201);
    expect(await creditsBy(c)).toEqual({ "knowledge-indexing": 1 });
    expect(await c.balance()).toBe(99);
  });
});

describe("a large upload leaves the event loop free", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await gateway(`[limits]\nmax_body_bytes = 4000000\n${RATES}`);
  });
  afterAll(() => gw.close());

  test("/health answers within 200 ms all through a 1.5 MB upload", async () => {
    const c = await client(gw, 1000);
    const kb = await newBase(c, "big");
    // the first upload of a process loads the term keys' word lists (about 0.1 s, once, as any
    // offline-engine part loads): done here, so the figure below is the upload's own work
    expect((await c.call("POST", `/api/v1/knowledge-bases/${kb}/documents`, { content: "warm up the word lists" })).status).toBe(
      201,
    );
    // 15 documents of 100,000 characters, varied words so FTS5 and the term keys have work to do
    const words = Array.from({ length: 4000 }, (_, i) => `w${(i * 7919) % 9973}x`);
    const content = (k: number) => {
      let s = "";
      for (let i = 0; s.length < 99_000; i++) s += `${words[(i * 31 + k) % words.length]}${i % 12 === 11 ? ". " : " "}`;
      return s;
    };
    const documents = Array.from({ length: 15 }, (_, k) => ({ title: `part ${k}`, content: content(k) }));
    let uploading = true;
    const upload = c.call("POST", `/api/v1/knowledge-bases/${kb}/documents`, { documents }).finally(() => {
      uploading = false;
    });
    const waits: number[] = [];
    while (uploading) {
      const t = performance.now();
      const h = await fetch(`${gw.url}/health`);
      expect(h.status).toBe(200);
      await h.text();
      waits.push(performance.now() - t);
      await Bun.sleep(10);
    }
    const r = await upload;
    expect(r.status, show(r)).toBe(201);
    expect(r.json.data.result.count).toBe(15);
    const chars = documents.reduce((n, d) => n + d.content.length, 0);
    expect(chars).toBeGreaterThan(1_400_000);
    expect(r.json.meta.credits_deducted).toBe(Math.ceil(chars / 10_000));
    expect(waits.length).toBeGreaterThan(3);
    expect(Math.max(...waits), `health waits (ms): ${waits.map(Math.round).join(", ")}`).toBeLessThan(200);
  }, 60_000);
  test("a base deleted while a large upload's chunks are written: the upload answers 404 (or 201 if it finished first), never a 500, and leaves nothing behind", async () => {
    const c = await client(gw, 1000);
    const kb = await newBase(c, "doomed");
    const documents = Array.from({ length: 10 }, (_, k) => `document ${k} `.repeat(8000));
    let done = false;
    const upload = c.call("POST", `/api/v1/knowledge-bases/${kb}/documents`, { documents }).finally(() => {
      done = true;
    });
    // the documents' rows are written first, their chunks after in slices: delete in between
    while (!done && (await documentsIn(c, kb)) === 0) await Bun.sleep(2);
    const del = await c.call("DELETE", `/api/v1/knowledge-bases/${kb}`);
    expect(del.status, show(del)).toBe(200);
    const r = await upload;
    expect([201, 404], show(r)).toContain(r.status);
    if (r.status === 404) expect(await c.balance()).toBe(1000); // refused: nothing charged
    expect(await gw.deps.knowledge.search({ kbIds: [kb], query: "document", topK: 50, minScore: 0 })).toEqual([]);
  }, 30_000);
});
