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
    expect(waiting.body.message).toContain("database");
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
