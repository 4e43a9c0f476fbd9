/**
 * The knowledge resources' bodies are strict, as the function routes' are (docs/api.md): a
 * misspelled field is a 400 naming it (and the name meant), never dropped from an upload, a
 * collection or a chatbot that is then charged for; a document's own problem is said of its field
 * ("documents[0].content: … 100000"), not as "documents[0]: expected union value". Nothing is made,
 * nothing charged. (A walkthrough, 2026-12-06: `knowledge_base_id` made a chatbot of no knowledge
 * base for 1 credit, which then charged 2 a chat to decline everything.)
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { TestGateway } from "../helpers/gateway";
import { type Client, client, roomyGateway, show } from "./helpers";

let gw: TestGateway;
let c: Client;
let kb = "";

beforeAll(async () => {
  gw = await roomyGateway();
  c = await client(gw);
  const made = await c.call("POST", "/api/v1/knowledge-bases", { name: "kb" });
  expect(made.status, show(made)).toBe(201);
  kb = made.json.data.result.id;
});
afterAll(() => gw?.close());

const ROWS: { name: string; method?: string; path: () => string; body: unknown; param: string; says: string }[] = [
  {
    name: "knowledge base",
    path: () => "/api/v1/knowledge-bases",
    body: { name: "x", descripton: "d" },
    param: "descripton",
    says: '"description"',
  },
  {
    name: "rename",
    method: "PATCH",
    path: () => `/api/v1/knowledge-bases/${kb}`,
    body: { nmae: "y" },
    param: "nmae",
    says: '"name"',
  },
  {
    name: "document metadata",
    path: () => `/api/v1/knowledge-bases/${kb}/documents`,
    body: { documents: [{ title: "t", content: "some text", metdata: { a: 1 } }] },
    param: "documents[0].metdata",
    says: '"metadata"',
  },
  {
    name: "an option uploads do not take",
    path: () => `/api/v1/knowledge-bases/${kb}/documents`,
    body: { documents: ["some text"], chunk_size: 200 },
    param: "chunk_size",
    says: "known fields here",
  },
  {
    name: "a document too long",
    path: () => `/api/v1/knowledge-bases/${kb}/documents`,
    body: { documents: [{ title: "t", content: "x".repeat(100_001) }] },
    param: "documents[0].content",
    says: "100000",
  },
  {
    name: "a document's content under another name",
    path: () => `/api/v1/knowledge-bases/${kb}/documents`,
    body: { documents: [{ title: "t", body: "some text" }] },
    param: "documents[0].content",
    says: 'unknown field "documents[0].body"',
  },
  {
    name: "a metadata value that is a list",
    path: () => `/api/v1/knowledge-bases/${kb}/documents`,
    body: { documents: [{ content: "some text", metadata: { tags: ["a"] } }] },
    param: "documents[0].metadata.tags",
    says: "not an array",
  },
  {
    name: "a chatbot's knowledge bases",
    path: () => "/api/v1/chatbots",
    body: { name: "x", mode: "support", knowledge_base_id: [kb] },
    param: "knowledge_base_id",
    says: '"knowledge_base_ids"',
  },
  {
    name: "a blank name",
    path: () => "/api/v1/knowledge-bases",
    body: { name: "   " },
    param: "name",
    says: "other than spaces",
  },
  {
    name: "a blank chatbot name",
    path: () => "/api/v1/chatbots",
    body: { name: " \t ", mode: "support" },
    param: "name",
    says: "other than spaces",
  },
  {
    name: "an FAQ pair",
    path: () => "/api/v1/ai/faq-collections",
    body: { name: "x", faqs: [{ question: "q?", answer: "a", tags: ["t"] }] },
    param: "faqs[0].tags",
    says: "unknown field",
  },
];

test("a misspelled or unknown field, or a document's own problem, is a 400 naming it; nothing made or charged", async () => {
  const before = await c.balance();
  const got: unknown[] = [];
  for (const r of ROWS) {
    const res = await c.call(r.method ?? "POST", r.path(), r.body);
    const ok = res.status === 400 && res.json.error?.param === r.param && String(res.json.error?.message).includes(r.says);
    if (!ok) got.push([r.name, show(res)]);
  }
  expect(got).toEqual([]);
  expect(await c.balance()).toBe(before);
  const docs = await c.call("GET", `/api/v1/knowledge-bases/${kb}/documents`);
  const bots = await c.call("GET", "/api/v1/chatbots");
  const faqs = await c.call("GET", "/api/v1/ai/faq-collections");
  const kbs = await c.call("GET", "/api/v1/knowledge-bases");
  expect([docs, bots, faqs, kbs].map((r) => r.json.data.result.total)).toEqual([0, 0, 0, 1]);
});
