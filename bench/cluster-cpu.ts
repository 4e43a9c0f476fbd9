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
 *     (autocannon overallRate): the same calls/s per node, though not the same idleness, as
 *     autocannon sends such load in bursts (its p50 is several ms), so the node still serves many
 *     requests per wake-up, where a cluster node's calls come back one by one from PostgreSQL.
 *
 *   flock /tmp/bench.lock bun bench/cluster-cpu.ts [--rounds 2] [--seconds 5] [--against REF] [--connections 32]
 *
 * --connections N: the load's connections, split evenly over a setup's nodes, at least one a node
 * (`--connections 1`: one client's calls one after another, each node's p50 is its latency).
 *
 * --against REF: instead, `pg x2` and `sqlite x1` of commit REF (a tree beside this one,
 * bench/lib/tree.ts) and of this checkout, alternating in each round (REF first in odd rounds,
 * this checkout first in even ones): what a change bought.
 *
 * CPU per call: the nodes' user + system time (/proc, summed) over the calls answered.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startClusterNodes } from "./lib/cluster";
import { type Gateway, startGateway } from "./lib/gateway";
import { CLK_TCK, freePort, loadPinned, median, pin, ROOT, spawnChild, waitFor } from "./lib/proc";
import { type Candidate, GATEWAY_REQUESTS, requestHeaders } from "./lib/requests";
import { checkoutTree, type Tree } from "./lib/tree";
import type { LoadResult } from "./load";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "2" },
    seconds: { type: "string", default: "5" },
    against: { type: "string" },
    connections: { type: "string", default: "32" },
  },
});
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const connections = Number(values.connections);
if (!(rounds >= 1 && seconds >= 1 && Number.isInteger(connections) && connections >= 1)) {
  console.error("usage: bun bench/cluster-cpu.ts [--rounds N>=1] [--seconds S>=1] [--connections N>=1]");
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

/** one load over the nodes (`--connections` split), their CPU summed: µs per answered call */
async function measure(nodes: Gateway[], rate?: number): Promise<Row> {
  const key = nodes[0]?.keys.bench as string;
  const spec = (n: Gateway, warm: boolean) => ({
    url: n.url + path,
    method: "POST" as const,
    headers: requestHeaders(fn, n.keys.bench ?? key),
    body,
    connections: Math.max(1, Math.floor(connections / nodes.length)),
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
/** one setup: its nodes started, measured, stopped */
interface Variant {
  name: string;
  run(simUrl: string, perNode: number): Promise<Row>;
}
const onPg =
  (n: number, tree?: Tree): Variant["run"] =>
  async (simUrl) => {
    const cluster = await startClusterNodes({ simUrl, keyPlans: ["bench"], n, tree: tree?.dir });
    try {
      return await measure(cluster.nodes);
    } finally {
      await cluster.stop();
    }
  };
const onSqlite =
  (n: number, tree?: Tree, atNodeRate = false): Variant["run"] =>
  async (simUrl, perNode) => {
    const nodes: Gateway[] = [];
    try {
      for (let i = 0; i < n; i++) nodes.push(await startGateway({ simUrl, keyPlans: ["bench"], tree: tree?.dir }));
      return await measure(nodes, atNodeRate ? perNode : undefined);
    } finally {
      for (const g of nodes) await g.stop();
    }
  };
const ref = values.against ? checkoutTree(values.against) : null;
const variants: Variant[] = ref
  ? [
      { name: `pg x2 @${values.against}`, run: onPg(2, ref) },
      { name: "pg x2", run: onPg(2) },
      { name: `sqlite x1 @${values.against}`, run: onSqlite(1, ref) },
      { name: "sqlite x1", run: onSqlite(1) },
    ]
  : [
      { name: "pg x2", run: onPg(2) },
      { name: "pg x1", run: onPg(1) },
      { name: "sqlite x1", run: onSqlite(1) },
      { name: "sqlite x2", run: onSqlite(2) },
      { name: "sqlite x1 @node", run: onSqlite(1, undefined, true) },
    ];
const rows = new Map<string, Row[]>(variants.map((v) => [v.name, []]));
try {
  const simUrl = `http://127.0.0.1:${simPort}`;
  await waitFor(`${simUrl}/v1/models`);
  for (let round = 1; round <= rounds; round++) {
    let perNode = 0;
    // --against: the two trees' runs swap places every other round (no order favours one)
    const order = ref && round % 2 === 0 ? [variants[1], variants[0], variants[3], variants[2]] : variants;
    for (const v of order as Variant[]) {
      const r = await v.run(simUrl, perNode);
      rows.get(v.name)?.push(r);
      if (v.name === "pg x2") perNode = r.rps / 2;
    }
    console.log(`round ${round}:`);
    for (const [k, v] of rows) {
      const r = v[v.length - 1];
      if (r)
        console.log(
          `  ${k.padEnd(20)} ${r.rps.toFixed(0).padStart(6)} req/s  ${r.cpuUs.toFixed(0).padStart(5)} µs/call (system ${r.sysUs.toFixed(0)})  p50 ${r.p50.toFixed(2)} ms`,
        );
    }
  }
  const med = (k: string) => median(rows.get(k)?.map((r) => r.cpuUs) ?? []);
  const base = med("sqlite x1");
  console.log(`median over ${rounds} rounds: µs/call, and sqlite x1's (this checkout's) as a ratio to it:`);
  for (const v of variants)
    console.log(`  ${v.name.padEnd(20)} ${med(v.name).toFixed(0).padStart(5)}  ${(base / med(v.name)).toFixed(2)}x`);
  if (ref) {
    const then = med(`sqlite x1 @${values.against}`) / med(`pg x2 @${values.against}`);
    console.log(
      `  two nodes vs one, each tree against its own single node: ${values.against} ${then.toFixed(2)}x, this checkout ${(base / med("pg x2")).toFixed(2)}x`,
    );
  }
} finally {
  await sim.stop();
  ref?.remove();
}
