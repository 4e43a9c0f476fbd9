/**
 * The cluster's CPU per call against a single node's, and what the bench's pinning does to it
 * (issue 26). The bench's figure (`cluster` vs `function`, bench/run.ts) runs both cluster nodes on
 * CPU 0, the single node's core, beside PostgreSQL's and Redis's processes (not pinned). This
 * measures, in alternating rounds on the same machine, the function path (cache bypassed), 32
 * connections split evenly over the nodes of each setup, every node on CPU 0:
 *
 *   - `pg x2`: two nodes on PostgreSQL + Redis (bench/lib/cluster.ts), as the bench runs `cluster`;
 *   - `pg x1`: ONE node on PostgreSQL + Redis: no second node on its core;
 *   - `sqlite x1`: one SQLite node, as the bench runs `function`;
 *   - `sqlite x2`: two SQLite nodes (each its own file): two nodes on one core, no shared servers;
 *   - `sqlite x1 @node`: one SQLite node held to what one `pg x2` node served in that round
 *     (autocannon overallRate): the same load per node.
 *
 *   flock /tmp/bench.lock bun bench/cluster-cpu.ts [--rounds 2] [--seconds 5]
 *
 * CPU per call: the nodes' user + system time (/proc, summed) over the calls answered.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startClusterNodes } from "./lib/cluster";
import { type Gateway, startGateway } from "./lib/gateway";
import { CLK_TCK, freePort, loadPinned, median, pin, ROOT, spawnChild, waitFor } from "./lib/proc";
import { type Candidate, GATEWAY_REQUESTS, requestHeaders } from "./lib/requests";
import type { LoadResult } from "./load";

const { values } = parseArgs({
  options: { rounds: { type: "string", default: "2" }, seconds: { type: "string", default: "5" } },
});
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
if (!(rounds >= 1 && seconds >= 1)) {
  console.error("usage: bun bench/cluster-cpu.ts [--rounds N>=1] [--seconds S>=1]");
  process.exit(2);
}
const fn = GATEWAY_REQUESTS.function;
const { path, body } = fn.candidates[0] as Candidate;

/** user and system CPU ms of a process so far */
function cpuSplit(pid: number): [number, number] {
  const stat = require("node:fs").readFileSync(`/proc/${pid}/stat`, "utf8") as string;
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return [(Number(f[11]) * 1000) / CLK_TCK, (Number(f[12]) * 1000) / CLK_TCK];
}

interface Row {
  rps: number;
  cpuUs: number;
  sysUs: number;
  p50: number;
}

/** one load over the nodes (32 connections split), their CPU summed: µs per answered call */
async function measure(nodes: Gateway[], rate?: number): Promise<Row> {
  const key = nodes[0]?.keys.bench as string;
  const spec = (n: Gateway, warm: boolean) => ({
    url: n.url + path,
    method: "POST" as const,
    headers: requestHeaders(fn, n.keys.bench ?? key),
    body,
    connections: 32 / nodes.length,
    duration: warm ? 1 : seconds,
    ...(rate ? { rate: rate / nodes.length } : {}),
  });
  await Promise.all(nodes.map((n) => loadPinned(spec(n, true))));
  const cpu = () => nodes.map((n) => cpuSplit(n.pid)).reduce((a, c) => [a[0] + c[0], a[1] + c[1]], [0, 0]);
  const [u0, s0] = cpu();
  const rs: LoadResult[] = await Promise.all(nodes.map((n) => loadPinned(spec(n, false))));
  const [u1, s1] = cpu();
  const calls = rs.reduce((a, r) => a + r.requests, 0);
  const ok = rs.reduce((a, r) => a + (r.statuses["200"] ?? 0), 0);
  if (ok !== calls || rs.some((r) => r.errors > 0))
    throw new Error(`not all answered 200: ${JSON.stringify(rs.map((r) => r.statuses))}`);
  return {
    rps: rs.reduce((a, r) => a + r.rps, 0),
    cpuUs: ((u1 - u0 + s1 - s0) * 1000) / calls,
    sysUs: ((s1 - s0) * 1000) / calls,
    p50: Math.max(...rs.map((r) => r.p50)),
  };
}

const simPort = freePort();
const sim = spawnChild(
  [...pin(1), "bun", join(ROOT, "bench", "sim.ts"), "--port", String(simPort), "--stats-port", String(freePort())],
  {
    log: "/tmp/textai-cluster-cpu-sim.log",
  },
);
const NAMES = ["pg x2", "pg x1", "sqlite x1", "sqlite x2", "sqlite x1 @node"] as const;
const rows = new Map<string, Row[]>(NAMES.map((n) => [n, []]));
try {
  const simUrl = `http://127.0.0.1:${simPort}`;
  await waitFor(`${simUrl}/v1/models`);
  for (let round = 1; round <= rounds; round++) {
    let perNode = 0;
    for (const n of [2, 1]) {
      const cluster = await startClusterNodes({ simUrl, keyPlans: ["bench"], n });
      try {
        const r = await measure(cluster.nodes);
        rows.get(`pg x${n}`)?.push(r);
        if (n === 2) perNode = r.rps / 2;
      } finally {
        await cluster.stop();
      }
    }
    for (const n of [1, 2]) {
      const nodes: Gateway[] = [];
      try {
        for (let i = 0; i < n; i++) nodes.push(await startGateway({ simUrl, keyPlans: ["bench"] }));
        rows.get(`sqlite x${n}`)?.push(await measure(nodes));
        if (n === 1) rows.get("sqlite x1 @node")?.push(await measure(nodes, perNode));
      } finally {
        for (const g of nodes) await g.stop();
      }
    }
    console.log(`round ${round}:`);
    for (const [k, v] of rows) {
      const r = v[v.length - 1];
      if (r)
        console.log(
          `  ${k.padEnd(16)} ${r.rps.toFixed(0).padStart(6)} req/s  ${r.cpuUs.toFixed(0).padStart(5)} µs/call (system ${r.sysUs.toFixed(0)})  p50 ${r.p50.toFixed(2)} ms`,
        );
    }
  }
  const med = (k: string) => median(rows.get(k)?.map((r) => r.cpuUs) ?? []);
  const base = med("sqlite x1");
  console.log(`median over ${rounds} rounds, µs/call and sqlite x1's as a ratio to it:`);
  for (const k of NAMES) console.log(`  ${k.padEnd(16)} ${med(k).toFixed(0).padStart(5)}  ${(base / med(k)).toFixed(2)}x`);
} finally {
  await sim.stop();
}
