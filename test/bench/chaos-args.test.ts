import { describe, expect, test } from "bun:test";
import { join } from "node:path";

/** `bun run chaos`'s command line: --help and mistakes answer at once; no experiment is run here. */
const ROOT = join(import.meta.dir, "..", "..");

/** Runs bench/chaos.ts with `args`; killed (with anything it started) if it still runs after `limitMs`. */
async function runChaos(args: string[], limitMs = 10_000) {
  const child = Bun.spawn(["bun", join(ROOT, "bench", "chaos.ts"), ...args, "--no-write"], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
    detached: true,
  });
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      child.kill("SIGKILL");
    }
  }, limitMs);
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  clearTimeout(timer);
  return { stdout, stderr, code, killed, ran: /PASS|FAIL|experiments passed/.test(stdout) };
}

describe("bench/chaos.ts on the command line", () => {
  test("--help prints the options and the experiments' names, exits 0, runs nothing", async () => {
    const r = await runChaos(["--help"]);
    expect({ code: r.code, killed: r.killed, ran: r.ran }).toEqual({ code: 0, killed: false, ran: false });
    for (const word of ["--only", "--no-write", "--help", "drain", "kill9"]) expect(r.stdout).toContain(word);
  });

  test("an unknown option or experiment is refused with the usage, exit 2, nothing run", async () => {
    for (const args of [["--bogus"], ["--only", "drain,nope"], ["--only"]]) {
      const r = await runChaos(args);
      expect({ args, code: r.code, killed: r.killed, ran: r.ran, usage: r.stderr.includes("Usage: bun run chaos") }).toEqual({
        args,
        code: 2,
        killed: false,
        ran: false,
        usage: true,
      });
    }
    expect((await runChaos(["--only", "drain,nope"])).stderr).toContain("unknown experiment nope");
  });
});
