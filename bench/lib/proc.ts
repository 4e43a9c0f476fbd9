/** Process helpers for the benchmarks: CPU pinning, /proc readings, child processes, ports. */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { LoadResult, LoadSpec } from "../load";

export const ROOT = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");

const HAS_TASKSET = Bun.which("taskset") !== null;
export const pinning = HAS_TASKSET
  ? "gateway under test on CPU 0; load generator and simulator on CPU 1 (taskset)"
  : "not pinned: taskset is missing (install util-linux)";

/** Prefix for a command pinned to one CPU; empty when taskset is missing or the machine has one CPU. */
export function pin(cpu: number): string[] {
  return HAS_TASKSET && navigator.hardwareConcurrency > 1 ? ["taskset", "-c", String(cpu)] : [];
}

export const CLK_TCK = Number(Bun.spawnSync(["getconf", "CLK_TCK"]).stdout.toString().trim()) || 100;

/** user + system CPU time of a process so far, in milliseconds (all its threads). */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // after "pid (comm) ": state is field 3, utime field 14, stime field 15
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
}

/** CPU ms per thread of `pid` so far, by thread name (numbered names, "Heap Helper 3", summed) */
export function threadCpuMs(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${task}/stat`, "utf8");
    } catch {
      continue; // the thread ended
    }
    const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")).replace(/\s*\d+$/, "");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    out[name] = (out[name] ?? 0) + ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
  }
  return out;
}

/** CPU ms of JavaScriptCore's JIT compiler threads ("JITWorker") of `pid` so far; null: it has none (not Bun). */
export function jitCpuMs(pid: number): number | null {
  const threads = threadCpuMs(pid);
  return "JITWorker" in threads ? (threads.JITWorker as number) : null;
}

function statusKb(pid: number, name: string): number {
  const m = readFileSync(`/proc/${pid}/status`, "utf8").match(new RegExp(`^${name}:\\s+(\\d+) kB`, "m"));
  return m ? Number(m[1]) : Number.NaN;
}

/** peak resident set size, MiB */
export const peakRssMb = (pid: number) => statusKb(pid, "VmHWM") / 1024;
/** current resident set size, MiB */
export const rssMb = (pid: number) => statusKb(pid, "VmRSS") / 1024;

export function freePort(): number {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port as number;
  s.stop(true);
  return port;
}

export async function waitFor(url: string, ms = 15_000): Promise<void> {
  const until = Date.now() + ms;
  let last = "";
  while (Date.now() < until) {
    try {
      const r = await fetch(url);
      if (r.ok) return;
      last = `HTTP ${r.status}`;
    } catch (e) {
      last = (e as Error).message;
    }
    await Bun.sleep(100);
  }
  throw new Error(`${url} did not come up within ${ms} ms (${last})`);
}

export interface Child {
  pid: number;
  proc: Bun.Subprocess;
  stop(): Promise<void>;
}

export function spawnChild(cmd: string[], opts: { env?: Record<string, string>; log: string; cwd?: string }): Child {
  const proc = Bun.spawn(cmd, {
    cwd: opts.cwd ?? ROOT,
    env: { ...process.env, ...opts.env },
    stdout: Bun.file(opts.log),
    stderr: Bun.file(`${opts.log}.err`),
    stdin: "ignore",
  });
  return {
    pid: proc.pid,
    proc,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill("SIGTERM");
      const t = setTimeout(() => proc.kill("SIGKILL"), 5000);
      await proc.exited;
      clearTimeout(t);
    },
  };
}

/** Runs a command to completion and returns its stdout; throws with its stderr when it fails. */
export async function runCapture(cmd: string[], env: Record<string, string> = {}): Promise<string> {
  const proc = Bun.spawn(cmd, { cwd: ROOT, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`${cmd.join(" ")} exited ${code}: ${err.trim() || out.trim()}`);
  return out;
}

export const median = (xs: number[]): number => {
  const s = [...xs].filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

/** One load run of bench/load.ts in its own process pinned to CPU 1 (beside the simulator, away from the gateway). */
export async function loadPinned(spec: LoadSpec): Promise<LoadResult> {
  const proc = Bun.spawn([...pin(1), "bun", join(ROOT, "bench", "load.ts"), JSON.stringify(spec)], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`load generator exited ${code}: ${err.trim()}`);
  return JSON.parse(out.trim().split("\n").pop() as string) as LoadResult;
}

/**
 * Runs this script again pinned to `cpu` (a driver beside the simulator, away from the gateway) and
 * exits with its code; returns at once in the pinned run, or when there is nothing to pin to.
 */
export async function runPinnedTo(cpu: number): Promise<void> {
  if (process.env.TEXTAI_BENCH_PINNED === "1" || pin(cpu).length === 0) return;
  const child = Bun.spawn([...pin(cpu), process.execPath, ...process.argv.slice(1)], {
    env: { ...process.env, TEXTAI_BENCH_PINNED: "1" },
    stdout: "inherit",
    stderr: "inherit",
  });
  process.exit(await child.exited);
}
