/**
 * The playground offers every function the gateway serves (CONTRACT section 12, docs/dashboard.md:
 * "try any function"): walkthrough 2026-12-06 item 4 found 26, without the inline knowledge-base
 * search, faq-match, chatbot chat and stored search. Its list comes from the registry (the app's
 * functions and the knowledge functions), so each registered function, told apart by its path, is an
 * option with its own example and the path its curl shows; a function the account holds a resource
 * for runs with its example from the form, through the real server.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chromium } from "playwright-core";
import { FUNCTIONS, KNOWLEDGE_FUNCTIONS } from "../../src/functions/registry";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { requestFrom } from "../helpers/raw-http";
import { skipBrowser } from "./browser-suite";

const ADMIN = "operator-token-for-playground-0123456789";
const PASSWORD = "a long pass phrase for the playground";
let gw: TestGateway;
let cookie = "";
let key = "";
let collectionId = "";

const page = async (path: string) => (await fetch(gw.url + path, { headers: { cookie } })).text();
const optionsOf = (html: string) => [...html.matchAll(/<option value="([^"]+)"/g)].map((m) => m[1]);
const formOf = (html: string) => {
  const form = html.match(/<form id="playground"[^>]*data-fn="([^"]*)" data-path="([^"]*)" data-in-path="([^"]*)"/);
  const data = html.match(/<script type="application\/json" id="fn-schema">([\s\S]*?)<\/script>/);
  return {
    fn: form?.[1],
    path: form?.[2],
    inPath: form?.[3],
    ...(JSON.parse(data?.[1] ?? "{}") as { schema: { properties: Record<string, unknown> }; example: Record<string, unknown> }),
  };
};

beforeAll(async () => {
  gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: ADMIN } });
  const acc = await gw.post(
    "/admin/v1/accounts",
    { email: "player@example.com", password: PASSWORD, credits: 500 },
    { authorization: `Bearer ${ADMIN}` },
  );
  expect(acc.status).toBe(201);
  key = gw.newKey({ accountId: acc.json.data.result.id, label: "faq maker" }).key;
  const faq = await gw.post(
    "/api/v1/ai/faq-collections",
    { name: "Help", faqs: [{ question: "What is your refund policy?", answer: "Refunds within 30 days of purchase." }] },
    { "x-api-key": key },
  );
  expect(faq.status, JSON.stringify(faq.json)).toBe(201);
  collectionId = faq.json.data.result.id;
  const res = await requestFrom(gw.url, "127.0.0.1", "POST", "/dashboard/login", {
    form: { email: "player@example.com", password: PASSWORD },
  });
  expect(res?.status).toBe(303);
  cookie = (res?.headers["set-cookie"] ?? "").split(";")[0];
}, 30_000);
afterAll(() => gw?.close());

test("every registered function is offered, told apart by its path, with its example and the path its curl shows", async () => {
  const offered = optionsOf(await page("/dashboard/playground"));
  const registered = [...FUNCTIONS, ...KNOWLEDGE_FUNCTIONS];
  expect(offered.length).toBe(registered.length);
  expect(new Set(offered).size).toBe(offered.length);
  const paths: string[] = [];
  for (const fn of offered) {
    const form = formOf(await page(`/dashboard/playground?fn=${encodeURIComponent(fn)}`));
    expect(form.fn).toBe(fn);
    // a form with fields, and an example for each required one
    expect(Object.keys(form.schema.properties).length).toBeGreaterThan(0);
    expect(Object.keys(form.example).length, fn).toBeGreaterThan(0);
    paths.push(form.path as string);
  }
  // each registered function's path is one option's (the two knowledge-base searches share a name)
  expect(paths.sort()).toEqual(registered.map((d) => d.path).sort());
  for (const name of ["faq-match", "chatbot-chat", "knowledge-base-search", "knowledge-base-search-inline"])
    expect(offered).toContain(name);
});

test("the stored resources' functions: the path carries the id, the gateway's own fields are not in the form", async () => {
  const chat = formOf(await page("/dashboard/playground?fn=chatbot-chat"));
  expect(chat.path).toBe("/api/v1/chatbots/:id/chat");
  expect(chat.inPath).toBe("id");
  expect(Object.keys(chat.schema.properties)).not.toContain("passages");
  expect(Object.keys(chat.schema.properties)).not.toContain("chatbot");
  const faq = formOf(await page("/dashboard/playground?fn=faq-match"));
  expect(Object.keys(faq.schema.properties)).not.toContain("faqs");
  // the account's own collection stands in the example's place
  expect(faq.example.collection_id).toBe(collectionId);
});

test("faq-match and the inline search run from the playground with their examples, charged to the account", async () => {
  for (const fn of ["faq-match", "knowledge-base-search-inline"]) {
    const { example } = formOf(await page(`/dashboard/playground?fn=${fn}`));
    const res = await fetch(`${gw.url}/dashboard/api/playground/${fn}`, {
      method: "POST",
      headers: { cookie, origin: new URL(gw.url).origin, "content-type": "application/json" },
      body: JSON.stringify(example),
    });
    const json = (await res.json()) as {
      meta: { credits_deducted: number };
      data: { result: { matches?: unknown; results: { content: string }[] } };
    };
    expect(res.status, JSON.stringify(json)).toBe(200);
    expect(json.meta.credits_deducted).toBeGreaterThan(0);
    // the offline engine answers; whether the example's question matches closely enough is its own affair
    if (fn === "faq-match") expect(Array.isArray(json.data.result.matches)).toBe(true);
    else expect(json.data.result.results[0].content).toContain("Refunds");
  }
  // a name no function has
  const res = await fetch(`${gw.url}/dashboard/api/playground/no-such-function`, {
    method: "POST",
    headers: { cookie, origin: new URL(gw.url).origin, "content-type": "application/json" },
    body: "{}",
  });
  expect(res.status).toBe(404);
});

test.skipIf(skipBrowser)(
  "in Chromium: a chatbot's id goes into the curl's path, not its body",
  async () => {
    const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu"] });
    try {
      const context = await browser.newContext();
      const u = new URL(gw.url);
      await context.addCookies([{ name: "textai_session", value: cookie.split("=")[1], domain: u.hostname, path: "/dashboard" }]);
      const p = await context.newPage();
      await p.goto(`${gw.url}/dashboard/playground?fn=chatbot-chat`);
      await p.getByLabel("id", { exact: true }).fill("bot_mine");
      const curl = (await p.locator("#curl").textContent()) ?? "";
      expect(curl).toContain(`${gw.url}/api/v1/chatbots/bot_mine/chat`);
      expect(curl).toContain('"message":"How long does delivery take?"');
      expect(curl).not.toContain('"id"');
    } finally {
      await browser.close();
    }
  },
  60_000,
);
