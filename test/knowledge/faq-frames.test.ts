/**
 * faq-match through a real server: a question that shares only a question frame ("do you offer",
 * "is ... included", "can I") or a word's spelling ("instalments" and "install") with a FAQ is not
 * matched at the default min_confidence; the FAQs' own questions and paraphrases still are. A
 * bike shop's five FAQs, not those of the eval sets.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { TestGateway } from "../helpers/gateway";
import { type Client, client, roomyGateway, show } from "./helpers";

const FAQS = [
  { question: "Do you offer financing?", answer: "Yes, 0% over 12 months on bikes above 800 euro, through our bank partner." },
  { question: "Is assembly included?", answer: "Every bike leaves the shop assembled and adjusted to your height." },
  { question: "How long does a repair take?", answer: "Most repairs are done within two working days." },
  { question: "Can I return a bike I bought online?", answer: "Within 30 days, unridden, with the receipt." },
  { question: "Do you rent e-bikes?", answer: "E-bikes from 35 euro a day, helmet and lock included." },
];

let gw: TestGateway;
let alice: Client;
let collectionId: string;

beforeAll(async () => {
  gw = await roomyGateway();
  alice = await client(gw, 10_000);
  const r = await alice.call("POST", "/api/v1/ai/faq-collections", { name: "Bike shop", faqs: FAQS });
  expect(r.status, show(r)).toBe(201);
  collectionId = r.json.data.result.id;
});
afterAll(() => gw.close());

async function match(query: string) {
  const r = await alice.call("POST", "/api/v1/ai/faq-match", { collection_id: collectionId, query });
  expect(r.status, show(r)).toBe(200);
  return r.json.data.result as { matches: { question: string; confidence: number }[]; matched: boolean };
}

describe("faq-match: a shared question frame or spelling is not a match", () => {
  test.each([
    "do you offer a warranty",
    "can I pay in instalments",
    "is installation included",
    "do you offer gift wrapping",
    "is a kickstand included",
    "can I book a test ride",
  ])("%s: nothing", async (query) => {
    const r = await match(query);
    expect(r.matches, JSON.stringify(r)).toEqual([]);
    expect(r.matched).toBe(false);
  });

  test.each([
    ["Do you offer financing?", "Do you offer financing?"],
    ["do you offer financing for e-bikes", "Do you offer financing?"],
    ["is assembly included in the price", "Is assembly included?"],
    ["how long will my repair take", "How long does a repair take?"],
  ])("%s: %s", async (query, question) => {
    const r = await match(query);
    expect(r.matches[0]?.question, JSON.stringify(r)).toBe(question);
  });
});

describe("faq-match's word keys: spelling is not meaning", () => {
  test("a synonym-table word whose stem another group holds keeps its own group", async () => {
    const { wordKey } = await import("../../src/knowledge/text");
    expect(wordKey("instalments")).not.toBe(wordKey("install"));
    expect(wordKey("instalments")).toBe(wordKey("installment"));
    expect(wordKey("install")).toBe(wordKey("assembly"));
    expect(wordKey("careers")).toBe(wordKey("job"));
    expect(wordKey("careers")).not.toBe(wordKey("cars"));
    expect(wordKey("packaging")).toBe(wordKey("box"));
  });
});
