/**
 * Every way credits come in is bounded the same way (src/credits/amount.ts: MAX_GRANT a grant,
 * MAX_BALANCE a balance). 2026-12-06, a newcomer walkthrough: `credits grant --amount
 * 99999999999999999999` stored 1e20 (rounded) and every call of the account answered 500 for good;
 * `POST /admin/v1/accounts {"credits": 1e300}` did the same.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { MAX_BALANCE, MAX_GRANT } from "../../src/credits/amount";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { runCli } from "../helpers/spawned";

const ADMIN = "admin-secret-token-0123456789abcdef";
const admin = { authorization: `Bearer ${ADMIN}` };
let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: ADMIN } });
});
afterAll(() => gw.close());

const cli = (args: string[]) => runCli(args, { TEXTAI_DB: gw.dbPath });

test("too many credits at once: refused on every way in, nothing stored, the account keeps working", async () => {
  const { key, accountId } = gw.newKey({ credits: 556 });
  for (const body of [{ credits: 1e300 }, { credits: MAX_GRANT + 1 }]) {
    const r = await gw.post("/admin/v1/accounts", body, admin);
    expect(r.status, JSON.stringify(body)).toBe(400);
  }
  expect((await gw.post(`/admin/v1/accounts/${accountId}/credits`, { amount: MAX_GRANT + 1 }, admin)).status).toBe(400);
  for (const amount of ["99999999999999999999", "9007199254740993"]) {
    const r = cli(["credits", "grant", "--account", accountId, "--amount", amount]);
    expect(r.code, amount).toBe(2);
    expect(r.err, amount).toContain("--amount must be a whole number");
  }
  // a value out of range is a usage error, said of its flag (exit 2, as every bad flag value: docs/cli.md)
  const big = cli(["credits", "grant", "--account", accountId, "--amount", String(MAX_GRANT + 1)]);
  expect(big.code).toBe(2);
  expect(big.err).toContain(`--amount: a grant is a whole number of credits from -${MAX_GRANT} to ${MAX_GRANT}`);
  expect(cli(["keys", "create", "--label", "x", "--credits", "99999999999999999999999"]).code).toBe(2);
  // nothing of it was stored: the balance is what it was, and a call is charged from it
  const call = await gw.post("/api/v1/ai/sentiment-analysis", { text: "Lovely." }, { "x-api-key": key });
  expect(call.status).toBe(200);
  expect(call.json.meta.credits_remaining).toBe(555);
}, 30_000);

test("a balance never passes MAX_BALANCE: the grant that would is refused, naming it", async () => {
  const { accountId } = gw.newKey({ credits: 1 });
  const db = new Database(gw.dbPath);
  db.query("UPDATE accounts SET balance = ? WHERE id = ?").run(MAX_BALANCE - 10, accountId);
  db.close();
  const r = await gw.post(`/admin/v1/accounts/${accountId}/credits`, { amount: 11 }, admin);
  expect(r.status).toBe(400);
  expect(r.json.message).toContain(`a balance holds at most ${MAX_BALANCE}`);
  const ok = await gw.post(`/admin/v1/accounts/${accountId}/credits`, { amount: 10 }, admin);
  expect(ok.status).toBe(200);
});

// 2026-12-06, the same walkthrough: `keys create --plan platinum` made an account of no plan (free rate limits, the
// knowledge quotas of "any other plan")
test("an unknown plan is refused on every way in, naming the plans; a known one is taken", async () => {
  for (const [path, body] of [
    ["/admin/v1/accounts", { plan: "platnum" }],
    ["/admin/v1/keys", { label: "x", plan: "platnum" }],
  ] as const) {
    const r = await gw.post(path, body, admin);
    expect(r.status, path).toBe(400);
    expect(r.json.error.param, path).toBe("plan");
    expect(r.json.message, path).toContain('unknown plan "platnum": the plans are free, pro');
  }
  const r = cli(["keys", "create", "--label", "x", "--plan", "platinum"]);
  expect(r.code).toBe(2);
  expect(r.err).toContain('--plan: unknown plan "platinum"');
  expect((await gw.post("/admin/v1/keys", { label: "y", plan: "pro" }, admin)).status).toBe(201);
}, 20_000);
