import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { prepareDocuments } from "../../src/knowledge/chunking";
import { attachVectors, type Embedder, VectorCache } from "../../src/knowledge/embeddings";
import { SqliteKnowledgeIndex } from "../../src/knowledge/sqlite";
import { openStorage } from "../../src/storage/db";

const dir = mkdtempSync(join(tmpdir(), "textai-kb-vectors-"));
const storage = openStorage(join(dir, "kb.db"));
afterAll(() => {
  storage.close();
  rmSync(dir, { recursive: true, force: true });
});
storage.sqlite.exec("INSERT INTO accounts (id) VALUES ('acc_1')");
const index = new SqliteKnowledgeIndex(storage);
const store = index.bases;

/** Three-dimensional "topics": a text's vector is its count of each topic word. */
const embedder: Embedder = {
  name: "topics",
  model: "topic-counts",
  embed: async (texts) => texts.map((t) => ["ship", "refund", "password"].map((w) => t.split(w).length - 1)),
};

async function baseWith(texts: string[]) {
  const kb = store.create("acc_1", { name: "b" });
  const prepared = prepareDocuments(texts);
  await attachVectors(embedder, prepared);
  await store.addDocuments("acc_1", kb.id, prepared);
  return store.row("acc_1", kb.id);
}

describe("VectorCache", () => {
  test("nearest chunks by cosine, across bases, reloaded when a base's revision moves", async () => {
    const a = await baseWith(["ship ship", "refund"]);
    const b = await baseWith(["password reset"]);
    const cache = new VectorCache();
    const near = async (q: number[], bases = [a, b]) =>
      (await cache.nearest(index, bases, Float32Array.from(q), 2)).map((h) => ({
        ...h,
        similarity: Math.round(h.similarity * 100) / 100,
      }));
    const chunkId = (content: string) =>
      (storage.sqlite.query("SELECT id FROM kb_chunks WHERE content = ?").get(content) as { id: number }).id;
    expect(await near([0, 0, 1])).toEqual([
      { id: chunkId("password reset"), similarity: 1 },
      { id: chunkId("ship ship"), similarity: 0 },
    ]);
    expect((await near([1, 0, 0]))[0]?.id).toBe(chunkId("ship ship"));

    const prepared = prepareDocuments(["refund refund refund"]);
    await attachVectors(embedder, prepared);
    await store.addDocuments("acc_1", a.id, prepared);
    const stale = await near([0, 1, 0], [a]);
    expect(stale.map((h) => h.id)).not.toContain(chunkId("refund refund refund")); // same revision: cached vectors
    const fresh = (await cache.nearest(index, [store.row("acc_1", a.id)], Float32Array.from([0, 1, 0]), 3)).map((h) => h.id);
    expect(fresh).toContain(chunkId("refund refund refund"));
  });

  test("an embedder that fails leaves documents without vectors (search stays BM25)", async () => {
    const prepared = prepareDocuments(["anything"]);
    await attachVectors({ name: "down", model: "down-embed", embed: () => Promise.reject(new Error("503")) }, prepared);
    expect(prepared[0]?.vectors).toBeUndefined();
  });
});
