/** Two (or more) gateway nodes on a fresh PostgreSQL database and Redis keys of their own: the bench's `cluster` target. */
import { createOwnDatabase, dropOwnDatabase } from "../../test/helpers/own-database";
import { type Gateway, type GatewayOptions, startGateway } from "./gateway";

export interface ClusterNodes {
  nodes: Gateway[];
  /** the database's name (dropped by stop()) */
  database: string;
  stop(): Promise<void>;
}

/**
 * `n` gateway nodes on a fresh PostgreSQL database and a Redis key prefix of the run's own
 * (TEXTAI_REDIS_PREFIX; the keys are deleted by stop(), and nothing else in the Redis is touched)
 * (TEXTAI_BENCH_PG, TEXTAI_BENCH_REDIS; default the loopback servers), each started with `opts` (pinned like the
 * single node unless `opts.cpu` says otherwise). TEXTAI_BENCH_REDIS_CLUSTER (seed URLs) runs them
 * on a Redis Cluster instead.
 */
export async function startClusterNodes(
  opts: Omit<GatewayOptions, "env"> & { n?: number; env?: Record<string, string> },
): Promise<ClusterNodes> {
  const { RedisClient } = await import("bun");
  const pgAdmin = process.env.TEXTAI_BENCH_PG ?? "postgres://postgres@127.0.0.1:5432/test";
  const redisCluster = process.env.TEXTAI_BENCH_REDIS_CLUSTER;
  const redisUrl = redisCluster ?? process.env.TEXTAI_BENCH_REDIS ?? "redis://127.0.0.1:6379/14";
  let name: string;
  try {
    ({ name } = await createOwnDatabase(pgAdmin, "bench"));
  } catch (e) {
    throw new Error(`PostgreSQL unreachable at ${pgAdmin}: ${(e as Error).message}`);
  }
  const prefix = `textai-bench-${crypto.randomUUID().replaceAll("-", "").slice(0, 10)}`;
  // the run's keys (those under its prefix), on one Redis; a Redis Cluster's expire on their own
  const deleteKeys = async () => {
    if (redisCluster) return;
    const redis = new RedisClient(redisUrl, { autoReconnect: false, connectionTimeout: 2000 });
    try {
      await redis.connect();
      let cursor = "0";
      do {
        const [next, keys] = (await redis.send("SCAN", [cursor, "MATCH", `${prefix}:*`, "COUNT", "1000"])) as [string, string[]];
        cursor = next;
        for (const k of keys) await redis.send("UNLINK", [k]);
      } while (cursor !== "0");
    } catch {
      // the bench's result stands; its keys expire
    } finally {
      redis.close();
    }
  };
  const dbUrl = new URL(pgAdmin);
  dbUrl.pathname = `/${name}`;
  const env: Record<string, string> = {
    TEXTAI_DATABASE_URL: dbUrl.toString(),
    TEXTAI_REDIS_URL: redisUrl,
    TEXTAI_REDIS_PREFIX: prefix,
    ...(redisCluster ? { TEXTAI_REDIS_CLUSTER: "true" } : {}),
    ...opts.env,
  };
  const nodes: Gateway[] = [];
  const drop = async () => {
    await dropOwnDatabase(pgAdmin, name).catch(() => {});
    await deleteKeys();
  };
  try {
    for (let i = 0; i < (opts.n ?? 2); i++)
      nodes.push(await startGateway({ ...opts, keyPlans: opts.keyPlans ?? ["bench"], env }));
  } catch (e) {
    for (const n of nodes) await n.stop();
    await drop();
    throw e;
  }
  return {
    nodes,
    database: name,
    async stop() {
      for (const n of nodes) await n.stop();
      await drop();
    },
  };
}
