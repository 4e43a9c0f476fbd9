/**
 * Key policies on three gateway processes sharing one PostgreSQL database and one Redis db
 * (CONTRACT section 13): a change made on one node applies on the other within one second, and
 * a key's monthly credit limit and its own rate limit hold over the nodes together. Needs
 * 127.0.0.1:5432 and :6379; skips loudly without them, fails under CI.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { freshDatabase, freshRedis, sharedServersUp } from "../helpers/shared-servers";
import { startUpstream, type Upstream } from "../helpers/upstream";
import { admin, type Cluster, chat, clusterConfig, type Node, newKey, startCluster } from "./nodes";

const shared = await sharedServersUp("the key-policy cluster tests");

let sim: Upstream;
let db: Awaited<ReturnType<typeof freshDatabase>>;
let cluster: Cluster;

beforeAll(async () => {
  if (!shared) return;
  sim = await startUpstream({ latencyMs: 20 });
  db = await freshDatabase();
  const redis = await freshRedis();
  cluster = await startCluster({ n: 3, databaseUrl: db.url, redisUrl: redis.url, configText: clusterConfig(`${sim.url}/v1`) });
}, 60_000);

afterAll(async () => {
  if (!shared) return;
  await cluster?.close();
  await db?.drop();
  await sim?.close();
}, 30_000);

const patch = (node: Node, id: string, policy: unknown) => admin(node, "PATCH", `/admin/v1/keys/${id}`, { policy });
const code = (r: { text: string }) => (JSON.parse(r.text) as { error?: { code: string } }).error?.code;

describe.skipIf(!shared)("key policies on three nodes, one PostgreSQL, one Redis", () => {
  test("a policy changed on node 1 is applied by node 2 within one second (its key cache held the old one)", async () => {
    const [n1, n2] = cluster.nodes;
    const { key, id } = await newKey(n1, 100);
    // node 2 has the key, policy-free, in its key cache
    expect((await chat(n2, key, "warm")).status).toBe(200);
    const refusedAt = (async () => {
      for (;;) {
        const r = await chat(n2, key, "watch", { "cache-control": "no-cache" });
        if (r.status === 403) return { at: performance.now(), r };
        await Bun.sleep(2);
      }
    })();
    const changed = await patch(n1, id, { allowed_functions: ["sentiment-analysis"] });
    const t1 = performance.now();
    expect(changed.status, JSON.stringify(changed.json)).toBe(200);
    const { at, r } = await refusedAt;
    console.log(`policy change: applied on node 2 ${Math.max(0, at - t1).toFixed(1)} ms after node 1 answered it`);
    expect(at - t1).toBeLessThan(1000);
    expect(code(r)).toBe("forbidden");
    expect(r.text).toContain("sentiment-analysis");
  });

  test("monthly_credit_limit of 10: 50 concurrent 1-credit calls over three nodes admit exactly 10, the rest 402 key_budget_exceeded before any provider call", async () => {
    const [n1, n2] = cluster.nodes;
    const { key, id, accountId } = await newKey(n1, 1000);
    expect((await patch(n1, id, { monthly_credit_limit: 10 })).status).toBe(200);
    sim.reset();
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        chat(cluster.nodes[i % 3] as Node, key, `spend ${i}`, { "cache-control": "no-cache" }),
      ),
    );
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 402);
    expect(ok.length, results.map((r) => `${r.status} ${r.text.slice(0, 200)}`).join("\n")).toBe(10);
    expect(refused.length).toBe(40);
    for (const r of refused) expect(code(r)).toBe("key_budget_exceeded");
    expect(sim.calls.count).toBe(10);
    const view = await admin(n2, "GET", `/admin/v1/keys/${id}`);
    expect(view.result.month_credits_used).toBe(10);
    const acc = await admin(n2, "GET", `/admin/v1/accounts/${accountId}`);
    expect(JSON.stringify(acc.result)).toContain('"balance":990');
  });

  test("rate_limit_per_minute of 4: 12 calls over both nodes admit exactly 4 (one bucket in Redis)", async () => {
    const [n1, n2] = cluster.nodes;
    const { key, id } = await newKey(n1, 100);
    expect((await patch(n2, id, { rate_limit_per_minute: 4 })).status).toBe(200);
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => chat(i % 2 ? n2 : n1, key, `limited ${i}`)));
    expect(results.filter((r) => r.status === 200).length).toBe(4);
    const limited = results.filter((r) => r.status === 429);
    expect(limited.length).toBe(8);
    for (const r of limited) expect(r.headers.get("ratelimit-limit")).toBe("4");
  });

  test("keys update from the CLI on the cluster's PostgreSQL: both nodes apply it at once (the CLI broadcasts it)", async () => {
    const [n1, n2] = cluster.nodes;
    const { key, id } = await newKey(n1, 100);
    for (const n of [n1, n2]) expect((await chat(n, key, "warm")).status).toBe(200);
    const p = Bun.spawnSync([process.execPath, "src/cli.ts", "keys", "update", id, "--models", "model-b"], {
      cwd: `${import.meta.dir}/../..`,
      env: cluster.env,
    });
    expect(p.exitCode, p.stderr.toString()).toBe(0);
    const t0 = performance.now();
    for (const n of [n1, n2]) {
      const r = await chat(n, key, "after the cli narrowed it", { "cache-control": "no-cache" });
      expect(r.status, r.text).toBe(403);
      expect(r.text).toContain("model-b");
    }
    // within the key cache's second even if the broadcast were lost; the broadcast makes it at once
    expect(performance.now() - t0).toBeLessThan(1000);
  });
});
