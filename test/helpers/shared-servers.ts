import { RedisClient, SQL } from "bun";
import { RedisLink } from "../../src/redis/link";

/**
 * PostgreSQL and Redis for the tests of many nodes: 127.0.0.1:5432 (trust auth, user postgres,
 * database test) and 127.0.0.1:6379, or TEXTAI_TEST_PG / TEXTAI_TEST_REDIS. Each test file makes a
 * database of its own (dropped at the end) and takes a Redis logical db of its own (flushed first).
 * Unreachable servers skip the tests loudly, except under CI=true, where they fail.
 */
export const PG_ADMIN_URL = process.env.TEXTAI_TEST_PG ?? "postgres://postgres@127.0.0.1:5432/test";
export const REDIS_BASE_URL = process.env.TEXTAI_TEST_REDIS ?? "redis://127.0.0.1:6379";

/** How long to keep trying before calling a server unreachable: servers may still be starting. */
const WAIT_MS = Number(process.env.TEXTAI_TEST_SERVER_WAIT_MS ?? (process.env.CI === "true" ? 60_000 : 3_000));

/** Tries `check` until it succeeds or WAIT_MS has passed; answers null, or the last error's message. */
async function reachable(check: () => Promise<unknown>): Promise<string | null> {
  const deadline = Date.now() + WAIT_MS;
  let last = "not tried";
  for (;;) {
    try {
      await Promise.race([check(), Bun.sleep(3000).then(() => Promise.reject(new Error("no answer in 3 s")))]);
      return null;
    } catch (e) {
      last = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    }
    if (Date.now() >= deadline) return last;
    await Bun.sleep(500);
  }
}

async function probe(): Promise<{ pg: string | null; redis: string | null }> {
  const [pg, redis] = await Promise.all([
    reachable(async () => {
      const sql = new SQL(PG_ADMIN_URL, { connectionTimeout: 2, max: 1 });
      try {
        await sql`SELECT 1`;
      } finally {
        await sql.close();
      }
    }),
    reachable(async () => {
      const r = new RedisClient(REDIS_BASE_URL, { autoReconnect: false, connectionTimeout: 2000 });
      try {
        await r.connect();
        await r.send("PING", []);
      } finally {
        r.close();
      }
    }),
  ]);
  return { pg, redis };
}

// One probe for the whole test run: every file that needs the servers shares its answer.
const PROBE_KEY = Symbol.for("textai.test.sharedServersProbe");
type ProbeHolder = { [PROBE_KEY]?: Promise<{ pg: string | null; redis: string | null }> };

export async function sharedServersUp(what: string): Promise<boolean> {
  const holder = globalThis as ProbeHolder;
  holder[PROBE_KEY] ??= probe();
  const { pg, redis } = await holder[PROBE_KEY];
  if (pg === null && redis === null) return true;
  const missing = [pg !== null && `PostgreSQL (${PG_ADMIN_URL}: ${pg})`, redis !== null && `Redis (${REDIS_BASE_URL}: ${redis})`]
    .filter(Boolean)
    .join(" and ");
  if (process.env.CI === "true")
    throw new Error(`${what}: ${missing} unreachable for ${WAIT_MS} ms, and CI=true: failing instead of skipping`);
  console.warn(`\n!!! SKIPPING ${what}: ${missing} unreachable. These tests need both; CI runs them.\n`);
  return false;
}

