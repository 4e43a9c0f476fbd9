/**
 * `bun run bench:soak`: a bounded soak of the gateway. 10,000 distinct keys and varied bodies for
 * five minutes, sampling the gateway's RSS, the SQLite WAL and, from /metrics, the answer cache and
 * the token-bucket map; the memory probe (bench/lib/memory-probe.ts, preloaded into the gateway)
 * reports the live JS heap after a full collection at the end of warm-up and at the end.
 *
 * Verdict: the cache stays within max_entries, the bucket map within keys x functions, the WAL
 * within 64 MB; after warm-up, RSS (median and 90th percentile of the first half vs the second
 * half of the measured period) stays within 10% and the live heap does not grow by more than 10%
 * (and HEAP_SLACK_MB); every request is answered 200.
 *
 * Then an engine phase: grammar-fix calls load the largest part of the offline engine (Harper,
 * about 230 MB) for --engine-seconds, and the gateway idles for --engine-idle seconds; it passes
 * when every call is answered 200, /metrics reports the part's memory, and RSS does not grow while
 * idle (last sample within 10% of the first).
 *
 *   bun bench/soak.ts [--seconds 300] [--warmup 60] [--keys 10000] [--connections 32] [--sample 5]
 *                     [--cache-max 2000] [--only fn,fn] [--probe] [--gc] [--smol] [--out FILE | --no-out]
 *                     [--engine-seconds 10] [--engine-idle 30]
 *
 * --only runs some endpoints only (to bisect); --probe adds a heap sample every --sample seconds
 * (--gc: each after a full collection); --smol runs the gateway with bun --smol. The transcript
 * goes to bench/results/<date>-soak.txt unless --out or --no-out say otherwise.
 */
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startGateway } from "./lib/gateway";
import type { ProbeSample } from "./lib/memory-probe";
import { type Child, freePort, peakRssMb, pin, ROOT, rssMb, spawnChild, waitFor } from "./lib/proc";
import type { LoadResult, LoadSpec } from "./load";

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
function textFlag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const has = (name: string) => process.argv.includes(`--${name}`);
const SECONDS = flag("seconds", 300);
/**
 * Long enough for the cache to fill, the bucket map to pass a sweep and the JIT to settle; it ends
 * with a full collection, because the first one JavaScriptCore schedules itself can come minutes
 * into a run (heap twice its live size until then), which is start-up, not steady state.
 */
const WARMUP_S = flag("warmup", 60);
const KEYS = flag("keys", 10_000);
const CONNECTIONS = flag("connections", 32);
const SAMPLE_S = flag("sample", 5);
const CACHE_MAX = flag("cache-max", 2000);
/** only these endpoints (comma-separated function names), to bisect */
const ONLY = textFlag("only")?.split(",");
const PROBE_EVERY = has("probe") || has("gc");
const PROBE_GC = has("gc");
const SMOL = has("smol");
const ENGINE_S = flag("engine-seconds", 10);
const ENGINE_IDLE_S = flag("engine-idle", 30);
/** distinct texts per endpoint: several times the cache size, so the cache fills and evicts */
const DISTINCT = CACHE_MAX * 5;
const RSS_BAND = 0.1;
/**
 * A leak makes the live heap grow; it may shrink after warm-up. Without the grammar engine's memory
 * the live heap is about 20 MB, and the token-bucket map alone swings by a few MB between sweeps,
 * so growth counts only past this many MB as well as past RSS_BAND.
 */
const HEAP_SLACK_MB = 8;
/** SQLite checkpoints the WAL at about 4 MB; a WAL past this is not being checkpointed */
const WAL_MAX_MB = 64;
const OUT = has("no-out")
  ? undefined
  : (textFlag("out") ?? join(ROOT, "bench", "results", `${new Date().toISOString().slice(0, 10)}-soak.txt`));
const REV = (() => {
  const r = Bun.spawnSync(["git", "rev-parse", "--short", "HEAD"], { cwd: ROOT });
  const dirty = Bun.spawnSync(["git", "status", "--porcelain", "--", "src"], { cwd: ROOT }).stdout.toString().trim();
  return r.exitCode === 0
    ? `commit ${r.stdout.toString().trim()}${dirty ? " (src/ has uncommitted changes)" : ""}, Bun ${Bun.version}`
    : `Bun ${Bun.version}`;
})();

