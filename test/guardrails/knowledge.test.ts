/**
 * A knowledge search runs in the gateway but embeds its query with a provider outside it: under
 * redact_pii the query goes out redacted (the simulator, as the embedding provider, records it).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { TestGateway } from "../helpers/gateway";
import type { Upstream } from "../helpers/upstream";
import { guardedGateway } from "./setup";

const EMAIL = "maria.garcia@example.com";
let gw: TestGateway;
let sim: Upstream;

beforeAll(async () => {
  ({ gw, sim } = await guardedGateway(
    `[plans.guarded.guardrails]
redact_pii = ["email"]
`,
  ));
});
afterAll(async () => {
  await gw.close();
  await sim.close();
});

test("a knowledge search's query is embedded redacted; the search still answers", async () => {
  const k = gw.newKey({ plan: "guarded", credits: 10_000 });
  const H = { "x-api-key": k.key };
  const kb = (await gw.post("/api/v1/knowledge-bases", { name: "help" }, H)).json.data.result.id as string;
  const added = await gw.post(
    `/api/v1/knowledge-bases/${kb}/documents`,
    { documents: [{ title: "Refunds", content: "Refunds are paid within five days to the original card." }] },
    H,
  );
  expect(added.status, JSON.stringify(added.json)).toBe(201);
  const from = sim.calls.requests.length;
  const r = await gw.post(`/api/v1/knowledge-bases/${kb}/search`, { query: `refund for ${EMAIL}` }, H);
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  const embedded = sim.calls.requests.slice(from).filter((c) => c.path.endsWith("/embeddings"));
  expect(embedded.length).toBe(1);
  expect(JSON.stringify(embedded[0]?.body)).not.toContain(EMAIL);
  expect(JSON.stringify(embedded[0]?.body)).toContain("[EMAIL_1]");
  expect(r.headers.get("x-textai-guardrails")).toBe("redacted=email:1");
  expect(r.json.data.result.results.length).toBeGreaterThan(0);
});

test("a chatbot's retrieval query is embedded redacted, and its answer's call carries no value of the message or the conversation", async () => {
  const k = gw.newKey({ plan: "guarded", credits: 10_000 });
  const H = { "x-api-key": k.key };
  const kb = (await gw.post("/api/v1/knowledge-bases", { name: "help" }, H)).json.data.result.id as string;
  const docs = [{ title: "Refunds", content: "Refunds are paid within five days to the original card." }];
  expect((await gw.post(`/api/v1/knowledge-bases/${kb}/documents`, { documents: docs }, H)).status).toBe(201);
  const bot = await gw.post("/api/v1/chatbots", { name: "help", mode: "support", knowledge_base_ids: [kb] }, H);
  expect(bot.status, JSON.stringify(bot.json)).toBe(201);
  const from = sim.calls.requests.length;
  const r = await gw.post(
    `/api/v1/chatbots/${bot.json.data.result.id}/chat`,
    {
      message: `When is my refund paid? Write to ${EMAIL}.`,
      conversation: [
        { role: "user", content: "Hi, this is about a refund, my second address is lena.berg@example.org" },
        { role: "assistant", content: "Sure, what would you like to know?" },
      ],
    },
    H,
  );
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  const sent = sim.calls.requests.slice(from);
  expect(sent.some((c) => c.path.endsWith("/embeddings"))).toBe(true);
  const all = JSON.stringify(sent.map((c) => c.body));
  expect(all).not.toContain(EMAIL);
  expect(all).not.toContain("lena.berg");
  expect(all).toContain("[EMAIL_1]");
  expect(r.headers.get("x-textai-guardrails")).toMatch(/^redacted=email:\d+$/);
});
