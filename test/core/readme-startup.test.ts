/**
 * README's set-up quotes what `serve` prints when it starts (walkthrough 2026-12-06, item 5: the
 * README promised `/` (a landing page), `/docs` and `/dashboard`, the output said `/docs`,
 * `/dashboard` and `/health`). The quoted block is read from README.md and each of its lines must
 * be a line of the real start-up output, in order, with the README's address (the default
 * 127.0.0.1:8080) and version standing for the ones this run has.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "../..");
const README_ADDRESS = "http://127.0.0.1:8080";

/** The ```text block after "It prints its address" in README.md: the start-up output it quotes. */
function quotedStartup(): string[] {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const at = readme.indexOf("It prints its address");
  expect(at, "README.md no longer says what serve prints").toBeGreaterThan(-1);
  const block = /```text\n([\s\S]*?)\n```/.exec(readme.slice(at));
  expect(block, "no ```text block quotes the start-up output").not.toBeNull();
  return (block as RegExpExecArray)[1].split("\n");
}

/** `serve` on a free port, its standard output until it has printed `lines` lines after "listening on"; then stopped. */
async function startupOutput(lines: number): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "textai-readme-"));
  const proc = Bun.spawn(["bun", join(ROOT, "src/cli.ts"), "serve"], {
    env: {
      ...process.env,
      PORT: "0",
      HOST: "127.0.0.1",
      TEXTAI_LOG_LEVEL: "warn",
      TEXTAI_DRAIN_GRACE_MS: "0",
      TEXTAI_DB: join(dir, "textai.db"),
    },
    cwd: ROOT,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "ignore",
  });
  const reader = proc.stdout.getReader();
  const timer = setTimeout(() => proc.kill(9), 20_000);
  let out = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      out += new TextDecoder().decode(value);
      const from = out.indexOf("listening on");
      if (from >= 0 && out.slice(from).split("\n").length > lines) break;
    }
  } finally {
    clearTimeout(timer);
    proc.kill();
    await proc.exited;
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

test("the start-up lines README.md quotes are the lines serve prints", async () => {
  const quoted = quotedStartup();
  expect(quoted.length).toBeGreaterThan(1);
  const out = await startupOutput(quoted.length);
  const url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
  expect(url, out).toBeDefined();
  const version = /Text-AI Gateway (\S+) listening on/.exec(out)?.[1] as string;
  const expected = quoted.map((l) =>
    l.replaceAll(README_ADDRESS, url as string).replace(/^Text-AI Gateway \S+ listening/, `Text-AI Gateway ${version} listening`),
  );
  const printed = out.split("\n").map((l) => l.trimEnd());
  const first = printed.indexOf(expected[0]);
  expect(first, `README's first line is not printed:\n${out}`).toBeGreaterThan(-1);
  expect(printed.slice(first, first + expected.length)).toEqual(expected);
  // and what the README promises besides: the landing page at /, the docs, the dashboard, health
  for (const path of ["/", "/docs", "/dashboard", "/health"]) expect(expected.join("\n")).toContain(`${url}${path}`);
}, 30_000);
