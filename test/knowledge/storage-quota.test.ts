/**
 * Every stored resource has a quota and a price (issue 35, finding 6): FAQ collections and
 * chatbots join bases and documents. A FAQ collection costs `faq-storage` per started 10,000
 * characters of its questions and answers and counts against `knowledge_faq_collections` and the
 * bytes quota it shares with documents; a chatbot costs `chatbot-storage` and counts against
 * `knowledge_chatbots`. Past a quota: 403 naming it, nothing stored, nothing charged; a balance
 * that does not cover the price: 402, nothing stored. Runs on PostgreSQL too with
 * TEXTAI_TEST_KNOWLEDGE=postgres (test/knowledge/helpers.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { freshDatabase } from "../helpers/shared-servers";
import { type Client, client, ON_POSTGRES, show } from "./helpers";

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

const RATES = "[plans.free.rate_limits]\nstandard = 10000\nheavy = 10000\nbulk = 10000\n";
/** 100 FAQs of 250 characters: 25,000 characters, 3 started units of 10,000 */
const bigFaqs = (tag: string) =>
  Array.from({ length: 100 }, (_, i) => ({ question: `${tag} question ${i} `.padEnd(125, "q"), answer: "a".repeat(125) }));
const faqChars = (faqs: { question: string; answer: string }[]) =>
  faqs.reduce((s, f) => s + f.question.length + f.answer.length, 0);

const listTotal = async (c: Client, path: string): Promise<number> =>
  (await c.call("GET", `${path}?limit=1`)).json.data.result.total;

describe("FAQ collections and chatbots: quota and price", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await gateway(`[plans.free]\nknowledge_faq_collections = 3\nknowledge_chatbots = 2\nknowledge_bytes = 60000\n${RATES}`);
  });
  afterAll(() => gw.close());

  test("a FAQ collection is charged per started 10,000 characters, as faq-storage", async () => {
    const c = await client(gw, 100);
    const faqs = bigFaqs("priced");
    expect(faqChars(faqs)).toBe(25_000);
    const made = await c.call("POST", "/api/v1/ai/faq-collections", { name: "priced", faqs });
    expect(made.status, show(made)).toBe(201);
    expect(made.json.meta.credits_deducted).toBe(3);
    expect(await c.balance()).toBe(97);
    const usage = await c.call("GET", "/api/v1/account/usage");
    const byFn = usage.json.data.result.by_function as { function: string; credits: number }[];
    expect(byFn.find((f) => f.function === "faq-storage")?.credits).toBe(3);
    // what the account keeps, against its plan's quota: readable before an upload meets a 403
    expect(usage.json.data.result.knowledge).toEqual({
      bases: { used: 0, limit: 10 },
      documents: { used: 0, limit: 1000 },
      bytes: { used: 25_000, limit: 60_000 },
      faq_collections: { used: 1, limit: 3 },
      chatbots: { used: 0, limit: 2 },
    });
  });

  test("past knowledge_faq_collections: 403 naming the quota, nothing stored or charged", async () => {
    const c = await client(gw, 100);
    const small = [{ question: "Where is my order?", answer: "Look at the tracking page." }];
    for (let i = 0; i < 3; i++)
      expect((await c.call("POST", "/api/v1/ai/faq-collections", { name: `c${i}`, faqs: small })).status).toBe(201);
    const before = await c.balance();
    const fourth = await c.call("POST", "/api/v1/ai/faq-collections", { name: "c3", faqs: small });
    expect(fourth.status, show(fourth)).toBe(403);
    expect(fourth.json.error.code).toBe("forbidden");
    expect(fourth.json.error.message).toContain("knowledge_faq_collections quota");
    expect(await c.balance()).toBe(before);
    expect(await listTotal(c, "/api/v1/ai/faq-collections")).toBe(3);
  });

  test("FAQs and documents share the bytes quota: past it, 403 naming knowledge_bytes, nothing stored or charged", async () => {
    const c = await client(gw, 100);
    // 25,000 bytes each: two fit in 60,000, the third does not
    for (const tag of ["one", "two"])
      expect((await c.call("POST", "/api/v1/ai/faq-collections", { name: tag, faqs: bigFaqs(tag) })).status).toBe(201);
    const before = await c.balance();
    const third = await c.call("POST", "/api/v1/ai/faq-collections", { name: "three", faqs: bigFaqs("three") });
    expect(third.status, show(third)).toBe(403);
    expect(third.json.error.message).toContain("knowledge_bytes quota");
    expect(third.json.error.message).toContain("it has 50,000");
    expect(await c.balance()).toBe(before);
    expect(await listTotal(c, "/api/v1/ai/faq-collections")).toBe(2);
    // the documents' side of the same quota sees the FAQs' bytes
    const kb = await c.call("POST", "/api/v1/knowledge-bases", { name: "docs" });
    const upload = await c.call("POST", `/api/v1/knowledge-bases/${kb.json.data.result.id}/documents`, {
      documents: ["d".repeat(10_001)],
    });
    expect(upload.status, show(upload)).toBe(403);
    expect(upload.json.error.message).toContain("knowledge_bytes quota");
    expect(await c.balance()).toBe(before);
  });

  test("a chatbot costs chatbot-storage and counts against knowledge_chatbots", async () => {
    const c = await client(gw, 100);
    for (let i = 0; i < 2; i++) {
      const bot = await c.call("POST", "/api/v1/chatbots", { name: `bot${i}`, mode: "support" });
      expect(bot.status, show(bot)).toBe(201);
      expect(bot.json.meta.credits_deducted).toBe(1);
    }
    expect(await c.balance()).toBe(98);
    const third = await c.call("POST", "/api/v1/chatbots", { name: "bot2", mode: "support" });
    expect(third.status, show(third)).toBe(403);
    expect(third.json.error.message).toContain("knowledge_chatbots quota");
    expect(await c.balance()).toBe(98);
    expect(await listTotal(c, "/api/v1/chatbots")).toBe(2);
  });

  test("a balance that does not cover the price: 402, nothing stored", async () => {
    const c = await client(gw, 0);
    const faq = await c.call("POST", "/api/v1/ai/faq-collections", { name: "free?", faqs: bigFaqs("free") });
    expect(faq.status, show(faq)).toBe(402);
    expect(faq.json.error.code).toBe("insufficient_credits");
    const bot = await c.call("POST", "/api/v1/chatbots", { name: "free?", mode: "support" });
    expect(bot.status, show(bot)).toBe(402);
    expect(await listTotal(c, "/api/v1/ai/faq-collections")).toBe(0);
    expect(await listTotal(c, "/api/v1/chatbots")).toBe(0);
  });
});

test("[costs] sets the storage prices; 0 makes them free", async () => {
  const gw = await gateway(`[costs]\n"faq-storage" = 2\n"chatbot-storage" = 0\n${RATES}`);
  try {
    const c = await client(gw, 100);
    const faq = await c.call("POST", "/api/v1/ai/faq-collections", { name: "x", faqs: bigFaqs("x") });
    expect(faq.json.meta.credits_deducted, show(faq)).toBe(6);
    const bot = await c.call("POST", "/api/v1/chatbots", { name: "x", mode: "support" });
    expect(bot.json.meta.credits_deducted, show(bot)).toBe(0);
    expect(await c.balance()).toBe(94);
  } finally {
    await gw.close();
  }
});
