/**
 * Issue 39's "done when", across nodes: three gateways on PostgreSQL + Redis, one upstream
 * simulator recording every call and its arrival time.
 *  - A deployment with rpm = 60 receives at most 60 calls in any 60 s window across the nodes under
 *    300 calls a minute of offered load (65 s of it); the group's other deployment takes the rest.
 *  - A deployment answering 429 with Retry-After: 5 gets no call for 5 s on any node, then gets
 *    calls again.
 *  - Clients see only 200s.
 * The two run at the same time (different groups, so different deployments) to keep the test short.
 * Every prompt differs: no answer comes from the cache. CI's first pass runs this file side by side
 * with test/local/linear-time.test.ts (.ci/run), each in a process of its own: this one is a minute
 * of waiting, that one a minute of one core.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { groupToml } from "../helpers/groups-toml";
import type { RecordedCall } from "../helpers/upstream";
import { type Node, newKey, startSimCluster } from "./nodes";

const GROUPS = [
  groupToml(
    "capped",
    [
      { provider: "sim", model: "capped-a", rpm: 60 },
      { provider: "sim", model: "capped-b" },
    ],
    "ordered",
  ),
  groupToml(
    "cooled",
    [
      { provider: "sim", model: "cool-a" },
      { provider: "sim", model: "cool-b" },
    ],
    "ordered",
  ),
].join("\n");
/** Offered load on the capped group: 300 calls a minute, for this long. */
const LOAD_MS = 65_000;
/** A call's arrival at the simulator trails its admission in Redis by its trip through the gateway: this much leeway, at most. */
const TRIP_MS = 250;

/**
 * CI's second pass (behind PgBouncer, on a Redis Cluster: .ci/run) leaves this 66 s test out: the
 * first pass runs it on PostgreSQL + Redis, and the second runs the deployment state's own contract
 * (deployments-contract.test.ts) on the Redis Cluster, which is what differs there. Kept within CI's
 * 15 minutes.
 */
const SECOND_PASS = process.env.TEXTAI_TEST_VIA_PGBOUNCER === "1" && process.env.TEXTAI_TEST_ON_REDIS_CLUSTER === "1";
if (SECOND_PASS)
  console.warn(
    "SKIP model-groups-nodes.test.ts in CI's second pass: run in the first (PostgreSQL + Redis); deployments-contract.test.ts covers the Redis Cluster",
  );

describe.skipIf(SECOND_PASS)("model groups across three nodes", () => {
  let env: Awaited<ReturnType<typeof startSimCluster>>;
  let key: string;

  beforeAll(async () => {
    env = await startSimCluster({ n: 3, configExtra: GROUPS });
    key = (await newKey(env.cluster.nodes[0] as Node, 1_000_000)).key;
  }, 60_000);
  afterAll(async () => {
    await env?.close();
  });

  const call = async (node: Node, model: string): Promise<{ status: number; deployment: string | null }> => {
    const res = await fetch(`${node.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ model, max_tokens: 20, messages: [{ role: "user", content: `hello ${crypto.randomUUID()}` }] }),
    });
    await res.text();
    return { status: res.status, deployment: res.headers.get("x-textai-deployment") };
  };
  const callsTo = (model: string): RecordedCall[] => env.sim.calls.requests.filter((c) => c.model === model);

  test("rpm = 60 holds in every 60 s window across the nodes; a 429 with Retry-After: 5 cools a deployment on every node; clients see only 200s", async () => {
    const nodes = env.cluster.nodes;
    const statuses = new Map<number, number>();
    const pending: Promise<void>[] = [];
    const count = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1);
    const start = Date.now();
    let i = 0;
    // 300 calls a minute on the capped group, round robin over the nodes, not waiting for answers
    const load = (async () => {
      while (Date.now() - start < LOAD_MS) {
        const node = nodes[i++ % nodes.length] as Node;
        pending.push(
          call(node, "capped").then((r) => {
            count(r.status);
          }),
        );
        await Bun.sleep(Math.max(0, start + i * 200 - Date.now()));
      }
    })();
    // meanwhile: cool-a answers its next call 429 with Retry-After: 5; each node calls the cooled group every 100 ms for 9 s
    await Bun.sleep(2000);
    env.sim.program([{ status: 429, retryAfter: 5 }], { model: "cool-a" });
    const coolStart = Date.now();
    await Promise.all(
      nodes.map(async (node) => {
        while (Date.now() - coolStart < 9000) {
          count((await call(node, "cooled")).status);
          await Bun.sleep(100);
        }
      }),
    );
    await load;
    await Promise.all(pending);

    expect([...statuses.keys()]).toEqual([200]);
    // the cool-down: after the 429 reached cool-a, no call on any node until 5 s later, then calls again
    const cool = callsTo("cool-a");
    const refused = cool.find((c) => c.status === 429) as RecordedCall;
    expect(refused).toBeDefined();
    const during = cool.filter((c) => c.at > refused.at + TRIP_MS && c.at < refused.at + 5000);
    expect(during).toEqual([]);
    expect(cool.some((c) => c.at >= refused.at + 5000)).toBe(true);
    expect(callsTo("cool-b").length).toBeGreaterThan(30);

    // the limit: any 61 consecutive calls to capped-a span at least 60 s (less the trip's leeway)
    const times = callsTo("capped-a")
      .map((c) => c.at)
      .sort((a, b) => a - b);
    let tightest = Number.POSITIVE_INFINITY;
    for (let k = 0; k + 60 < times.length; k++) tightest = Math.min(tightest, (times[k + 60] ?? 0) - (times[k] ?? 0));
    console.log(
      `capped-a: ${times.length} calls in ${LOAD_MS / 1000} s, tightest 61 calls span ${tightest} ms; capped-b: ${callsTo("capped-b").length}`,
    );
    expect(times.length).toBeGreaterThan(60);
    expect(tightest).toBeGreaterThanOrEqual(60_000 - TRIP_MS);
    // and no 60 s window starting at a call holds more than 60
    for (let k = 0; k < times.length; k++) {
      const t0 = times[k] as number;
      expect(times.filter((t) => t >= t0 && t < t0 + 60_000 - TRIP_MS).length).toBeLessThanOrEqual(60);
    }
  }, 100_000);
});
