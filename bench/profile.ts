/**
 * CPU profile of the gateway under load (issue 26): the simulator, the gateway under `bun --cpu-prof`
 * (pinned like the bench), autocannon on one path, then the profile summed by self time per
 * function and per file.
 *
 *   bun bench/profile.ts [--seconds 8] [--connections 32] [--scenario compat] [--top 40] [--out DIR] [--tree DIR]
 *   bun bench/profile.ts --summarize FILE.cpuprofile
 *
 * --scenario names the bench's scenario whose load to profile: `compat` (the default:
 * `/v1/chat/completions` with `Cache-Control: no-cache`), `function` (sentiment-analysis through
 * the simulator, cache bypassed; `--function` is its old name), `cache` (the same call, primed, then
 * cache hits), `reject401` (a key that does not exist) or `reject429` (a key of the plan `tight`,
 * over its limit after the first call), `compat-1k`, `guarded` and `guarded-fresh` (the 1 KB prompt with PII, without
 * and with the guardrails' redaction of every kind; fresh: a new prompt per request), `group` (`compat` naming a weighted model group) or `cluster` (the function call on two nodes on PostgreSQL
 * and Redis, both profiled, with Redis commands and PostgreSQL transactions per call). --tree runs the gateway of another checkout (a directory
 * holding a commit's tree, as bench/lib/tree.ts checks them out) instead of this one.
 */
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startClusterNodes } from "./lib/cluster";
import { startGateway } from "./lib/gateway";
import { freePort, pin, ROOT, spawnChild, waitFor } from "./lib/proc";
import {
  type Candidate,
  GATEWAY_REQUESTS,
  GATEWAY_SCENARIOS,
  type GatewayRequest,
  type GatewayScenario,
  GROUP_TOML,
  groupChatCandidate,
  PII_PROMPT_NUMBERS,
  piiChatCandidate,
  requestHeaders,
  UNKNOWN_KEY,
} from "./lib/requests";
import { runLoad } from "./load";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "8" },
    connections: { type: "string", default: "32" },
    top: { type: "string", default: "40" },
    out: { type: "string", default: "/tmp/textai-profile" },
    summarize: { type: "string" },
    function: { type: "boolean", default: false },
    scenario: { type: "string" },
    tree: { type: "string" },
  },
});
const scenario = values.scenario ?? (values.function ? "function" : "compat");

/**
 * bench/run.ts's `guarded` (the 1 KB prompt with PII, redacted on every kind) and `group` (the
 * `compat` call naming a weighted group of three deployments: GROUP_TOML)
 */
const PROFILE_ONLY: Record<string, GatewayRequest> = {
  guarded: { candidates: [piiChatCandidate], key: "guarded", cacheBypass: true, expectStatus: 200 },
  "guarded-fresh": { candidates: [piiChatCandidate], key: "guarded", cacheBypass: true, expectStatus: 200 },
  group: { candidates: [groupChatCandidate], key: "bench", cacheBypass: true, expectStatus: 200 },
};
const NAMES = [...GATEWAY_SCENARIOS, ...Object.keys(PROFILE_ONLY), "cluster"];
if (!NAMES.includes(scenario)) {
  console.error(`--scenario: one of ${NAMES.join(", ")}`);
  process.exit(2);
}

/** what the scenario sends (the same request as bench/run.ts's scenario of that name) */
const request = PROFILE_ONLY[scenario] ?? GATEWAY_REQUESTS[scenario === "cluster" ? "function" : (scenario as GatewayScenario)];
const { path, body } = request.candidates[0] as Candidate;

interface ProfileNode {
  id: number;
  children?: number[];
  callFrame: { functionName: string; url: string; lineNumber: number };
}

