import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { TestGateway } from "../helpers/gateway";
import { type Client, client, roomyGateway, show } from "./helpers";

let gw: TestGateway;
let alice: Client;
let bob: Client;

beforeAll(async () => {
  gw = await roomyGateway();
  alice = await client(gw);
  bob = await client(gw);
});
afterAll(() => gw.close());

/** The base's chunks as the index counts them (0 once the base is gone), through its interface. */
async function chunksOf(kbId: string): Promise<number> {
  try {
    return (await gw.deps.knowledge.bases.get(alice.accountId, kbId)).chunk_count;
  } catch {
    return 0;
  }
}
/** Chunks of the base that full-text search finds for a word (none left behind by a delete). */
const indexHits = async (kbId: string, word: string) =>
  (await gw.deps.knowledge.search({ kbIds: [kbId], query: word, topK: 50, minScore: 0 })).length;

describe("knowledge base life cycle", () => {
  test("create, list, get, update, add/list/delete documents, delete; free but for indexing (1 credit an upload of up to 10,000 characters)", async () => {
    const before = await alice.balance();
    const created = await alice.call("POST", "/api/v1/knowledge-bases", { name: "Help center", description: "public articles" });
    expect(created.status, show(created)).toBe(201);
    const kb = created.json.data.result;
    expect(kb).toMatchObject({ name: "Help center", description: "public articles", status: "active", document_count: 0 });
    expect(created.json.meta.credits_deducted).toBe(0);

    for (const name of ["Second", "Third"])
      expect((await alice.call("POST", "/api/v1/knowledge-bases", { name })).status).toBe(201);
    const page1 = await alice.call("GET", "/api/v1/knowledge-bases?limit=2");
    expect(page1.json.data.result, show(page1)).toMatchObject({ total: 3, limit: 2, offset: 0, has_more: true });
    expect(page1.json.data.result.data).toHaveLength(2);
    const page2 = await alice.call("GET", "/api/v1/knowledge-bases?limit=2&offset=2");
    // newest first; bases made in the same millisecond tie on created_at and follow their ids, so
    // the pages are checked for covering every base once, in non-increasing creation time
    const listed = [...page1.json.data.result.data, ...page2.json.data.result.data] as { name: string; created_at: string }[];
    expect(listed.map((k) => k.name).sort()).toEqual(["Help center", "Second", "Third"]);
    const times = listed.map((k) => Date.parse(k.created_at));
    for (let i = 1; i < times.length; i++) expect(times[i]).toBeLessThanOrEqual(times[i - 1] as number);
    expect(page2.json.data.result.data).toHaveLength(1);
    expect(page2.json.data.result.has_more).toBe(false);

    const patched = await alice.call("PATCH", `/api/v1/knowledge-bases/${kb.id}`, { status: "inactive", name: "Help" });
    expect(patched.json.data.result, show(patched)).toMatchObject({
      id: kb.id,
      name: "Help",
      status: "inactive",
      description: "public articles",
    });

    const added = await alice.call("POST", `/api/v1/knowledge-bases/${kb.id}/documents`, {
      documents: [
        "Plain text about zeppelins and airships.",
        {
          title: "Long guide",
          content: "Quokkas live on Rottnest Island. ".repeat(120),
          metadata: { category: "animals", year: 2024 },
        },
      ],
    });
    expect(added.status, show(added)).toBe(201);
    expect(added.json.meta, show(added)).toMatchObject({ credits_deducted: 1, credits_remaining: before - 1 });
    const [plain, long] = added.json.data.result.data;
    expect(plain).toMatchObject({ title: null, chunk_count: 1, metadata: {} });
    expect(long.chunk_count).toBeGreaterThan(3); // long documents are split
    const single = await alice.call("POST", `/api/v1/knowledge-bases/${kb.id}/documents`, {
      title: "One",
      content: "A single document body.",
    });
    expect(single.status, show(single)).toBe(201);
    expect(single.json.meta.credits_deducted).toBe(1);

    const docs = await alice.call("GET", `/api/v1/knowledge-bases/${kb.id}/documents?limit=10`);
    expect(docs.json.data.result.total).toBe(3);
    expect((await alice.call("GET", `/api/v1/knowledge-bases/${kb.id}`)).json.data.result).toMatchObject({
      document_count: 3,
      chunk_count: long.chunk_count + 2,
    });

    expect(await indexHits(kb.id, "zeppelins")).toBe(1);
    const del = await alice.call("DELETE", `/api/v1/knowledge-bases/${kb.id}/documents/${plain.id}`);
    expect(del.status, show(del)).toBe(200);
    expect(await indexHits(kb.id, "zeppelins")).toBe(0);
    expect((await alice.call("DELETE", `/api/v1/knowledge-bases/${kb.id}/documents/${plain.id}`)).status).toBe(404);

    expect(await chunksOf(kb.id)).toBe(long.chunk_count + 1);
    expect(await indexHits(kb.id, "quokkas")).toBe(long.chunk_count);
    expect((await alice.call("DELETE", `/api/v1/knowledge-bases/${kb.id}`)).status).toBe(200);
    expect(await chunksOf(kb.id)).toBe(0);
    expect(await indexHits(kb.id, "quokkas")).toBe(0);
    expect((await alice.call("GET", `/api/v1/knowledge-bases/${kb.id}`)).status).toBe(404);
    expect(await alice.balance()).toBe(before - 2);
  });
});