const transcript: string[] = [];
/** a line of the report: stdout and the results file */
function say(line: string): void {
  console.log(line);
  transcript.push(line);
}
function note(line: string): void {
  process.stderr.write(`${line}\n`);
  transcript.push(line);
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((x, y) => x - y);
  if (s.length === 0) return Number.NaN;
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
}

/** least-squares slope of [seconds, MB] points, in MB per minute */
function slopePerMinute(points: [number, number][]): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? Number.NaN : (num / den) * 60;
}

const WORDS =
  "delivery late support friendly quick refund order parcel broken great terrible love hate price quality service staff manager app update crash login password invoice billing account shipping address color size fit return exchange warranty battery screen".split(
    " ",
  );

function text(i: number, words: number): string {
  // deterministic, distinct per i
  let x = (i + 1) * 2654435761;
  const out: string[] = [`#${i}`];
  for (let w = 0; w < words; w++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out.push(WORDS[x % WORDS.length] as string);
  }
  return out.join(" ");
}

interface Sample {
  t: number;
  rss_mb: number;
  cache_entries: number;
  ratelimit_buckets: number;
  /** the SQLite write-ahead log, MiB: it must be checkpointed, not grow for ever */
  wal_mb: number;
}

function metric(body: string, name: string): number {
  const m = body.match(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.eE+-]+)$`, "m"));
  return m ? Number(m[1]) : Number.NaN;
}

/**
 * The engine phase: grammar-fix calls (2 at a time, varied texts) make the gateway load Harper, then
 * no request at all for ENGINE_IDLE_S while RSS is sampled.
 */
async function enginePhase(
  url: string,
  key: string,
  pid: number,
  admin: string,
): Promise<{ summary: string; problems: string[] }> {
  const problems: string[] = [];
  const before = rssMb(pid);
  say(`\nengine phase: grammar-fix for ${ENGINE_S} s (loads the grammar engine), then ${ENGINE_IDLE_S} s idle`);
  const statuses: Record<string, number> = {};
  const until = Date.now() + ENGINE_S * 1000;
  let i = 0;
  const worker = async () => {
    while (Date.now() < until) {
      const r = await fetch(`${url}/api/v1/ai/grammar-fix`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key, "cache-control": "no-cache" },
        body: JSON.stringify({ text: `Their going too the store tomorow, ${text(i++, 8)}.` }),
      });
      await r.text();
      statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    }
  };
  await Promise.all([worker(), worker()]);
  const calls = Object.values(statuses).reduce((a, n) => a + n, 0);
  if (Object.keys(statuses).some((c) => c !== "200"))
    problems.push(`engine phase: grammar-fix answered ${JSON.stringify(statuses)}`);
  const m = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${admin}` } })).text();
  const engineMb = Number(m.match(/^textai_engine_memory_bytes\{engine="grammar"\} (\S+)$/m)?.[1]) / 1048576;
  if (!(engineMb > 0)) problems.push("engine phase: /metrics reports no memory for the grammar engine");
  const idle: [number, number][] = [];
  const t0 = Date.now();
  say("   t(s)  RSS MB  (idle, engine loaded)");
  while (Date.now() - t0 < ENGINE_IDLE_S * 1000) {
    const t = Math.round((Date.now() - t0) / 1000);
    idle.push([t, rssMb(pid)]);
    say(`${String(t).padStart(7)}  ${(idle.at(-1)?.[1] ?? 0).toFixed(1).padStart(6)}`);
    await Bun.sleep(SAMPLE_S * 1000);
  }
  const first = idle[0]?.[1] ?? Number.NaN;
  const last = idle.at(-1)?.[1] ?? Number.NaN;
  if (idle.length < 2) problems.push("engine phase: too few idle samples (raise --engine-idle)");
  else if (last > first * (1 + RSS_BAND))
    problems.push(`engine phase: RSS grew from ${first.toFixed(1)} to ${last.toFixed(1)} MB while idle`);
  return {
    problems,
    summary: `engine phase: ${calls} grammar-fix calls ${JSON.stringify(statuses)}; RSS ${before.toFixed(1)} MB before, ${first.toFixed(1)} -> ${last.toFixed(1)} MB over ${ENGINE_IDLE_S} s idle; grammar engine ${engineMb.toFixed(1)} MB by /metrics`,
  };
}

