/**
 * `textai backup FILE` (docs/operations.md#backups): a consistent copy of a running gateway's SQLite
 * database, written while it takes calls, that a gateway started on the copy serves from (the same
 * keys, balances, audit chain); a file that exists is never overwritten; on PostgreSQL it points to
 * pg_dump. 2026-12-06, a walkthrough: the only way was a `bun -e` line, which a user of the
 * compiled binary does not have.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { runCli } from "../helpers/spawned";

const dir = mkdtempSync(join(tmpdir(), "textai-cli-backup-"));
let gw: TestGateway;

beforeAll(async () => {
  gw = await startGateway();
});
afterAll(async () => {
  await gw?.close();
  rmSync(dir, { recursive: true, force: true });
});

const cli = (args: string[], env: Record<string, string>) => runCli(args, env);

const sentiment = (g: TestGateway, key: string) =>
  fetch(`${g.url}/api/v1/ai/sentiment-analysis`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "cache-control": "no-cache" },
    body: JSON.stringify({ text: "The delivery was quick and the support team was lovely." }),
  });

test("a backup made while calls go on serves a gateway started on it: the same key, the same balance, an intact audit chain", async () => {
  const { key, accountId } = gw.newKey({ credits: 50 });
  expect((await sentiment(gw, key)).status).toBe(200);
  // calls keep coming while the copy is written
  const during = Array.from({ length: 20 }, () => sentiment(gw, key));
  const file = join(dir, "copy.db");
  const made = cli(["backup", file, "--json"], { TEXTAI_DB: gw.dbPath });
  for (const r of await Promise.all(during)) expect(r.status).toBe(200);
  expect(made.code, made.err).toBe(0);
  const report = JSON.parse(made.out) as { file: string; bytes: number; integrity_check: string };
  expect(report).toMatchObject({ file, integrity_check: "ok" });
  expect(report.bytes).toBeGreaterThan(0);

  const restored = await startGateway({ env: { TEXTAI_DB: file } });
  try {
    const balance = Number(await restored.deps.ledger.balance(accountId));
    // what the copy holds is one moment of the ledger: the first call, and some of those during it
    expect(balance).toBeLessThanOrEqual(49);
    expect(balance).toBeGreaterThanOrEqual(50 - 21);
    const r = await sentiment(restored, key);
    expect(r.status).toBe(200);
    expect(Number(await restored.deps.ledger.balance(accountId))).toBe(balance - 1);
  } finally {
    await restored.close();
  }
  const verify = cli(["audit", "verify"], { TEXTAI_DB: file });
  expect(verify.code, verify.err).toBe(0);
  expect(verify.out).toStartWith("Audit chain intact");
});

test("a file that exists is not overwritten (exit 2); on PostgreSQL the verb points to pg_dump (exit 1)", () => {
  const existing = join(dir, "keep.db");
  writeFileSync(existing, "precious");
  const r = cli(["backup", existing], { TEXTAI_DB: gw.dbPath });
  expect(r.code).toBe(2);
  expect(r.err).toContain("exists: give a new file");
  expect(Bun.file(existing).size).toBe(8);
  const none = cli(["backup"], { TEXTAI_DB: gw.dbPath });
  expect(none.code).toBe(2);
  expect(none.err).toContain("textai backup FILE");
  const pg = cli(["backup", join(dir, "pg.db")], {
    TEXTAI_DB: join(dir, "unused.db"),
    TEXTAI_DATABASE_URL: "postgres://postgres@127.0.0.1:1/none",
  });
  expect(pg.err).toContain("pg_dump");
  expect(pg.code).not.toBe(0);
});
