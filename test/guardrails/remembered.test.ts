/**
 * Texts the recogniser read for an earlier request are remembered (src/providers/guardrails.ts
 * RECOGNISED): a chat resends its history and a system prompt comes with every call. Through a real
 * server: a remembered text is redacted exactly as when it was read, the kinds asked are part of
 * what is remembered (another plan's kinds read it again), a text one character apart is read, and
 * /metrics counts both.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { TestGateway } from "../helpers/gateway";
import type { Upstream } from "../helpers/upstream";
import { guardedGateway, REDACT_EVERY_KIND } from "./setup";

const ADMIN = "guardrails-remembered-operator-token-0123456789";
const SYSTEM =
  "You answer for the account of Maria Keller (maria.keller@example.com, +1 415 555 0134); her card 4111 1111 1111 1111 is on file.";

let gw: TestGateway;
let sim: Upstream;
const keys: Record<string, string> = {};

beforeAll(async () => {
  ({ gw, sim } = await guardedGateway(
    `[plans.strict.guardrails]
${REDACT_EVERY_KIND}
restore_pii = true

[plans.mails.guardrails]
redact_pii = ["email"]
`,
    { TEXTAI_ADMIN_TOKEN: ADMIN },
  ));
  for (const plan of ["strict", "mails"]) keys[plan] = gw.newKey({ plan, credits: 100_000 }).key;
});
afterAll(async () => {
  await gw?.close();
  await sim?.close();
});

/** One chat call; returns what the simulator was sent (its messages' contents). */
async function sent(plan: string, system: string, user: string): Promise<string[]> {
  const from = sim.calls.requests.length;
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${keys[plan]}`, "content-type": "application/json", "cache-control": "no-cache" },
    body: JSON.stringify({
      model: "model-a",
      messages: [
        { role: "system", content: system },
        { role: "user", content: user },
      ],
    }),
  });
  expect(r.status).toBe(200);
  await r.arrayBuffer();
  const calls = sim.calls.requests.slice(from);
  expect(calls).toHaveLength(1);
  return ((calls[0]?.body as { messages: { content: string }[] }).messages ?? []).map((m) => m.content);
}

const counts = async () => {
  const text = await (await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).text();
  const of = (how: string) =>
    Number(new RegExp(`^textai_guardrail_texts_total\\{recogniser="${how}"\\} (\\d+)$`, "m").exec(text)?.[1] ?? 0);
  return { read: of("read"), remembered: of("remembered") };
};

test("a system prompt sent again is remembered, redacted exactly as the first time; the new turn is read", async () => {
  const before = await counts();
  const [system1, user1] = await sent("strict", SYSTEM, "Please write to the billing team about the renewal of this account.");
  for (const value of ["Maria Keller", "maria.keller@example.com", "415 555 0134", "4111 1111 1111 1111"])
    expect(system1).not.toContain(value);
  expect(system1).toContain("[EMAIL_1]");
  expect(user1).toBe("Please write to the billing team about the renewal of this account.");
  const middle = await counts();
  // (and, the first time, the field names and enum values the walk reads as text)
  expect(middle.read - before.read).toBeGreaterThanOrEqual(2);
  expect(middle.remembered - before.remembered).toBe(0);

  const [system2, user2] = await sent("strict", SYSTEM, "And copy john.smith@example.org on the reply to the renewal thread.");
  expect(system2).toBe(system1);
  expect(user2).not.toContain("john.smith@example.org");
  // the new email is the request's second: the remembered text's values keep their placeholders
  expect(user2).toContain("[EMAIL_2]");
  const after = await counts();
  expect(after.remembered - middle.remembered).toBe(1);
  expect(after.read - middle.read).toBe(1);
});

test("the kinds asked are part of what is remembered: a plan redacting emails only reads the same text for itself", async () => {
  const before = await counts();
  const [system] = await sent("mails", SYSTEM, "Please write to the billing team about the renewal of this account.");
  expect(system).toContain("Maria Keller");
  expect(system).toContain("4111 1111 1111 1111");
  expect(system).not.toContain("maria.keller@example.com");
  const after = await counts();
  // the system prompt read for this plan's kinds, the user's text too (and this plan's first field names)
  expect(after.read - before.read).toBeGreaterThanOrEqual(2);
  expect(after.remembered - before.remembered).toBe(0);
});

test("a text one character apart is read again, and its own values are found", async () => {
  const before = await counts();
  const changed = SYSTEM.replace("0134", "0135");
  const [system] = await sent("strict", changed, "Please write to the billing team about the renewal of this account.");
  expect(system).not.toContain("415 555 0135");
  expect(system).not.toContain("Maria Keller");
  const after = await counts();
  expect(after.read - before.read).toBe(1);
  expect(after.remembered - before.remembered).toBe(1);
});
