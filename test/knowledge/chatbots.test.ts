import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { TestGateway } from "../helpers/gateway";
import { HELP_CENTER } from "./corpus";
import { type Client, client, roomyGateway, show } from "./helpers";

let gw: TestGateway;
let alice: Client;
let bob: Client;
let kbId: string;
const titleOf = (id: string) => HELP_CENTER.documents.find((d) => d.id === id)?.title;

beforeAll(async () => {
  gw = await roomyGateway();
  alice = await client(gw);
  bob = await client(gw);
  kbId = (await alice.call("POST", "/api/v1/knowledge-bases", { name: "help" })).json.data.result.id;
  const docs = HELP_CENTER.documents.map(({ title, content, metadata }) => ({ title, content, metadata }));
  expect((await alice.call("POST", `/api/v1/knowledge-bases/${kbId}/documents`, { documents: docs })).status).toBe(201);
});
afterAll(() => gw.close());

async function newBot(c: Client, body: Record<string, unknown>): Promise<string> {
  const r = await c.call("POST", "/api/v1/chatbots", body);
  expect(r.status, show(r)).toBe(201);
  return r.json.data.result.id;
}

describe("chatbot resources", () => {
  test("create, list, get, delete; creating costs chatbot-storage (1), the rest nothing", async () => {
    const before = await alice.balance();
    const id = await newBot(alice, { name: "Helper", mode: "support", knowledge_base_ids: [kbId] });
    expect((await alice.call("GET", `/api/v1/chatbots/${id}`)).json.data.result).toMatchObject({
      id,
      name: "Helper",
      mode: "support",
      knowledge_base_ids: [kbId],
    });
    const list = await alice.call("GET", "/api/v1/chatbots?limit=1");
    expect(list.json.data.result).toMatchObject({ total: 1, has_more: false });
    expect((await alice.call("DELETE", `/api/v1/chatbots/${id}`)).status).toBe(200);
    expect((await alice.call("GET", `/api/v1/chatbots/${id}`)).status).toBe(404);
    expect(await alice.balance()).toBe(before - 1);
  });

  test("name and a known mode are required; knowledge bases must be the account's own", async () => {
    for (const [body, param] of [
      [{ mode: "support" }, "name"],
      [{ name: "x" }, "mode"],
      [{ name: "x", mode: "sales" }, "mode"],
    ] as const) {
      const r = await alice.call("POST", "/api/v1/chatbots", body);
      expect(r.json.error, show(r)).toMatchObject({ code: "invalid_request", param });
    }
    const foreign = await bob.call("POST", "/api/v1/chatbots", { name: "x", mode: "support", knowledge_base_ids: [kbId] });
    expect(foreign.status, show(foreign)).toBe(404);
    expect(foreign.json.error).toMatchObject({ code: "not_found", param: "knowledge_base_ids[0]" });
  });

  test("deleting a knowledge base takes it out of the chatbots that named it, and only it", async () => {
    const other = (await alice.call("POST", "/api/v1/knowledge-bases", { name: "to delete" })).json.data.result.id;
    const both = await newBot(alice, { name: "Both", mode: "support", knowledge_base_ids: [kbId, other] });
    const one = await newBot(alice, { name: "One", mode: "support", knowledge_base_ids: [kbId] });
    expect((await alice.call("DELETE", `/api/v1/knowledge-bases/${other}`)).status).toBe(200);
    const ids = async (bot: string) => (await alice.call("GET", `/api/v1/chatbots/${bot}`)).json.data.result.knowledge_base_ids;
    expect([await ids(both), await ids(one)]).toEqual([[kbId], [kbId]]);
  });

  test("another account's chatbot is 404 for get, delete and chat, and nothing is charged", async () => {
    const id = await newBot(alice, { name: "Private", mode: "support", knowledge_base_ids: [kbId] });
    const before = await bob.balance();
    for (const [method, path, body] of [
      ["GET", `/api/v1/chatbots/${id}`, undefined],
      ["DELETE", `/api/v1/chatbots/${id}`, undefined],
      ["POST", `/api/v1/chatbots/${id}/chat`, { message: "how long does shipping take?" }],
    ] as const) {
      const r = await bob.call(method, path, body);
      expect(r.status, `${method} ${path}: ${show(r)}`).toBe(404);
    }
    expect(await bob.balance()).toBe(before);
    expect((await alice.call("GET", `/api/v1/chatbots/${id}`)).status).toBe(200);
  });
});

