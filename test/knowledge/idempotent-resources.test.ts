/**
 * An `Idempotency-Key` on a knowledge route that makes and charges something (an upload, a FAQ
 * collection, a chatbot, a knowledge base): the first request makes it, a retry with the same key
 * and body gets the first answer again (`Idempotent-Replayed: true`, nothing made or charged twice),
 * the same key with another body or on another route is 422 `idempotency_mismatch`, and a request
 * refused before it made anything leaves the key free. Until 2026-12-06 these routes refused the
 * key with 400 (a client retrying an upload had no way to say "at most once").
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { TestGateway } from "../helpers/gateway";
import { type Client, client, roomyGateway, show } from "./helpers";

let gw: TestGateway;
let c: Client;
let kb = "";

beforeAll(async () => {
  gw = await roomyGateway();
  c = await client(gw, 100_000);
  const made = await c.call("POST", "/api/v1/knowledge-bases", { name: "kb" });
  expect(made.status, show(made)).toBe(201);
  kb = made.json.data.result.id;
});
afterAll(() => gw?.close());

async function send(path: string, body: unknown, key: string) {
  const r = await fetch(gw.url + path, {
    method: "POST",
    headers: { "x-api-key": c.key, "content-type": "application/json", "idempotency-key": key },
    body: JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: the envelope, read loosely
  return { status: r.status, headers: r.headers, json: (await r.json()) as Record<string, any> };
}

const total = async (path: string) => (await c.call("GET", path)).json.data.result.total as number;

const ROUTES = [
  {
    name: "an upload",
    path: () => `/api/v1/knowledge-bases/${kb}/documents`,
    body: { documents: ["Parcels ship on weekdays."] },
    list: () => `/api/v1/knowledge-bases/${kb}/documents`,
  },
  {
    name: "a FAQ collection",
    path: () => "/api/v1/ai/faq-collections",
    body: { name: "f", faqs: [{ question: "When?", answer: "Now." }] },
    list: () => "/api/v1/ai/faq-collections",
  },
  {
    name: "a chatbot",
    path: () => "/api/v1/chatbots",
    body: { name: "b", mode: "support", knowledge_base_ids: [] as string[] },
    list: () => "/api/v1/chatbots",
  },
  {
    name: "a knowledge base",
    path: () => "/api/v1/knowledge-bases",
    body: { name: "second" },
    list: () => "/api/v1/knowledge-bases",
  },
];

for (const route of ROUTES)
  test(`${route.name}: a retry with the same key is the first answer again, made and charged once`, async () => {
    const key = `make-${route.name}`;
    const before = { balance: await c.balance(), count: await total(route.list()) };
    const first = await send(route.path(), route.body, key);
    expect(first.status, show(first)).toBe(201);
    const paid = before.balance - (await c.balance());
    const again = await send(route.path(), route.body, key);
    expect(again.status, show(again)).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json.data.result).toEqual(first.json.data.result);
    expect(again.json.request_id).not.toBe(first.json.request_id);
    expect(again.json.meta.credits_deducted).toBe(0);
    expect(before.balance - (await c.balance())).toBe(paid);
    expect(await total(route.list())).toBe(before.count + 1);
  });

test("the same key with another body, or on another route, is 422 idempotency_mismatch; nothing made", async () => {
  const key = "one-key";
  const made = await send("/api/v1/ai/faq-collections", { name: "g", faqs: [{ question: "Q?", answer: "A." }] }, key);
  expect(made.status, show(made)).toBe(201);
  const before = {
    balance: await c.balance(),
    faqs: await total("/api/v1/ai/faq-collections"),
    kbs: await total("/api/v1/knowledge-bases"),
  };
  const other = await send("/api/v1/ai/faq-collections", { name: "h", faqs: [{ question: "Q?", answer: "A." }] }, key);
  expect([other.status, other.json.error?.code]).toEqual([422, "idempotency_mismatch"]);
  const elsewhere = await send("/api/v1/knowledge-bases", { name: "g" }, key);
  expect([elsewhere.status, elsewhere.json.error?.code]).toEqual([422, "idempotency_mismatch"]);
  expect(await c.balance()).toBe(before.balance);
  expect([await total("/api/v1/ai/faq-collections"), await total("/api/v1/knowledge-bases")]).toEqual([before.faqs, before.kbs]);
});

test("a request refused before it made anything leaves its key free for the corrected one", async () => {
  const key = "fix-and-retry";
  const bad = await send(`/api/v1/knowledge-bases/kb_nope/documents`, { documents: ["Some text."] }, key);
  expect(bad.status, show(bad)).toBe(404);
  const good = await send(`/api/v1/knowledge-bases/${kb}/documents`, { documents: ["Some text."] }, key);
  expect(good.status, show(good)).toBe(201);
  expect(good.headers.get("idempotent-replayed")).toBeNull();
});

test("a key of 256 characters is refused naming Idempotency-Key", async () => {
  const r = await send("/api/v1/knowledge-bases", { name: "long" }, "k".repeat(256));
  expect([r.status, r.json.error?.param]).toEqual([400, "Idempotency-Key"]);
});
