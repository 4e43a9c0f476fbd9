/**
 * Same-run A/B of the gateway's full path across commits (issue 26: "what each step bought"): each
 * commit is checked out beside this one (bench/lib/tree.ts: a detached `git worktree` in a temp
 * dir that shares this checkout's node_modules); the gateways run one at a time, pinned to core 0
 * like `bun run bench`, against one simulator on core 1, in interleaved rounds (A B C, A B C, ...),
 * and the table gives the median req/s and gateway CPU µs per request of each.
 *
 *   bun bench/ab.ts --commits 3edb462,HEAD [--rounds 3] [--seconds 4] [--connections 32] [--scenario compat] [--settle S]
 *
 * --scenario: one of bench/lib/requests.ts's GATEWAY_SCENARIOS, a comma list of them, or `all`:
 * `compat` (the default, `/v1/chat/completions` with no-cache), `compat-1k` (the 1 KB prompt with
 * PII), `stream` (stream: true), `function` (sentiment-analysis through the simulator, no-cache;
 * `--function` is its old name), `cache` (the same call primed, then cache hits), `offline`
 * (pii-redaction of 1 KB by the offline engine), `reject401` (a key that does not exist),
 * `reject429` (a key of the plan `tight`, over its limit). Each scenario is its own interleaved
 * series with its own table; the last column is each commit's CPU per request over the first
 * commit's (issue 37: at most 1.03x on every scenario). A commit named WORKTREE is this checkout as it is.
 * `group` (the `compat` call naming a weighted group of three deployments; trees with model groups
 * only, not in `all`). --paired runs every scenario in every round (A B for compat, A B for group,
 * then the next round), and adds each scenario's CPU per request over the first scenario's of the
 * same round: `--commits WORKTREE --scenario compat,group --paired` is issue 39's ratio, measured
 * so that the machine's drift falls on both alike.
 */
import { mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { benchConfig } from "./lib/gateway";
import { type Child, cpuMs, freePort, loadPinned, median, pin, ROOT, runCapture, spawnChild, waitFor } from "./lib/proc";
import {
  type Candidate,
  GATEWAY_REQUESTS,
  GATEWAY_SCENARIOS,
  type GatewayRequest,
  type GatewayScenario,
  GROUP_REQUEST,
  GROUP_TOML,
  requestHeaders,
  UNKNOWN_KEY,
} from "./lib/requests";
import { checkoutTree, type Tree } from "./lib/tree";
import type { LoadSpec } from "./load";

const { values } = parseArgs({
  options: {
    commits: { type: "string" },
    rounds: { type: "string", default: "3" },
    seconds: { type: "string", default: "4" },
    connections: { type: "string", default: "32" },
    function: { type: "boolean", default: false },
    scenario: { type: "string" },
    settle: { type: "string", default: "0" },
    paired: { type: "boolean", default: false },
  },
});
/** scenarios only trees with model groups serve (not in `all`): `group`, the `compat` call naming a weighted group */
const GROUP_SCENARIOS: Record<string, { request: GatewayRequest; toml: string }> = {
  group: { request: GROUP_REQUEST, toml: GROUP_TOML },
};
type Scenario = GatewayScenario | "group";
const asked = values.scenario ?? (values.function ? "function" : "compat");
const scenarios = (asked === "all" ? [...GATEWAY_SCENARIOS] : asked.split(",")) as Scenario[];
const known = (s: string) => (GATEWAY_SCENARIOS as readonly string[]).includes(s) || s in GROUP_SCENARIOS;
if (!values.commits || !scenarios.every(known)) {
  console.error(
    `usage: bun bench/ab.ts --commits A,B[,C...] [--rounds 3] [--seconds 4] [--connections 32] [--scenario ${[...GATEWAY_SCENARIOS, "group"].join("|")}[,...]|all] [--settle S] [--paired]`,
  );
  process.exit(2);
}

const work = join(tmpdir(), `textai-ab-${process.pid}`);
mkdirSync(work, { recursive: true });

/** One gateway of `dir`, loaded with `scenario`'s request for `seconds`: req/s and its CPU µs per request. */
async function measure(dir: string, simUrl: string, scenario: Scenario): Promise<{ rps: number; cpuUs: number; p50: number }> {
  // what the scenario sends (the same request as bench/run.ts's scenario of that name)
  const request =
    scenario === "group" ? (GROUP_SCENARIOS.group as { request: GatewayRequest }).request : GATEWAY_REQUESTS[scenario];
  const { path, body } = request.candidates[0] as Candidate;
  const expected = String(request.expectStatus);
  const state = join(work, `state-${crypto.randomUUID()}`);
  mkdirSync(state);
  const env = {
    TEXTAI_DB: join(state, "bench.db"),
    TEXTAI_CONFIG: join(state, "config.toml"),
    TEXTAI_LOG_LEVEL: "warn",
    TEXTAI_DRAIN_GRACE_MS: "0",
    TEXTAI_ADMIN_TOKEN: `bench-admin-${crypto.randomUUID()}`,
  };
  await Bun.write(env.TEXTAI_CONFIG, benchConfig(simUrl, GROUP_SCENARIOS[scenario]?.toml ?? "", false));
  const cli = join(dir, "src", "cli.ts");
  const plan = request.key === "tight" ? "tight" : "bench";
  const created = JSON.parse(
    await runCapture(["bun", cli, "keys", "create", "--label", "ab", "--credits", "100000000", "--plan", plan, "--json"], env),
  ).key as string;
  const key = request.key === "bad" ? UNKNOWN_KEY : created;
  const port = freePort();
  const gw = spawnChild([...pin(0), "bun", cli, "serve", "--port", String(port)], {
    env,
    log: join(state, "gateway.log"),
    cwd: dir,
  });
  try {
    const url = `http://127.0.0.1:${port}`;
    await waitFor(`${url}/ready`, 60_000);
    // --settle S: idle seconds before the load, so what a process does once after start (the
    // offline engine's background warm-up) is not measured as the path's cost
    if (Number(values.settle) > 0) await Bun.sleep(Number(values.settle) * 1000);
    const spec: LoadSpec = {
      url: url + path,
      method: "POST",
      headers: requestHeaders(request, key),
      body,
      connections: Number(values.connections),
      duration: 1,
    };
    if (request.prime) await (await fetch(spec.url, { method: "POST", headers: spec.headers, body: spec.body })).text();
    await loadPinned(spec);
    const before = cpuMs(gw.pid);
    const r = await loadPinned({ ...spec, duration: Number(values.seconds) });
    const cpu = cpuMs(gw.pid) - before;
    const bad = Object.entries(r.statuses).filter(([s]) => s !== expected);
    if (bad.length > 0) throw new Error(`${dir}: statuses ${JSON.stringify(r.statuses)}`);
    return { rps: r.rps, cpuUs: (cpu * 1000) / Math.max(1, r.requests), p50: r.p50 };
  } finally {
    await gw.stop();
    rmSync(state, { recursive: true, force: true });
  }
}

const commits = values.commits.split(",");
/** each commit's checkout; WORKTREE is this checkout as it is */
const trees: (Tree | null)[] = [];
let sim: Child | undefined;
try {
  for (const c of commits) trees.push(c === "WORKTREE" ? null : checkoutTree(c));
  const dirs = trees.map((t) => t?.dir ?? ROOT);
  const simPort = freePort();
  sim = spawnChild(
    [...pin(1), "bun", join(ROOT, "bench", "sim.ts"), "--port", String(simPort), "--stats-port", String(freePort())],
    { log: join(work, "sim.log") },
  );
  const simUrl = `http://127.0.0.1:${simPort}`;
  await waitFor(`${simUrl}/v1/models`);
  // each scenario's runs per commit; --paired: every round runs every scenario (and commit) in turn,
  // so that the machine's drift falls on all of them alike, and the ratios between scenarios are reported
  const runs = new Map(scenarios.map((sc) => [sc, commits.map((): { rps: number; cpuUs: number; p50: number }[] => [])]));
  const one = async (scenario: Scenario, round: number) => {
    for (const [i, dir] of dirs.entries()) {
      const m = await measure(dir, simUrl, scenario);
      runs.get(scenario)?.[i]?.push(m);
      process.stderr.write(
        `${scenario} round ${round + 1} ${commits[i]}: ${m.rps.toFixed(0)} req/s, p50 ${m.p50.toFixed(3)} ms, ${m.cpuUs.toFixed(0)} µs/req\n`,
      );
    }
  };
  if (values.paired) {
    for (let round = 0; round < Number(values.rounds); round++) for (const scenario of scenarios) await one(scenario, round);
  } else for (const scenario of scenarios) for (let round = 0; round < Number(values.rounds); round++) await one(scenario, round);
  for (const scenario of scenarios) {
    const byCommit = runs.get(scenario) ?? [];
    const first = median((byCommit[0] ?? []).map((x) => x.cpuUs));
    console.log(`\n${scenario}\n`);
    console.log(
      `| commit | req/s @${values.connections} (median) | p50 ms (median) | gateway CPU µs/req (median) | runs (µs/req) | CPU x ${commits[0]} |`,
    );
    console.log("|---|--:|--:|--:|---|--:|");
    for (const [i, c] of commits.entries()) {
      const r = byCommit[i] ?? [];
      const cpu = median(r.map((x) => x.cpuUs));
      console.log(
        `| ${c} | ${median(r.map((x) => x.rps)).toFixed(0)} | ${median(r.map((x) => x.p50)).toFixed(3)} | ${cpu.toFixed(0)} | ${r.map((x) => x.cpuUs.toFixed(0)).join(", ")} | ${(cpu / first).toFixed(3)} |`,
      );
    }
  }
  if (values.paired && scenarios.length > 1) {
    // per commit and round, each scenario's CPU over the first scenario's of the same round; the median of those
    const base = scenarios[0] as Scenario;
    console.log(`\nPaired: CPU per request over ${base}'s in the same round (median of the rounds)\n`);
    console.log(`| commit | ${scenarios.slice(1).join(" | ")} |`);
    console.log(
      `|---|${scenarios
        .slice(1)
        .map(() => "--:")
        .join("|")}|`,
    );
    for (const [i, c] of commits.entries()) {
      const b = runs.get(base)?.[i] ?? [];
      const cells = scenarios.slice(1).map((sc) => {
        const r = runs.get(sc)?.[i] ?? [];
        return `${median(r.map((x, k) => x.cpuUs / (b[k]?.cpuUs ?? Number.NaN))).toFixed(3)} (${r.map((x, k) => (x.cpuUs / (b[k]?.cpuUs ?? Number.NaN)).toFixed(2)).join(", ")})`;
      });
      console.log(`| ${c} | ${cells.join(" | ")} |`);
    }
  }
} finally {
  await sim?.stop();
  for (const t of trees) t?.remove();
  rmSync(work, { recursive: true, force: true });
}
