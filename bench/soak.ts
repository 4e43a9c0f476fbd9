/**
 * `bun run bench:soak`: a bounded soak of the gateway. 10,000 distinct keys and varied bodies for a
 * few minutes, sampling the gateway's RSS and, from /metrics, the answer cache and the token-bucket
 * map. Verdict: the cache stays within max_entries, the bucket map within keys x functions, RSS within
 * 10% of its level at the end of warm-up, and every request is answered 200.
 *
 *   bun bench/soak.ts [--seconds 180] [--keys 10000] [--connections 32] [--sample 5] [--cache-max 2000]
 */
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startGateway } from "./lib/gateway";
import { type Child, freePort, peakRssMb, pin, ROOT, rssMb, spawnChild, waitFor } from "./lib/proc";
import type { LoadResult, LoadSpec } from "./load";

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const SECONDS = flag("seconds", 180);
const KEYS = flag("keys", 10_000);
const CONNECTIONS = flag("connections", 32);
const SAMPLE_S = flag("sample", 5);
const CACHE_MAX = flag("cache-max", 2000);
/** distinct texts per endpoint: several times the cache size, so the cache fills and evicts */
const DISTINCT = CACHE_MAX * 5;
const WARMUP_FRACTION = 0.25;
const RSS_BAND = 0.1;

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
}

function metric(body: string, name: string): number {
  const m = body.match(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.eE+-]+)$`, "m"));
  return m ? Number(m[1]) : Number.NaN;
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
    gw = await startGateway({
      simUrl: `http://127.0.0.1:${simPort}`,
      extraToml: `\n[cache]\nmax_entries = ${CACHE_MAX}\n`,
      env: { TEXTAI_ADMIN_TOKEN: admin },
      keyPlans: ["bench"],
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
      const r = await fetch(url + c.path, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": mainKey },
        body: JSON.stringify(c.body(-1)),
      });
      await r.text();
      if (r.status === 200) used.push(c);
      else if (r.status === 404 && c.fn === "comment-analyze" && used.some((u) => u.fn === "sentiment-analysis")) continue;
      else process.stderr.write(`soak: ${c.fn} not used (probe answered ${r.status})\n`);
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
    process.stderr.write(
      `soak: ${keys.length} keys in ${((Date.now() - t0) / 1000).toFixed(1)}s; endpoints ${used.map((u) => u.fn).join(", ")}\n`,
    );

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
    console.log("   t(s)  RSS MB  cache entries  ratelimit buckets");
    while (running) {
      const m = await (await fetch(`${url}/metrics`)).text();
      const s: Sample = {
        t: Math.round((Date.now() - started) / 1000),
        rss_mb: rssMb(pid),
        cache_entries: metric(m, "textai_cache_entries"),
        ratelimit_buckets: metric(m, "textai_ratelimit_buckets"),
      };
      samples.push(s);
      console.log(
        `${String(s.t).padStart(7)}  ${s.rss_mb.toFixed(1).padStart(6)}  ${String(s.cache_entries).padStart(13)}  ${String(s.ratelimit_buckets).padStart(17)}`,
      );
      for (let i = 0; i < SAMPLE_S * 10 && running; i++) await Bun.sleep(100);
    }
    const code = await load.exited;
    if (code !== 0) throw new Error(`load generator exited ${code}: ${(await errP).trim()}`);
    const result = JSON.parse((await outP).trim().split("\n").pop() as string) as LoadResult;

    // verdict
    const problems: string[] = [];
    // every soak key, plus the key used to probe the endpoints, once per function
    const bucketBound = (KEYS + 1) * used.length;
    const maxCache = Math.max(...samples.map((s) => s.cache_entries));
    const maxBuckets = Math.max(...samples.map((s) => s.ratelimit_buckets));
    if (!(maxCache <= CACHE_MAX)) problems.push(`cache entries reached ${maxCache} > max_entries ${CACHE_MAX}`);
    if (!(maxBuckets <= bucketBound)) problems.push(`rate-limit buckets reached ${maxBuckets} > keys x functions ${bucketBound}`);
    const warmIdx = Math.max(1, Math.floor(samples.length * WARMUP_FRACTION));
    const after = samples.slice(warmIdx);
    const ref = samples[warmIdx - 1]?.rss_mb ?? Number.NaN;
    const lo = Math.min(...after.map((s) => s.rss_mb));
    const hi = Math.max(...after.map((s) => s.rss_mb));
    if (after.length < 2) problems.push("too few samples after warm-up (run longer)");
    else if (hi > ref * (1 + RSS_BAND) || lo < ref * (1 - RSS_BAND))
      problems.push(
        `RSS left the ±${RSS_BAND * 100}% band after warm-up: ${lo.toFixed(1)}..${hi.toFixed(1)} MB vs ${ref.toFixed(1)} MB`,
      );
    const wrong = Object.entries(result.statuses).filter(([c]) => c !== "200");
    if (wrong.length) problems.push(`non-200 answers: ${wrong.map(([c, n]) => `${c}x${n}`).join(", ")}`);
    if (result.errors || result.timeouts) problems.push(`${result.errors} errors, ${result.timeouts} timeouts`);

    console.log(
      `\n${result.requests} requests in ${result.seconds.toFixed(0)}s (${Math.round(result.rps)} req/s, p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms), ${KEYS} keys, ${mix.length} distinct bodies over ${used.map((u) => u.fn).join(", ")}`,
    );
    console.log(
      `cache entries max ${maxCache} (bound ${CACHE_MAX}); buckets max ${maxBuckets} (bound ${bucketBound}); RSS after warm-up ${lo.toFixed(1)}..${hi.toFixed(1)} MB vs ${ref.toFixed(1)} MB at warm-up end (band ±${RSS_BAND * 100}%); peak RSS ${peakRssMb(pid).toFixed(1)} MB`,
    );
    console.log(problems.length ? `VERDICT: FAIL\n- ${problems.join("\n- ")}` : "VERDICT: PASS");
    return problems.length ? 1 : 0;
  } finally {
    await gw?.stop();
    await sim.stop();
  }
}

process.exit(await main());
