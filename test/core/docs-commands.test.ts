import { describe, expect, test } from "bun:test";
import { docFiles, notesOf, parseDoc, ROOT, SHELL_LANGS, shellLines, simpleCommands, words } from "../helpers/markdown";

/**
 * Issue 36: every command the docs show runs as written on the README's machine, one with only
 * Node.js and npm. Read from the docs (docFiles: README.md, ARCHITECTURE.md, docs/*.md, …):
 *  - every command of a ```sh / ```bash / ```shell / ```console block (continuation lines joined,
 *    comments and heredoc bodies left out, each part of a pipe, list or $( ) substitution on its
 *    own, VAR=value prefixes skipped) must start with an executable such a machine has: `npx -y
 *    bun@1.4.5`, node, npm, npx, curl, dist/textai (made by the documented build), a POSIX shell
 *    tool, or apt-get for optional system packages; a block may name more with an HTML comment
 *    right above it, `<!-- test: needs psql -->`, saying what the reader must install;
 *  - every inline code span and unlabelled block line that is a command of `bun`, `bunx` or `textai`
 *    (none is on that machine's PATH) or runs Bun through npx other than as `npx -y bun@1.4.5`
 *    fails too.
 * Each finding is reported as file:line with the fix.
 */
const FRESH = "a machine with only Node.js and npm";
const PINNED = "npx -y bun@1.4.5";

/** Shell built-ins and POSIX utilities, there on any machine that has a shell. */
const POSIX = new Set(
  (
    ". : [ alias awk basename bash cat cd chmod command cp cut date dirname echo env exec exit export false find " +
    "grep head id kill ln ls mkdir mktemp mv nohup printf pwd read rm rmdir sed seq set sh shift sleep sort source " +
    "tail tar tee test time timeout touch tr trap true type uname uniq unset wait wc xargs"
  ).split(" "),
);
const FROM_NPM = new Set(["node", "npm", "npx", "curl", "dist/textai", "./dist/textai"]);
/** Words that start a shell construct rather than name a program. */
const KEYWORDS = new Set(["if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}", "esac"]);
/** Programs that run another: how many arguments (after their options) come before its name. */
const WRAPPERS = new Map([
  ["env", 0],
  ["exec", 0],
  ["nohup", 0],
  ["command", 0],
  ["time", 0],
  ["xargs", 0],
  ["nice", 0],
  ["timeout", 1],
  ["flock", 1],
  ["taskset", 1],
]);
/** Options of a wrapper that take the next word as their value. */
const VALUED = new Set(["nice -n", "timeout -s", "timeout -k", "flock -w", "xargs -n", "xargs -I", "env -u"]);

/** The verbs of src/cli.ts: in prose, `textai` followed by one of them is a command (else it may be a name). */
const CLI_VERBS = new Set(["serve", "keys", "credits", "usage", "requests", "accounts", "help", "--help", "-h"]);

const FIXES: Record<string, string> = {
  bun: `write \`${PINNED} …\``,
  bunx: `write \`${PINNED} x …\``,
  textai: `write \`${PINNED} src/cli.ts …\` (or \`dist/textai …\` after the build)`,
};

/**
 * What is wrong with one simple command, if anything. `strict`: a command of a shell block, whose
 * executable must be one a fresh machine has; otherwise (inline code) only a bare bun, bunx or
 * textai with an argument, or Bun through npx unpinned, counts.
 */
export function problemOf(command: string, strict: boolean, needs: ReadonlySet<string> = new Set()): string | undefined {
  let w = words(command);
  for (;;) {
    while (w.length && (/^[A-Za-z_][A-Za-z0-9_]*=/.test(w[0]!) || KEYWORDS.has(w[0]!))) w = w.slice(1);
    if (w[0] === "for" || w[0] === "case" || w[0] === "select") return undefined;
    if (w[0] === "sudo") {
      if (w[1] !== "apt-get") return strict ? `runs \`sudo ${w[1] ?? ""}\`: only \`sudo apt-get\` is expected` : undefined;
      return undefined;
    }
    const wrapper = w[0];
    if (wrapper && WRAPPERS.has(wrapper) && w.length > 1) {
      w = w.slice(1);
      while (w[0]?.startsWith("-")) w = w.slice(VALUED.has(`${wrapper} ${w[0]}`) ? 2 : 1);
      w = w.slice(WRAPPERS.get(wrapper));
      continue;
    }
    break;
  }
  const exe = w[0];
  if (!exe) return undefined;
  if (exe === "npx") {
    const at = w.findIndex((a, i) => i > 0 && !a.startsWith("-"));
    if (at > 0 && /^bun(@|$)/.test(w[at]!) && !(w[1] === "-y" && w[2] === "bun@1.4.5")) {
      return `runs Bun as \`${w.slice(0, at + 1).join(" ")}\`, which fetches whatever Bun npm has (or asks first): write \`${PINNED} …\``;
    }
    return undefined;
  }
  if (FIXES[exe] && (strict || (exe === "textai" ? CLI_VERBS.has(w[1] ?? "") : w.length > 1)))
    return `runs \`${exe}\`, which ${FRESH} does not have: ${FIXES[exe]}`;
  if (!strict || POSIX.has(exe) || FROM_NPM.has(exe) || exe === "apt-get" || needs.has(exe)) return undefined;
  return `runs \`${exe}\`, which ${FRESH} does not have: use ${PINNED}, node, npm, curl or dist/textai, or name it in a \`<!-- test: needs ${exe} -->\` comment above the block`;
}

