/**
 * Amounts written the way their locale writes them ("1.234,56 €", "12,50 €", "CHF 1'234.50",
 * "₹1,23,456.00") are whole amounts in the entities every offline function reports (intent-detection,
 * ticket-analyze, email-analyze: offline-engine/json-locale.ts textEntities), through a real server.
 * Before, intent-detection read "1.234,56 EUR" as "234,56 EUR", "CHF 1'234.50" as "CHF 1", and found
 * no amount in "12,50 €".
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";

let gw: TestGateway;
let key: string;
beforeAll(async () => {
  gw = await startGateway();
  ({ key } = gw.newKey({ credits: 10_000 }));
});
afterAll(() => gw.close());

async function call(fn: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const r = await fetch(`${gw.url}/api/v1/ai/${fn}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = (await r.json()) as { data: { result: Record<string, unknown> } };
  expect(r.status).toBe(200);
  return json.data.result;
}

const CASES: [string, string][] = [
  ["Please refund the 1.234,56 EUR you charged twice on my card last week.", "1.234,56 EUR"],
  ["I was billed 12,50 € for a subscription I cancelled in March, please refund it.", "12,50 €"],
  ["Why was I charged CHF 1'234.50 for the annual plan? I only ordered the monthly one.", "CHF 1'234.50"],
  ["Please refund ₹1,23,456.00 for the duplicate order, it was charged two times.", "₹1,23,456.00"],
  [
    "The invoice says 2 500,00 € but the quote we signed was for 2 000,00 €. Please correct the invoice.",
    "2 500,00 €, 2 000,00 €",
  ],
  ["You charged me $1,234.56 twice this month, please refund one of the payments.", "$1,234.56"],
];

test.each(CASES)("intent-detection: %p names the amount %p whole", async (text, amount) => {
  const data = await call("intent-detection", { text });
  expect((data.entities as Record<string, string>).amount).toBe(amount);
});

test.each(CASES)("ticket-analyze and email-analyze: %p names the amount %p whole", async (text, amount) => {
  const ticket = await call("ticket-analyze", { ticket: text });
  expect((ticket.entities as Record<string, string>).amount).toBe(amount);
  const email = await call("email-analyze", { email_content: text });
  expect((email.entities as Record<string, string>).amount).toBe(amount);
});
