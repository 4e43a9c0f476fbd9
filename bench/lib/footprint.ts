/**
 * The gateway's footprint, measured by `bun run bench` beside the throughput table (`--only
 * startup,memory` runs just these): the size of the compiled binary, the time from exec to the
 * first `/ready` 200 (median of 10 starts, compiled binary and `bun src/cli.ts`), and resident
 * memory idle (after start-up, no request), after a full-path load, and once the offline engine's
 * large parts have loaded (each part's own share as /metrics reports it). MB are MiB (2^20 bytes).
 */
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LoadResult, LoadSpec } from "../load";
import { benchConfig, startGateway } from "./gateway";
import { freePort, median, peakRssMb, pin, ROOT, rssMb, runCapture } from "./proc";

export const FOOTPRINT_IDS = ["startup", "memory"] as const;

export interface Footprint {
  binary?: { path: string; bytes: number; mb: number; source_map_beside: boolean; build_s: number; build: string };
  startup?: {
    starts: number;
    binary_ms: number[];
    binary_median_ms: number;
    source_ms: number[];
    source_median_ms: number;
    /** what each start ran on: an existing database (migrations applied), the bench config */
    setup: string;
  };
  memory?: {
    idle_rss_mb: number;
    full_path_load_s: number;
    full_path_requests: number;
    full_path_statuses: Record<string, number>;
    after_load_rss_mb: number;
    after_load_peak_rss_mb: number;
    engines_rss_mb: number;
    engines: { engine: string; rss_mb: number; load_ms: number }[];
    peak_rss_mb: number;
  };
  problems: string[];
}

const mb = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;
const BINARY = join(ROOT, "dist", "textai");

async function build(): Promise<NonNullable<Footprint["binary"]>> {
  const t0 = performance.now();
  await runCapture(["bun", "run", "build"]);
  const bytes = statSync(BINARY).size;
  return {
    path: "dist/textai",
    bytes,
    mb: mb(bytes),
    source_map_beside: existsSync(`${BINARY}.map`) || existsSync(join(ROOT, "dist", "grammar-worker.js.map")),
    build_s: Math.round((performance.now() - t0) / 100) / 10,
    build: "bun run build (bun build --compile --minify --bytecode, no source map)",
  };
}

/** ms from exec to the first /ready 200; the gateway on CPU 0, this poller elsewhere */
async function timeStart(cmd: string[], env: Record<string, string>): Promise<number> {
  const port = freePort();
  const t0 = performance.now();
  const proc = Bun.spawn([...pin(0), ...cmd, "serve", "--port", String(port)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdout: "ignore",
    stderr: "ignore",
  });
  try {
    while (performance.now() - t0 < 20_000) {
      try {
        if ((await fetch(`http://127.0.0.1:${port}/ready`)).status === 200) return performance.now() - t0;
      } catch {
        // not listening yet
      }
      if (proc.exitCode !== null) throw new Error(`${cmd.join(" ")} exited ${proc.exitCode} before /ready`);
      await Bun.sleep(2);
    }
    throw new Error(`${cmd.join(" ")}: /ready not 200 within 20 s`);
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
  }
}

