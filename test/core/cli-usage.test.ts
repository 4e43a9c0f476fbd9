import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLI_VERBS, main } from "../../src/cli";
import { runCli } from "../helpers/spawned";

const dir = mkdtempSync(join(tmpdir(), "textai-cli-usage-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (args: string[]) => runCli(args, { TEXTAI_DB: join(dir, "t.db") });

/** lines of the full help that belong to other verbs: none of them may follow a usage error */
const FOREIGN = ["textai credits reconcile", "textai accounts set-login", "Configuration comes from"];

describe("a CLI usage error: the error, the verb's usage and a pointer to --help, never the whole help", () => {
  test("a missing flag names the flag, shows that verb's usage line (with its POLICY flags) and --help", () => {
    const r = run(["keys", "create"]);
    expect(r.code).toBe(2);
    const lines = r.err.trimEnd().split("\n");
    expect(lines[0]).toBe("error: --label is required");
    expect(r.err).toContain("  textai keys create --label TEXT");
    expect(r.err).toContain("POLICY: [--functions a,b]");
    expect(lines.at(-1)).toBe("run `textai --help` for every command");
    expect(r.err).not.toContain("textai keys list");
    for (const line of FOREIGN) expect(r.err).not.toContain(line);
    expect(lines.length).toBeLessThanOrEqual(5);
    // keys update with no policy flag names every one of them (--tags was left out)
    const update = run(["keys", "update", "key_none"]);
    expect(update.code).toBe(2);
    expect(update.err.split("\n")[0]).toBe(
      "error: keys update needs at least one of --functions, --models, --rpm, --monthly-credits, --expires, --tags",
    );
  }, 15_000);

  test("each verb gets its own usage line; an unknown verb of a command gets that command's lines; an unknown command only the pointer", () => {
    const cases: [string[], string, string][] = [
      [["credits", "grant", "--account", "acc_x"], "error: --amount is required", "  textai credits grant --account ID"],
      [["usage"], "error: --account is required", "  textai usage --account ID"],
      [["serve", "--port", "abc"], "error: --port must be a whole number >= 0", "  textai serve [--port N]"],
      [["keys", "bogus"], "error: unknown command: keys bogus", "  textai keys revoke ID"],
    ];
    for (const [args, error, usage] of cases) {
      const r = run(args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.err.split("\n")[0], args.join(" ")).toBe(error);
      expect(r.err, args.join(" ")).toContain(usage);
      expect(r.err.trimEnd(), args.join(" ")).toEndWith("run `textai --help` for every command");
      for (const line of FOREIGN) expect(r.err, args.join(" ")).not.toContain(line);
    }
    const unknown = run(["frobnicate"]);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toBe("error: unknown command: frobnicate\nrun `textai --help` for every command\n");
    // a process per case, about a second each on a busy machine
  }, 30_000);

  test("--help still prints every command, on standard output, exit 0", () => {
    const r = run(["--help"]);
    expect(r.code).toBe(0);
    for (const line of FOREIGN) expect(r.out).toContain(line);
  }, 15_000);

  test("version, --version and -v print the version, exit 0", () => {
    const { version } = require("../../package.json") as { version: string };
    for (const v of ["version", "--version", "-v"]) {
      const r = run([v]);
      expect([r.code, r.out.trim()]).toEqual([0, `Text-AI Gateway ${version}`]);
    }
  }, 15_000);
});

// 2026-12-06: `textai serve --help` started a server, and `textai keys --help` was "unknown command", exit 2.
describe("--help after any command or verb: its usage on standard output, exit 0, nothing done", () => {
  test("every verb, every command alone, -h too: exit 0, its own usage lines, no database opened", async () => {
    const db = join(dir, "help.db");
    const saved = { db: process.env.TEXTAI_DB, log: console.log, error: console.error };
    process.env.TEXTAI_DB = db;
    const out: string[] = [];
    console.log = (...a: unknown[]) => out.push(a.join(" "));
    console.error = (...a: unknown[]) => out.push(`stderr: ${a.join(" ")}`);
    const seen: Record<string, unknown> = {};
    try {
      const commands = [...new Set(CLI_VERBS.map((v) => v.split(" ")[0]!))];
      const asked = [
        ...CLI_VERBS.map((v) => [...v.split(" "), "--help"]),
        ...commands.map((c) => [c, "-h"]),
        ["keys", "create", "--label", "x", "--help"],
      ];
      for (const argv of asked) {
        out.length = 0;
        const code = await main(argv);
        const text = out.join("\n");
        const verb = argv.filter((a) => !a.startsWith("-") && a !== "x").join(" ");
        seen[argv.join(" ")] = [code, text.startsWith("usage:\n"), text.includes(`  textai ${verb}`), text.includes("stderr:")];
        expect(seen[argv.join(" ")], argv.join(" ")).toEqual([0, true, true, false]);
      }
    } finally {
      process.env.TEXTAI_DB = saved.db;
      console.log = saved.log;
      console.error = saved.error;
    }
    expect(Object.keys(seen).length).toBeGreaterThan(20);
    // nothing was done: not even the database was opened (serve --help started no server, keys create made no key)
    expect(existsSync(db)).toBe(false);
  });
});

// 2026-12-06: `keys create --label x --monthly-credit 5` made a key with no monthly limit, exit 0.
describe("a flag the verb's usage does not name is refused, exit 2, before anything is opened", () => {
  test("typos are named with the flag meant; every flag a verb's usage names is taken", async () => {
    const db = join(dir, "flags.db");
    const saved = process.env.TEXTAI_DB;
    process.env.TEXTAI_DB = db;
    try {
      const cases: [string[], string][] = [
        [
          ["keys", "create", "--label", "x", "--monthly-credit", "5"],
          "unknown flag --monthly-credit: did you mean --monthly-credits?",
        ],
        [["credits", "grant", "--account", "a", "--amount", "5", "--reasn", "x"], "unknown flag --reasn: did you mean --reason?"],
        [["requests", "--limt", "2"], "unknown flag --limt: did you mean --limit?"],
        [["serve", "--prot", "8080"], "unknown flag --prot: did you mean --port?"],
        [["keys", "revoke", "key_x", "--json"], "unknown flag --json"],
      ];
      for (const [argv, message] of cases) {
        const err = await main(argv).then(
          () => null,
          (e: Error) => e,
        );
        expect(err?.message, argv.join(" ")).toBe(message);
        expect(err?.constructor.name, argv.join(" ")).toBe("UsageError");
      }
    } finally {
      process.env.TEXTAI_DB = saved;
    }
    expect(existsSync(db)).toBe(false);
    // the process answers exit 2 with the verb's usage (as every usage error)
    const r = run(["keys", "create", "--label", "x", "--monthly-credit", "5"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("POLICY: [--functions a,b]");
  }, 15_000);
});
