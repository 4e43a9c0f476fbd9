/**
 * Alerts on three gateway processes sharing one PostgreSQL database and one Redis (docs/alerts.md#delivery-and-many-nodes):
 * events raised on every node (take-backs, and charges of a key against its monthly limit, from
 * the credit_batch() transaction) reach a receiver that fails three times, each exactly once by
 * id although every node polls the outbox; and a node killed with SIGKILL after its event committed
 * and before any delivery loses nothing: a node started after it delivers the event. Needs
 * 127.0.0.1:5432 and :6379; skips loudly without them, fails under CI.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { SQL } from "bun";
import { docVerify, type Receiver, startReceiver } from "../alerts/receiver";
import { freshDatabase, nodesRedis, sharedServersUp, type TestRedis } from "../helpers/shared-servers";
import { admin, type Cluster, keyCall, type Node, startCluster } from "./nodes";

const shared = await sharedServersUp("the alerts' cluster tests");
const ALERTS = (pollMs: number) => `
[alerts]
poll_ms = ${pollMs}
scan_ms = ${pollMs}
retry_base_ms = 100
allow_private_urls = true
`;

let db: Awaited<ReturnType<typeof freshDatabase>>;
let redis: TestRedis;
let cluster: Cluster;
let pg: SQL;
let hook: Receiver;
const extra: Node[] = [];

beforeAll(async () => {
  if (!shared) return;
  db = await freshDatabase();
  redis = await nodesRedis("the alerts' nodes on a Redis Cluster");
  cluster = await startCluster({
    n: 3,
    databaseUrl: db.url,
    redisUrl: redis.url,
    redisPrefix: redis.prefix,
    configText: ALERTS(50),
  });
  pg = new SQL(db.url, { max: 2 });
  hook = startReceiver(3);
}, 60_000);

afterAll(async () => {
  if (!shared) return;
  hook?.stop();
  for (const n of extra) n.proc.kill("SIGKILL");
  await cluster?.close();
  await pg?.close();
  await db?.drop();
  await redis?.flush();
}, 30_000);

let account = "";
let secret = "";

describe.skipIf(!shared)("alerts on three nodes, one PostgreSQL", () => {
  test("events raised on three nodes, three nodes polling: each delivered exactly once by id after three failures", async () => {
    const [a, b, c] = cluster.nodes as [Node, Node, Node];
    const acc = await admin(a, "POST", "/admin/v1/accounts", { name: "alerts", credits: 100 });
    account = acc.result.id as string;
    const made = await admin(b, "POST", "/admin/v1/webhooks", {
      account_id: account,
      url: hook.url,
      events: ["balance.low", "key.budget_80", "key.budget_100"],
      balance_below: 50,
    });
    expect(made.status, JSON.stringify(made.json)).toBe(201);
    secret = made.result.secret as string;
    await Bun.sleep(300); // every node's watch has read the endpoint (told through Redis)
    // six crossings under 50, two on each node, one after the other
    for (let i = 0; i < 6; i++) {
      const node = cluster.nodes[i % 3] as Node;
      const down = await admin(node, "POST", `/admin/v1/accounts/${account}/credits`, { amount: -60 });
      expect(down.result.balance).toBe(40);
      await admin(node, "POST", `/admin/v1/accounts/${account}/credits`, { amount: 60 });
    }
    // a key's monthly limit reached by charges made on the three nodes (the PostgreSQL batch path)
    const key = await admin(c, "POST", "/admin/v1/keys", {
      label: "k",
      account_id: account,
      policy: { monthly_credit_limit: 5 },
    });
    for (let i = 0; i < 5; i++) {
      const r = await keyCall(cluster.nodes[i % 3] as Node, key.result.key as string, "POST", "/api/v1/ai/pii-redaction", {
        text: `Mail jane${i}@example.com`,
      });
      expect(r.status, r.text).toBe(200);
    }
    await hook.until(() => hook.acked().size === 8, 10_000);
    await Bun.sleep(400); // nothing more comes
    expect([...hook.acked().values()]).toEqual([1, 1, 1, 1, 1, 1, 1, 1]);
    expect(hook.received.filter((r) => r.status === 500).length).toBe(3);
    const types = hook.received.filter((r) => r.status === 200).map((r) => r.json.type);
    expect(types.filter((t) => t === "balance.low").length).toBe(6);
    expect(types.filter((t) => t.startsWith("key.budget")).sort()).toEqual(["key.budget_100", "key.budget_80"]);
    const verify = await docVerify();
    for (const r of hook.received) expect(verify(r.signature, r.body, secret)).toBe(true);
    const rows = await pg`SELECT status, count(*)::int AS n, sum(attempts)::int AS attempts FROM webhook_outbox GROUP BY status`;
    expect(rows).toEqual([{ status: "delivered", n: 8, attempts: 11 }]);
  }, 25_000);

  test("key.expiring, looked for by three nodes every 50 ms, is written and delivered once", async () => {
    const looked = startReceiver(0);
    try {
      const [a, b] = cluster.nodes as [Node, Node];
      const acc = (await admin(a, "POST", "/admin/v1/accounts", { name: "looked at", credits: 10 })).result.id as string;
      const soon = new Date(Date.now() + 86_400_000).toISOString();
      const key = await admin(b, "POST", "/admin/v1/keys", { label: "soon", account_id: acc, policy: { expires_at: soon } });
      const made = await admin(a, "POST", "/admin/v1/webhooks", {
        account_id: acc,
        url: looked.url,
        events: ["key.expiring"],
        expiring_days: 2,
      });
      expect(made.status, JSON.stringify(made.json)).toBe(201);
      await looked.until(() => looked.acked().size === 1, 10_000);
      await Bun.sleep(500); // about thirty more looks on the three nodes
      expect(looked.received.length).toBe(1);
      expect(looked.received[0]?.json.data).toMatchObject({ key_id: key.result.id, days_left: 1 });
      const [row] = await pg`SELECT count(*)::int AS n FROM webhook_outbox WHERE type = 'key.expiring'`;
      expect(row?.n).toBe(1);
    } finally {
      looked.stop();
    }
  }, 15_000);

  test("a node killed (SIGKILL) between its event and the delivery loses nothing: another node delivers it", async () => {
    for (const n of cluster.nodes) n.proc.kill("SIGTERM");
    await Promise.all(cluster.nodes.map((n) => n.proc.exited));
    // a node that would look at the outbox only in a minute: its event stays undelivered until it is killed
    const slow = join(cluster.dir, "slow.toml");
    await Bun.write(slow, ALERTS(60_000));
    const victim = await cluster.spawn({ TEXTAI_CONFIG: slow });
    extra.push(victim);
    await Bun.sleep(300);
    const before = hook.acked().size;
    const down = await admin(victim, "POST", `/admin/v1/accounts/${account}/credits`, { amount: -60 });
    expect(down.status).toBe(200);
    const [pending] =
      await pg`SELECT event_id, status, attempts FROM webhook_outbox WHERE status = 'pending' AND type = 'balance.low'`;
    expect(pending).toMatchObject({ status: "pending", attempts: 0 });
    victim.proc.kill("SIGKILL");
    await victim.proc.exited;
    await Bun.sleep(200);
    expect(hook.acked().size).toBe(before);
    extra.push(await cluster.spawn());
    await hook.until(() => hook.acked().has(pending?.event_id as string), 10_000);
    expect(hook.acked().get(pending?.event_id as string)).toBe(1);
  }, 25_000);
});
