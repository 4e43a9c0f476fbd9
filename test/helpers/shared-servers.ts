import { RedisClient, SQL } from "bun";
import { RedisLink } from "../../src/redis/link";
import { createOwnDatabase, dropOwnDatabase } from "./own-database";

/**
 * PostgreSQL and Redis for the tests of many nodes: 127.0.0.1:5432 (trust auth, user postgres,
 * database test) and 127.0.0.1:6379, or TEXTAI_TEST_PG / TEXTAI_TEST_REDIS. Each test file makes a
 * database of its own with a random name (own-database.ts: only a database this process created is
 * ever dropped) and a Redis key prefix of its own (`flush()` deletes only the keys under it; no test
 * empties a Redis db, test/cluster/redis-isolation.test.ts).
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

/** A fresh database `textai_test_<random>`; `drop()` removes it, and only it (own-database.ts). */
export async function freshDatabase(): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const { name, url } = await createOwnDatabase(PG_ADMIN_URL, "test");
  return { url, name, drop: () => dropOwnDatabase(PG_ADMIN_URL, name) };
}

/** A prefix of Redis key and channel names no other test (or gateway) uses: `TEXTAI_REDIS_PREFIX`. */
export const freshRedisPrefix = (): string => `textai-test-${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;

/** Deletes the keys whose names start with `<prefix>:` on the Redis at `url` (SCAN; never a command that empties a db). */
async function deletePrefixed(url: string, prefix: string): Promise<void> {
  const r = new RedisClient(url, { autoReconnect: false, connectionTimeout: 2000 });
  try {
    await r.connect();
    let cursor = "0";
    do {
      const [next, keys] = (await r.send("SCAN", [cursor, "MATCH", `${prefix}:*`, "COUNT", "1000"])) as [string, string[]];
      cursor = next;
      if (keys.length > 0) await Promise.all(keys.map((k) => r.send("UNLINK", [k])));
    } while (cursor !== "0");
  } finally {
    r.close();
  }
}

/** The Redis (one server, or a cluster's seeds) and key prefix that a test's gateway nodes share. */
export interface TestRedis {
  /** the URL (one Redis) or the seeds, comma-separated (a Redis Cluster) */
  url: string;
  /** every key and channel the test's nodes use starts with `<prefix>:` (TEXTAI_REDIS_PREFIX) */
  prefix: string;
  /** what a node needs to use it: TEXTAI_REDIS_URL, TEXTAI_REDIS_PREFIX (and TEXTAI_REDIS_CLUSTER) */
  env: Record<string, string>;
  /** deletes this test's keys (those under its prefix), and nobody else's */
  flush(): Promise<void>;
}

/**
 * The Redis at TEXTAI_TEST_REDIS (its db, 0 unless the URL names one), with a key prefix of this
 * test's own: the test's nodes (and links) use only keys under it, and `flush()` deletes only them.
 * A test never empties a db (another user's data may be in it) and never reads keys it did not make.
 */
export async function freshRedis(): Promise<TestRedis & { db: number }> {
  const url = REDIS_BASE_URL;
  const db = Number(new URL(url).pathname.replace(/^\//, "") || "0");
  const prefix = freshRedisPrefix();
  return { url, db, prefix, env: redisEnv(url, prefix), flush: () => deletePrefixed(url, prefix) };
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
 * TEXTAI_REDIS_CLUSTER=true) and a key prefix of this test's own (as freshRedis); null (skipping
 * loudly) when none can be had, except under CI=true, where that fails.
 */
export async function freshRedisCluster(what: string): Promise<TestRedis | null> {
  const seeds = await clusterSeeds();
  if (seeds instanceof Error) {
    if (process.env.CI === "true")
      throw new Error(`${what}: no Redis Cluster (${seeds.message}), and CI=true: failing instead of skipping`);
    console.warn(`\n!!! SKIPPING ${what}: no Redis Cluster (${seeds.message}). CI runs them.\n`);
    return null;
  }
  const { clusterMasters } = await import("./redis-cluster");
  const prefix = freshRedisPrefix();
  const flush = async () => {
    for (const { url } of await clusterMasters(seeds)) await deletePrefixed(url, prefix);
  };
  return { url: seeds, prefix, env: redisEnv(seeds, prefix), flush };
}

/**
 * TEXTAI_TEST_ON_REDIS_CLUSTER=1 (CI's second pass, .ci/run): the Redis that a test's gateway nodes
 * share is the Redis Cluster of freshRedisCluster instead of a logical db of the one Redis.
 */
export const ON_REDIS_CLUSTER = process.env.TEXTAI_TEST_ON_REDIS_CLUSTER === "1";

/** A Redis URL naming several seed nodes is a Redis Cluster's (the config refuses it otherwise). */
export const isClusterUrl = (url: string) => url.includes(",");

/**
 * The Redis a test's nodes share, with a key prefix of the test's own: the one Redis (freshRedis),
 * or with TEXTAI_TEST_ON_REDIS_CLUSTER=1 the Redis Cluster (its seeds, comma-separated).
 */
export async function nodesRedis(what: string): Promise<TestRedis> {
  if (ON_REDIS_CLUSTER) {
    const c = await freshRedisCluster(`${what} (on one Redis instead)`);
    if (c) return c;
  }
  return freshRedis();
}

/** TEXTAI_REDIS_URL and TEXTAI_REDIS_PREFIX, with TEXTAI_REDIS_CLUSTER=true when `url` names a cluster's seeds. */
export function redisEnv(url: string, prefix: string): Record<string, string> {
  const env: Record<string, string> = { TEXTAI_REDIS_URL: url, TEXTAI_REDIS_PREFIX: prefix };
  if (isClusterUrl(url)) env.TEXTAI_REDIS_CLUSTER = "true";
  return env;
}

/** A started RedisLink on `url` (one Redis, or a cluster's seeds) with key prefix `prefix`, as a node would have. */
export function redisLinkTo(url: string, prefix: string): RedisLink {
  const link = new RedisLink(url, undefined, { cluster: isClusterUrl(url), prefix });
  link.start();
  return link;
}
