/**
 * Processes started together on one fresh database migrate once (issue 24.10): each SQLite file's
 * migrations run in one BEGIN IMMEDIATE transaction that reads the journal under the write lock,
 * PostgreSQL's under an advisory lock. Before, one of two nodes started at once in one working
 * directory died 1 time in 3 with `duplicate column name` in the shared SQLite file's migrations.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { freshDatabase, sharedServersUp } from "../helpers/shared-servers";

const CLI = join(import.meta.dir, "../../src/cli.ts");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "textai-together-"));
  dirs.push(dir);
  return dir;
}

interface Started {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  output(): string;
  /** resolves once the process has exited and all its output has been read */
  finished: Promise<number>;
}

/** `textai ARGS` in `cwd`, its standard output and error gathered. */
function run(args: string[], cwd: string, env: Record<string, string>): Started {
  const proc = Bun.spawn([process.execPath, CLI, ...args], {
    cwd,
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", TEXTAI_LOG_LEVEL: "warn", TEXTAI_DRAIN_GRACE_MS: "0", ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let out = "";
  const read = async (s: ReadableStream<Uint8Array>) => {
    for await (const chunk of s) out += new TextDecoder().decode(chunk);
  };
  const reads = Promise.all([read(proc.stdout), read(proc.stderr)]);
  return { proc, output: () => out, finished: reads.then(() => proc.exited) };
}

/** Waits until `serve` listens and its /ready answers 200; null when it does, else what went wrong. */
async function becomesReady(s: Started, deadlineMs = 30_000): Promise<string | null> {
  const deadline = Date.now() + deadlineMs;
  let url: string | undefined;
  while (Date.now() < deadline) {
    if (s.proc.exitCode !== null) return `exited ${s.proc.exitCode}: ${s.output()}`;
    url ??= /listening on (\S+)/.exec(s.output())?.[1];
    if (url) {
      const res = await fetch(`${url}/ready`).catch(() => null);
      if (res?.status === 200) return null;
    }
    await Bun.sleep(50);
  }
  return `not ready within ${deadlineMs} ms: ${s.output()}`;
}

async function stopAll(started: Started[]) {
  for (const s of started) s.proc.kill("SIGTERM");
  await Promise.all(started.map((s) => s.proc.exited));
}

const ROUNDS = 4;

test("SQLite: three serves and two `keys create` started at once on a fresh file all work", async () => {
  for (let round = 0; round < ROUNDS; round++) {
    const dir = freshDir();
    // no TEXTAI_DB: every process opens ./data/textai.db in the one working directory
    const env: Record<string, string> = {};
    const serves = [0, 1, 2].map(() => run(["serve", "--port", "0"], dir, env));
    const creates = [0, 1].map(() => run(["keys", "create", "--label", `k${round}`, "--json"], dir, env));
    try {
      const problems = await Promise.all(serves.map((s) => becomesReady(s)));
      const codes = await Promise.all(creates.map((c) => c.finished));
      expect({ round, problems, codes, created: creates.map((c) => /"key":"tai_live_/.test(c.output())) }).toEqual({
        round,
        problems: [null, null, null],
        codes: [0, 0],
        created: [true, true],
      });
    } finally {
      await stopAll([...serves, ...creates]);
    }
  }
}, 120_000);

const shared = await sharedServersUp("nodes started together on one PostgreSQL database");
test.skipIf(!shared)(
  "PostgreSQL: four serves started at once in one fresh working directory on a fresh database all become ready",
  async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const db = await freshDatabase();
      const dir = freshDir();
      const nodes = [0, 1, 2, 3].map(() => run(["serve", "--port", "0"], dir, { TEXTAI_DATABASE_URL: db.url }));
      try {
        const problems = await Promise.all(nodes.map((n) => becomesReady(n)));
        expect({ round, problems }).toEqual({ round, problems: [null, null, null, null] });
      } finally {
        await stopAll(nodes);
        await db.drop();
      }
    }
  },
  120_000,
);
