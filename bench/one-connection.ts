/**
 * What one client waits (issue 40's "added p50 at one connection"): one node on PostgreSQL + Redis
 * (bench/lib/cluster.ts) against one SQLite node, each answering one client's calls one after
 * another (a `fetch` loop, no pipelining), the function path with the cache bypassed, against the
 * upstream simulator in its fastest mode (so a call's latency is the gateway's own). Rounds
 * alternate the setups; with --against REF, the same two setups of commit REF (a tree beside this
 * one, bench/lib/tree.ts) run in each round too, REF first in odd rounds.
 *
 *   bun bench/one-connection.ts [--calls 400] [--rounds 2] [--against REF]
 *
 * Reports each setup's p50 and p90 per round, and the median over rounds of PostgreSQL's p50 as a
 * multiple of SQLite's (each tree against its own SQLite node). Nodes are not pinned: one client
 * keeps a node's core mostly idle. Never a timed test: run it alone, more than once.
 */
import { parseArgs } from "node:util";
import { startUpstream } from "../test/helpers/upstream";
import { startClusterNodes } from "./lib/cluster";
import { type Gateway, startGateway } from "./lib/gateway";
import { median } from "./lib/proc";
import { type Candidate, GATEWAY_REQUESTS, requestHeaders } from "./lib/requests";
import { checkoutTree, type Tree } from "./lib/tree";

const { values } = parseArgs({
  options: {
    calls: { type: "string", default: "400" },
    rounds: { type: "string", default: "2" },
    against: { type: "string" },
  },
});
const calls = Number(values.calls);
const rounds = Number(values.rounds);
if (!(Number.isInteger(calls) && calls >= 20 && Number.isInteger(rounds) && rounds >= 1)) {
  console.error("usage: bun bench/one-connection.ts [--calls N>=20] [--rounds N>=1] [--against REF]");
  process.exit(2);
}

const fn = GATEWAY_REQUESTS.function;
const { path, body } = fn.candidates[0] as Candidate;
const sim = await startUpstream();
const simUrl = sim.url;

/** One client's calls one after another: p50 and p90 in ms. */
async function oneClient(node: Gateway): Promise<{ p50: number; p90: number }> {
  const run = async (n: number) => {
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      const res = await fetch(node.url + path, { method: "POST", headers: requestHeaders(fn, node.keys.bench as string), body });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`status ${res.status}: ${text.slice(0, 300)}`);
      times.push(performance.now() - t);
    }
    return times.sort((a, b) => a - b);
  };
  await run(Math.min(100, calls)); // warm-up
  const times = await run(calls);
  return { p50: times[Math.floor(times.length / 2)] as number, p90: times[Math.floor(times.length * 0.9)] as number };
}

/** Both setups of one tree: a PostgreSQL + Redis node and a SQLite node, each measured once. */
async function measureTree(label: string, tree: Tree | undefined) {
  const extra = tree ? { tree: tree.dir } : {};
  const cluster = await startClusterNodes({ simUrl, n: 1, ...extra });
  let pg: { p50: number; p90: number };
  try {
    pg = await oneClient(cluster.nodes[0] as Gateway);
  } finally {
    await cluster.stop();
  }
  const single = await startGateway({ simUrl, ...extra });
  let sqlite: { p50: number; p90: number };
  try {
    sqlite = await oneClient(single);
  } finally {
    await single.stop();
  }
  console.log(
    `  ${label.padEnd(16)} pg x1 p50 ${pg.p50.toFixed(2)} ms (p90 ${pg.p90.toFixed(2)})   sqlite x1 p50 ${sqlite.p50.toFixed(2)} ms (p90 ${sqlite.p90.toFixed(2)})   ${(pg.p50 / sqlite.p50).toFixed(2)}x`,
  );
  return pg.p50 / sqlite.p50;
}

const ref = values.against ? checkoutTree(values.against) : undefined;
const ratios = new Map<string, number[]>();
try {
  for (let r = 1; r <= rounds; r++) {
    console.log(`round ${r}:`);
    const order: [string, Tree | undefined][] = [["this checkout", undefined]];
    if (ref) order[r % 2 === 1 ? "unshift" : "push"]([`@${ref.commit.slice(0, 7)}`, ref]);
    for (const [label, tree] of order) {
      const x = await measureTree(label, tree);
      ratios.set(label, [...(ratios.get(label) ?? []), x]);
    }
  }
} finally {
  ref?.remove();
  await sim.close();
}
console.log(`median over ${rounds} rounds: PostgreSQL + Redis node's p50 as a multiple of a SQLite node's, one client`);
for (const [label, xs] of ratios) console.log(`  ${label.padEnd(16)} ${median(xs).toFixed(2)}x`);
process.exit(0);
