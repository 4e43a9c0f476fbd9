/**
 * A CLI refusal speaks of the CLI's flags, not the API's fields, and once: the API's field names
 * in a message are the flags they come from ("give account_id" is "give --account"), and a message
 * that starts with its own field is not prefixed twice ("--url: url: ..."). A webhook to a private
 * address is refused in the words of webhooks ("not forwarded" is /v1's). 2026-12-06, a walkthrough.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../helpers/spawned";

const dir = mkdtempSync(join(tmpdir(), "textai-cli-wording-"));
const db = join(dir, "textai.db");
let account: string;

const cli = (args: string[]) => runCli(args, { TEXTAI_DB: db });

beforeAll(() => {
  const made = cli(["keys", "create", "--label", "wording", "--json"]);
  account = (JSON.parse(made.out) as { account_id: string }).account_id;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("an account's event without --account names the flag", () => {
  const r = cli(["webhooks", "add", "--url", "https://hooks.example.com/x", "--events", "balance.low"]);
  expect(r.code).toBe(2);
  const first = r.err.split("\n")[0] as string;
  expect(first).toContain("give --account");
  expect(first).not.toContain("account_id");
});

test("a private webhook URL: one --url prefix, and the words of webhooks", () => {
  const r = cli(["webhooks", "add", "--url", "http://10.0.0.1/hook", "--events", "key.budget_80", "--account", account]);
  expect(r.code).toBe(2);
  const first = r.err.split("\n")[0] as string;
  expect(first).toStartWith("error: --url: URLs of private, loopback or link-local addresses are not called as webhooks");
  expect(first).toContain("allow_private_urls");
  expect(first).not.toContain("forwarded");
});
