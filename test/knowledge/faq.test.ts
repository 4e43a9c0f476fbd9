import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fixture from "../fixtures/knowledge/faq.json";
import type { TestGateway } from "../helpers/gateway";
import { type Client, client, roomyGateway, show } from "./helpers";

let gw: TestGateway;
let alice: Client;
let bob: Client;
let collectionId: string;
/** FAQ index in the fixture -> stored FAQ id */
let faqIds: string[];

beforeAll(async () => {
  gw = await roomyGateway();
  alice = await client(gw);
  bob = await client(gw);
  const created = await alice.call("POST", "/api/v1/ai/faq-collections", { name: "Shop FAQ", faqs: fixture.faqs });
  expect(created.status, show(created)).toBe(201);
  collectionId = created.json.data.result.id;
  faqIds = created.json.data.result.faqs.map((f: { id: string }) => f.id);
});
afterAll(() => gw.close());

const match = (c: Client, body: Record<string, unknown>) =>
  c.call("POST", "/api/v1/ai/faq-match", { collection_id: collectionId, ...body });

describe("FAQ collections", () => {
  test("create, list, get, delete; creating costs faq-storage (1 per started 10,000 characters), the rest nothing", async () => {
    const before = await alice.balance();
    const created = await alice.call("POST", "/api/v1/ai/faq-collections", {
      name: "Tiny",
      faqs: [{ question: "Q?", answer: "A." }],
    });
    expect(created.json.data.result).toMatchObject({ name: "Tiny", faq_count: 1, faqs: [{ question: "Q?", answer: "A." }] });
    expect(created.json.meta.credits_deducted).toBe(1);
    const id = created.json.data.result.id;
    const list = await alice.call("GET", "/api/v1/ai/faq-collections");
    expect(list.json.data.result.total).toBe(2);
    expect(list.json.data.result.data.map((c: { name: string; faq_count: number }) => [c.name, c.faq_count])).toEqual([
      ["Tiny", 1],
      ["Shop FAQ", fixture.faqs.length],
    ]);
    expect((await alice.call("GET", `/api/v1/ai/faq-collections/${id}`)).json.data.result.faqs).toHaveLength(1);
    expect((await alice.call("DELETE", `/api/v1/ai/faq-collections/${id}`)).status).toBe(200);
    expect((await alice.call("GET", `/api/v1/ai/faq-collections/${id}`)).status).toBe(404);
    expect((await match(alice, { collection_id: id, query: "Q?" })).status).toBe(404);
    expect(await alice.balance()).toBe(before - 1);
  });

  test("name and faqs[] of {question, answer} are required", async () => {
    for (const [body, param] of [
      [{ faqs: [{ question: "q", answer: "a" }] }, "name"],
      [{ name: "x" }, "faqs"],
      [{ name: "x", faqs: [] }, "faqs"],
      [{ name: "x", faqs: [{ question: "q" }] }, "faqs[0].answer"],
      [{ name: "x", faqs: [{ answer: "a" }] }, "faqs[0].question"],
    ] as const) {
      const r = await alice.call("POST", "/api/v1/ai/faq-collections", body);
      expect(r.json.error, show(r)).toMatchObject({ code: "invalid_request", param });
    }
  });

  test("another account's collection is 404 for get, delete and match, and nothing is charged", async () => {
    const before = await bob.balance();
    for (const [method, path, body] of [
      ["GET", `/api/v1/ai/faq-collections/${collectionId}`, undefined],
      ["DELETE", `/api/v1/ai/faq-collections/${collectionId}`, undefined],
      ["POST", "/api/v1/ai/faq-match", { collection_id: collectionId, query: "reset password" }],
    ] as const) {
      const r = await bob.call(method, path, body);
      expect(r.status, `${method} ${path}: ${show(r)}`).toBe(404);
    }
    expect(await bob.balance()).toBe(before);
    expect((await bob.call("GET", "/api/v1/ai/faq-collections")).json.data.result.total).toBe(0);
  });
});

