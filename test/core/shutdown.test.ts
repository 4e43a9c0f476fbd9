import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { wordCount } from "../helpers/echo-function";
import { startGateway } from "../helpers/gateway";

test("graceful stop: in-flight requests finish and are charged, the database closes cleanly", async () => {
  const gw = await startGateway({ functions: [wordCount] });
  const { key, accountId } = gw.newKey({ credits: 10 });
  const inFlight = gw.post("/api/v1/ai/word-count", { text: "finish me please", delay_ms: 400 }, { "x-api-key": key });
  await Bun.sleep(100);
  const stopping = gw.stop();
  const res = await inFlight;
  await stopping;
  expect(res.status).toBe(200);
  expect(res.json.data.result).toEqual({ words: 3 });
  expect(await fetch(`${gw.url}/health`).catch(() => null)).toBeNull();
  const db = new Database(gw.dbPath, { readonly: true });
  const row = db.query("SELECT balance FROM accounts WHERE id = ?").get(accountId) as { balance: number };
  const charges = db.query("SELECT count(*) AS n FROM ledger WHERE account_id = ? AND kind = 'charge'").get(accountId) as {
    n: number;
  };
  db.close();
  expect(row.balance).toBe(9);
  expect(charges.n).toBe(1);
  rmSync(gw.dir, { recursive: true, force: true });
});
