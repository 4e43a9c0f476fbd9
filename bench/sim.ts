/**
 * The upstream simulator in its fastest mode (no latency, no call records), plus a stats port so
 * the benchmark can read how many calls reached it: GET http://127.0.0.1:<stats-port>/stats.
 *
 *   bun bench/sim.ts --port 9000 --stats-port 9001
 */
import { startUpstream } from "../test/helpers/upstream";

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const sim = await startUpstream({ port: arg("--port", 9000), latencyMs: 0, record: false });
const stats = Bun.serve({
  port: arg("--stats-port", 9001),
  hostname: "127.0.0.1",
  fetch: () => Response.json({ calls: sim.calls.count }),
});
console.log(`ready ${sim.url} stats http://127.0.0.1:${stats.port}/stats`);
