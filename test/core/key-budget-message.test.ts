/**
 * A key's monthly credit limit refuses a call whose hold does not fit (402 key_budget_exceeded), and
 * says which is the case: the limit spent, or some left but less than the call may cost. Through a
 * real server. 2026-12-06, a walkthrough: "monthly credit limit of 4 is spent: 3 used or held" was
 * said with 1 credit left, of a call that held 2.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";

const ADMIN = "key-budget-message-admin-token-0123456789";
let gw: TestGateway;
let key: string;

beforeAll(async () => {
  gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: ADMIN } });
  const { accountId } = gw.newKey({ credits: 100 });
  const made = await gw.post(
    "/admin/v1/keys",
    { label: "budget of 4", account_id: accountId, policy: { monthly_credit_limit: 4 } },
    { authorization: `Bearer ${ADMIN}` },
  );
  expect(made.status).toBe(201);
  key = made.json.data.result.key as string;
});
afterAll(() => gw?.close());

const call = (fn: string, body: Record<string, unknown>) =>
  gw.post(`/api/v1/ai/${fn}`, body, { "x-api-key": key, "cache-control": "no-cache" });
const sentiment = (n: number) => call("sentiment-analysis", { text: `The parcel number ${n} came early and intact.` });

test("some left but less than the call's hold: says how much is left and what the call may cost; spent: says so", async () => {
  for (let i = 0; i < 3; i++) expect((await sentiment(i)).status).toBe(200);
  // ticket-analyze costs 2: one credit is left
  const short = await call("ticket-analyze", { ticket: "The checkout page shows an error since this morning." });
  expect(short.status).toBe(402);
  expect(short.json.error.code).toBe("key_budget_exceeded");
  expect(short.json.error.message).toContain("this call may cost up to 2 credits");
  expect(short.json.error.message).toContain("more than the 1 left of this key's monthly credit limit of 4");
  expect(short.json.error.message).not.toContain("is spent");
  expect((await sentiment(4)).status).toBe(200);
  const spent = await sentiment(5);
  expect(spent.status).toBe(402);
  expect(spent.json.error.message).toBe("this key's monthly credit limit of 4 is spent: 4 used or held this month (UTC)");
});
