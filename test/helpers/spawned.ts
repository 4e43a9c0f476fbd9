import { join } from "node:path";
import type { Subprocess } from "bun";

const ROOT = join(import.meta.dir, "../..");
const CLI = join(ROOT, "src/cli.ts");

export interface SpawnedGateway {
  url: string;
  proc: Subprocess<"ignore", "pipe", "pipe">;
  /** everything the process wrote to standard error so far */
  stderr(): string;
  /** resolves with the exit code */
  exited: Promise<number>;
}

/** What a finished CLI run gave: its exit code and its two outputs. */
export interface CliRun {
  code: number | null;
  out: string;
  err: string;
}

/**
 * Runs `textai ARGS` (the CLI) to completion as a user's shell would: the test's own settings
 * (every `TEXTAI_*` variable, `PORT`, `HOST`) are left out, then `env` is added; stdin is closed.
 */
export function runCli(args: string[], env: Record<string, string> = {}, stdin?: string): CliRun {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !k.startsWith("TEXTAI_") && k !== "PORT" && k !== "HOST") base[k] = v;
  const r = Bun.spawnSync([process.execPath, CLI, ...args], {
    env: { ...base, ...env },
    cwd: ROOT,
    stdin: stdin === undefined ? "ignore" : Buffer.from(stdin),
  });
  return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() };
}

/** Runs `textai` (the CLI) to completion with `env` and returns its standard output. */
export function cli(args: string[], env: Record<string, string>): string {
  const r = Bun.spawnSync(["bun", CLI, ...args], { env: { ...process.env, ...env }, cwd: ROOT });
  if (r.exitCode !== 0) throw new Error(`textai ${args.join(" ")} exited ${r.exitCode}: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

/** Starts `bun src/cli.ts serve` as its own process (port 0 unless env says otherwise) and waits until it listens. */
export async function spawnGateway(env: Record<string, string>, timeoutMs = 20_000): Promise<SpawnedGateway> {
  const proc = Bun.spawn(["bun", CLI, "serve"], {
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", TEXTAI_LOG_LEVEL: "warn", TEXTAI_DRAIN_GRACE_MS: "0", ...env },
    cwd: ROOT,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let err = "";
  void (async () => {
    for await (const chunk of proc.stderr) err += new TextDecoder().decode(chunk);
  })();
  const reader = proc.stdout.getReader();
  const timer = setTimeout(() => proc.kill(9), timeoutMs);
  let out = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    out += new TextDecoder().decode(value);
    const m = /listening on (http:\/\/\S+)/.exec(out);
    if (m) {
      clearTimeout(timer);
      // keep draining stdout so the child never blocks on a full pipe
      void (async () => {
        for (;;) if ((await reader.read()).done) return;
      })();
      return { url: m[1], proc, stderr: () => err, exited: proc.exited };
    }
  }
  clearTimeout(timer);
  throw new Error(`gateway did not start: ${out}\n${err}`);
}
