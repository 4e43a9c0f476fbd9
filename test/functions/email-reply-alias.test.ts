/**
 * email-reply takes the email as `email_text` (the spec's name) or `email_content` (what
 * email-analyze, email-workflow and email-classification call it), through a real server in front
 * of the upstream simulator: either reaches the provider as the email, both must agree, a blank one
 * is refused like any blank text, and neither is a 400 naming email_text. 2026-12-06, a walkthrough:
 * `email_content` was refused as an unknown field.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";

let sim: Upstream;
let gw: TestGateway;
let key: string;

beforeAll(async () => {
  sim = await startUpstream();
  gw = await startGateway({
    configText: `
[cache]
enabled = false
${simProvider({ url: `${sim.url}/v1`, name: "sim", model: "model-a" })}

[routes]
"email-reply" = ["sim"]
`,
  });
  key = gw.newKey({ credits: 1000 }).key;
});
afterAll(async () => {
  await gw?.close();
  await sim?.close();
});

const reply = (body: Record<string, unknown>) => gw.post("/api/v1/ai/email-reply", body, { "x-api-key": key });
const EMAIL = "Hello, could you tell me when my order 4471 ships? Thanks, Dana";

test("email_content is taken for email_text: the provider is sent the email", async () => {
  const from = sim.calls.count;
  const r = await reply({ email_content: EMAIL });
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  expect(sim.calls.count).toBe(from + 1);
  expect(JSON.stringify(sim.calls.requests.at(-1)?.body)).toContain("order 4471 ships");
  expect((await reply({ email_text: EMAIL, email_content: EMAIL })).status).toBe(200);
});

test("refusals: two different emails, a blank one, none; nothing sent", async () => {
  const from = sim.calls.count;
  const both = await reply({ email_text: EMAIL, email_content: "another email" });
  expect(both.status).toBe(400);
  expect(both.json.error.param).toBe("email_content");
  const blank = await reply({ email_content: "   \n " });
  expect(blank.status).toBe(400);
  expect(blank.json.error.param).toBe("email_content");
  const none = await reply({ tone: "formal" });
  expect(none.status).toBe(400);
  expect(none.json.error.param).toBe("email_text");
  expect(none.json.error.message).toContain("email_content is accepted too");
  expect(sim.calls.count).toBe(from);
});