async function main(): Promise<number> {
  const simPort = freePort();
  const statsPort = freePort();
  const sim: Child = spawnChild(
    [...pin(1), "bun", join(ROOT, "bench", "sim.ts"), "--port", String(simPort), "--stats-port", String(statsPort)],
    {
      log: join(tmpdir(), "textai-soak-sim.log"),
    },
  );
  const admin = `bench-admin-${crypto.randomUUID()}`;
  let gw: Awaited<ReturnType<typeof startGateway>> | undefined;
  try {
    await waitFor(`http://127.0.0.1:${statsPort}/stats`);
    const probeFile = join(tmpdir(), `textai-soak-probe-${process.pid}.jsonl`);
    rmSync(probeFile, { force: true });
    gw = await startGateway({
      simUrl: `http://127.0.0.1:${simPort}`,
      extraToml: `\n[cache]\nmax_entries = ${CACHE_MAX}\n`,
      env: {
        TEXTAI_ADMIN_TOKEN: admin,
        TEXTAI_DEBUG_MEMORY: probeFile,
        TEXTAI_DEBUG_MEMORY_MS: PROBE_EVERY ? String(SAMPLE_S * 1000) : "0",
        TEXTAI_DEBUG_MEMORY_GC: PROBE_GC ? "1" : "0",
      },
      keyPlans: ["bench"],
      bunFlags: ["--preload", join(ROOT, "bench", "lib", "memory-probe.ts"), ...(SMOL ? ["--smol"] : [])],
    });
    const url = gw.url;
    const mainKey = gw.keys.bench as string;

    // which endpoints exist (functions are still being added)
    const candidates = [
      { fn: "sentiment-analysis", path: "/api/v1/ai/sentiment-analysis", body: (i: number) => ({ text: text(i, 12) }) },
      { fn: "comment-analyze", path: "/api/v1/ai/comment-analyze", body: (i: number) => ({ comment: text(i, 12) }) },
      {
        fn: "pii-redaction",
        path: "/api/v1/ai/pii-redaction",
        body: (i: number) => ({ text: `${text(i, 20)} call 555-01${String(i % 100).padStart(2, "0")}` }),
      },
      {
        fn: "chat-completions",
        path: "/v1/chat/completions",
        body: (i: number) => ({ model: "sim-model", messages: [{ role: "user", content: text(i, 10) }] }),
      },
    ];
    const used: typeof candidates = [];
    for (const c of candidates) {
      if (ONLY && !ONLY.includes(c.fn)) continue;
      const r = await fetch(url + c.path, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": mainKey },
        body: JSON.stringify(c.body(-1)),
      });
      await r.text();
      if (r.status === 200) used.push(c);
      else if (r.status === 404 && c.fn === "comment-analyze" && used.some((u) => u.fn === "sentiment-analysis")) continue;
      else note(`soak: ${c.fn} not used (probe answered ${r.status})`);
    }
    if (used.length === 0) throw new Error("no endpoint answered 200");

    // 10,000 keys through the admin API
    process.stderr.write(`soak: creating ${KEYS} keys...\n`);
    const keys: string[] = [];
    const t0 = Date.now();
    for (let i = 0; i < KEYS; i += 50) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(50, KEYS - i) }, async (_, j) => {
          const r = await fetch(`${url}/admin/v1/keys`, {
            method: "POST",
            headers: { "content-type": "application/json", authorization: `Bearer ${admin}` },
            body: JSON.stringify({ label: `soak-${i + j}`, plan: "bench", credits: 1_000_000 }),
          });
          const j2 = (await r.json()) as { data?: { key?: string; result?: { key?: string } } };
          const key = j2.data?.result?.key ?? j2.data?.key;
          if (r.status !== 201 || !key) throw new Error(`admin key create answered ${r.status}`);
          return key;
        }),
      );
      keys.push(...batch);
    }
    note(`soak: ${keys.length} keys in ${((Date.now() - t0) / 1000).toFixed(1)}s; endpoints ${used.map((u) => u.fn).join(", ")}`);

    const mix = used.flatMap((c) =>
      Array.from({ length: DISTINCT }, (_, i) => ({ path: c.path, body: JSON.stringify(c.body(i)) })),
    );
    const spec: LoadSpec = {
      url: url + (used[0] as { path: string }).path,
      method: "POST",
      headers: { "content-type": "application/json" },
      connections: CONNECTIONS,
      duration: SECONDS,
      mix,
      keys,
    };
    const specFile = join(gw.dir, "soak-spec.json");
    writeFileSync(specFile, JSON.stringify(spec));

    const samples: Sample[] = [];
    const started = Date.now();
    const load = Bun.spawn([...pin(1), "bun", join(ROOT, "bench", "load.ts"), "--spec-file", specFile], {
      cwd: ROOT,
      stdout: "pipe",
      stderr: "pipe",
    });
    const outP = new Response(load.stdout).text();
    const errP = new Response(load.stderr).text();
    let running = true;
    void load.exited.then(() => (running = false));
    const pid = gw.pid;
    const walFile = join(gw.dir, "bench.db-wal");
    const walMb = () => (existsSync(walFile) ? statSync(walFile).size / 1048576 : 0);
    // A full collection inside the gateway (the probe's SIGUSR2) at the end of warm-up and near the
    // end of the run: the live heap at those two points is the leak check.
    const liveAt = [WARMUP_S, Math.max(WARMUP_S + SAMPLE_S, SECONDS - SAMPLE_S - 2)];
    const liveAsked: number[] = [];
    say(`warm-up ${WARMUP_S} s, then a full collection in the gateway; measured ${SECONDS - WARMUP_S} s`);
    say("   t(s)  RSS MB  cache entries  ratelimit buckets  WAL MB");
    while (running) {
      const m = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${admin}` } })).text();
      const s: Sample = {
        t: Math.round((Date.now() - started) / 1000),
        rss_mb: rssMb(pid),
        cache_entries: metric(m, "textai_cache_entries"),
        ratelimit_buckets: metric(m, "textai_ratelimit_buckets"),
        wal_mb: walMb(),
      };
      samples.push(s);
      say(
        `${String(s.t).padStart(7)}  ${s.rss_mb.toFixed(1).padStart(6)}  ${String(s.cache_entries).padStart(13)}  ${String(s.ratelimit_buckets).padStart(17)}  ${s.wal_mb.toFixed(1).padStart(6)}`,
      );
      for (let i = 0; i < SAMPLE_S * 10 && running; i++) {
        const now = (Date.now() - started) / 1000;
        const due = liveAt.find((at) => now >= at && !liveAsked.includes(at));
        if (due !== undefined) {
          liveAsked.push(due);
          process.kill(pid, "SIGUSR2");
        }
        await Bun.sleep(100);
      }
    }
    const code = await load.exited;
    if (code !== 0) throw new Error(`load generator exited ${code}: ${(await errP).trim()}`);
    const result = JSON.parse((await outP).trim().split("\n").pop() as string) as LoadResult;

    const engine = ENGINE_S > 0 ? await enginePhase(url, mainKey, pid, admin) : undefined;

    const probe = existsSync(probeFile)
      ? readFileSync(probeFile, "utf8")
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l) as ProbeSample)
      : [];
    const live = probe.filter((p) => p.live);
    if (probe.length > 1) {
      say(
        `\ninside the gateway (bench/lib/memory-probe.ts; t since gateway start; live = after a full collection; heap includes extra):\n   t(s)  live  RSS MB  heap MB  extra MB  objects  object types grown most since the first sample`,
      );
      for (const p of probe) {
        const grew = Object.entries(p.grew)
          .slice(0, 5)
          .map(([k, v]) => `${k} +${v}`)
          .join(", ");
        say(
          `${String(p.t).padStart(7)}  ${p.live ? " yes" : "  no"}  ${p.rss_mb.toFixed(1).padStart(6)}  ${p.heap_mb.toFixed(1).padStart(7)}  ${p.extra_mb.toFixed(1).padStart(8)}  ${String(p.objects).padStart(7)}  ${grew}`,
        );
      }
    }

    // verdict
    const problems: string[] = [];
    // every soak key, plus the key used to probe the endpoints, once per function
    const bucketBound = (KEYS + 1) * used.length;
    const maxCache = Math.max(...samples.map((s) => s.cache_entries));
    const maxBuckets = Math.max(...samples.map((s) => s.ratelimit_buckets));
    const maxWal = Math.max(...samples.map((s) => s.wal_mb));
    if (!(maxCache <= CACHE_MAX)) problems.push(`cache entries reached ${maxCache} > max_entries ${CACHE_MAX}`);
    if (!(maxBuckets <= bucketBound)) problems.push(`rate-limit buckets reached ${maxBuckets} > keys x functions ${bucketBound}`);
    if (!(maxWal <= WAL_MAX_MB))
      problems.push(`the WAL reached ${maxWal.toFixed(1)} MB > ${WAL_MAX_MB} MB: it is not checkpointed`);

    // RSS after warm-up, first half vs second half. The JS heap grows and shrinks with garbage
    // collection (a cycle takes tens of seconds and can double the heap), so single samples are not
    // compared: the typical level (median) and the high-water mark (90th percentile) of each half are.
    const measured = samples.filter((s) => s.t > WARMUP_S + 1);
    const half = Math.floor(measured.length / 2);
    const a = measured.slice(0, half).map((s) => s.rss_mb);
    const b = measured.slice(half).map((s) => s.rss_mb);
    const rss = { a: { p50: quantile(a, 0.5), p90: quantile(a, 0.9) }, b: { p50: quantile(b, 0.5), p90: quantile(b, 0.9) } };
    const slope = slopePerMinute(measured.map((s) => [s.t, s.rss_mb]));
    const change = (x: number, y: number) => `${y >= x ? "+" : ""}${(((y - x) / x) * 100).toFixed(1)}%`;
    if (half < 3) problems.push(`too few samples after warm-up (${measured.length}): run longer`);
    else {
      if (Math.abs(rss.b.p50 - rss.a.p50) > rss.a.p50 * RSS_BAND)
        problems.push(`median RSS moved ${change(rss.a.p50, rss.b.p50)} from the first to the second half after warm-up`);
      if (rss.b.p90 > rss.a.p90 * (1 + RSS_BAND))
        problems.push(`RSS high-water mark (p90) rose ${change(rss.a.p90, rss.b.p90)} from the first to the second half`);
    }
    const [liveStart, liveEnd] = live;
    if (!liveStart || !liveEnd) problems.push("the memory probe did not report the live heap twice");
    else if (liveEnd.heap_mb - liveStart.heap_mb > Math.max(liveStart.heap_mb * RSS_BAND, HEAP_SLACK_MB))
      problems.push(`live heap grew ${change(liveStart.heap_mb, liveEnd.heap_mb)} after warm-up`);
    const wrong = Object.entries(result.statuses).filter(([c]) => c !== "200");
    if (wrong.length) problems.push(`non-200 answers: ${wrong.map(([c, n]) => `${c}x${n}`).join(", ")}`);
    if (result.errors || result.timeouts) problems.push(`${result.errors} errors, ${result.timeouts} timeouts`);
    if (engine) problems.push(...engine.problems);

    say(
      `\n${result.requests} requests in ${result.seconds.toFixed(0)}s (${Math.round(result.rps)} req/s, p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms), ${KEYS} keys, ${mix.length} distinct bodies over ${used.map((u) => u.fn).join(", ")}`,
    );
    say(
      `cache entries max ${maxCache} (bound ${CACHE_MAX}); buckets max ${maxBuckets} (bound ${bucketBound}); WAL max ${maxWal.toFixed(1)} MB (bound ${WAL_MAX_MB} MB)`,
    );
    say(
      `RSS after ${WARMUP_S} s warm-up: ${Math.min(...a, ...b).toFixed(1)}..${Math.max(...a, ...b).toFixed(1)} MB; median ${rss.a.p50.toFixed(1)} -> ${rss.b.p50.toFixed(1)} MB (${change(rss.a.p50, rss.b.p50)}), p90 ${rss.a.p90.toFixed(1)} -> ${rss.b.p90.toFixed(1)} MB (${change(rss.a.p90, rss.b.p90)}), first vs second half (band ±${RSS_BAND * 100}%); trend ${slope >= 0 ? "+" : ""}${slope.toFixed(1)} MB/min; peak RSS ${peakRssMb(pid).toFixed(1)} MB`,
    );
    if (liveStart && liveEnd)
      say(
        `live heap after a full collection: ${liveStart.heap_mb.toFixed(1)} MB (${liveStart.objects} objects, RSS ${liveStart.rss_mb.toFixed(1)} MB) at ${liveStart.t} s -> ${liveEnd.heap_mb.toFixed(1)} MB (${liveEnd.objects} objects, RSS ${liveEnd.rss_mb.toFixed(1)} MB) at ${liveEnd.t} s (${change(liveStart.heap_mb, liveEnd.heap_mb)})`,
      );
    if (engine) say(engine.summary);
    say(problems.length ? `VERDICT: FAIL\n- ${problems.join("\n- ")}` : "VERDICT: PASS");
    if (OUT) {
      writeFileSync(OUT, `$ bun bench/soak.ts ${process.argv.slice(2).join(" ")}\n${REV}\n${transcript.join("\n")}\n`);
      process.stderr.write(`soak: wrote ${OUT}\n`);
    }
    return problems.length ? 1 : 0;
  } finally {
    await gw?.stop();
    await sim.stop();
  }
}

process.exit(await main());