describe("validation", () => {
  test("missing or bad fields are 400 invalid_request naming the field", async () => {
    const cases: [string, string, unknown, string][] = [
      ["POST", "/api/v1/knowledge-bases", { description: "no name" }, "name"],
      ["POST", "/api/v1/knowledge-bases", { name: "x", status: "archived" }, "status"],
      ["POST", "/api/v1/knowledge-bases", { name: "x".repeat(201) }, "name"],
    ];
    for (const [method, path, body, param] of cases) {
      const r = await alice.call(method, path, body);
      expect(r.status, show(r)).toBe(400);
      expect(r.json.error, show(r)).toMatchObject({ code: "invalid_request", param });
    }
    const kb = (await alice.call("POST", "/api/v1/knowledge-bases", { name: "limits" })).json.data.result;
    const docCases: [unknown, string][] = [
      [{}, "documents"],
      [{ documents: [] }, "documents"],
      [{ documents: Array.from({ length: 101 }, (_, i) => `doc ${i}`) }, "documents"],
      [{ documents: [{ title: "no content" }] }, "documents[0]"],
      [{ documents: [{ content: "x", metadata: { nested: { a: 1 } } }] }, "documents[0]"],
    ];
    for (const [body, param] of docCases) {
      const r = await alice.call("POST", `/api/v1/knowledge-bases/${kb.id}/documents`, body);
      expect(r.status, show(r)).toBe(400);
      expect(String(r.json.error.param), show(r)).toStartWith(param);
    }
    const page = await alice.call("GET", "/api/v1/knowledge-bases?limit=1000");
    expect(page.json.error, show(page)).toMatchObject({ code: "invalid_request", param: "limit" });
  });
});

describe("scoping", () => {
  test("another account's knowledge base is 404 on every route, and not charged", async () => {
    const kb = (await alice.call("POST", "/api/v1/knowledge-bases", { name: "private" })).json.data.result;
    const doc = (
      await alice.call("POST", `/api/v1/knowledge-bases/${kb.id}/documents`, { documents: ["secret plans for the harbour"] })
    ).json.data.result.data[0];
    const bobBefore = await bob.balance();
    const attempts: [string, string, unknown?][] = [
      ["GET", `/api/v1/knowledge-bases/${kb.id}`],
      ["PATCH", `/api/v1/knowledge-bases/${kb.id}`, { name: "mine now" }],
      ["GET", `/api/v1/knowledge-bases/${kb.id}/documents`],
      ["POST", `/api/v1/knowledge-bases/${kb.id}/documents`, { documents: ["planted"] }],
      ["DELETE", `/api/v1/knowledge-bases/${kb.id}/documents/${doc.id}`],
      ["POST", `/api/v1/knowledge-bases/${kb.id}/search`, { query: "harbour plans" }],
      ["DELETE", `/api/v1/knowledge-bases/${kb.id}`],
    ];
    for (const [method, path, body] of attempts) {
      const r = await bob.call(method, path, body);
      expect(r.status, `${method} ${path}: ${show(r)}`).toBe(404);
      expect(r.json.error.code).toBe("not_found");
    }
    expect(await bob.balance()).toBe(bobBefore);
    const list = await bob.call("GET", "/api/v1/knowledge-bases");
    expect(list.json.data.result.data.some((k: { id: string }) => k.id === kb.id)).toBe(false);
    expect((await alice.call("GET", `/api/v1/knowledge-bases/${kb.id}`)).json.data.result).toMatchObject({
      name: "private",
      document_count: 1,
    });
  });

  test("a search sees only the searched base, never another account's chunks with the same words", async () => {
    const mine = (await bob.call("POST", "/api/v1/knowledge-bases", { name: "bob's" })).json.data.result;
    await bob.call("POST", `/api/v1/knowledge-bases/${mine.id}/documents`, {
      documents: ["Public notes on the harbour ferry timetable."],
    });
    const r = await bob.call("POST", `/api/v1/knowledge-bases/${mine.id}/search`, { query: "secret harbour plans", top_k: 50 });
    const results = r.json.data.result.results;
    expect(results.length, show(r)).toBe(1);
    expect(results[0]).toMatchObject({ knowledge_base_id: mine.id, content: "Public notes on the harbour ferry timetable." });
  });

  test("without a key: 401", async () => {
    const r = await fetch(`${gw.url}/api/v1/knowledge-bases`);
    expect(r.status).toBe(401);
  });
});