async function startup(simUrl: string, starts: number): Promise<NonNullable<Footprint["startup"]>> {
  const dir = mkdtempSync(join(tmpdir(), "textai-startup-"));
  try {
    writeFileSync(join(dir, "config.toml"), benchConfig(simUrl));
    const env = {
      TEXTAI_DB: join(dir, "start.db"),
      TEXTAI_CONFIG: join(dir, "config.toml"),
      TEXTAI_LOG_LEVEL: "warn",
      TEXTAI_DRAIN_GRACE_MS: "0",
    };
    // the database exists, as on every start but the first
    await runCapture([BINARY, "keys", "create", "--label", "startup", "--json"], env);
    const binary: number[] = [];
    const source: number[] = [];
    for (let i = 0; i < starts; i++) {
      binary.push(await timeStart([BINARY], env));
      source.push(await timeStart(["bun", "src/cli.ts"], env));
    }
    const round = (xs: number[]) => xs.map((x) => Math.round(x));
    return {
      starts,
      binary_ms: round(binary),
      binary_median_ms: Math.round(median(binary)),
      source_ms: round(source),
      source_median_ms: Math.round(median(source)),
      setup: "existing database, bench config (simulator provider), gateway pinned to CPU 0, /ready polled every 2 ms",
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function metricSeries(body: string, name: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of body.matchAll(new RegExp(`^${name}(?:\\{([^}]*)\\})? (\\S+)$`, "gm"))) out.set(m[1] ?? "", Number(m[2]));
  return out;
}

async function memory(
  simUrl: string,
  loadSeconds: number,
  load: (spec: LoadSpec) => Promise<LoadResult>,
  chatBody: string,
): Promise<{ memory: Footprint["memory"]; problems: string[] }> {
  const problems: string[] = [];
  const gw = await startGateway({ simUrl, binary: BINARY });
  try {
    await Bun.sleep(2000);
    const idle = rssMb(gw.pid);
    const headers = { "content-type": "application/json", "x-api-key": gw.keys.bench as string, "cache-control": "no-cache" };
    const r = await load({
      url: `${gw.url}/v1/chat/completions`,
      method: "POST",
      headers,
      body: chatBody,
      connections: 32,
      duration: loadSeconds,
    });
    const wrong = Object.entries(r.statuses).filter(([c]) => c !== "200");
    if (wrong.length || r.errors || r.timeouts)
      problems.push(`full-path load: statuses ${JSON.stringify(r.statuses)}, ${r.errors} errors, ${r.timeouts} timeouts`);
    const afterLoad = rssMb(gw.pid);
    const afterLoadPeak = peakRssMb(gw.pid);
    // every large part of the offline engine: grammar (Harper), then language, dates and lexicon
    const calls = [
      ["/api/v1/ai/grammar-fix", { text: "Their going too the store tomorow, and she dont know." }],
      [
        "/api/v1/ai/email-analyze",
        { email_content: "Hi, my order #4411 from 3 March never arrived. I am very upset. Please refund me." },
      ],
    ] as const;
    for (const [path, body] of calls) {
      const res = await fetch(gw.url + path, { method: "POST", headers, body: JSON.stringify(body) });
      const text = await res.text();
      if (res.status !== 200) problems.push(`${path} answered ${res.status}: ${text.slice(0, 200)}`);
    }
    await Bun.sleep(2000);
    const metrics = await (await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${gw.adminToken}` } })).text();
    const rss = metricSeries(metrics, "textai_engine_memory_bytes");
    const secs = metricSeries(metrics, "textai_engine_load_seconds");
    const engines = [...rss].map(([labels, bytes]) => ({
      engine: labels.match(/engine="([^"]+)"/)?.[1] ?? labels,
      rss_mb: mb(bytes),
      load_ms: Math.round((secs.get(labels) ?? Number.NaN) * 1000),
    }));
    return {
      problems,
      memory: {
        idle_rss_mb: Math.round(idle * 10) / 10,
        full_path_load_s: loadSeconds,
        full_path_requests: r.requests,
        full_path_statuses: r.statuses,
        after_load_rss_mb: Math.round(afterLoad * 10) / 10,
        after_load_peak_rss_mb: Math.round(afterLoadPeak * 10) / 10,
        engines_rss_mb: Math.round(rssMb(gw.pid) * 10) / 10,
        engines,
        peak_rss_mb: Math.round(peakRssMb(gw.pid) * 10) / 10,
      },
    };
  } finally {
    await gw.stop();
  }
}

export async function measureFootprint(opts: {
  ids: readonly string[];
  simUrl: string;
  starts: number;
  loadSeconds: number;
  load: (spec: LoadSpec) => Promise<LoadResult>;
  chatBody: string;
  log: (line: string) => void;
}): Promise<Footprint> {
  const out: Footprint = { problems: [] };
  try {
    opts.log("footprint: building dist/textai");
    out.binary = await build();
    opts.log(`  binary ${out.binary.mb} MB in ${out.binary.build_s} s`);
    if (opts.ids.includes("startup")) {
      opts.log(`footprint: ${opts.starts} starts each of dist/textai and bun src/cli.ts, exec to /ready 200`);
      out.startup = await startup(opts.simUrl, opts.starts);
      opts.log(`  median ${out.startup.binary_median_ms} ms (binary), ${out.startup.source_median_ms} ms (source)`);
    }
    if (opts.ids.includes("memory")) {
      opts.log(`footprint: RSS idle, after ${opts.loadSeconds} s of full-path load, and with every engine part loaded`);
      const m = await memory(opts.simUrl, opts.loadSeconds, opts.load, opts.chatBody);
      out.memory = m.memory;
      out.problems.push(...m.problems);
      opts.log(
        `  idle ${m.memory?.idle_rss_mb} MB, after load ${m.memory?.after_load_rss_mb} MB (peak ${m.memory?.after_load_peak_rss_mb}), engines loaded ${m.memory?.engines_rss_mb} MB`,
      );
    }
  } catch (e) {
    out.problems.push((e as Error).message);
  }
  return out;
}

export interface FootprintTarget {
  name: string;
  goal: string;
  measured: string;
  met: boolean | null;
  detail: string;
}

export function footprintTargets(f: Footprint | undefined): FootprintTarget[] {
  if (!f) return [];
  const out: FootprintTarget[] = [];
  const le = (name: string, goal: number, unit: string, v: number | undefined) => {
    if (v === undefined || !Number.isFinite(v)) return;
    out.push({
      name,
      goal: `<= ${goal} ${unit}`,
      measured: `${v} ${unit}`,
      met: v <= goal,
      detail:
        v <= goal
          ? `met with ${Math.round((goal - v) * 10) / 10} ${unit} to spare`
          : `missed by ${Math.round((v - goal) * 10) / 10} ${unit}`,
    });
  };
  le("ready after exec, dist/textai (median of starts)", 300, "ms", f.startup?.binary_median_ms);
  le("RSS idle after start-up, no request", 80, "MB", f.memory?.idle_rss_mb);
  le(`RSS after ${f.memory?.full_path_load_s ?? "?"} s of full-path load`, 150, "MB", f.memory?.after_load_rss_mb);
  return out;
}

/** [measure, figure] rows, for the console table and the README */
export function footprintRows(f: Footprint): [string, string][] {
  const rows: [string, string][] = [];
  if (f.binary)
    rows.push([
      "binary size (dist/textai)",
      `${f.binary.mb} MB (${f.binary.bytes.toLocaleString("en-US")} bytes)${f.binary.source_map_beside ? " + source map" : ", no source map"}`,
    ]);
  if (f.startup) {
    rows.push([`ready after exec, dist/textai, median of ${f.startup.starts}`, `${f.startup.binary_median_ms} ms`]);
    rows.push([`ready after exec, bun src/cli.ts, median of ${f.startup.starts}`, `${f.startup.source_median_ms} ms`]);
  }
  if (f.memory) {
    const m = f.memory;
    rows.push(["RSS idle (after start-up, no request)", `${m.idle_rss_mb} MB`]);
    rows.push([
      `RSS after ${m.full_path_load_s} s of full-path load (peak)`,
      `${m.after_load_rss_mb} MB (${m.after_load_peak_rss_mb} MB)`,
    ]);
    rows.push(["RSS with every engine part loaded", `${m.engines_rss_mb} MB`]);
    for (const e of m.engines) rows.push([`  engine part ${e.engine}`, `+${e.rss_mb} MB, loaded in ${e.load_ms} ms`]);
  }
  for (const p of f.problems) rows.push(["problem", p]);
  return rows;
}

export function footprintTable(f: Footprint | undefined): string {
  if (!f) return "";
  const rows = footprintRows(f);
  const w = Math.max(...rows.map(([a]) => a.length));
  return rows.map(([a, b]) => `${a.padEnd(w)}  ${b}`).join("\n");
}