/** Self time per function and per file, in percent of the samples. */
export function summarize(file: string, top: number): string {
  const p = JSON.parse(require("node:fs").readFileSync(file, "utf8")) as {
    nodes: ProfileNode[];
    samples: number[];
    timeDeltas: number[];
  };
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const where = (n: ProfileNode) => n.callFrame.url.replace(ROOT, "").replace(/.*node_modules\//, "nm/");
  /** the nearest frame with a file: native work (fetch, JSON, Headers) charged to the code that asked for it */
  const owner = (n: ProfileNode): string => {
    for (let cur: ProfileNode | undefined = n; cur; cur = byId.get(parent.get(cur.id) ?? -1)) {
      const w = where(cur);
      if (w && !w.startsWith("bun:") && !w.startsWith("node:")) return `${w} (${cur.callFrame.functionName || "anonymous"})`;
    }
    return "(event loop)";
  };
  const fnSelf = new Map<string, number>();
  const fileSelf = new Map<string, number>();
  const owned = new Map<string, number>();
  const ownedFn = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const node = byId.get(p.samples[i] as number);
    const t = p.timeDeltas[i] ?? 0;
    if (!node) continue;
    const cf = node.callFrame;
    const w = where(node);
    const fn = `${cf.functionName || "(anonymous)"} ${w}:${cf.lineNumber + 1}`;
    fnSelf.set(fn, (fnSelf.get(fn) ?? 0) + t);
    fileSelf.set(w || "(native)", (fileSelf.get(w || "(native)") ?? 0) + t);
    const o = owner(node);
    const file = o.replace(/ \(.*\)$/, "");
    owned.set(file, (owned.get(file) ?? 0) + t);
    ownedFn.set(o, (ownedFn.get(o) ?? 0) + t);
    total += t;
  }
  const rows = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, t]) => `${((100 * t) / total).toFixed(1).padStart(5)}%  ${k}`)
      .join("\n");
  return `total ${(total / 1e6).toFixed(2)} s sampled\n-- by function (self)\n${rows(fnSelf)}\n-- by file (self)\n${rows(fileSelf)}\n-- by file, native work charged to its nearest caller with a file\n${rows(owned)}\n-- by function, native work charged likewise\n${rows(ownedFn)}`;
}

if (values.summarize) {
  console.log(summarize(values.summarize, Number(values.top)));
  process.exit(0);
}

/** Redis commands by name since the last CONFIG RESETSTAT (INFO commandstats) */
async function redisCommands(redis: import("bun").RedisClient): Promise<Record<string, number>> {
  const info = String(await redis.send("INFO", ["commandstats"]));
  const out: Record<string, number> = {};
  for (const m of info.matchAll(/cmdstat_([^:]+):calls=(\d+)/g)) out[m[1] as string] = Number(m[2]);
  return out;
}

/**
 * The `cluster` scenario: two nodes on PostgreSQL + Redis (bench/lib/cluster.ts), both under
 * --cpu-prof, the load split over them; and what a call asks of the shared servers, counted from
 * outside: Redis commands (INFO commandstats, the whole server: run it alone) and PostgreSQL
 * transactions (pg_stat_database of the run's database) per answered call.
 */
