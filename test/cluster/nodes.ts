import { expect } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL, type Subprocess } from "bun";
import { type Pgbouncer, startPgbouncer, viaPgbouncer } from "../helpers/pgbouncer";
import { freshDatabase, nodesRedis, redisEnv } from "../helpers/shared-servers";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";

const ROOT = join(import.meta.dir, "../..");
export const ADMIN = "admin-token-for-cluster-tests-0123456789";

/** The nodes' config: the simulator as the provider; plans "five" and "sixty" (5 and 60/min chat), plan "pro" unlimited for tests. */
export const clusterConfig = (simUrl: string) => `
[plans.five.rate_limits]
"chat-completions" = 5

[plans.sixty.rate_limits]
"chat-completions" = 60

[plans.pro.rate_limits]
"chat-completions" = 10000
account = 10000

${simProvider({ url: simUrl, model: "model-a" })}`;

export interface Node {
  url: string;
  proc: Subprocess<"ignore", "pipe", "pipe">;
  logs: string[];
}

export interface Cluster {
  nodes: Node[];
  dir: string;
  env: Record<string, string>;
  /** starts one more node (or again a node that was killed), with `env` added to the cluster's */
  spawn(env?: Record<string, string>): Promise<Node>;
  close(): Promise<void>;
}

/** Reads a node's stdout until it says where it listens. */
async function listening(proc: Subprocess<"ignore", "pipe", "pipe">, logs: string[]): Promise<string> {
  const reader = proc.stdout.getReader();
  let out = "";
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const m = out.match(/listening on (\S+)/);
    if (m) {
      // keep reading (and keeping) the logs, so the pipe never fills up
      void (async () => {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          logs.push(new TextDecoder().decode(value));
        }
      })();
      return m[1];
    }
    const { value, done } = await reader.read();
    if (done) throw new Error(`node exited before listening: ${out}${await new Response(proc.stderr).text()}`);
    out += new TextDecoder().decode(value);
    logs.push(new TextDecoder().decode(value));
  }
  throw new Error(`node did not listen within 20 s: ${out}`);
}

/**
 * N gateway processes (`bun src/cli.ts serve`, each on a port of its own and a SQLite file of its
 * own) on one PostgreSQL database and one Redis (or a Redis Cluster: `redisUrl` lists its seeds),
 * their keys under `redisPrefix`, as an operator would run them.
 */
