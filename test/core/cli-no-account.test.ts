/**
 * Every CLI verb that takes `--account` says an account it cannot find the same way, with the
 * database it looked in (`no account acc_… in PATH`, exit 1, docs/cli.md), and changes nothing.
 * 2026-12-06, a walkthrough: `keys create` said "account acc_nope not found" (exit 2), `members`
 * and `webhooks add` "account not found" or "no account acc_nope" without the database, and
 * `webhooks list` an empty table (exit 0). The verbs are read from `textai --help`, so a new one
 * with `--account` must join the table.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stored } from "../helpers/bad-attributes";
import { runCli } from "../helpers/spawned";

const dir = mkdtempSync(join(tmpdir(), "textai-no-account-"));
const db = join(dir, "textai.db");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cli = (args: string[]) => runCli(args, { TEXTAI_DB: db });

/** each verb with `--account`, with the rest of what it needs (all of it valid but the account) */
const VERBS: Record<string, string[]> = {
  "keys create": ["--label", "team"],
  "keys list": [],
  "credits grant": ["--amount", "3"],
  usage: [],
  requests: [],
  "accounts set-login": ["--email", "someone@example.com"],
  "accounts tags": ["--tags", "region=eu"],
  "audit list": [],
  "members add": ["--email", "dev@example.com", "--role", "viewer"],
  "members list": [],
  "members role": ["--member", "mem_nope", "--role", "admin"],
  "members remove": ["--member", "mem_nope"],
  "webhooks add": ["--url", "https://hooks.example.com/x", "--events", "balance.low"],
  "webhooks list": [],
};

test("every verb with --account: an unknown account is 'no account ID in DATABASE', exit 1, nothing changed", () => {
  const help = cli(["--help"]).out;
  const withAccount = help
    .split("\n")
    .filter((l) => l.includes("--account ID"))
    .map((l) => {
      const words = l.trim().split(" ").slice(1);
      return words
        .slice(
          0,
          words.findIndex((w) => w.startsWith("-") || w.startsWith("[")),
        )
        .join(" ");
    });
  expect(withAccount.length).toBeGreaterThan(10);
  expect(Object.keys(VERBS).sort()).toEqual([...new Set(withAccount)].sort());

  expect(cli(["keys", "create", "--label", "a real one"]).code).toBe(0);
  const before = stored(db);
  for (const [verb, rest] of Object.entries(VERBS)) {
    const r = cli([...verb.split(" "), "--account", "acc_nope", ...rest]);
    expect([r.code, r.err.trim(), r.out], verb).toEqual([1, `no account acc_nope in ${db}`, ""]);
  }
  expect(stored(db)).toBe(before);
  // a blank one names no account: a usage error (exit 2) naming the flag, looked up nowhere
  const blank = cli(["webhooks", "list", "--account", "  "]);
  expect([blank.code, blank.err.split("\n")[0]]).toEqual([2, "error: --account: is empty: name an account (acc_…)"]);
}, 60_000);
