/**
 * Where two requests' CPU differs, in one gateway process: the gateway runs under `bun --cpu-prof`
 * (pinned to core 0, the bench config plus bench/alternate.ts's groups), this process (pinned to
 * core 1 beside the simulator) alternates the two requests in phases of `--phase-ms` with a short
 * pause between them, and the profile's samples (their times are wall-clock microseconds) are split
 * by phase. Each function's self time is then given per request of each kind, and the table is
 * sorted by the difference: what the second request costs more, function by function, under the
 * same heap and JIT state.
 *
 *   bun bench/profile-pair.ts [--scenarios compat,group] [--seconds 60] [--phase-ms 1000] [--connections 32] [--top 40]
 */
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startGateway } from "./lib/gateway";
import { freePort, pin, ROOT, runPinnedTo, spawnChild, waitFor } from "./lib/proc";
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

const { values } = parseArgs({
  options: {
    scenarios: { type: "string", default: "compat,group" },
    seconds: { type: "string", default: "60" },
    "phase-ms": { type: "string", default: "1000" },
    connections: { type: "string", default: "32" },
    top: { type: "string", default: "40" },
    warm: { type: "string", default: "6" },
  },
});

await runPinnedTo(1);

const KINDS: Record<string, GatewayRequest> = { ...GATEWAY_REQUESTS, group: GROUP_REQUEST, "group-one": GROUP_ONE_REQUEST };
const names = (values.scenarios as string).split(",");
if (names.length !== 2 || names.some((n) => !(n in KINDS))) {
  console.error(`usage: bun bench/profile-pair.ts --scenarios A,B (each one of ${Object.keys(KINDS).join(", ")})`);
  process.exit(2);
}

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

async function drive(url: string, init: RequestInit, connections: number, until: number): Promise<number> {
  let n = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < until) {
        const r = await fetch(url, init);
        await r.arrayBuffer();
        n++;
      }
    }),
  );
  return n;
}

const out = join("/tmp", `textai-profile-pair-${process.pid}`);
const simPort = freePort();
const simUrl = `http://127.0.0.1:${simPort}`;
const sim = spawnChild(
  [...pin(1), "bun", join(ROOT, "bench", "sim.ts"), "--port", String(simPort), "--stats-port", String(freePort())],
  {
    log: "/tmp/textai-profile-pair-sim.log",
  },
);
try {
  await waitFor(`${simUrl}/v1/models`);
  const gw = await startGateway({
    simUrl,
    extraToml: GROUP_TOML + GROUP_ONE_TOML,
    bunFlags: ["--cpu-prof", `--cpu-prof-dir=${out}`],
  });
  const sends = names.map((n) => {
    const r = KINDS[n] as GatewayRequest;
    const c = r.candidates[0] as Candidate;
    return { url: gw.url + c.path, init: { method: "POST", headers: requestHeaders(r, gw.keys.bench as string), body: c.body } };
  });
  const connections = Number(values.connections);
  const phases: { kind: number; from: number; to: number; n: number }[] = [];
  try {
    for (const s of sends) await drive(s.url, s.init, connections, Date.now() + Number(values.warm) * 1000);
    const end = Date.now() + Number(values.seconds) * 1000;
    for (let k = 0; Date.now() < end; k++) {
      for (const kind of k % 2 === 0 ? [0, 1] : [1, 0]) {
        await Bun.sleep(100); // a pause: the phase's samples do not mix with the last one's tail
        const s = sends[kind] as (typeof sends)[number];
        const from = Date.now();
        const n = await drive(s.url, s.init, connections, from + Number(values["phase-ms"]));
        phases.push({ kind, from: from * 1000, to: Date.now() * 1000 + 20_000, n });
      }
    }
  } finally {
    await gw.child.stop();
  }
  const file = readdirSync(out).find((f) => f.endsWith(".cpuprofile"));
  if (!file) throw new Error(`no profile written in ${out}`);
  const p = JSON.parse(readFileSync(join(out, file), "utf8")) as {
    nodes: Node[];
    startTime: number;
    samples: number[];
    timeDeltas: number[];
  };
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const where = (n: Node) => n.callFrame.url.replace(ROOT, "").replace(/.*node_modules\//, "nm/");
  const self = [new Map<string, number>(), new Map<string, number>()];
  const requests = [0, 0];
  for (const ph of phases) (requests[ph.kind] as number) += ph.n;
  let t = p.startTime;
  let ph = 0;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i] ?? 0;
    while (ph < phases.length && (phases[ph] as (typeof phases)[number]).to < t) ph++;
    const cur = phases[ph];
    if (!cur || t < cur.from) continue;
    const node = byId.get(p.samples[i] as number);
    if (!node) continue;
    const key = `${node.callFrame.functionName || "(anonymous)"} ${where(node)}:${node.callFrame.lineNumber + 1}`;
    const m = self[cur.kind] as Map<string, number>;
    m.set(key, (m.get(key) ?? 0) + (p.timeDeltas[i + 1] ?? p.timeDeltas[i] ?? 0));
  }
  const per = (k: number, key: string) => ((self[k] as Map<string, number>).get(key) ?? 0) / Math.max(1, requests[k] as number);
  const keys = new Set([...(self[0] as Map<string, number>).keys(), ...(self[1] as Map<string, number>).keys()]);
  const total = (k: number) =>
    [...(self[k] as Map<string, number>).values()].reduce((a, b) => a + b, 0) / Math.max(1, requests[k] as number);
  const rows = [...keys].map((key) => ({ key, a: per(0, key), b: per(1, key) })).sort((x, y) => y.b - y.a - (x.b - x.a));
  console.log(
    `\n${names[1]} against ${names[0]} in one gateway: ${phases.length} phases, ${requests[0]} and ${requests[1]} requests; sampled µs per request: ${total(0).toFixed(1)} and ${total(1).toFixed(1)} (${(total(1) - total(0)).toFixed(1)} more)\n`,
  );
  console.log(`| µs/req ${names[0]} | µs/req ${names[1]} | difference | function (self) |`);
  console.log("|--:|--:|--:|---|");
  const top = Number(values.top);
  for (const r of [...rows.slice(0, top), ...rows.slice(-Math.ceil(top / 4))])
    console.log(`| ${r.a.toFixed(2)} | ${r.b.toFixed(2)} | ${(r.b - r.a).toFixed(2)} | ${r.key} |`);
  rmSync(gw.dir, { recursive: true, force: true });
} finally {
  await sim.stop();
  rmSync(out, { recursive: true, force: true });
}
