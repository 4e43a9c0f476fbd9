/**
 * A CLI verb run on the SQLite database of a running server reads that server's config file when
 * TEXTAI_CONFIG is not set, and says so; with another file set, it warns that the two differ
 * (src/cli.ts withServersConfig, the server's note in `<db>.serve.pid`). 2026-12-06, a walkthrough:
 * with `welcome_credits = 200` in the server's config, `textai keys create` in another shell gave
 * the new account 100 credits, and `--plan` of a plan of the file was refused.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { runCli } from "../helpers/spawned";

const dir = mkdtempSync(join(tmpdir(), "textai-cli-server-config-"));
let gw: TestGateway;

beforeAll(async () => {
  gw = await startGateway({ configText: "welcome_credits = 250\n\n[plans.team.rate_limits]\nstandard = 100\n" });
});
afterAll(async () => {
  await gw?.close();
  rmSync(dir, { recursive: true, force: true });
});

const cli = (args: string[], env: Record<string, string> = {}) => runCli(args, { TEXTAI_DB: gw.dbPath, ...env });

test("without TEXTAI_CONFIG a verb reads the running server's config file, and says which", async () => {
  const made = cli(["keys", "create", "--label", "from another shell", "--plan", "team", "--json"]);
  expect(made.code, made.err).toBe(0);
  expect(made.err).toContain("note: reading ");
  expect(made.err).toContain("config.toml, the config file of the server running on");
  const { account_id, plan } = JSON.parse(made.out) as { account_id: string; plan: string };
  expect(plan).toBe("team");
  expect(Number(await gw.deps.ledger.balance(account_id))).toBe(250);
});

test("with another config file set, the verb reads it and warns that the server reads another", async () => {
  const other = join(dir, "other.toml");
  await Bun.write(other, "welcome_credits = 7\n");
  const made = cli(["keys", "create", "--label", "other config", "--json"], { TEXTAI_CONFIG: other });
  expect(made.code, made.err).toBe(0);
  expect(made.err).toContain("warning: the server running on");
  expect(made.err).toContain(`this command reads ${other}`);
  const { account_id } = JSON.parse(made.out) as { account_id: string };
  expect(Number(await gw.deps.ledger.balance(account_id))).toBe(7);
});

test("the server's own file set again: no note, no warning", () => {
  const made = cli(["keys", "list", "--json"], { TEXTAI_CONFIG: join(gw.dbPath, "..", "config.toml") });
  expect(made.code, made.err).toBe(0);
  expect(made.err).toBe("");
});
