/**
 * A node on PostgreSQL listens at once and migrates in the background; /ready (what a load balancer
 * polls) answers 503 until its migrations have run, and 200 after. Before, it answered 200 with no
 * table in the database yet. The migration is held back here by taking its advisory lock.
 */
import { afterAll, expect, test } from "bun:test";
import { SQL } from "bun";
import { freshDatabase, freshRedis, sharedServersUp } from "../helpers/shared-servers";
import { type Cluster, startCluster } from "./nodes";

const shared = await sharedServersUp("the readiness test of a migrating node");
let db: Awaited<ReturnType<typeof freshDatabase>> | undefined;
let cluster: Cluster | undefined;
afterAll(async () => {
  await cluster?.close();
  await db?.drop();
});

test.skipIf(!shared)(
  "/ready is 503 while the node's migrations wait, 200 once they have run",
  async () => {
    db = await freshDatabase();
    const redis = await freshRedis();
    const lock = new SQL(db.url, { max: 2 });
    const held = await lock.reserve();
    // the lock every node takes to migrate (src/storage/postgres.ts MIGRATION_LOCK)
    await held.unsafe("BEGIN; SELECT pg_advisory_xact_lock(7263011)");
    cluster = await startCluster({
      n: 1,
      databaseUrl: db.url,
      redisUrl: redis.url,
      redisPrefix: redis.prefix,
      configText: "",
      viaPgbouncer: false,
    });
    const node = cluster.nodes[0]!;
    const ready = async () => {
      const res = await fetch(`${node.url}/ready`);
      return { status: res.status, body: (await res.json()) as { message: string } };
    };
    await Bun.sleep(300);
    const waiting = await ready();
    expect(waiting.status).toBe(503);
    // the database answers: it is said to be migrating, not unreachable (2026-12-06: "database unavailable")
    expect(waiting.body.message).toStartWith("database migrating");
    // a call waits at most 2 s for the schema, then is refused saying why, free
    const call = await fetch(`${node.url}/api/v1/ai/sentiment-analysis`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "tai_live_not-a-key-yet" },
      body: JSON.stringify({ text: "fine" }),
    });
    expect(call.status).toBe(503);
    expect(((await call.json()) as { message: string }).message).toContain("tables are being made or updated");
    const [tables] = await lock`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'`;
    expect(tables.n).toBe(0);
    await held.unsafe("COMMIT");
    held.release();
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      await Bun.sleep(100);
      status = (await ready()).status;
    }
    expect(status).toBe(200);
    const [after] = await lock`SELECT count(*)::int AS n FROM _migrations`;
    expect(after.n).toBeGreaterThan(10);
    await lock.close();
    await redis.flush();
  },
  30_000,
);