describe("FAQ match", () => {
  test.each([
    ["paraphrased", fixture.paraphrases],
    ["misspelled", fixture.typos],
  ])("%s questions: the right FAQ is the best match, at confidence >= 0.5 for all but one", async (_kind, cases) => {
    // The calibration is fitted with shop-related questions no FAQ answers, so a one-word query
    // matched only through a hand-made synonym ("where is my package?" -> "track my order") may
    // fall just under 0.5: that FAQ is still the best match, at a lower confidence.
    const misses: string[] = [];
    const unsure: string[] = [];
    for (const c of cases) {
      const r = await match(alice, { query: c.query, min_confidence: 0 });
      expect(r.status, show(r)).toBe(200);
      const best = r.json.data.result.best_match;
      if (best?.id !== faqIds[c.expected]) misses.push(`${c.query} -> ${best?.question ?? "(none)"} ${best?.confidence ?? ""}`);
      else if (best.confidence < 0.5) unsure.push(`${c.query}: ${best.confidence}`);
    }
    expect(misses).toEqual([]);
    expect(unsure.length, unsure.join("; ")).toBeLessThanOrEqual(1);
  });

  test("unrelated questions match nothing at the default min_confidence", async () => {
    for (const query of fixture.unrelated) {
      const r = await match(alice, { query });
      expect(r.json.data.result, `${query}: ${show(r)}`).toEqual({ matches: [], best_match: null, matched: false });
      // They still score, just low: visible with min_confidence 0.
      const all = await match(alice, { query, min_confidence: 0, top_n: 1 });
      expect(all.json.data.result.matches[0]?.confidence ?? 0).toBeLessThan(0.3);
    }
  });

  test("a question matched only through loose synonyms is not a confident match", async () => {
    // "parcel" and "order(ing)", "arrive" and "delivery" share synonym groups, but none of these
    // asks how to change the delivery address (it matched at 0.858 before synonyms counted less).
    const changeAddress = faqIds[6];
    for (const query of ["when will my parcel arrive", "when is my package going to arrive", "when does my parcel get here"]) {
      const r = await match(alice, { query });
      expect(r.status, show(r)).toBe(200);
      const ids = r.json.data.result.matches.map((m: { id: string }) => m.id);
      expect(ids, `${query}: ${show(r)}`).not.toContain(changeAddress);
    }
  });

  test("result shape, top_n, min_confidence; 1 credit, provider local", async () => {
    const before = await alice.balance();
    const r = await match(alice, { query: "how long does shiping take", top_n: 2, min_confidence: 0 });
    expect(r.status, show(r)).toBe(200);
    const { matches, best_match, matched } = r.json.data.result;
    expect(matched).toBe(true);
    expect(matches).toHaveLength(2);
    expect(best_match).toEqual(matches[0]);
    expect(best_match).toMatchObject({
      question: "How long does shipping take?",
      answer: "Standard shipping takes 3 to 5 business days.",
    });
    expect(matches[0].confidence).toBeGreaterThanOrEqual(matches[1].confidence);
    expect(r.json.meta).toMatchObject({ credits_deducted: 1, provider: "local" });
    expect(await alice.balance()).toBe(before - 1);
    const cut = matches[1].confidence + 0.001;
    const strict = await match(alice, { query: "how long does shiping take", min_confidence: cut, top_n: 5 });
    expect(strict.json.data.result.matches.length, show(strict)).toBeGreaterThan(0);
    for (const m of strict.json.data.result.matches) expect(m.confidence).toBeGreaterThanOrEqual(cut);
    expect(strict.json.data.result.matches.some((m: { id: string }) => m.id === matches[1].id)).toBe(false);
  });

  test("bad match requests are 400 naming the field", async () => {
    for (const [body, param] of [
      [{ query: "x", collection_id: undefined }, "collection_id"],
      [{ query: undefined }, "query"],
      [{ query: "x", min_confidence: 1.5 }, "min_confidence"],
      [{ query: "x", top_n: 0 }, "top_n"],
    ] as const) {
      const r = await match(alice, body);
      expect(r.json.error, show(r)).toMatchObject({ code: "invalid_request", param });
    }
  });
});
