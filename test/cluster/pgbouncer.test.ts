/**
 * Cluster mode behind PgBouncer in transaction pooling mode (issue 26): Debian's pgbouncer (1.18,
 * before named prepared statements were tracked), started here in front of a fresh database with a
 * pool of 3 server connections, three gateway nodes through it with TEXTAI_DATABASE_PREPARE=false,
 * and Redis as in the other cluster tests. Checks migrations at start, exact credits under
 * concurrency, key revocation, the request log and knowledge search, and that the nodes really
 * shared the pooler's 3 connections. Needs 127.0.0.1:5432, :6379 and /usr/sbin/pgbouncer; skips
 * loudly without them, fails under CI (.ci/run installs pgbouncer).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { loadConfig } from "../../src/config";
import { PG_MIGRATIONS } from "../../src/storage/migrations-pg";
import { type Pgbouncer, pgbouncerAvailable, startPgbouncer } from "../helpers/pgbouncer";
import { freshDatabase, nodesRedis, sharedServersUp } from "../helpers/shared-servers";
import { startUpstream, type Upstream } from "../helpers/upstream";
import { HELP_CENTER } from "../knowledge/corpus";
import {
  admin,
  balanceOn,
  type Cluster,
  chat,
  clusterConfig,
  expectNothingCharged,
  keyCall,
  killWhileChargeWaits,
  newKey,
  startCluster,
} from "./nodes";

const shared = (await sharedServersUp("the PgBouncer cluster tests")) && pgbouncerAvailable("the PgBouncer cluster tests");

/** server connections pgbouncer opens to PostgreSQL for the gateway's database */
const POOL = 3;

let sim: Upstream;
let db: Awaited<ReturnType<typeof freshDatabase>>;
let bouncer: Pgbouncer;
/** a direct connection (not through the pooler), for checking what the nodes wrote */
let pg: SQL;
let cluster: Cluster;
let redis: Awaited<ReturnType<typeof nodesRedis>>;
/** the most backends PostgreSQL had on the database at once, other than `pg`'s, sampled while the tests run */
let peakBackends = 0;
let sampling: ReturnType<typeof setInterval> | undefined;

beforeAll(async () => {
  if (!shared) return;
  sim = await startUpstream({ latencyMs: 20 });
  db = await freshDatabase();
  bouncer = await startPgbouncer(db.url, { poolSize: POOL });
  redis = await nodesRedis("the PgBouncer cluster tests on a Redis Cluster");
  pg = new SQL(db.url, { max: 1 });
  sampling = setInterval(() => {
    pg`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = ${db.name} AND pid <> pg_backend_pid()`.then(
      ([r]) => {
        peakBackends = Math.max(peakBackends, r.n);
      },
      () => {},
    );
  }, 20);
  // each node would open 4 connections of its own (TEXTAI_DATABASE_POOL's default): 12 clients of the pooler's 3
  cluster = await startCluster({
    n: 3,
    databaseUrl: bouncer.url,
    redisUrl: redis.url,
    redisPrefix: redis.prefix,
    configText: clusterConfig(`${sim.url}/v1`),
    env: { TEXTAI_DATABASE_PREPARE: "false" },
    viaPgbouncer: false,
  });
}, 60_000);

afterAll(async () => {
  if (!shared) return;
  clearInterval(sampling);
  await cluster?.close();
  await bouncer?.stop();
  await pg?.close();
  await db?.drop();
  await redis?.flush();
  await sim?.close();
}, 30_000);

const show = (r: { status: number; text: string }) => `${r.status} ${r.text.slice(0, 300)}`;

test("TEXTAI_DATABASE_PREPARE or database_prepare turns named prepared statements off; on by default", () => {
  expect(loadConfig({}).databasePrepare).toBe(true);
  expect(loadConfig({ TEXTAI_DATABASE_PREPARE: "false" }).databasePrepare).toBe(false);
  expect(loadConfig({}, "database_prepare = false").databasePrepare).toBe(false);
  // the environment wins over the file
  expect(loadConfig({ TEXTAI_DATABASE_PREPARE: "true" }, "database_prepare = false").databasePrepare).toBe(true);
  expect(() => loadConfig({ TEXTAI_DATABASE_PREPARE: "no" })).toThrow(/TEXTAI_DATABASE_PREPARE/);
});

