/**
 * Prints the README "Benchmarks" section from a results file (default: the newest in bench/results).
 *
 *   bun bench/readme.ts [bench/results/<date>.json]
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type Footprint, footprintRows } from "./lib/footprint";
import { ROOT } from "./lib/proc";

interface P {
  connections: number;
  rps: number;
  p50: number;
  p99: number;
  cpuUsPerReq?: number;
  ok: boolean;
}
interface S {
  id: string;
  title: string;
  endpoint?: string;
  status: string;
  reason?: string;
  points: P[];
  peakRssMb?: number;
}
interface Report {
  date: string;
  machine: { nproc: number; cpu: string; bun: string; node: string; portkey: string; autocannon: string; pinning: string };
  settings: { duration_s: number; warmup_s: number; repeats: number; connections: number[] };
  scenarios: S[];
  footprint?: Footprint;
  targets: { name: string; goal: string; measured: string; met: boolean | null; detail: string }[];
  wall_seconds: number;
}

const dir = join(ROOT, "bench", "results");
const file =
  process.argv[2] ??
  join(
    dir,
    readdirSync(dir)
      .filter((f) => /^\d{4}-\d{2}-\d{2}\.json$/.test(f))
      .sort()
      .pop() ?? "",
  );
const r = JSON.parse(readFileSync(file, "utf8")) as Report;
const by = (id: string) => r.scenarios.find((s) => s.id === id);
const at = (s: S | undefined, c: number) => s?.points.find((p) => p.connections === c && p.ok);
const peak = (s: S | undefined) => (s?.status === "ok" ? [...s.points].sort((a, b) => b.rps - a.rps)[0] : undefined);
const n0 = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? "–" : Math.round(x).toLocaleString("en-US"));
const n2 = (x: number | undefined, d = 2) => (x === undefined || !Number.isFinite(x) ? "–" : x.toFixed(d));
const mid = r.settings.connections[Math.floor(r.settings.connections.length / 2)] ?? 32;

const lines: string[] = [];
lines.push("## Benchmarks", "");
lines.push(
  "`bun run bench` measures the gateway against the OpenAI-compatible upstream simulator (`test/helpers/upstream.ts`, fastest mode, loopback) " +
    "and reports ratios measured in the same run: through the gateway vs. straight to the simulator, and vs. " +
    `[Portkey's gateway](https://www.npmjs.com/package/@portkey-ai/gateway) ${r.machine.portkey} (npm, on Node ${r.machine.node}) pointed at the same simulator as a custom host. ` +
    `Load comes from autocannon ${r.machine.autocannon} in a separate process; ${r.machine.pinning}. ` +
    `Each point: ${r.settings.warmup_s} s warm-up, then ${r.settings.duration_s} s, ${r.settings.repeats} repeats, median. ` +
    "Each gateway scenario runs a fresh gateway process on a fresh SQLite file with a CLI-created key of a plan with very high limits. " +
    "A point counts only if every answer had the expected status, with no errors or timeouts, and the simulator saw one call per uncached request (none for cache hits, offline calls and rejections). " +
    "`bun run bench:soak` runs 10,000 keys and varied bodies for 5 minutes (60 s warm-up) and checks that the cache, the token-bucket map, the WAL, the live heap and RSS stay bounded; then grammar-fix calls load the grammar engine and the gateway idles, and RSS must not grow.",
  "",
);
lines.push(
  `Latest run: ${r.date}, ${r.machine.nproc} CPUs (\`nproc\`), ${r.machine.cpu} (/proc/cpuinfo), Bun ${r.machine.bun}; ` +
    `raw figures in [bench/results/${r.date}.json](bench/results/${r.date}.json), chart: [bench/results/${r.date}.svg](bench/results/${r.date}.svg). ` +
    "Shared, noisy machine: compare ratios within a run, not absolute figures across runs.",
  "",
);
const cs = r.settings.connections;
lines.push(
  `| scenario | endpoint | ${cs.map((c) => `req/s @${c}`).join(" | ")} | p50 / p99 ms @${mid} | added p50 @1 ms | peak vs baseline | peak vs Portkey | gateway CPU µs/req @${mid} | peak RSS MB |`,
);
lines.push(`|---|---|${cs.map(() => "--:").join("|")}|--:|--:|--:|--:|--:|--:|`);
const base = by("baseline");
const pk = by("portkey");
for (const s of r.scenarios) {
  if (s.status !== "ok") {
    lines.push(
      `| ${s.title} | ${s.endpoint ?? "–"} | ${s.status}: ${(s.reason ?? "").replaceAll("|", "/")} |${cs.map(() => "").join(" |")} | | | | | |`,
    );
    continue;
  }
  const m = at(s, mid);
  const one = at(s, 1);
  const b1 = at(base, 1);
  const pp = peak(s);
  lines.push(
    `| ${s.title} | ${s.endpoint ?? ""} | ${cs.map((c) => n0(at(s, c)?.rps)).join(" | ")} | ${n2(m?.p50)} / ${n2(m?.p99)} | ${s.id === "baseline" ? "–" : n2(one && b1 ? one.p50 - b1.p50 : undefined, 3)} | ${n2(pp && peak(base) ? pp.rps / (peak(base) as P).rps : undefined)}x | ${n2(pp && peak(pk) ? pp.rps / (peak(pk) as P).rps : undefined)}x | ${s.id === "baseline" ? "–" : n0(m?.cpuUsPerReq)} | ${n0(s.peakRssMb)} |`,
  );
}
if (r.footprint) {
  lines.push("", "Footprint (same run; `bun run bench --only startup,memory` measures just this):", "");
  lines.push("| measure | figure |", "|---|--:|");
  for (const [what, figure] of footprintRows(r.footprint)) lines.push(`| ${what.trim()} | ${figure} |`);
}
lines.push("", "Targets (per core: the gateway is pinned to one core):", "");
lines.push("| target | goal | measured | result |", "|---|---|---|---|");
for (const t of r.targets)
  lines.push(`| ${t.name} | ${t.goal} | ${t.measured} | ${t.met === false ? `**${t.detail}**` : t.detail} |`);
lines.push("");
console.log(lines.join("\n"));
