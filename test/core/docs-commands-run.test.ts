import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { docFiles, type Fence, notesOf, parseDoc, ROOT, SHELL_LANGS } from "../helpers/markdown";

/**
 * Issue 36: the shell blocks of the docs marked `<!-- test: runs -->` (an HTML comment on the line
 * above the fence, invisible on GitHub) run as written, with `bash -e -o pipefail`, each in a fresh
 * scratch copy of the tree (every top-level entry linked, except data/, dist/ and .git), so the
 * default database `./data/textai.db` is a new file there and nothing the block does touches the
 * checkout. The environment holds only PATH and HOME (no TEXTAI_* or provider variables of the
 * machine). `npx -y bun@1.4.5 …` runs the Bun of this test run (an `npx` on PATH that does only
 * that, so nothing is downloaded); a bare `bun`, `bunx` or `textai` fails, as on a machine with only
 * Node.js and npm. A failure names the doc's file:line of the command that failed.
 */
interface Block {
  file: string;
  fence: Fence;
}

const marked = (file: string): Block[] =>
  parseDoc(file)
    .fences.filter((fence) => SHELL_LANGS.has(fence.lang) && notesOf(fence).runs)
    .map((fence) => ({ file, fence }));

let scratch: string;
let bin: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "textai-docs-run-"));
  bin = join(scratch, "bin");
  mkdirSync(bin);
  const script = (name: string, body: string) => {
    writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  };
  script(
    "npx",
    `if [ "$1" = "-y" ] && [ "$2" = "bun@1.4.5" ]; then shift 2; exec ${JSON.stringify(process.execPath)} "$@"; fi
echo "docs test: 'npx $*' is not run here: only 'npx -y bun@1.4.5 ...' is" >&2
exit 127`,
  );
  for (const name of ["bun", "bunx", "textai"]) {
    script(name, `echo "docs test: '${name}' is not on a machine with only Node.js and npm" >&2\nexit 127`);
  }
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A port nothing listens on now (a block that serves listens on PORT, so blocks never share one). */
function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = Number(probe.url.port);
  probe.stop(true);
  return port;
}

let runs = 0;
/** Runs one block in a fresh copy of the tree; the failure, if any, as "file:line: …" plus the output. */
async function runBlock({ file, fence }: Block): Promise<{ failure?: string; tree: string }> {
  const tree = join(scratch, `tree-${++runs}`);
  mkdirSync(tree);
  for (const entry of readdirSync(ROOT)) {
    if (!["data", "dist", ".git"].includes(entry)) symlinkSync(join(ROOT, entry), join(tree, entry));
  }
  // the ERR trap turns the script's line back into the doc's: block line k is script line k + 4
  // background jobs the block leaves (a server) are stopped, and waited for, when it ends
  const header = [
    "set -eo pipefail",
    "trap 'kill $(jobs -p) 2>/dev/null || true; wait' EXIT",
    `trap 'status=$?; echo "docs test: ${file}:$((LINENO + ${fence.line - 4})) failed (exit $status)" >&2' ERR`,
    "",
  ];
  const path = join(scratch, `block-${runs}.sh`);
  writeFileSync(path, `${[...header, ...fence.lines].join("\n")}\n`);
  // its own process group, so a block that hangs is stopped whole, with whatever it started
  const proc = Bun.spawn(["bash", path], {
    detached: true,
    cwd: tree,
    env: { PATH: `${bin}:${process.env.PATH}`, HOME: process.env.HOME ?? tree, PORT: String(freePort()) },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    process.kill(-proc.pid, "SIGKILL");
  }, 45_000);
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  if (code === 0 && !timedOut) return { tree };
  const where = /docs test: (\S+:\d+) failed/.exec(err)?.[1] ?? `${file}:${fence.line}`;
  const how = timedOut ? "did not finish within 45 s" : `failed (exit ${code})`;
  return { tree, failure: `${where}: the block marked "test: runs" ${how}\n${out}${err}`.trim() };
}

describe("doc blocks marked test: runs", () => {
  const blocks = docFiles().flatMap(marked);

  test("the CLI's first session of docs/cli.md is among them (help, keys, credits, usage, requests, accounts)", () => {
    const cli = blocks.filter((b) => b.file === "docs/cli.md").map((b) => b.fence.lines.join("\n"));
    for (const verb of ["--help", "keys create", "credits grant", "usage", "requests", "accounts create"]) {
      expect(cli.some((text) => text.includes(`src/cli.ts ${verb}`))).toBe(true);
    }
  });

  test("a failing command is reported at its doc line, and a bare bun fails as on a fresh machine", async () => {
    const [ok, fails, bare] = marked("test/fixtures/docs/runs.md");
    expect((await runBlock(ok!)).failure).toBeUndefined();
    expect((await runBlock(fails!)).failure).toStartWith(
      'test/fixtures/docs/runs.md:13: the block marked "test: runs" failed (exit 1)',
    );
    const failure = (await runBlock(bare!)).failure;
    expect(failure).toStartWith('test/fixtures/docs/runs.md:19: the block marked "test: runs" failed (exit 127)');
    expect(failure).toContain("'bun' is not on a machine with only Node.js and npm");
  });

  // every block starts at once (each in its own tree, on its own port); each test awaits its own
  let started: Promise<{ failure?: string; tree: string }>[] = [];
  beforeAll(() => {
    started = blocks.map(runBlock);
  });

  blocks.forEach((block, i) => {
    test(`${block.file}:${block.fence.line} runs as written`, async () => {
      const { failure, tree } = await started[i]!;
      expect(failure).toBeUndefined();
      // the block's database, if it made one, is the scratch copy's
      if (block.fence.lines.some((line) => line.includes("src/cli.ts keys create"))) {
        expect(existsSync(join(tree, "data/textai.db"))).toBe(true);
      }
    }, 60_000);
  });
});