/** A fresh database `textai_test_<random>`; `drop()` removes it (closing what still holds it). */
export async function freshDatabase(): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const name = `textai_test_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const admin = new SQL(PG_ADMIN_URL);
  await admin.unsafe(`CREATE DATABASE ${name}`);
  await admin.close();
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const a = new SQL(PG_ADMIN_URL);
      try {
        await a.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await a.close();
      }
    },
  };
}

/**
 * A Redis logical db of its own, flushed first: one of 1..15 at random, among those where no
 * gateway node has beaten its heart in the last 5 s (`textai:nodes`). A node still running on a db,
 * left by another run or by hand, would count in the nodes' shares of a limit and change what the
 * tests see. One connection looks at a db drawn and, unused, flushes it.
 */
export async function freshRedis(): Promise<{ url: string; db: number; flush(): Promise<void> }> {
  const base = REDIS_BASE_URL.replace(/\/\d*$/, "");
  const flushDb = async (db: number, unused: boolean) => {
    const r = new RedisClient(`${base}/${db}`, { autoReconnect: false });
    try {
      await r.connect();
      if (unused) {
        const [secs] = (await r.send("TIME", [])) as string[];
        const live = Number(await r.send("ZCOUNT", ["textai:nodes", String(Number(secs) * 1000 - 5000), "+inf"]));
        if (live > 0) return false;
      }
      await r.send("FLUSHDB", []);
      return true;
    } finally {
      r.close();
    }
  };
  for (const db of Array.from({ length: 15 }, (_, i) => i + 1).sort(() => Math.random() - 0.5))
    if (await flushDb(db, true)) return { url: `${base}/${db}`, db, flush: () => flushDb(db, false).then(() => {}) };
  throw new Error("every Redis db from 1 to 15 has gateway nodes running on it: stop them");
}

// One Redis Cluster for the whole test run: TEXTAI_TEST_REDIS_CLUSTER (CI starts one, .ci/servers.ts),
// or three local redis-server processes started on first use and stopped when the run exits.
const CLUSTER_KEY = Symbol.for("textai.test.redisCluster");
type ClusterHolder = { [CLUSTER_KEY]?: Promise<string | Error> };

function clusterSeeds(): Promise<string | Error> {
  const holder = globalThis as ClusterHolder;
  holder[CLUSTER_KEY] ??= (async () => {
    const given = process.env.TEXTAI_TEST_REDIS_CLUSTER?.trim();
    if (given) return given;
    try {
      const { startRedisCluster } = await import("./redis-cluster");
      // daemons, like CI's: `bun test` kills the processes it spawned when a test times out, and
      // the cluster must outlive that for the files after it
      const c = await startRedisCluster({ n: 3, daemonize: true });
      c.stopWhenGone(process.pid);
      return c.seeds;
    } catch (e) {
      return e instanceof Error ? e : new Error(String(e));
    }
  })();
  return holder[CLUSTER_KEY];
}

/**
 * A Redis Cluster of three masters (its seed nodes, comma-separated, for TEXTAI_REDIS_URL with
 * TEXTAI_REDIS_CLUSTER=true), emptied first; null (skipping loudly) when none can be had, except
 * under CI=true, where that fails.
 */
export async function freshRedisCluster(what: string): Promise<{ url: string; flush(): Promise<void> } | null> {
  const seeds = await clusterSeeds();
  if (seeds instanceof Error) {
    if (process.env.CI === "true")
      throw new Error(`${what}: no Redis Cluster (${seeds.message}), and CI=true: failing instead of skipping`);
    console.warn(`\n!!! SKIPPING ${what}: no Redis Cluster (${seeds.message}). CI runs them.\n`);
    return null;
  }
  const { flushCluster } = await import("./redis-cluster");
  const flush = () => flushCluster(seeds);
  await flush();
  return { url: seeds, flush };
}

/**
 * TEXTAI_TEST_ON_REDIS_CLUSTER=1 (CI's second pass, .ci/run): the Redis that a test's gateway nodes
 * share is the Redis Cluster of freshRedisCluster instead of a logical db of the one Redis.
 */
export const ON_REDIS_CLUSTER = process.env.TEXTAI_TEST_ON_REDIS_CLUSTER === "1";

/** A Redis URL naming several seed nodes is a Redis Cluster's (the config refuses it otherwise). */
export const isClusterUrl = (url: string) => url.includes(",");

/**
 * The Redis a test's nodes share, emptied first: a logical db of the one Redis (freshRedis), or
 * with TEXTAI_TEST_ON_REDIS_CLUSTER=1 the Redis Cluster (its seeds, comma-separated). `env` is
 * what a node needs to use it.
 */
export async function nodesRedis(what: string): Promise<{ url: string; env: Record<string, string>; flush(): Promise<void> }> {
  if (ON_REDIS_CLUSTER) {
    const c = await freshRedisCluster(`${what} (on one Redis instead)`);
    if (c) return { url: c.url, env: redisEnv(c.url), flush: c.flush };
  }
  const r = await freshRedis();
  return { url: r.url, env: redisEnv(r.url), flush: r.flush };
}

/** TEXTAI_REDIS_URL for `url`, with TEXTAI_REDIS_CLUSTER=true when it names a cluster's seeds. */
export function redisEnv(url: string): Record<string, string> {
  return isClusterUrl(url) ? { TEXTAI_REDIS_URL: url, TEXTAI_REDIS_CLUSTER: "true" } : { TEXTAI_REDIS_URL: url };
}

/** A started RedisLink on `url` (one Redis, or a cluster's seeds), as a node would have. */
export function redisLinkTo(url: string): RedisLink {
  const link = new RedisLink(url, undefined, { cluster: isClusterUrl(url) });
  link.start();
  return link;
}
