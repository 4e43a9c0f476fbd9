/**
 * Requests of the bench alternated in many short phases against one gateway process per tree
 * (issue 39's `group` over `compat`; issue 37's tree against tree). Each gateway (pinned to core 0,
 * the bench config plus the model group `groupChatCandidate` names) is first loaded with each
 * request until its JIT is quiet; then, cycle after cycle, this process keeps `--connections`
 * requests of one (tree, scenario) pair in flight for `--phase-ms`, lets them drain, and reads that
 * gateway's CPU time from /proc; a cycle visits every pair forward, then backward, so that a trend
 * falls on all alike. A pair's CPU per request is its CPU over its requests, pooled over all
 * cycles; the ratios (over the first scenario of the same tree, over the same scenario of the
 * first tree) come with the ratio of each block of `--block` cycles, to show the spread.
 *
 * Why: fresh gateways per run (bench/ab.ts, bench/run.ts) weigh each process's own start, JIT and
 * heap, and phases of a few seconds catch a neighbour's burst on one side only; on this shared
 * machine their per-round ratios spread from 0.6 to 1.3. Quarter-second phases put the paths under
 * the same neighbours, and one process per tree under the same heap and JIT state.
 *
 *   bun bench/alternate.ts [--scenarios compat,group] [--trees WORKTREE[,REF...]] [--seconds 60]
 *                          [--phase-ms 250] [--warm 6] [--connections 32] [--block 10] [--json]
 *
 * --scenarios: compat, compat-1k, function, cache, offline, group or group-one (the call naming a group
 * of one deployment: the group path without a choice) (a comma list; the first is the
 * base). --trees: WORKTREE (this checkout) or commits (checked out beside it, bench/lib/tree.ts);
 * the first is the base. The driver (this process) runs pinned to core 1 beside the simulator, as
 * autocannon does for bench/run.ts. --json prints one JSON line instead of the table (bench/run.ts
 * reads it for issue 39's target).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type Gateway, startGateway } from "./lib/gateway";
import { cpuMs, freePort, median, pin, ROOT, runPinnedTo, spawnChild, waitFor } from "./lib/proc";
import {
  type Candidate,
  GATEWAY_REQUESTS,
  type GatewayRequest,
  GROUP_ONE_REQUEST,
  GROUP_ONE_TOML,
  GROUP_REQUEST,
  GROUP_TOML,
  requestHeaders,
} from "./lib/requests";
import { checkoutTree } from "./lib/tree";

const { values } = parseArgs({
  options: {
    scenarios: { type: "string", default: "compat,group" },
    seconds: { type: "string", default: "60" },
    "phase-ms": { type: "string", default: "250" },
    warm: { type: "string", default: "6" },
    connections: { type: "string", default: "32" },
    block: { type: "string", default: "10" },
    trees: { type: "string", default: "WORKTREE" },
    json: { type: "boolean", default: false },
  },
});

// this process drives the load: pinned to core 1 (beside the simulator), away from the gateway
await runPinnedTo(1);

const KINDS: Record<string, GatewayRequest> = {
  compat: GATEWAY_REQUESTS.compat,
  "compat-1k": GATEWAY_REQUESTS["compat-1k"],
  function: GATEWAY_REQUESTS.function,
  cache: GATEWAY_REQUESTS.cache,
  offline: GATEWAY_REQUESTS.offline,
  group: GROUP_REQUEST,
  "group-one": GROUP_ONE_REQUEST,
};
const names = (values.scenarios as string).split(",");
if (names.length === 0 || names.some((n) => !(n in KINDS))) {
  console.error(`usage: bun bench/alternate.ts --scenarios A[,B...] (each one of ${Object.keys(KINDS).join(", ")})`);
  process.exit(2);
}
const kinds = names.map((n) => KINDS[n] as GatewayRequest);

interface Sent {
  url: string;
  init: RequestInit;
  expected: number;
}

/** Keeps `connections` requests of `sent` in flight until `until`, then lets them finish: how many were answered. */
async function phase(sent: Sent, connections: number, until: number): Promise<number> {
  let done = 0;
  const loop = async () => {
    while (performance.now() < until) {
      const res = await fetch(sent.url, sent.init);
      await res.arrayBuffer();
      if (res.status !== sent.expected) throw new Error(`${sent.url}: status ${res.status}, expected ${sent.expected}`);
      done++;
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  return done;
}

const simPort = freePort();
const simUrl = `http://127.0.0.1:${simPort}`;
const sim = spawnChild(
  [...pin(1), "bun", `${ROOT}/bench/sim.ts`, "--port", String(simPort), "--stats-port", String(freePort())],
  {
    log: "/tmp/textai-alternate-sim.log",
  },
);
const refs = (values.trees as string).split(",");
// WORKTREE: this checkout; a directory: a tree already there (an experiment's copy); else a commit checked out beside this one
const checkouts = refs.map((r) =>
  r === "WORKTREE" ? null : existsSync(join(r, "src", "cli.ts")) ? { dir: r, remove() {} } : checkoutTree(r),
);
const gateways: Gateway[] = [];
try {
  await waitFor(`${simUrl}/v1/models`);
  // the model groups only when a scenario names one: a tree from before model groups refuses [[models]]
  const groups = names.some((n) => n.startsWith("group")) ? GROUP_TOML + GROUP_ONE_TOML : "";
  for (const c of checkouts) gateways.push(await startGateway({ simUrl, extraToml: groups, tree: c?.dir }));
  // every (tree, scenario) pair, in a palindromic cycle (forward, then backward) so a trend falls on all alike
  const combos = gateways.flatMap((gw, t) =>
    kinds.map((r, k) => {
      const c = r.candidates[0] as Candidate;
      const sent: Sent = {
        url: gw.url + c.path,
        init: { method: "POST", headers: requestHeaders(r, gw.keys.bench as string), body: c.body },
        expected: r.expectStatus,
      };
      return { t, k, pid: gw.pid, sent };
    }),
  );
  const connections = Number(values.connections);
  for (const c of combos) await phase(c.sent, connections, performance.now() + Number(values.warm) * 1000);
  const phaseMs = Number(values["phase-ms"]);
  const order = [...combos.keys(), ...[...combos.keys()].reverse()];
  // per cycle: each combo's CPU and requests
  const cycles: { cpu: number[]; n: number[] }[] = [];
  const end = performance.now() + Number(values.seconds) * 1000;
  while (performance.now() < end) {
    const cycle = { cpu: combos.map(() => 0), n: combos.map(() => 0) };
    for (const i of order) {
      const c = combos[i] as (typeof combos)[number];
      const before = cpuMs(c.pid);
      const n = await phase(c.sent, connections, performance.now() + phaseMs);
      (cycle.cpu[i] as number) += cpuMs(c.pid) - before;
      (cycle.n[i] as number) += n;
    }
    cycles.push(cycle);
  }
  const usOf = (part: typeof cycles, i: number) =>
    (part.reduce((s, c) => s + (c.cpu[i] as number), 0) * 1000) /
    Math.max(
      1,
      part.reduce((s, c) => s + (c.n[i] as number), 0),
    );
  const block = Number(values.block);
  const blocks = (i: number, base: number) => {
    const out: number[] = [];
    for (let k = 0; k + block <= cycles.length; k += block) {
      const part = cycles.slice(k, k + block);
      out.push(usOf(part, i) / usOf(part, base));
    }
    return out;
  };
  const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  const when = `${new Date().toISOString().slice(0, 16)}Z`;
  const ratio = (i: number, base: number) => ({ ratio: usOf(cycles, i) / usOf(cycles, base), blocks: blocks(i, base) });
  const rows = combos.map((c, i) => {
    const firstScenario = combos.findIndex((x) => x.t === c.t && x.k === 0);
    const firstTree = combos.findIndex((x) => x.t === 0 && x.k === c.k);
    return {
      tree: refs[c.t] as string,
      scenario: names[c.k] as string,
      cpuUsPerReq: usOf(cycles, i),
      requests: cycles.reduce((sum, cy) => sum + (cy.n[i] as number), 0),
      overFirstScenario: c.k === 0 ? undefined : ratio(i, firstScenario),
      overFirstTree: c.t === 0 ? undefined : ratio(i, firstTree),
    };
  });
  if (values.json) {
    console.log(JSON.stringify({ when, cycles: cycles.length, phaseMs, connections, block, load, rows }));
  } else {
    console.log(
      `\none gateway per tree, ${cycles.length} cycles of ${combos.length * 2} phases of ${phaseMs} ms at ${connections} connections; ${when}; load average after: ${load}\n`,
    );
    console.log(
      `| tree | scenario | gateway CPU µs/req | x first scenario (blocks of ${block} cycles) | x first tree (blocks) |`,
    );
    console.log("|---|---|--:|---|---|");
    const cell = (r?: { ratio: number; blocks: number[] }) =>
      r
        ? `**${r.ratio.toFixed(3)}** (median ${median(r.blocks).toFixed(3)}: ${r.blocks.map((x) => x.toFixed(2)).join(", ")})`
        : "";
    for (const r of rows)
      console.log(
        `| ${r.tree} | ${r.scenario} | ${r.cpuUsPerReq.toFixed(1)} | ${cell(r.overFirstScenario)} | ${cell(r.overFirstTree)} |`,
      );
  }
} finally {
  for (const gw of gateways) await gw.stop();
  for (const c of checkouts) c?.remove();
  await sim.stop();
}
