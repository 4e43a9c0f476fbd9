import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrate } from "../../src/storage/db";
import { MIGRATIONS } from "../../src/storage/migrations";
import { cli, spawnGateway } from "../helpers/spawned";

// Balances are kept with each charge. A start does not scan the ledger (seconds for a million
// rows): only a file that is migrated from an older version (by a start or a CLI verb) is reconciled, and
// `textai credits reconcile` does it on demand.
const dir = mkdtempSync(join(tmpdir(), "textai-reconcile-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const balanceOf = (path: string, account: string) => {
  const db = new Database(path, { readonly: true });
  try {
    return (db.query("SELECT balance FROM accounts WHERE id = ?").get(account) as { balance: number }).balance;
  } finally {
    db.close();
  }
};

test("a file written by an older version is reconciled with its ledger when a start migrates it", async () => {
  const path = join(dir, "old.db");
  const db = new Database(path, { create: true, strict: true });
  migrate(db, MIGRATIONS.slice(0, -1));
  db.query("INSERT INTO accounts (id, plan, balance) VALUES ('acc_old', 'free', 7)").run();
  db.query(
    "INSERT INTO ledger (account_id, amount, kind, reason, created_at) VALUES ('acc_old', 40, 'grant', 'x', 1), ('acc_old', -3, 'charge', NULL, 2)",
  ).run();
  db.close();
  const gw = await spawnGateway({ TEXTAI_DB: path });
  try {
    expect((await fetch(`${gw.url}/ready`)).status).toBe(200);
  } finally {
    gw.proc.kill("SIGTERM");
    await gw.exited;
  }
  expect(balanceOf(path, "acc_old")).toBe(37);
});

test("a CLI verb that migrates an old file first reconciles it too (a later start has nothing to migrate)", () => {
  const path = join(dir, "old-cli.db");
  const db = new Database(path, { create: true, strict: true });
  migrate(db, MIGRATIONS.slice(0, -1));
  db.query("INSERT INTO accounts (id, plan, balance) VALUES ('acc_cli', 'free', 3)").run();
  db.query("INSERT INTO ledger (account_id, amount, kind, reason, created_at) VALUES ('acc_cli', 20, 'grant', 'x', 1)").run();
  db.close();
  cli(["keys", "list"], { TEXTAI_DB: path });
  expect(balanceOf(path, "acc_cli")).toBe(20);
});

test("an up-to-date file is not scanned at start; `credits reconcile` sets balances from the ledger", async () => {
  const path = join(dir, "current.db");
  const env = { TEXTAI_DB: path };
  const created = JSON.parse(cli(["keys", "create", "--label", "r", "--credits", "12", "--json"], env)) as { account_id: string };
  const account = created.account_id;
  const db = new Database(path, { strict: true });
  db.query("UPDATE accounts SET balance = 999 WHERE id = ?").run(account); // edited by hand
  db.close();
  const gw = await spawnGateway(env);
  gw.proc.kill("SIGTERM");
  await gw.exited;
  expect(balanceOf(path, account)).toBe(999);
  expect(cli(["credits", "reconcile"], env)).toContain("1 account corrected");
  expect(balanceOf(path, account)).toBe(12);
  expect(cli(["credits", "reconcile"], env)).toContain("0 accounts corrected");
});