export interface Finding {
  line: number;
  command: string;
  problem: string;
}

export function commandFindings(file: string): Finding[] {
  const doc = parseDoc(file);
  const findings: Finding[] = [];
  const check = (text: string, line: number, strict: boolean, needs?: ReadonlySet<string>) => {
    for (const command of simpleCommands(text)) {
      const problem = problemOf(command, strict, needs);
      if (problem) findings.push({ line, command, problem });
    }
  };
  for (const fence of doc.fences) {
    if (SHELL_LANGS.has(fence.lang)) {
      const { needs } = notesOf(fence);
      for (const { text, line } of shellLines(fence)) check(text, line, true, needs);
    } else if (fence.lang === "" || fence.lang === "text") {
      // a plain block is shown as is: a line that is a command, or a `command` quoted in it, counts
      fence.lines.forEach((text, i) => {
        check(text.trim(), fence.line + 1 + i, false);
      });
    }
  }
  // in a table cell a pipe is written \|
  for (const span of doc.spans) check(span.text.replace(/\\\|/g, "|"), span.line, false);
  return findings.sort((a, b) => a.line - b.line);
}

describe("commands in the docs", () => {
  test("the checker finds every way a bare bun or textai hides, and passes what a fresh machine runs", () => {
    const found = commandFindings("test/fixtures/docs/commands.md").map(
      (f) => `${f.line} ${f.command} | ${f.problem.replace(/, which.*/, "")}`,
    );
    expect(found).toEqual([
      "5 bun test test/core | runs `bun`",
      "6 textai accounts create | runs `textai`",
      "7 bun src/cli.ts keys create --json | runs `bun`",
      "8 textai usage --account acc_1 | runs `textai`",
      "10 npx bun src/cli.ts serve | runs Bun as `npx bun`",
      "11 psql -h 127.0.0.1 test | runs `psql`",
      "12 bun --version | runs `bun`",
      "31 textai keys create | runs `textai`",
      "33 TEXTAI_TIMED_TESTS=1 bun test | runs `bun`",
      "33 bun x.ts | runs `bun`",
      "34 npx bun run build | runs Bun as `npx bun`",
      "34 flock /tmp/bench.lock bun run chaos | runs `bun`",
      "34 timeout -s KILL 5 textai serve | runs `textai`",
      "37 bun run eval | runs `bun`",
    ]);
  });

  test("the postinstalls the install blocks are those docs/cli.md explains, as many as the README says", () => {
    const listed = Bun.spawnSync([process.execPath, "pm", "untrusted"], { cwd: ROOT, stderr: "pipe" });
    const blocked = [...listed.stdout.toString().matchAll(/^\.\/node_modules\/(?:.*\/node_modules\/)?(\S+) @/gm)].map(
      (m) => m[1]!,
    );
    expect(blocked.length).toBeGreaterThan(0);
    const quoted = `"Blocked ${blocked.length} postinstalls"`;
    expect(parseDoc("README.md").text).toContain(quoted);
    const cli = parseDoc("docs/cli.md").text;
    const section = cli.slice(cli.indexOf("\n## The install"));
    expect(section).toContain(quoted);
    for (const name of new Set(blocked)) expect(section).toContain(`\`${name}\``);
  });

  for (const file of docFiles()) {
    test(`${file}: every command runs on ${FRESH}`, () => {
      expect(commandFindings(file).map((f) => `${file}:${f.line}: \`${f.command}\` ${f.problem}`)).toEqual([]);
    });
  }
});