describe("chat without a generative provider (offline engine)", () => {
  test("a support bot answers from the best passage and cites it; 2 credits", async () => {
    const id = await newBot(alice, { name: "Support", mode: "support", knowledge_base_ids: [kbId] });
    const cases = [
      { message: "How long does standard shipping take?", doc: "shipping-times", says: /3 to 5 business days/ },
      { message: "What do I do if I forgot my password?", doc: "reset-password", says: /reset link/ },
      { message: "Which payment methods can I use?", doc: "payment-methods", says: /PayPal/ },
    ];
    for (const c of cases) {
      const before = await alice.balance();
      const r = await alice.call("POST", `/api/v1/chatbots/${id}/chat`, { message: c.message });
      expect(r.status, show(r)).toBe(200);
      const result = r.json.data.result;
      expect(result.answered, show(r)).toBe(true);
      expect(result.answer).toMatch(c.says);
      expect(result.sources[0], show(r)).toMatchObject({ title: titleOf(c.doc), knowledge_base_id: kbId });
      expect(result.sources[0].snippet).toContain(result.answer.split(". ")[0].replace(/\.$/, ""));
      expect(r.json.meta).toMatchObject({ credits_deducted: 2, provider: "local" });
      expect(await alice.balance()).toBe(before - 2);
    }
  });

  test("from a markdown handbook: the table row that answers, no heading glued on, whole sentences", async () => {
    const kb = (await alice.call("POST", "/api/v1/knowledge-bases", { name: "handbook" })).json.data.result.id;
    const content = [
      "# Outdoor shop handbook",
      "",
      "## 1. Shipping",
      "",
      "We ship from our warehouse in Rotterdam. Orders placed before 14:00 leave the same day.",
      "",
      "| Destination | Carrier | Delivery time | Cost |",
      "|---|---|---|---|",
      "| Netherlands, Belgium | PostNL | 1-2 working days | free over 50 euros |",
      "| Germany, France | DHL | 2-4 working days | 6.95 euros |",
      "",
      "## 2. Returns and refunds",
      "",
      "Refunds are issued to the original payment method within 5 working days after the warehouse",
      "receives the return. Gift cards are refunded as store credit.",
    ].join("\n");
    await alice.call("POST", `/api/v1/knowledge-bases/${kb}/documents`, { documents: [{ title: "Handbook", content }] });
    const bot = await newBot(alice, { name: "Handbook", mode: "support", knowledge_base_ids: [kb] });
    const ask = async (message: string) =>
      (await alice.call("POST", `/api/v1/chatbots/${bot}/chat`, { message })).json.data.result.answer as string;
    const germany = await ask("How much is shipping to Germany?");
    expect(germany).toContain("| Germany, France | DHL | 2-4 working days | 6.95 euros |");
    expect(germany).not.toMatch(/^Shipping|#|---/);
    const refund = await ask("When will I get my refund?");
    expect(refund).toStartWith("Refunds are issued to the original payment method within 5 working days after the warehouse");
    expect(refund).toContain("receives the return.");
    expect(refund).not.toContain("Returns and refunds");
  });

  test("a follow-up uses the conversation to find its passage", async () => {
    const id = await newBot(alice, { name: "Support", mode: "support", knowledge_base_ids: [kbId] });
    const r = await alice.call("POST", `/api/v1/chatbots/${id}/chat`, {
      message: "and how much does it cost?",
      conversation: [
        { role: "user", content: "Do you offer express shipping?" },
        { role: "assistant", content: "Yes, express delivery arrives in 1 to 2 business days." },
      ],
    });
    expect(r.json.data.result.sources[0]?.title, show(r)).toBe(titleOf("express-shipping"));
  });

  test("a support bot politely declines what its knowledge bases do not cover", async () => {
    const id = await newBot(alice, { name: "Support", mode: "support", knowledge_base_ids: [kbId] });
    const offTopic = [
      "What is the capital of Australia?",
      "Write me a poem about the moon",
      "Who won the chess championship in 1972?",
      "how do I bake sourdough bread",
      "what is 17 times 23",
      "who is the president of France",
      "what is the best pizza in Japan",
      "can you help me with my taxes",
      // once search's default floor left these empty (test/knowledge/search.test.ts); search is
      // recall-first now (issue 24.14), so declining them is the bot's decision, checked here
      "bitcoin",
      "do you take ethereum or dogecoin",
      "what is the wifi password in the café",
      "how do I update the firmware on my router",
      "can you recommend a lasagne recipe",
    ];
    for (const message of offTopic) {
      const r = await alice.call("POST", `/api/v1/chatbots/${id}/chat`, { message });
      expect(r.json.data.result, show(r)).toMatchObject({ answered: false, sources: [] });
      expect(r.json.data.result.answer).toMatch(/sorry/i);
    }
  });

  test("the support bot answers most in-domain paraphrases, citing the right article for most of them", async () => {
    const id = await newBot(alice, { name: "Support", mode: "support", knowledge_base_ids: [kbId] });
    let answered = 0;
    let cited = 0;
    for (const q of HELP_CENTER.queries) {
      const r = await alice.call("POST", `/api/v1/chatbots/${id}/chat`, { message: q.query });
      const result = r.json.data.result;
      if (result.answered) answered++;
      if (result.sources[0]?.title === titleOf(q.expected)) cited++;
    }
    const n = HELP_CENTER.queries.length;
    console.log(`offline support bot: answered ${answered}/${n}, cited the expected article ${cited}/${n}`);
    // Since 2026-11-26 the bot answers only when the passage more likely answers than not
    // (calibrated, chatbot-answer.ts): it answers fewer of these (40 of 55, was 47) and is wrong
    // less often (2 answers from the wrong article, was 5); the answered floor went 0.75 -> 0.7.
    expect(answered / n).toBeGreaterThanOrEqual(0.7);
    expect(cited / n).toBeGreaterThanOrEqual(0.65);
    expect((answered - cited) / answered).toBeLessThanOrEqual(0.1);
  });

  test("an inactive or deleted knowledge base no longer grounds the bot", async () => {
    const kb = (await alice.call("POST", "/api/v1/knowledge-bases", { name: "temp" })).json.data.result.id;
    await alice.call("POST", `/api/v1/knowledge-bases/${kb}/documents`, {
      documents: [{ title: "Quokka care", content: "Quokkas eat grasses and leaves." }],
    });
    const id = await newBot(alice, { name: "Support", mode: "support", knowledge_base_ids: [kb] });
    const ask = () => alice.call("POST", `/api/v1/chatbots/${id}/chat`, { message: "What do quokkas eat?" });
    expect((await ask()).json.data.result.answered).toBe(true);
    await alice.call("PATCH", `/api/v1/knowledge-bases/${kb}`, { status: "inactive" });
    expect((await ask()).json.data.result.answered).toBe(false);
    await alice.call("PATCH", `/api/v1/knowledge-bases/${kb}`, { status: "active" });
    await alice.call("DELETE", `/api/v1/knowledge-bases/${kb}`);
    expect((await ask()).json.data.result.answered).toBe(false);
  });

  test("an assistant bot with nothing to ground it needs a provider: 503 no_provider, not charged", async () => {
    const id = await newBot(alice, { name: "Assistant", mode: "assistant" });
    const before = await alice.balance();
    const r = await alice.call("POST", `/api/v1/chatbots/${id}/chat`, { message: "What is the capital of Australia?" });
    expect(r.status, show(r)).toBe(503);
    expect(r.json.error.code).toBe("no_provider");
    expect(await alice.balance()).toBe(before);
  });
});

describe("chat with a generative provider", () => {
  let fake: ReturnType<typeof Bun.serve>;
  let gw2: TestGateway;
  const prompts: string[] = [];

  beforeAll(async () => {
    // An OpenAI-compatible upstream that answers citing the first passage it was given, plus one it was not.
    fake = Bun.serve({
      port: 0,
      async fetch(req) {
        const body = (await req.json()) as { messages: { role: string; content: string }[] };
        const system = body.messages[0]?.content ?? "";
        prompts.push(system);
        const cited = /document_id="([^"]+)"/.exec(system)?.[1] ?? "none";
        // a question the passages do not cover, answered from the model's own knowledge, citing nothing
        const offTopic = body.messages.at(-1)?.content.includes("quantum");
        const content = offTopic
          ? JSON.stringify({ answer: "Quarks are held together by gluons.", answered: true, sources: [] })
          : JSON.stringify({
              answer: "Standard shipping takes 3 to 5 business days.",
              answered: true,
              sources: [
                {
                  document_id: cited,
                  knowledge_base_id: "kb_made_up",
                  title: "made up",
                  snippet: "3 to 5 business days",
                  score: 0.9,
                },
                { document_id: "doc_fabricated", knowledge_base_id: "kb_x", title: "invented", snippet: "x", score: 1 },
              ],
            });
        return Response.json({
          id: "c1",
          object: "chat.completion",
          created: 0,
          model: "fake-model",
          choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        });
      },
    });
    gw2 = await roomyGateway(
      `[[providers]]\nname = "fake"\ntype = "openai-compatible"\nbase_url = "http://127.0.0.1:${fake.port}/v1"\napi_key = "sk-test"\ndefault_model = "fake-model"\n`,
    );
  });
  afterAll(async () => {
    await gw2.close();
    fake.stop(true);
  });

  test("the prompt carries the retrieved passages and support rules; sources keep only retrieved passages", async () => {
    const carol = await client(gw2);
    const kb = (await carol.call("POST", "/api/v1/knowledge-bases", { name: "help" })).json.data.result.id;
    const docs = HELP_CENTER.documents.map(({ title, content, metadata }) => ({ title, content, metadata }));
    await carol.call("POST", `/api/v1/knowledge-bases/${kb}/documents`, { documents: docs });
    const bot = (
      await carol.call("POST", "/api/v1/chatbots", { name: "Shipping bot", mode: "support", knowledge_base_ids: [kb] })
    ).json.data.result.id;
    const r = await carol.call("POST", `/api/v1/chatbots/${bot}/chat`, { message: "How long does standard shipping take?" });
    expect(r.status, show(r)).toBe(200);
    expect(r.json.meta).toMatchObject({ provider: "fake", credits_deducted: 2 });
    const prompt = prompts.at(-1) ?? "";
    expect(prompt).toContain("Standard shipping within the continental US takes 3 to 5 business days.");
    expect(prompt).toMatch(/Answer only from the knowledge base passages/);
    expect(prompt).toContain("Shipping bot");
    const { sources } = r.json.data.result;
    expect(sources, show(r)).toHaveLength(1);
    expect(sources[0]).toMatchObject({ knowledge_base_id: kb, title: titleOf("shipping-times") });
  });

  test("a support bot's answer that cites no passage it was given is declined, whatever the model said", async () => {
    const erin = await client(gw2);
    const kb = (await erin.call("POST", "/api/v1/knowledge-bases", { name: "help" })).json.data.result.id;
    const docs = HELP_CENTER.documents.map(({ title, content, metadata }) => ({ title, content, metadata }));
    await erin.call("POST", `/api/v1/knowledge-bases/${kb}/documents`, { documents: docs });
    const made = async (mode: string) =>
      (await erin.call("POST", "/api/v1/chatbots", { name: `${mode} bot`, mode, knowledge_base_ids: [kb] })).json.data.result.id;
    const support = await erin.call("POST", `/api/v1/chatbots/${await made("support")}/chat`, {
      message: "Explain quantum chromodynamics",
    });
    expect(support.status, show(support)).toBe(200);
    expect(support.json.data.result).toMatchObject({ answered: false, sources: [] });
    expect(support.json.data.result.answer).not.toContain("gluons");
    // an assistant may answer from general knowledge (docs/knowledge.md)
    const assistant = await erin.call("POST", `/api/v1/chatbots/${await made("assistant")}/chat`, {
      message: "Explain quantum chromodynamics",
    });
    expect(assistant.json.data.result).toMatchObject({ answered: true, answer: "Quarks are held together by gluons." });
  });

  test("a document of several chunks: the source is the chunk the model cited, not the document's last one retrieved", async () => {
    const dave = await client(gw2);
    const kb = (await dave.call("POST", "/api/v1/knowledge-bases", { name: "handbook" })).json.data.result.id;
    // one document, its shipping time in the first chunk, more about shipping (but not the time) in later ones
    const filler = (n: number) =>
      `Section ${n}. Shipping labels for parcel number ${n} are printed at the warehouse, and the carrier scans each shipping label at pickup. `.repeat(
        6,
      );
    const content = `Shipping times. Standard shipping takes 3 to 5 business days within the US.\n\n${[1, 2, 3, 4, 5].map(filler).join("\n\n")}`;
    const up = await dave.call("POST", `/api/v1/knowledge-bases/${kb}/documents`, {
      documents: [{ title: "Handbook", content }],
    });
    expect(up.status, show(up)).toBe(201);
    const bot = (await dave.call("POST", "/api/v1/chatbots", { name: "Handbook bot", mode: "support", knowledge_base_ids: [kb] }))
      .json.data.result.id;
    const question = "How long does standard shipping take?";
    const r = await dave.call("POST", `/api/v1/chatbots/${bot}/chat`, { message: question });
    expect(r.status, show(r)).toBe(200);
    // the prompt held several passages of the one document
    expect((prompts.at(-1) ?? "").split("<passage ").length - 1, prompts.at(-1)).toBeGreaterThan(1);
    const [cited] = r.json.data.result.sources;
    expect(cited.snippet).toBe("3 to 5 business days");
    const search = await dave.call("POST", `/api/v1/knowledge-bases/${kb}/search`, { query: question, top_k: 10 });
    const holding = (search.json.data.result.results as { content?: string; snippet?: string; score: number }[]).find((x) =>
      (x.content ?? x.snippet ?? "").includes("3 to 5 business days"),
    );
    expect(holding, show(search)).toBeDefined();
    expect(cited.score).toBe(holding?.score);
  });
});
