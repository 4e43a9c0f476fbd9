import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { BENCH_DEFAULTS, parseBenchArgs } from "../../bench/lib/options";
import { notMeasuredReason } from "../../bench/lib/summary";

/** `bun run bench`'s command line: --help and mistakes answer at once; no benchmark is run here. */
const ROOT = join(import.meta.dir, "..", "..");
const IDS = ["baseline", "compat", "portkey", "startup", "memory"];

/**
 * Runs bench/run.ts with `args`. Should it start the benchmark (its "N scenarios x ..." line) or
 * still run after `limitMs`, its process group (simulator and gateways included) is killed.
 */
async function runBench(args: string[], limitMs = 15_000) {
  const child = Bun.spawn(["bun", join(ROOT, "bench", "run.ts"), ...args], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
    detached: true,
  });
  let killed = false;
  const kill = () => {
    if (killed) return;
    killed = true;
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      child.kill("SIGKILL");
    }
  };
  const timer = setTimeout(kill, limitMs);
  let stderr = "";
  const readErr = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) {
      stderr += decoder.decode(chunk, { stream: true });
      if (stderr.includes("scenarios x")) kill();
    }
  })();
  const [stdout, code] = await Promise.all([new Response(child.stdout).text(), child.exited, readErr]);
  clearTimeout(timer);
  return { stdout, stderr, code, killed };
}

describe("bench/run.ts on the command line", () => {
  test("--help prints the options and exits 0 without starting anything", async () => {
    const r = await runBench(["--help"]);
    expect({ killed: r.killed, code: r.code, started: r.stderr.includes("scenarios x") }).toEqual({
      killed: false,
      code: 0,
      started: false,
    });
    for (const option of [
      "--duration",
      "--warmup",
      "--warm-start",
      "--repeats",
      "--connections",
      "--only",
      "--no-write",
      "--help",
    ])
      expect(r.stdout).toContain(option);
  });

  test("an unknown option is refused with the help, exit 2, nothing started", async () => {
    const r = await runBench(["--repeat", "1"]);
    expect({ killed: r.killed, code: r.code, started: r.stderr.includes("scenarios x") }).toEqual({
      killed: false,
      code: 2,
      started: false,
    });
    expect(r.stderr).toContain('unknown option "--repeat"');
    expect(r.stderr).toContain("Usage: bun run bench");
  });
});

describe("parseBenchArgs", () => {
  const run = (...argv: string[]) => {
    const c = parseBenchArgs(argv, IDS);
    if (c.kind !== "run") throw new Error(`expected options, got ${JSON.stringify(c)}`);
    return c.options;
  };
  const refusal = (...argv: string[]) => {
    const c = parseBenchArgs(argv, IDS);
    return c.kind === "error" ? c.message : `not refused: ${JSON.stringify(c)}`;
  };

  test("no arguments: the defaults", () => {
    expect(run()).toEqual(BENCH_DEFAULTS);
  });

  test("--repeats 1 is 1 (not raised to 2); --repeats=5 works too", () => {
    expect(run("--repeats", "1").repeats).toBe(1);
    expect(run("--repeats=5").repeats).toBe(5);
  });

  test("a repeats count that is not a whole number of at least 1 is refused", () => {
    expect(refusal("--repeats", "0")).toContain("--repeats 0");
    expect(refusal("--repeats", "1.5")).toContain("whole number");
    expect(refusal("--repeats", "two")).toContain("whole number");
    expect(refusal("--repeats")).toBe("--repeats needs a value");
  });

  test("the other options", () => {
    expect(run("--duration", "0.5", "--warmup", "0", "--connections", "1,8", "--only", "compat,portkey", "--no-write")).toEqual({
      ...BENCH_DEFAULTS,
      duration: 0.5,
      warmup: 0,
      connections: [1, 8],
      only: ["compat", "portkey"],
      write: false,
    });
    expect(run("--against", "9c55518")).toEqual({ ...BENCH_DEFAULTS, against: "9c55518" });
    expect(refusal("--against", "x;rm")).toContain("expected a commit");
    expect(refusal("--only", "compat,bogus")).toContain("unknown name bogus");
    expect(refusal("--connections", "1,0")).toContain("--connections 1,0");
    expect(refusal("--duration", "0")).toContain("--duration 0");
    expect(refusal("extra")).toBe('unknown option "extra"');
    expect(parseBenchArgs(["--repeats", "1", "-h"], IDS).kind).toBe("help");
  });
});

describe("the summary's reason a target was not measured", () => {
  test("a scenario that was not run is named, never a '?'", () => {
    const results = [{ id: "compat", status: "ok" }];
    expect(notMeasuredReason(results, ["compat", "portkey"])).toBe("portkey not run");
  });

  test("failed and skipped scenarios with their reasons", () => {
    const results = [
      { id: "compat", status: "failed", reason: "timeouts" },
      { id: "portkey", status: "skipped", reason: "not installed" },
    ];
    expect(notMeasuredReason(results, ["compat", "portkey"])).toBe("compat failed (timeouts); portkey skipped (not installed)");
  });
});
