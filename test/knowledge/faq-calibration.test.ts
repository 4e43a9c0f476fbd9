/**
 * Issue 24.15 through a real server: faq-match's confidence means what it says. A typo or a
 * paraphrase is not certainty, a question naming a country finds the FAQ about shipping abroad,
 * and on the blind near-miss set (a gym's FAQs, written before the matching code was read and
 * never tuned on) the confidences are calibrated: expected calibration error at most 0.1.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { calibrationFigures } from "../eval/metrics";
import shop from "../fixtures/knowledge/faq.json";
import gym from "../fixtures/knowledge/faq-nearmiss.json";
import blind from "../fixtures/knowledge/faq-nearmiss-blind.json";
import type { TestGateway } from "../helpers/gateway";
import { type Client, client, roomyGateway, show } from "./helpers";

let gw: TestGateway;
let alice: Client;

async function collection(name: string, faqs: { question: string; answer: string }[]): Promise<{ id: string; ids: number[] }> {
  const r = await alice.call("POST", "/api/v1/ai/faq-collections", { name, faqs });
  expect(r.status, show(r)).toBe(201);
  return { id: r.json.data.result.id, ids: r.json.data.result.faqs.map((f: { id: number }) => f.id) };
}

let shopFaqs: { id: string; ids: number[] };
let gymFaqs: { id: string; ids: number[] };

beforeAll(async () => {
  gw = await roomyGateway();
  alice = await client(gw, 10_000);
  shopFaqs = await collection("Shop", shop.faqs);
  gymFaqs = await collection("Gym", gym.faqs);
});
afterAll(() => gw.close());

type Match = { id: number; question: string; confidence: number };
async function best(collectionId: string, query: string, extra: Record<string, unknown> = {}): Promise<Match | undefined> {
  const r = await alice.call("POST", "/api/v1/ai/faq-match", { collection_id: collectionId, query, ...extra });
  expect(r.status, show(r)).toBe(200);
  return r.json.data.result.matches[0];
}

describe("24.15: faq-match confidence on near misses", () => {
  test("a typo or a paraphrase finds its FAQ, but not with certainty", async () => {
    for (const [query, question] of [
      ["i forgot my pasword", "How do I reset my password?"],
      ["can I send stuff back", "How do I return an item?"],
    ] as const) {
      const b = await best(shopFaqs.id, query);
      expect(b?.question, query).toBe(question);
      expect(b?.confidence as number, query).toBeLessThan(0.98);
    }
  });

  test("'do you deliver to germany?' matches 'Do you ship internationally?'", async () => {
    const r = await alice.call("POST", "/api/v1/ai/faq-match", {
      collection_id: shopFaqs.id,
      query: "do you deliver to germany?",
    });
    expect(r.json.data.result.matched, show(r)).toBe(true);
    expect(r.json.data.result.best_match.question, show(r)).toBe("Do you ship internationally?");
  });

  test("on the blind near-miss set, confidence is calibrated (ECE <= 0.1) and near misses score low on average", async () => {
    const answers: { confidence: number; right: boolean }[] = [];
    const nearMiss: number[] = [];
    for (const q of [...blind.queries, ...blind.unanswerable.map((u) => ({ ...u, expected: -1 }))]) {
      const b = await best(gymFaqs.id, q.query, { min_confidence: 0, top_n: 1 });
      if (!b) continue;
      answers.push({ confidence: b.confidence, right: q.expected >= 0 && b.id === gymFaqs.ids[q.expected] });
      if (q.kind === "near_miss") nearMiss.push(b.confidence);
    }
    const c = calibrationFigures(answers);
    expect(answers.length).toBeGreaterThan(40);
    expect(c.ece).toBeLessThanOrEqual(0.1);
    expect(c.highAccuracy).toBeGreaterThanOrEqual(0.9);
    // 0.385 on its first run (0.506 before the calibration of 2026-11-26); one near miss of 15 still
    // reaches 0.8 ("how do I become a personal trainer here" against "Do you offer personal training?")
    expect(nearMiss.reduce((a, b) => a + b, 0) / nearMiss.length).toBeLessThan(0.45);
  });
});