describe.skipIf(!shared)("three nodes behind PgBouncer 1.18 in transaction mode", () => {
  test("named prepared statements break behind it; the nodes' setting (prepare: false) does not", async () => {
    // what TEXTAI_DATABASE_PREPARE=false avoids: Bun's client names its statements per connection,
    // and the pooler hands the next transaction another server connection
    const run = async (prepare: boolean) => {
      const clients = [0, 1, 2].map(() => new SQL(bouncer.url, { max: 4, prepare }));
      try {
        for (const round of [1, 2])
          await Promise.all(
            clients.flatMap((c, k) => Array.from({ length: 30 }, (_, i) => c`SELECT ${i}::int * ${round}::int + ${k}::int AS n`)),
          );
        return "ok";
      } catch (e) {
        return (e as Error).message;
      } finally {
        for (const c of clients) await c.close();
      }
    };
    expect(await run(true)).toMatch(/prepared statement "\w+" (already exists|does not exist)/);
    expect(await run(false)).toBe("ok");
  });

  test("the nodes migrated through the pooler, every migration once", async () => {
    for (const n of cluster.nodes) expect((await fetch(`${n.url}/ready`)).status).toBe(200);
    const rows = await pg`SELECT tag FROM _migrations ORDER BY tag`;
    expect(rows.map((r: { tag: string }) => r.tag)).toEqual(PG_MIGRATIONS.map((m) => m.tag));
  });

  test("50 concurrent 1-credit calls over three nodes on 20 credits: exactly 20 answered, each charged once, 30 refused before any provider call", async () => {
    const { key, accountId } = await newKey(cluster.nodes[0], 20);
    sim.reset();
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => chat(cluster.nodes[i % 3], key, `spend ${i}`, { "cache-control": "no-cache" })),
    );
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 402);
    expect(ok.length, results.map(show).join("\n")).toBe(20);
    expect(refused.length).toBe(30);
    expect(sim.calls.count).toBe(20);
    for (const n of cluster.nodes) expect(await balanceOn(n, key)).toBe(0);
    const charges = (await pg`SELECT request_id, amount::int AS amount FROM ledger
      WHERE account_id = ${accountId} AND kind = 'charge' ORDER BY request_id`) as { request_id: string; amount: number }[];
    const answered = ok.map((r) => r.headers.get("x-request-id") as string).sort();
    expect(charges.map((c) => c.request_id)).toEqual(answered);
    expect(charges.every((c) => c.amount === -1)).toBe(true);
    const [acc] = await pg`SELECT balance::int AS balance FROM accounts WHERE id = ${accountId}`;
    expect(acc.balance).toBe(0);
    const [holds] = await pg`SELECT count(*)::int AS n FROM credit_holds WHERE account_id = ${accountId}`;
    expect(holds.n).toBe(0);
  });

  test("a key revoked on node 1 is refused by nodes 2 and 3, and the request log is readable on another node", async () => {
    const [n1, n2, n3] = cluster.nodes;
    const { key, id } = await newKey(n1, 100);
    const answered = await chat(n2, key, "before the revocation");
    expect(answered.status, show(answered)).toBe(200);
    const requestId = answered.headers.get("x-request-id") as string;
    // the request log is written in batches: readable on node 3 within 5 s (the contract's bound)
    const until = Date.now() + 5000;
    for (;;) {
      const res = await fetch(`${n3.url}/api/v1/account/requests?limit=50`, { headers: { "x-api-key": key } });
      expect(res.status).toBe(200);
      const page = (await res.json()) as { data: { result: { data: { request_id: string; status: number }[] } } };
      const entry = page.data.result.data.find((e) => e.request_id === requestId);
      if (entry) {
        expect(entry.status).toBe(200);
        break;
      }
      if (Date.now() > until) throw new Error(`${requestId} not in node 3's request log within 5 s`);
      await Bun.sleep(100);
    }
    for (const n of [n2, n3]) expect((await fetch(`${n.url}/v1/models`, { headers: { "x-api-key": key } })).status).toBe(200);
    const revoked = await admin(n1, "DELETE", `/admin/v1/keys/${id}`);
    expect(revoked.status).toBe(200);
    const t0 = performance.now();
    for (const n of [n2, n3]) {
      for (;;) {
        const res = await fetch(`${n.url}/v1/models`, { headers: { "x-api-key": key } });
        if (res.status === 401) break;
        expect(performance.now() - t0).toBeLessThan(1000);
        await Bun.sleep(5);
      }
    }
    const [row] = await pg`SELECT status FROM api_keys WHERE id = ${id}`;
    expect(row.status).toBe("revoked");
  });

  test("a knowledge base made on node 1 is searched on nodes 2 and 3 alike", async () => {
    const [n1, n2, n3] = cluster.nodes;
    const { key } = await newKey(n1, 1000);
    const call = (node: typeof n1, method: string, path: string, body?: unknown) => keyCall(node, key, method, path, body);
    const docs = HELP_CENTER.documents.slice(0, 10);
    const kb = await call(n1, "POST", "/api/v1/knowledge-bases", { name: "help" });
    expect(kb.status, show(kb)).toBe(201);
    const added = await call(n1, "POST", `/api/v1/knowledge-bases/${kb.result.id}/documents`, {
      documents: docs.map(({ title, content, metadata }) => ({ title, content, metadata })),
    });
    expect(added.status, show(added)).toBe(201);
    const q = HELP_CENTER.queries.find((x) => docs.some((d) => d.id === x.expected));
    if (!q) throw new Error("the fixture has no query on its first 10 documents");
    const answers = await Promise.all(
      [n2, n3].map((n) =>
        call(n, "POST", `/api/v1/knowledge-bases/${kb.result.id}/search`, { query: q.query, top_k: 3, min_score: 0 }),
      ),
    );
    for (const a of answers) expect(a.status, show(a)).toBe(200);
    expect(answers[0]?.result.results.length).toBeGreaterThan(0);
    expect(answers[0]?.result.results).toEqual(answers[1]?.result.results);
  });

  test("the three nodes shared the pooler's server connections: PostgreSQL never saw more than the pool", async () => {
    // the next test opens a direct connection of its own
    clearInterval(sampling);
    const pools = await bouncer.show("POOLS");
    const ours = pools.find((p) => p.database === "textai");
    expect(ours?.pool_mode).toBe("transaction");
    const stats = await bouncer.show("STATS");
    const through = stats.find((s) => s.database === "textai");
    console.log(
      `behind pgbouncer: ${through?.total_xact_count} transactions and ${through?.total_query_count} queries through it, at most ${peakBackends} PostgreSQL backends for 3 nodes`,
    );
    expect(Number(through?.total_xact_count)).toBeGreaterThan(50);
    expect(peakBackends).toBeGreaterThan(0);
    expect(peakBackends).toBeLessThanOrEqual(POOL);
  });

  test("kill -9 of a node whose charge waits for a lock: the pooler gives the transaction up, nothing is charged", async () => {
    const { key, accountId } = await newKey(cluster.nodes[0], 10);
    // the node's charge batch waits for the account's row on one of the pooler's server connections
    const { waiting, answer } = await killWhileChargeWaits({ cluster, sim, pg, db, key, accountId });
    expect(waiting).toBe(1);
    expect(answer).toBe("no answer");
    await Bun.sleep(300);
    await expectNothingCharged(pg, accountId, 10);
    // and the pool still serves the other nodes
    const after = await chat(cluster.nodes[1], key, "after the kill", { "cache-control": "no-cache" });
    expect(after.status, show(after)).toBe(200);
  }, 30_000);
});
