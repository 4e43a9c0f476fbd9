import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RedisClient } from "bun";

/**
 * A Redis Cluster of `n` local `redis-server` processes (masters only), on free ports of
 * 127.0.0.1, made with `redis-cli --cluster create` and waited for until every node reports
 * `cluster_state:ok`. Used by the tests (test/helpers/shared-servers.ts: when
 * TEXTAI_TEST_REDIS_CLUSTER is unset) and by CI's preflight (.ci/servers.ts, `daemonize`: the
 * processes outlive it). `seeds` is the value for TEXTAI_REDIS_URL with TEXTAI_REDIS_CLUSTER=true.
 */
export interface LocalRedisCluster {
  seeds: string;
  ports: number[];
  dir: string;
  /** stops the processes and removes their directory */
  stop(): void;
  /**
   * Stops the cluster once process `pid` has exited, from a small detached shell of its own:
   * `bun test` runs no exit handler, and a run that crashes leaves no server behind either.
   */
  stopWhenGone(pid: number): void;
}

const SERVER = process.env.TEXTAI_REDIS_SERVER_BIN ?? "redis-server";
const CLI = process.env.TEXTAI_REDIS_CLI_BIN ?? "redis-cli";

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once("error", () => resolve(false));
    s.listen(port, "127.0.0.1", () => s.close(() => resolve(true)));
  });
}

/** n ports p whose cluster bus port (p + 10000) is free too. */
async function freePorts(n: number): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < n) {
    const p = 20_000 + Math.floor(Math.random() * 30_000);
    if (ports.includes(p) || ports.includes(p + 10_000) || ports.includes(p - 10_000)) continue;
    if ((await portFree(p)) && (await portFree(p + 10_000))) ports.push(p);
  }
  return ports;
}

async function clusterInfo(port: number): Promise<string> {
  const r = new RedisClient(`redis://127.0.0.1:${port}`, { autoReconnect: false, connectionTimeout: 1000 });
  try {
    await r.connect();
    return String(await r.send("CLUSTER", ["INFO"]));
  } finally {
    r.close();
  }
}

export async function startRedisCluster(
  opts: { n?: number; daemonize?: boolean; timeoutMs?: number } = {},
): Promise<LocalRedisCluster> {
  const n = opts.n ?? 3;
  const dir = mkdtempSync(join(tmpdir(), "textai-redis-cluster-"));
  const ports = await freePorts(n);
  const procs: ReturnType<typeof Bun.spawn>[] = [];
  const stop = () => {
    for (const p of ports) Bun.spawnSync([CLI, "-p", String(p), "shutdown", "nosave"], { stdout: "ignore", stderr: "ignore" });
    for (const p of procs) p.kill(9);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const port of ports) {
      const args = [
        SERVER,
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        `nodes-${port}.conf`,
        "--cluster-node-timeout",
        "2000",
        "--dir",
        dir,
        "--save",
        "",
        "--appendonly",
        "no",
        "--logfile",
        join(dir, `redis-${port}.log`),
        "--daemonize",
        opts.daemonize ? "yes" : "no",
        "--pidfile",
        join(dir, `redis-${port}.pid`),
      ];
      const proc = Bun.spawn(args, { cwd: dir, stdout: "ignore", stderr: "pipe" });
      if (opts.daemonize) {
        if ((await proc.exited) !== 0) throw new Error(`redis-server on ${port}: ${await new Response(proc.stderr).text()}`);
      } else procs.push(proc);
    }
    // every node answers before the cluster is made
    const deadline = Date.now() + (opts.timeoutMs ?? 20_000);
    for (const port of ports) {
      for (;;) {
        try {
          await clusterInfo(port);
          break;
        } catch (e) {
          if (Date.now() > deadline) throw new Error(`redis-server on ${port} did not answer: ${e}`);
          await Bun.sleep(50);
        }
      }
    }
    const create = Bun.spawnSync(
      [CLI, "--cluster", "create", ...ports.map((p) => `127.0.0.1:${p}`), "--cluster-replicas", "0", "--cluster-yes"],
      { stdout: "pipe", stderr: "pipe" },
    );
    if (create.exitCode !== 0)
      throw new Error(
        `redis-cli --cluster create exited ${create.exitCode}: ${create.stdout.toString()}${create.stderr.toString()}`,
      );
    for (const port of ports) {
      for (;;) {
        const info = await clusterInfo(port).catch((e) => String(e));
        if (info.includes("cluster_state:ok")) break;
        if (Date.now() > deadline) throw new Error(`redis cluster node ${port} not ok: ${info.slice(0, 300)}`);
        await Bun.sleep(50);
      }
    }
  } catch (e) {
    stop();
    throw e;
  }
  const stopWhenGone = (pid: number) => {
    const pids = procs.map((p) => p.pid).join(" ");
    const shutdown = ports.map((p) => `'${CLI}' -p ${p} shutdown nosave`).join("; ");
    const kill = pids ? `kill ${pids}; sleep 1; kill -9 ${pids};` : "";
    const script = `while kill -0 ${pid} 2>/dev/null; do sleep 1; done; ${shutdown}; ${kill} rm -rf '${dir}'`;
    // detached (the shell that starts it exits at once): `bun test` kills the processes a test run
    // spawned when a test times out, and this watcher must outlive that to stop daemonized servers
    Bun.spawnSync(["sh", "-c", `(${script}) </dev/null >/dev/null 2>&1 &`], { stdout: "ignore", stderr: "ignore" });
  };
  return { seeds: ports.map((p) => `redis://127.0.0.1:${p}`).join(","), ports, dir, stop, stopWhenGone };
}

/** The masters' ports of a running cluster, from CLUSTER SLOTS on any seed. */
export async function clusterMasters(seeds: string): Promise<{ url: string; slots: [number, number][] }[]> {
  const first = seeds.split(",")[0].trim();
  const r = new RedisClient(first, { autoReconnect: false, connectionTimeout: 2000 });
  try {
    await r.connect();
    const ranges = (await r.send("CLUSTER", ["SLOTS"])) as [number, number, [string, number, ...unknown[]], ...unknown[]][];
    const byNode = new Map<string, [number, number][]>();
    for (const [start, end, [host, port]] of ranges) {
      const url = `redis://${host || new URL(first).hostname}:${port}`;
      byNode.set(url, [...(byNode.get(url) ?? []), [Number(start), Number(end)]]);
    }
    return [...byNode].map(([url, slots]) => ({ url, slots }));
  } finally {
    r.close();
  }
}

/**
 * One local `redis-server` of the test's own (no persistence) on a free port, with `args` after
 * the defaults (e.g. `--maxmemory 1`): for what a test may not do to the shared Redis, such as
 * making it refuse writes or forget its scripts. `stop()` ends it.
 */
export async function startLocalRedis(args: string[] = []): Promise<{ url: string; port: number; stop(): void }> {
  const [port] = await freePorts(1);
  const proc = Bun.spawn([SERVER, "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", ...args], {
    stdout: "ignore",
    stderr: "ignore",
  });
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    const r = new RedisClient(url, { autoReconnect: false, connectionTimeout: 500 });
    try {
      await r.connect();
      await r.send("PING", []);
      r.close();
      break;
    } catch (e) {
      r.close();
      if (i > 100) {
        proc.kill(9);
        throw new Error(`redis-server on port ${port} did not start: ${(e as Error).message}`);
      }
      await Bun.sleep(50);
    }
  }
  return { url, port, stop: () => proc.kill(9) };
}
