import { chmodSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { openPostgres, type PgStorage } from "../../src/storage/postgres";

/** Debian's pgbouncer (`apt-get install pgbouncer`; .ci/run installs it), or TEXTAI_TEST_PGBOUNCER. */
export const PGBOUNCER_BIN = process.env.TEXTAI_TEST_PGBOUNCER ?? "/usr/sbin/pgbouncer";

/**
 * True when the pgbouncer binary is there. Without it the tests skip loudly, except under CI=true,
 * where they fail (CI installs it).
 */
export function pgbouncerAvailable(what: string): boolean {
  if (existsSync(PGBOUNCER_BIN)) return true;
  if (process.env.CI === "true") throw new Error(`${what}: no ${PGBOUNCER_BIN}, and CI=true: failing instead of skipping`);
  console.warn(`\n!!! SKIPPING ${what}: no ${PGBOUNCER_BIN} (apt-get install pgbouncer). CI runs them.\n`);
  return false;
}

/**
 * TEXTAI_TEST_VIA_PGBOUNCER=1 (CI's second pass, .ci/run): the gateways and stores of the tests of
 * many nodes reach PostgreSQL through a pgbouncer of their own. Without the binary they go straight
 * to it, saying so loudly, except under CI=true, where that fails.
 */
export function viaPgbouncer(): boolean {
  return (
    process.env.TEXTAI_TEST_VIA_PGBOUNCER === "1" &&
    pgbouncerAvailable("PostgreSQL behind PgBouncer (TEXTAI_TEST_VIA_PGBOUNCER=1)")
  );
}

export interface Pgbouncer {
  /** postgres:// URL of `database` through the pooler */
  url: string;
  port: number;
  /** what pgbouncer printed (its log goes to stderr) */
  log(): string;
  /** SHOW <what> on pgbouncer's admin console (POOLS, STATS, ...) */
  show(what: string): Promise<Record<string, unknown>[]>;
  stop(): Promise<void>;
}

/**
 * One pgbouncer process in transaction pooling mode in front of `target` (a postgres:// URL on a
 * trust-auth server), listening on a free 127.0.0.1 port, its config in a temp dir. `poolSize`:
 * server connections it opens at most for the database. As root, it runs as `nobody` (pgbouncer
 * refuses to run as root).
 */
export async function startPgbouncer(target: string, opts: { poolSize?: number; database?: string } = {}): Promise<Pgbouncer> {
  const t = new URL(target);
  const database = opts.database ?? "textai";
  const user = decodeURIComponent(t.username || "postgres");
  const dir = mkdtempSync(join(tmpdir(), "textai-pgbouncer-"));
  chmodSync(dir, 0o755);
  const ini = join(dir, "pgbouncer.ini");
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    await Bun.write(join(dir, "userlist.txt"), `"${user}" ""\n`);
    await Bun.write(
      ini,
      `[databases]
${database} = host=${t.hostname} port=${t.port || 5432} dbname=${t.pathname.slice(1)} user=${user}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = trust
auth_file = ${join(dir, "userlist.txt")}
admin_users = ${user}
pool_mode = transaction
default_pool_size = ${opts.poolSize ?? 3}
max_client_conn = 200
server_reset_query =
; while PostgreSQL is unreachable a query fails within a second or two (the nodes answer 503)
; instead of waiting in pgbouncer's queue for 120 s, and a reconnect is tried every second
query_wait_timeout = 2
server_connect_timeout = 2
server_login_retry = 1
ignore_startup_parameters = extra_float_digits,options
`,
    );
    chmodSync(ini, 0o644);
    chmodSync(join(dir, "userlist.txt"), 0o644);
    const args = [PGBOUNCER_BIN, ...(process.getuid?.() === 0 ? ["-u", "nobody"] : []), ini];
    const proc = Bun.spawn(args, { stdout: "pipe", stderr: "pipe" });
    // never outlives the test run, even one that fails before its afterAll
    const reap = () => proc.kill("SIGTERM");
    process.once("exit", reap);
    let out = "";
    const drain = async (s: ReadableStream<Uint8Array>) => {
      const dec = new TextDecoder();
      for await (const chunk of s) out += dec.decode(chunk);
    };
    void drain(proc.stdout);
    void drain(proc.stderr);
    const url = `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/${database}`;
    const stop = async () => {
      process.off("exit", reap);
      proc.kill("SIGTERM");
      await proc.exited;
      rmSync(dir, { recursive: true, force: true });
    };
    // ready once it answers a query through the pool
    let ready = false;
    for (let i = 0; i < 100 && proc.exitCode === null; i++) {
      const probe = new SQL(url, { max: 1, connectionTimeout: 1, prepare: false });
      try {
        await probe`SELECT 1`;
        ready = true;
        break;
      } catch {
        await Bun.sleep(50);
      } finally {
        await probe.close().catch(() => {});
      }
    }
    if (ready)
      return {
        url,
        port,
        log: () => out,
        async show(what: string) {
          const a = new SQL(`postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/pgbouncer`, { max: 1, prepare: false });
          try {
            return (await a.unsafe(`SHOW ${what}`).simple()) as Record<string, unknown>[];
          } finally {
            await a.close();
          }
        },
        stop,
      };
    await stop();
    // another process took the port between the probe and pgbouncer's bind: try another
    if (attempt >= 3 || !/Address already in use/i.test(out)) throw new Error(`pgbouncer did not start: ${out}`);
  }
}

async function freePort(): Promise<number> {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

/**
 * Opens the stores' pools for a test database: straight to it, or with TEXTAI_TEST_VIA_PGBOUNCER=1
 * through a pgbouncer of its own in transaction mode (6 server connections) with named prepared
 * statements off, as docs/many-nodes.md#behind-pgbouncer says to run the nodes. The test's own
 * checks keep their direct connections.
 */
export async function storesOn(url: string): Promise<{ open(opts?: { max?: number }): PgStorage; stop(): Promise<void> }> {
  const bouncer = viaPgbouncer() ? await startPgbouncer(url, { poolSize: 6 }) : null;
  return {
    open: (opts = {}) => (bouncer ? openPostgres(bouncer.url, { ...opts, prepare: false }) : openPostgres(url, opts)),
    stop: async () => {
      await bouncer?.stop();
    },
  };
}

/**
 * What a gateway needs to reach a test database: TEXTAI_DATABASE_URL straight to it, or with
 * TEXTAI_TEST_VIA_PGBOUNCER=1 through a pgbouncer of its own in transaction mode (6 server
 * connections) with TEXTAI_DATABASE_PREPARE=false. `stop` ends the pooler (after the gateway).
 */
export async function databaseEnv(url: string): Promise<{ env: Record<string, string>; stop(): Promise<void> }> {
  if (!viaPgbouncer()) return { env: { TEXTAI_DATABASE_URL: url }, stop: async () => {} };
  const bouncer = await startPgbouncer(url, { poolSize: 6 });
  return { env: { TEXTAI_DATABASE_URL: bouncer.url, TEXTAI_DATABASE_PREPARE: "false" }, stop: () => bouncer.stop() };
}
