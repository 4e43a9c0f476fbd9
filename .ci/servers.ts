/**
 * CI preflight: reports whether the PostgreSQL and Redis the tests of many nodes need are reachable
 * (the same URLs as test/helpers/shared-servers.ts), waiting for them while they start. If one is
 * still down it tries to start the machine's service once, then reports again. It never fails the
 * run itself: under CI=true those tests fail with the reason, and this output says what was seen.
 *
 * It also starts a Redis Cluster of three local redis-server processes (daemons, so they outlive
 * this script; `redis-cli --cluster create`, waited for until `cluster_state:ok`) and writes its
 * seed nodes as `TEXTAI_TEST_REDIS_CLUSTER=...` to the file named by TEXTAI_CI_ENV_FILE, which
 * .ci/run reads before the tests. If it cannot, the cluster tests start their own, or fail under CI.
 */
import { appendFileSync } from "node:fs";
import { RedisClient, SQL } from "bun";
import { startRedisCluster } from "../test/helpers/redis-cluster";

const PG = process.env.TEXTAI_TEST_PG ?? "postgres://postgres@127.0.0.1:5432/test";
const REDIS = process.env.TEXTAI_TEST_REDIS ?? "redis://127.0.0.1:6379";

async function pgVersion(): Promise<string> {
  const sql = new SQL(PG, { connectionTimeout: 2, max: 1 });
  try {
    const [row] = await sql`SHOW server_version`;
    return `PostgreSQL ${row.server_version}`;
  } finally {
    await sql.close();
  }
}

async function redisVersion(): Promise<string> {
  const r = new RedisClient(REDIS, { autoReconnect: false, connectionTimeout: 2000 });
  try {
    await r.connect();
    const info = String(await r.send("INFO", ["server"]));
    return `Redis ${/redis_version:(\S+)/.exec(info)?.[1] ?? "?"}`;
  } finally {
    r.close();
  }
}

async function waitFor(name: string, check: () => Promise<string>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  let last = "";
  for (;;) {
    try {
      const v = await Promise.race([check(), Bun.sleep(3000).then(() => Promise.reject(new Error("no answer in 3 s")))]);
      console.log(`preflight: ${name} reachable: ${v}`);
      return true;
    } catch (e) {
      last = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    }
    if (Date.now() >= deadline) {
      console.log(`preflight: ${name} NOT reachable after ${ms} ms: ${last}`);
      return false;
    }
    await Bun.sleep(1000);
  }
}

function tryStart(service: string): void {
  const root = process.getuid?.() === 0;
  const cmd = root ? ["service", service, "start"] : ["sudo", "-n", "service", service, "start"];
  try {
    const r = Bun.spawnSync(cmd, { stdout: "pipe", stderr: "pipe" });
    console.log(`preflight: ${cmd.join(" ")} exited ${r.exitCode} ${r.stderr.toString().trim().slice(0, 300)}`);
  } catch (e) {
    console.log(`preflight: could not run ${cmd.join(" ")}: ${e}`);
  }
}

const checks: [string, string, () => Promise<string>][] = [
  [`PostgreSQL at ${PG}`, "postgresql", pgVersion],
  [`Redis at ${REDIS}`, "redis-server", redisVersion],
];
for (const [name, service, check] of checks) {
  if (await waitFor(name, check, 20_000)) continue;
  tryStart(service);
  await waitFor(name, check, 30_000);
}

if (process.env.TEXTAI_TEST_REDIS_CLUSTER) console.log(`preflight: Redis Cluster given: ${process.env.TEXTAI_TEST_REDIS_CLUSTER}`);
else {
  const started = performance.now();
  try {
    const c = await startRedisCluster({ n: 3, daemonize: true, timeoutMs: 30_000 });
    console.log(`preflight: Redis Cluster of three masters ok in ${(performance.now() - started).toFixed(0)} ms: ${c.seeds}`);
    if (process.env.TEXTAI_CI_ENV_FILE) appendFileSync(process.env.TEXTAI_CI_ENV_FILE, `TEXTAI_TEST_REDIS_CLUSTER=${c.seeds}\n`);
  } catch (e) {
    console.log(`preflight: could not start a Redis Cluster: ${e instanceof Error ? e.message : e}`);
  }
}
