/**
 * Load generator child: one autocannon run per invocation, so it never shares a process (or,
 * pinned, a core) with the gateway. Input: one JSON argument (LoadSpec). Output: one JSON line
 * (LoadResult) on stdout. Latencies come from autocannon's per-response timings (float ms), not its
 * integer-millisecond histogram, so sub-millisecond differences at one connection are visible.
 */
import autocannon from "autocannon";
import { freshBodies } from "./lib/requests";

export interface LoadSpec {
  url: string;
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: string;
  connections: number;
  /** seconds */
  duration: number;
  /** soak: each request picks one request of the mix and one key (sent as x-api-key) at random */
  mix?: { path: string; body: string }[];
  keys?: string[];
  /** requests per second over all connections (autocannon's overallRate); absent: as fast as answered */
  rate?: number;
  /**
   * every request's body new: each of these strings (five-digit numbers of the body) replaced by
   * five digits of a counter that starts at random, so that no two requests of a run (nor, but by
   * chance, of two runs) send the same text; the body's shape and length stay the same
   */
  fresh?: string[];
}

export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  statuses: Record<string, number>;
  errors: number;
  timeouts: number;
  resets: number;
}

function pct(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  let lat = new Float64Array(1 << 16);
  let n = 0;
  const pick = <T>(xs: T[]): T => xs[Math.floor(Math.random() * xs.length)] as T;
  const varied = spec.mix !== undefined || spec.keys !== undefined || spec.fresh !== undefined;
  const fresh = spec.fresh && spec.body !== undefined ? freshBodies(spec.body, spec.fresh) : undefined;
  const started = performance.now();
  let done!: (r: autocannon.Result) => void;
  let fail!: (e: unknown) => void;
  const finished = new Promise<autocannon.Result>((res, rej) => {
    done = res;
    fail = rej;
  });
  const instance = autocannon(
    {
      url: spec.url,
      method: spec.method,
      headers: spec.headers,
      body: spec.body,
      connections: spec.connections,
      duration: spec.duration,
      timeout: 10,
      ...(spec.rate ? { overallRate: spec.rate } : {}),
      requests: varied
        ? [
            {
              setupRequest: (req) => {
                const headers: Record<string, string> = { ...spec.headers };
                if (spec.keys) headers["x-api-key"] = pick(spec.keys);
                const one = spec.mix ? pick(spec.mix) : undefined;
                return { ...req, path: one?.path ?? req.path, headers, body: one?.body ?? fresh?.() ?? spec.body };
              },
            },
          ]
        : undefined,
    },
    (err, result) => (err ? fail(err) : done(result)),
  );
  instance.on("response", (_client: unknown, _status: number, _bytes: number, ms: number) => {
    if (n === lat.length) {
      const bigger = new Float64Array(lat.length * 2);
      bigger.set(lat);
      lat = bigger;
    }
    lat[n++] = ms;
  });
  const r = await finished;
  const seconds = (performance.now() - started) / 1000;
  const sorted = lat.subarray(0, n).sort();
  const statuses: Record<string, number> = {};
  for (const [code, s] of Object.entries(r.statusCodeStats ?? {})) statuses[code] = (s as { count: number }).count;
  return {
    requests: n,
    seconds,
    rps: n / r.duration,
    p50: pct(sorted, 50),
    p90: pct(sorted, 90),
    p99: pct(sorted, 99),
    statuses,
    errors: r.errors,
    timeouts: r.timeouts,
    resets: r.resets,
  };
}

if (import.meta.main) {
  // the spec inline, or (large soak specs) --spec-file PATH
  const arg = process.argv[2] ?? "{}";
  const spec = JSON.parse(arg === "--spec-file" ? await Bun.file(process.argv[3] as string).text() : arg) as LoadSpec;
  const result = await runLoad(spec);
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}
