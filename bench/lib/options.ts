/** The command line of `bun run bench` (bench/run.ts): parsed strictly, so a typo never starts a long run. */

export interface BenchOptions {
  duration: number;
  warmup: number;
  /** seconds of load on each fresh process before its first point (its JIT compiles the hot path) */
  warmStart: number;
  /**
   * at most this many seconds of more load after the warm start, until the JIT compiler's threads
   * of the process under test are quiet (Bun only: JavaScriptCore's "JITWorker"); 0: the warm start alone
   */
  jitSettle: number;
  repeats: number;
  connections: number[];
  only: string[];
  write: boolean;
  starts: number;
  memoryLoad: number;
  /** a commit whose gateway runs each chosen gateway scenario too, right after this tree's */
  against?: string;
}

export type BenchCommand = { kind: "run"; options: BenchOptions } | { kind: "help" } | { kind: "error"; message: string };

export const BENCH_DEFAULTS: BenchOptions = {
  duration: 3,
  warmup: 1,
  warmStart: 8,
  jitSettle: 40,
  repeats: 3,
  connections: [1, 32, 128],
  only: [],
  write: true,
  starts: 10,
  memoryLoad: 60,
};

type Kind = "seconds" | "count" | "list" | "ref";
const VALUED: Record<string, { key: keyof BenchOptions; kind: Kind }> = {
  duration: { key: "duration", kind: "seconds" },
  warmup: { key: "warmup", kind: "seconds" },
  "warm-start": { key: "warmStart", kind: "seconds" },
  "jit-settle": { key: "jitSettle", kind: "seconds" },
  repeats: { key: "repeats", kind: "count" },
  connections: { key: "connections", kind: "list" },
  only: { key: "only", kind: "list" },
  starts: { key: "starts", kind: "count" },
  "memory-load": { key: "memoryLoad", kind: "seconds" },
  against: { key: "against", kind: "ref" },
};

export function benchHelp(ids: readonly string[]): string {
  const d = BENCH_DEFAULTS;
  return `Usage: bun run bench [options]   (bun bench/run.ts [options])

Measures the gateway against the upstream simulator and writes bench/results/<date>.json and .svg.

Options:
  --duration S         seconds measured per point (default ${d.duration})
  --warmup S           seconds of warm-up before each measured run (default ${d.warmup})
  --warm-start S       seconds of load on each freshly started process (gateway, forwarder, Portkey,
                       simulator alone) before its first point, at the most connections (default ${d.warmStart})
  --jit-settle S       then, on a Bun process, at most S more seconds of that load, in 2 s slices, until
                       a slice in which its JIT compiler threads used under 1 % of a core (default ${d.jitSettle};
                       0: the warm start alone). JavaScriptCore compiles a function's top tier only after
                       thousands of calls: a path that runs at half the rate gets there later.
  --repeats N          measured runs per point, the median is reported (default ${d.repeats}, at least 1)
  --connections LIST   concurrent connections, comma-separated (default ${d.connections.join(",")})
  --only LIST          run only these, comma-separated (baseline always runs with throughput scenarios):
                       ${ids.join(", ")}
  --starts N           gateway starts timed for the start-up figure (default ${d.starts})
  --memory-load S      seconds of full-path load before the loaded memory figure (default ${d.memoryLoad})
  --against REF        also run each single-node gateway scenario on the gateway of commit REF (a git
                       worktree beside this one), right after this tree's, and report "no slower than REF"
  --no-write           print the tables, write nothing to bench/results
  -h, --help           print this and exit
`;
}

/**
 * `argv` without the runtime and script (process.argv.slice(2)); `ids` are the scenario and
 * footprint names `--only` accepts. Values may follow as the next word or after `=`.
 */
export function parseBenchArgs(argv: readonly string[], ids: readonly string[]): BenchCommand {
  const options: BenchOptions = { ...BENCH_DEFAULTS, connections: [...BENCH_DEFAULTS.connections], only: [] };
  const error = (message: string): BenchCommand => ({ kind: "error", message });
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "-h" || arg === "--help") return { kind: "help" };
    if (arg === "--no-write") {
      options.write = false;
      continue;
    }
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    const spec = m ? VALUED[m[1] as string] : undefined;
    if (!m || !spec) return error(`unknown option "${arg}"`);
    const raw = m[2] ?? argv[++i];
    if (raw === undefined || raw === "") return error(`--${m[1]} needs a value`);
    const parsed = parseValue(spec.kind, raw);
    if (parsed === null) return error(`--${m[1]} ${raw}: ${WANTS[spec.kind]}`);
    if (spec.key === "only") {
      const names = raw.split(",").filter((s) => s !== "");
      const bad = names.filter((n) => !ids.includes(n));
      if (bad.length || !names.length) return error(`--only ${raw}: unknown name ${bad.join(", ") || '""'}`);
      options.only = names;
    } else if (spec.key === "connections") {
      const list = raw.split(",").map(Number);
      if (!list.every((n) => Number.isInteger(n) && n >= 1))
        return error(`--connections ${raw}: expected whole numbers, 1 or more, comma-separated`);
      options.connections = list;
    } else if (spec.key === "against") options.against = raw;
    else if (spec.key === "duration" && parsed === 0) return error("--duration 0: expected more than 0 seconds");
    else (options as unknown as Record<string, number>)[spec.key] = parsed as number;
  }
  return { kind: "run", options };
}

const WANTS: Record<Kind, string> = {
  seconds: "expected a number of seconds, 0 or more",
  count: "expected a whole number, 1 or more",
  list: "expected a comma-separated list",
  ref: "expected a commit (a hash, a branch or a tag)",
};

function parseValue(kind: Kind, raw: string): number | string | null {
  if (kind === "list") return raw;
  if (kind === "ref") return /^[\w./^~-]+$/.test(raw) ? raw : null;
  if (!/^\d+(\.\d+)?$/.test(raw)) return null;
  const n = Number(raw);
  if (kind === "count") return Number.isInteger(n) && n >= 1 ? n : null;
  return n;
}
