/**
 * A key's own guardrails (CONTRACT section 14, in its policy): added to its plan's, through a real
 * server against the upstream simulator, which records what it received. A key can only add
 * protection; an account holder cannot remove it again from the dashboard.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { TestGateway } from "../helpers/gateway";
import type { Upstream } from "../helpers/upstream";
import { rawPost } from "../openai/setup";
import { guardedGateway } from "./setup";

const ADMIN = "guardrail-key-policy-operator-token-0123456789";
const admin = { authorization: `Bearer ${ADMIN}` };
const EMAIL = "lena.berg@example.com";
const SSN = "219-09-9999";

let gw: TestGateway;
let sim: Upstream;

beforeAll(async () => {
  ({ gw, sim } = await guardedGateway(
    `[plans.free.guardrails]
block_pii = ["ssn"]
`,
    { TEXTAI_ADMIN_TOKEN: ADMIN },
  ));
});
afterAll(async () => {
  await gw.close();
  await sim.close();
});

const patch = async (id: string, policy: unknown) =>
  fetch(`${gw.url}/admin/v1/keys/${id}`, {
    method: "PATCH",
    headers: { ...admin, "content-type": "application/json" },
    body: JSON.stringify({ policy }),
  }).then(async (r) => ({ status: r.status, json: (await r.json()) as PolicyAnswer }));

interface PolicyAnswer {
  data: { result: { policy: { guardrails: unknown } } };
  error: { param: string; message: string };
}

const chat = (key: string, text: string) =>
  rawPost(gw, "/v1/chat/completions", key, { model: "model-a", messages: [{ role: "user", content: text }] });

test("a key's redact_pii is added to its plan's block_pii; the provider never sees the key's guarded kinds; restore_pii puts them back", async () => {
  const { key, id } = gw.newKey({ credits: 1000 });
  // without a key policy: the plan blocks SSNs only, an email goes out as sent
  let from = sim.calls.requests.length;
  expect((await chat(key, `Write to ${EMAIL}.`)).status).toBe(200);
  expect(JSON.stringify(sim.calls.requests.slice(from).map((r) => r.body))).toContain(EMAIL);

  const set = await patch(id, { guardrails: { redact_pii: ["email"], restore_pii: true } });
  expect(set.status, JSON.stringify(set.json)).toBe(200);
  expect(set.json.data.result.policy.guardrails).toEqual({ redact_pii: ["email"], restore_pii: true });

  from = sim.calls.requests.length;
  sim.program([{ content: "Sure, I will write to [EMAIL_1]." }]);
  const r = await chat(key, `Write to ${EMAIL}.`);
  expect(r.status).toBe(200);
  const sent = JSON.stringify(sim.calls.requests.slice(from).map((x) => x.body));
  expect(sent).not.toContain(EMAIL);
  expect(sent).toContain("[EMAIL_1]");
  expect(r.headers.get("x-textai-guardrails")).toBe("redacted=email:1");
  const body = (await r.json()) as { choices: { message: { content: string } }[] };
  expect(body.choices[0]?.message.content).toBe(`Sure, I will write to ${EMAIL}.`);

  // the plan's block still holds: a key's guardrails only add
  from = sim.calls.requests.length;
  const blocked = await chat(key, `My SSN is ${SSN}.`);
  expect(blocked.status).toBe(422);
  expect(sim.calls.requests.length).toBe(from);
});

test("a key's guardrails are checked like the config file's: an unknown kind is 400 naming it", async () => {
  const { id } = gw.newKey({ credits: 10 });
  const bad = await patch(id, { guardrails: { redact_pii: ["passport"] } });
  expect(bad.status).toBe(400);
  expect(bad.json.error.param).toBe("policy.guardrails");
  expect(bad.json.error.message).toContain('unknown PII kind "passport"');
  const field = await patch(id, { guardrails: { redact: ["email"] } });
  expect(field.status).toBe(400);
  expect(field.json.error.param).toBe("policy.guardrails.redact");
});