export async function startCluster(opts: {
  n: number;
  databaseUrl: string;
  redisUrl: string;
  redisPrefix: string;
  configText: string;
  env?: Record<string, string>;
  /** through a pgbouncer of its own; default: TEXTAI_TEST_VIA_PGBOUNCER=1 */
  viaPgbouncer?: boolean;
}): Promise<Cluster> {
  // TEXTAI_TEST_VIA_PGBOUNCER=1: the nodes reach the database through a pgbouncer of their own in
  // transaction mode (docs/many-nodes.md#behind-pgbouncer), to run a cluster test file behind it
  let bouncer: Pgbouncer | null = null;
  if (opts.viaPgbouncer ?? viaPgbouncer()) {
    bouncer = await startPgbouncer(opts.databaseUrl, { poolSize: 6 });
    opts = { ...opts, databaseUrl: bouncer.url, env: { TEXTAI_DATABASE_PREPARE: "false", ...opts.env } };
  }
  const dir = mkdtempSync(join(tmpdir(), "textai-cluster-"));
  const configPath = join(dir, "config.toml");
  await Bun.write(configPath, opts.configText);
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    TEXTAI_DATABASE_URL: opts.databaseUrl,
    // a Redis Cluster's seeds (comma-separated) come with TEXTAI_REDIS_CLUSTER=true
    ...redisEnv(opts.redisUrl, opts.redisPrefix),
    TEXTAI_CONFIG: configPath,
    TEXTAI_ADMIN_TOKEN: ADMIN,
    TEXTAI_LOG_LEVEL: "warn",
    TEXTAI_DRAIN_GRACE_MS: "0",
    ...opts.env,
  };
  let count = 0;
  const nodes: Node[] = [];
  const spawn = async (extra: Record<string, string> = {}): Promise<Node> => {
    const i = ++count;
    const proc = Bun.spawn([process.execPath, "src/cli.ts", "serve", "--port", "0"], {
      cwd: ROOT,
      env: { ...env, TEXTAI_DB: join(dir, `node-${i}.db`), ...extra },
      stdout: "pipe",
      stderr: "pipe",
    });
    const logs: string[] = [];
    const url = await listening(proc, logs);
    return { url, proc, logs };
  };
  for (let i = 0; i < opts.n; i++) nodes.push(await spawn());
  return {
    nodes,
    dir,
    env,
    spawn,
    async close() {
      for (const n of nodes) n.proc.kill("SIGTERM");
      await Promise.all(nodes.map((n) => n.proc.exited));
      await bouncer?.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * What most cluster test files start: the upstream simulator (answering after `latencyMs`), a fresh
 * PostgreSQL database and Redis db (the Redis Cluster with TEXTAI_TEST_ON_REDIS_CLUSTER=1), `n`
 * nodes on them with clusterConfig (and `configExtra` after it), and a direct connection `pg` to
 * the database (of `pgMax` connections). `close` ends them all.
 */
export async function startSimCluster(opts: {
  n: number;
  latencyMs?: number;
  configExtra?: string;
  env?: Record<string, string>;
  pgMax?: number;
}): Promise<{
  sim: Upstream;
  db: Awaited<ReturnType<typeof freshDatabase>>;
  redisUrl: string;
  /** the prefix of every Redis key the nodes use (TEXTAI_REDIS_PREFIX): the test's own */
  redisPrefix: string;
  cluster: Cluster;
  pg: SQL;
  close(): Promise<void>;
}> {
  const sim = await startUpstream({ latencyMs: opts.latencyMs });
  const db = await freshDatabase();
  const redis = await nodesRedis("the cluster tests' nodes on a Redis Cluster");
  const cluster = await startCluster({
    n: opts.n,
    databaseUrl: db.url,
    redisUrl: redis.url,
    redisPrefix: redis.prefix,
    configText: `${clusterConfig(`${sim.url}/v1`)}${opts.configExtra ?? ""}`,
    env: opts.env,
  });
  const pg = opts.pgMax ? new SQL(db.url, { max: opts.pgMax }) : new SQL(db.url);
  return {
    sim,
    db,
    redisUrl: redis.url,
    redisPrefix: redis.prefix,
    cluster,
    pg,
    async close() {
      await cluster.close();
      await pg.close();
      await db.drop();
      await redis.flush();
      await sim.close();
    },
  };
}

export async function admin(node: Node, method: string, path: string, body?: unknown) {
  const res = await fetch(node.url + path, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as { data?: { result?: Record<string, unknown> } };
  return { status: res.status, result: json.data?.result ?? {}, json };
}

/** A call on `node` with a key (x-api-key); `result` is the answer's data.result. */
export async function keyCall(node: Node, key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(node.url + path, {
    method,
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  // biome-ignore lint/suspicious/noExplicitAny: the tests walk the envelope; their assertions check its shape
  return { status: res.status, text, result: (JSON.parse(text) as any).data?.result };
}

/** A key on a new account with `credits` (no welcome credits) and `plan`. */
export async function newKey(node: Node, credits: number, plan = "pro") {
  const acc = await admin(node, "POST", "/admin/v1/accounts", { plan, credits });
  if (acc.status !== 201) throw new Error(`account: ${JSON.stringify(acc.json)}`);
  const key = await admin(node, "POST", "/admin/v1/keys", { label: "cluster", account_id: acc.result.id });
  if (key.status !== 201) throw new Error(`key: ${JSON.stringify(key.json)}`);
  return { key: key.result.key as string, id: key.result.id as string, accountId: acc.result.id as string };
}

export async function chat(node: Node, key: string, content: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${node.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}`, ...headers },
    // max_tokens: a short call holds 1 credit at the default price (docs/pricing.md)
    body: JSON.stringify({ model: "model-a", max_tokens: 100, messages: [{ role: "user", content }] }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text };
}

export async function balanceOn(node: Node, key: string): Promise<number> {
  const res = await fetch(`${node.url}/api/v1/account/usage-summary`, { headers: { "x-api-key": key } });
  const json = (await res.json()) as { data: { result: { balance: number } } };
  return json.data.result.balance;
}

/** The account's ledger holds no charge and its balance is still `balance`: what a killed node's call must leave. */
export async function expectNothingCharged(pg: SQL, accountId: string, balance: number): Promise<void> {
  const [rows] = await pg`SELECT count(*)::int AS n FROM ledger WHERE account_id = ${accountId} AND kind = 'charge'`;
  expect(rows.n).toBe(0);
  const [acc] = await pg`SELECT balance::int AS balance FROM accounts WHERE id = ${accountId}`;
  expect(acc.balance).toBe(balance);
}

/**
 * kill -9 of a new node while its charge batch waits for a lock: a call on the node (the simulator
 * answering after 1 s) holds its credit; a direct transaction takes the account's row, so the
 * node's batch (BEGIN and credit_batch() sent, COMMIT not yet) waits for it; the node is killed,
 * then the row is given back. Returns how many credit_batch() calls were seen waiting on a lock
 * before the kill (1, or the kill proved nothing), and what the caller got ("no answer" when its connection dropped). `pg` is a
 * direct connection to `db`.
 */
export async function killWhileChargeWaits(opts: {
  cluster: Cluster;
  sim: Upstream;
  pg: SQL;
  db: { url: string; name: string };
  key: string;
  accountId: string;
}): Promise<{ waiting: number; answer: number | string }> {
  const { cluster, sim, pg, key, accountId } = opts;
  const victim = await cluster.spawn();
  sim.reset();
  sim.program([{ delayMs: 1000 }]);
  const call = chat(victim, key, "never delivered", { "cache-control": "no-cache" }).then(
    (r) => r.status,
    () => "no answer",
  );
  // the call holds its credit, and is at the provider
  for (let i = 0; i < 200; i++) {
    const [h] = await pg`SELECT count(*)::int AS n FROM credit_holds WHERE account_id = ${accountId}`;
    if (h.n === 1) break;
    await Bun.sleep(10);
  }
  const other = new SQL(opts.db.url, { max: 1 });
  const conn = await other.reserve();
  let waiting = 0;
  try {
    await conn`BEGIN`;
    await conn`SELECT 1 FROM accounts WHERE id = ${accountId} FOR UPDATE`;
    for (let i = 0; i < 300 && waiting === 0; i++) {
      await Bun.sleep(10);
      [{ n: waiting }] = await pg`SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = ${opts.db.name} AND wait_event_type = 'Lock' AND query LIKE '%credit_batch%'`;
    }
    victim.proc.kill(9);
    await victim.proc.exited;
    await Bun.sleep(200);
    await conn`ROLLBACK`;
  } finally {
    conn.release();
    await other.close();
  }
  return { waiting, answer: await call };
}
