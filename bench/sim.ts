/**
 * The upstream simulators in their fastest mode (no latency, no call records): the OpenAI-shaped
 * one, and with `--anthropic-port` the Anthropic Messages API one (the `anthropic` scenario's
 * provider), plus a stats port so the benchmark can read how many calls reached them:
 * GET http://127.0.0.1:<stats-port>/stats.
 *
 *   bun bench/sim.ts --port 9000 --stats-port 9001 [--anthropic-port 9002]
 */
import { startAnthropicUpstream } from "../test/helpers/anthropic-upstream";
import { startUpstream } from "../test/helpers/upstream";

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const sim = await startUpstream({ port: arg("--port", 9000), latencyMs: 0, record: false });
const anthropicPort = arg("--anthropic-port", 0);
const anthropic = anthropicPort > 0 ? await startAnthropicUpstream({ port: anthropicPort, record: false }) : null;
const stats = Bun.serve({
  port: arg("--stats-port", 9001),
  hostname: "127.0.0.1",
  fetch: () => Response.json({ calls: sim.calls.count + (anthropic?.calls.count ?? 0) }),
});
console.log(`ready ${sim.url}${anthropic ? ` anthropic ${anthropic.url}` : ""} stats http://127.0.0.1:${stats.port}/stats`);