async function profileCluster(simUrl: string): Promise<void> {
  const { RedisClient, SQL } = await import("bun");
  const cluster = await startClusterNodes({
    simUrl,
    tree: values.tree,
    bunFlags: ["--cpu-prof", `--cpu-prof-dir=${values.out}`],
  });
  const redisUrl = process.env.TEXTAI_BENCH_REDIS_CLUSTER
    ? null
    : (process.env.TEXTAI_BENCH_REDIS ?? "redis://127.0.0.1:6379/14");
  const redis = redisUrl ? new RedisClient(redisUrl, { autoReconnect: false }) : null;
  const pg = new SQL(process.env.TEXTAI_BENCH_PG ?? "postgres://postgres@127.0.0.1:5432/test", { max: 1 });
  const xacts = async () => {
    const [row] =
      await pg`SELECT (xact_commit + xact_rollback)::float8 AS n FROM pg_stat_database WHERE datname = ${cluster.database}`;
    return Number(row?.n ?? 0);
  };
  try {
    const fn = GATEWAY_REQUESTS.function;
    const { path: p, body: b } = fn.candidates[0] as Candidate;
    const load = (seconds: number) =>
      Promise.all(
        cluster.nodes.map((n) =>
          runLoad({
            url: n.url + p,
            method: "POST",
            headers: requestHeaders(fn, cluster.nodes[0].keys.bench as string),
            body: b,
            connections: Math.max(1, Math.round(Number(values.connections) / cluster.nodes.length)),
            duration: seconds,
          }),
        ),
      );
    await load(1);
    await redis?.send("CONFIG", ["RESETSTAT"]);
    const x0 = await xacts();
    const rs = await load(Number(values.seconds));
    const calls = rs.reduce((a, r) => a + r.requests, 0);
    const x1 = await xacts();
    const statuses: Record<string, number> = {};
    for (const r of rs) for (const [c, k] of Object.entries(r.statuses)) statuses[c] = (statuses[c] ?? 0) + k;
    console.log(
      `load: ${rs.reduce((a, r) => a + r.rps, 0).toFixed(0)} req/s over ${cluster.nodes.length} nodes, statuses ${JSON.stringify(statuses)}`,
    );
    if (redis) {
      const cmds = await redisCommands(redis);
      const per = Object.entries(cmds)
        .filter(([c]) => c !== "info" && c !== "config|resetstat")
        .map(([c, k]) => `${c} ${(k / calls).toFixed(3)}`)
        .join(", ");
      console.log(`redis commands per call: ${per}`);
    }
    console.log(`postgres transactions per call: ${((x1 - x0) / calls).toFixed(3)} (stats lag up to 0.5 s)`);
  } finally {
    redis?.close();
    await pg.close();
    await cluster.stop();
  }
}

mkdirSync(values.out, { recursive: true });
const simPort = freePort();
const sim = spawnChild(
  [...pin(1), "bun", join(ROOT, "bench", "sim.ts"), "--port", String(simPort), "--stats-port", String(freePort())],
  {
    log: join(values.out, "sim.log"),
  },
);
try {
  const simUrl = `http://127.0.0.1:${simPort}`;
  await waitFor(`${simUrl}/v1/models`);
  const before = new Set(readdirSync(values.out));
  if (scenario === "cluster") await profileCluster(simUrl);
  else {
    const gw = await startGateway({
      simUrl,
      tree: values.tree,
      keyPlans: scenario.startsWith("guarded") ? ["bench", "tight", "guarded"] : ["bench", "tight"],
      extraToml: scenario === "group" ? GROUP_TOML : undefined,
      bunFlags: ["--cpu-prof", `--cpu-prof-dir=${values.out}`],
    });
    try {
      const key = request.key === "bad" ? UNKNOWN_KEY : (gw.keys[request.key] as string);
      const spec = {
        url: gw.url + path,
        method: "POST" as const,
        headers: requestHeaders(request, key),
        body,
        connections: Number(values.connections),
        fresh: scenario === "guarded-fresh" ? PII_PROMPT_NUMBERS : undefined,
      };
      if (request.prime) await (await fetch(spec.url, { method: "POST", headers: spec.headers, body: spec.body })).text();
      await runLoad({ ...spec, duration: 1 });
      const r = await runLoad({ ...spec, duration: Number(values.seconds) });
      console.log(`load: ${r.rps.toFixed(0)} req/s, p50 ${r.p50.toFixed(3)} ms, statuses ${JSON.stringify(r.statuses)}`);
    } finally {
      await gw.stop();
    }
  }
  const made = readdirSync(values.out).filter((f) => f.endsWith(".cpuprofile") && !before.has(f));
  for (const f of made) {
    console.log(`profile: ${join(values.out, f)}`);
    console.log(summarize(join(values.out, f), Number(values.top)));
  }
} finally {
  await sim.stop();
}
