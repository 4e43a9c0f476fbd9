/**
 * A key's allowed_models bind the provider calls the gateway makes for it (issue 35, finding 5):
 * knowledge uploads, searches and chatbot retrieval embed only with a model the key may use. A key
 * limited to ["local"] indexes and searches by keywords alone: no /v1/embeddings call reaches the
 * provider and no knowledge-embedding is charged. A key whose policy allows the embedding model
 * (bare or as provider/model), or a key with no policy, embeds as before.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";

const ADMIN = "admin-token-policy-embeddings-0123456789abcdef";
const admin = { authorization: `Bearer ${ADMIN}` };
const RATES = "[plans.free.rate_limits]\nstandard = 10000\nheavy = 10000\nbulk = 10000\n";
let sim: Upstream;
let gw: TestGateway;
const embeddingCalls = () => sim.calls.requests.filter((r) => r.path === "/v1/embeddings").length;

beforeAll(async () => {
  sim = await startUpstream();
  gw = await startGateway({
    env: { TEXTAI_ADMIN_TOKEN: ADMIN },
    configText: `${simProvider({ url: `${sim.url}/v1`, model: "sim-model", extra: 'embedding_model = "sim-embed"' })}
[routes]
"knowledge-base-search" = ["local"]
"chatbot-chat" = ["local"]
${RATES}`,
  });
});
afterAll(async () => {
  await gw?.close();
  await sim?.close();
});

async function keyWith(policy: Record<string, unknown> | null) {
  const acc = await gw.post("/admin/v1/accounts", { credits: 100 }, admin);
  expect(acc.status, JSON.stringify(acc.json)).toBe(201);
  const accountId = acc.json.data.result.id as string;
  const made = await gw.post("/admin/v1/keys", { label: "k", account_id: accountId, ...(policy ? { policy } : {}) }, admin);
  expect(made.status, JSON.stringify(made.json)).toBe(201);
  const key = made.json.data.result.key as string;
  return {
    call: (method: "GET" | "POST", path: string, body?: unknown) =>
      method === "GET" ? gw.get(path, { "x-api-key": key }) : gw.post(path, body, { "x-api-key": key }),
    balance: () => gw.deps.ledger.balance(accountId),
  };
}

/** Uploads a document, searches it and asks a chatbot over it; the embedding calls and the credits each step took. */
async function useKnowledge(k: Awaited<ReturnType<typeof keyWith>>) {
  const kb = await k.call("POST", "/api/v1/knowledge-bases", { name: "kb" });
  expect(kb.status, JSON.stringify(kb.json)).toBe(201);
  const kbId = kb.json.data.result.id as string;
  let calls = embeddingCalls();
  const upload = await k.call("POST", `/api/v1/knowledge-bases/${kbId}/documents`, {
    documents: [{ title: "Shipping", content: "Orders ship within 24 hours and arrive in 3 to 5 business days." }],
  });
  expect(upload.status, JSON.stringify(upload.json)).toBe(201);
  const uploadEmbeds = embeddingCalls() - calls;
  calls = embeddingCalls();
  const search = await k.call("POST", `/api/v1/knowledge-bases/${kbId}/search`, { query: "how long does delivery take" });
  expect(search.status, JSON.stringify(search.json)).toBe(200);
  expect(search.json.data.result.results.length).toBeGreaterThan(0);
  const searchEmbeds = embeddingCalls() - calls;
  const bot = await k.call("POST", "/api/v1/chatbots", { name: "bot", mode: "support", knowledge_base_ids: [kbId] });
  expect(bot.status, JSON.stringify(bot.json)).toBe(201);
  calls = embeddingCalls();
  const chat = await k.call("POST", `/api/v1/chatbots/${bot.json.data.result.id}/chat`, { message: "when does my order ship?" });
  expect(chat.status, JSON.stringify(chat.json)).toBe(200);
  const chatEmbeds = embeddingCalls() - calls;
  const usage = await k.call("GET", "/api/v1/account/usage");
  const byFn = Object.fromEntries(
    (usage.json.data.result.by_function as { function: string; credits: number }[]).map((f) => [f.function, f.credits]),
  );
  return { uploadEmbeds, searchEmbeds, chatEmbeds, embeddingCharged: byFn["knowledge-embedding"] ?? 0 };
}

test('a key limited to ["local"] indexes, searches and chats without calling or paying for the provider\'s embeddings', async () => {
  const r = await useKnowledge(await keyWith({ allowed_models: ["local"] }));
  expect(r).toEqual({ uploadEmbeds: 0, searchEmbeds: 0, chatEmbeds: 0, embeddingCharged: 0 });
});

test("a key whose allowed_models hold the embedding model (bare or provider/model) embeds and pays as before", async () => {
  for (const allowed of [
    ["local", "sim-embed"],
    ["local", "sim/sim-*"],
  ]) {
    const r = await useKnowledge(await keyWith({ allowed_models: allowed }));
    expect(r.uploadEmbeds, JSON.stringify(allowed)).toBeGreaterThan(0);
    expect(r.searchEmbeds, JSON.stringify(allowed)).toBeGreaterThan(0);
    expect(r.chatEmbeds, JSON.stringify(allowed)).toBeGreaterThan(0);
    expect(r.embeddingCharged, JSON.stringify(allowed)).toBeGreaterThan(0);
  }
});

test("a key with no policy embeds as before", async () => {
  const r = await useKnowledge(await keyWith(null));
  expect(r.uploadEmbeds).toBeGreaterThan(0);
  expect(r.searchEmbeds).toBeGreaterThan(0);
  expect(r.embeddingCharged).toBeGreaterThan(0);
});
