/**
 * `bun bench/pg-capacity.ts`: what the credits layer asks of PostgreSQL, driven directly (no HTTP):
 * transactions and statements per charged call at a given number of calls in flight on one node,
 * and the calls per second one hot account sustains across several nodes.
 *
 *   bun bench/pg-capacity.ts [--duration 4] [--inflight 32] [--nodes 2] [--provider-ms 1] [--pool N]
 *                            [--only spread,hot,primary] [--kind charged|hit|failed|refused]
 *                            [--prepare false] [--lease-max N] [--journal] [--ship-ms 100]
 *
 * Each node is a PostgresCreditLedger on a pool of its own (in this process), in front of which
 * sits a counting TCP proxy: it counts the server's ReadyForQuery messages, one per statement
 * cycle (a simple query, or an extended query's Sync). Transactions are PostgreSQL's own count:
 * the xact_commit delta of pg_stat_database for a fresh database (TEXTAI_BENCH_PG, default the
 * loopback server), read once every connection to it has closed (a backend flushes its
 * statistics when it exits), each pool's start (a few) included.
 *
 * A call is what the gateway does for a no-cache charged answer: reserve (the hold), the provider
 * (`--provider-ms`, a timer), settle (the charge). `--kind` picks another request type: `hit` (a
 * cached answer, charged without a hold), `failed` (held, then the provider fails: released),
 * `refused` (an account with nothing left: the hold is refused).
 *
 * Scenarios:
 *  - spread: one node, `--inflight` calls in flight, each worker on an account of its own;
 *  - hot: `--nodes` nodes, `--inflight` calls in flight on each, all on one account;
 *  - primary: `--nodes` nodes, `--inflight` calls in flight on each, every worker on an account
 *    of its own: what one PostgreSQL primary carries.
 *
 * PostgreSQL's CPU per call: the CPU time of the database's backends (/proc, so only with the
 * server on this machine) over the calls, read before the pools close.
 *
 * `--lease-max N`: the most credits a node's lease of a hot account takes ([limits]
 * credit_lease_max; 0: no leases, every call holds its own credits, as before issue 40).
 *
 * `--journal`: each node commits the charges of calls admitted against its lease to a credit
 * journal of its own (a SQLite file in a temporary directory, as `textai serve` does with
 * [limits] credit_journal) and ships them every `--ship-ms` (default 100); without it, every
 * charge goes in a batch, as before the journal (docs/many-nodes.md#credit-journal).
 *
 * Never a timed test: machines are shared. Run it alone, and a few times.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type Socket, SQL } from "bun";
import { PostgresKeyStore } from "../src/auth/postgres";
import { CreditJournal } from "../src/credits/journal";
import { PostgresCreditLedger } from "../src/credits/postgres";
import { openPostgres, type PgStorage } from "../src/storage/postgres";
import { createOwnDatabase, dropOwnDatabase } from "../test/helpers/own-database";

const { values: args } = parseArgs({
  options: {
    duration: { type: "string", default: "4" },
    inflight: { type: "string", default: "32" },
    nodes: { type: "string", default: "2" },
    "provider-ms": { type: "string", default: "1" },
    pool: { type: "string" },
    only: { type: "string", default: "spread,hot,primary" },
    kind: { type: "string", default: "charged" },
    json: { type: "boolean", default: false },
    /** false: unnamed statements only, as behind PgBouncer in transaction mode (TEXTAI_DATABASE_PREPARE) */
    prepare: { type: "string", default: "true" },
    "lease-max": { type: "string" },
    journal: { type: "boolean", default: false },
    "ship-ms": { type: "string", default: "100" },
  },
});
const DURATION_MS = Number(args.duration) * 1000;
const INFLIGHT = Number(args.inflight);
const NODES = Number(args.nodes);
const PROVIDER_MS = Number(args["provider-ms"]);
const POOL = args.pool ? Number(args.pool) : undefined;
const PREPARE = args.prepare !== "false";
const LEASE_MAX = args["lease-max"] === undefined ? undefined : Number(args["lease-max"]);
const JOURNAL = args.journal === true;
const SHIP_MS = Number(args["ship-ms"]);
const ONLY = new Set((args.only ?? "").split(","));
const KINDS = ["charged", "hit", "failed", "refused"] as const;
type Kind = (typeof KINDS)[number];
const KIND = args.kind as Kind;
if (!KINDS.includes(KIND)) throw new Error(`--kind: one of ${KINDS.join(", ")}`);

const pgAdmin = process.env.TEXTAI_BENCH_PG ?? "postgres://postgres@127.0.0.1:5432/test";
const adminUrl = new URL(pgAdmin);

/** A TCP proxy to PostgreSQL counting the server's ReadyForQuery ('Z') messages. */
function countingProxy(): { port: number; statements: () => number; stop: () => void } {
  let z = 0;
  type Side = { peer: Socket<Side> | null; early: Uint8Array[]; rest: Uint8Array | null; skip: number };
  const scan = (s: Side, bytes: Uint8Array) => {
    // backend messages: 1 type byte + int32 length (including itself); a message may span chunks
    let buf = bytes;
    if (s.rest) {
      const joined = new Uint8Array(s.rest.length + bytes.length);
      joined.set(s.rest);
      joined.set(bytes, s.rest.length);
      buf = joined;
      s.rest = null;
    }
    let i = 0;
    if (s.skip > 0) {
      const n = Math.min(s.skip, buf.length);
      s.skip -= n;
      i = n;
    }
    while (i < buf.length) {
      if (buf.length - i < 5) {
        s.rest = buf.slice(i);
        return;
      }
      const len = ((buf[i + 1] << 24) | (buf[i + 2] << 16) | (buf[i + 3] << 8) | buf[i + 4]) >>> 0;
      if (buf[i] === 0x5a) z++;
      const end = i + 1 + len;
      if (end > buf.length) {
        s.skip = end - buf.length;
        return;
      }
      i = end;
    }
  };
  const listener = Bun.listen<Side>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(client) {
        client.data = { peer: null, early: [], rest: null, skip: 0 };
        void Bun.connect<Side>({
          hostname: adminUrl.hostname,
          port: Number(adminUrl.port || 5432),
          data: { peer: client, early: [], rest: null, skip: 0 },
          socket: {
            open(server) {
              client.data.peer = server;
              for (const b of client.data.early) server.write(b);
              client.data.early = [];
            },
            data(server, bytes) {
              scan(server.data, bytes);
              client.write(bytes);
            },
            close() {
              client.end();
            },
            error() {
              client.end();
            },
          },
        });
      },
      data(client, bytes) {
        if (client.data.peer) client.data.peer.write(bytes);
        else client.data.early.push(new Uint8Array(bytes));
      },
      close(client) {
        client.data.peer?.end();
      },
      error(client) {
        client.data.peer?.end();
      },
    },
  });
  return { port: listener.port, statements: () => z, stop: () => listener.stop(true) };
}

async function admin<T>(run: (sql: SQL) => Promise<T>): Promise<T> {
  const sql = new SQL(pgAdmin, { max: 1, connectionTimeout: 2 });
  try {
    return await run(sql);
  } finally {
    await sql.close();
  }
}

async function xactCommits(db: string): Promise<{ commits: number; rollbacks: number }> {
  return admin(async (sql) => {
    // every connection to the database gone: their backends have flushed their statistics
    for (let i = 0; i < 100; i++) {
      const [row] = await sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = ${db}`;
      if (row.n === 0) break;
      await Bun.sleep(20);
    }
    const [row] =
      await sql`SELECT xact_commit::float8 AS commits, xact_rollback::float8 AS rollbacks FROM pg_stat_database WHERE datname = ${db}`;
    return { commits: Number(row?.commits ?? 0), rollbacks: Number(row?.rollbacks ?? 0) };
  });
}

interface Outcome {
  scenario: string;
  nodes: number;
  inflight: number;
  calls: number;
  refused: number;
  seconds: number;
  transactions: number;
  statements: number;
  /** CPU this process (every node's JavaScript) used, in cores */
  cpuShare: number;
  /** CPU PostgreSQL's backends used (ms), null where not measurable */
  pgCpuMs: number | null;
  /** WAL the server wrote over the calls (bytes; the whole server's, so run alone) */
  walBytes: number;
}

/** The server's current WAL position, in bytes. */
const walAt = () =>
  admin(async (sql) => Number((await sql`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8 AS b`)[0].b));

/** CPU ms the backends serving `db` have used, or null where /proc does not show them (a remote server). */
async function backendCpuMs(db: string): Promise<number | null> {
  const pids = await admin((sql) => sql`SELECT pid FROM pg_stat_activity WHERE datname = ${db}`);
  let ms = 0;
  for (const { pid } of pids as { pid: number }[]) {
    try {
      const f = (await Bun.file(`/proc/${pid}/stat`).text()).split(") ")[1].split(" ");
      ms += (Number(f[11]) + Number(f[12])) * 10;
    } catch {
      return null;
    }
  }
  return ms;
}

async function run(scenario: "spread" | "hot" | "primary", nodes: number): Promise<Outcome> {
  const { name: db } = await createOwnDatabase(pgAdmin, "pgcap");
  const url = new URL(pgAdmin);
  url.pathname = `/${db}`;
  try {
    // accounts made on a pool closed before counting starts
    const setup = openPostgres(url.toString(), { max: 2 });
    await setup.migrated;
    const setupLedger = new PostgresCreditLedger(setup);
    const keys = new PostgresKeyStore(setup, setupLedger, { welcomeCredits: 0 });
    const accounts: string[] = [];
    const count = scenario === "hot" ? 1 : scenario === "primary" ? INFLIGHT * nodes : INFLIGHT;
    const credits = KIND === "refused" ? 0 : 1_000_000_000;
    for (let i = 0; i < count; i++) accounts.push((await keys.createAccount({ credits })).id);
    await setup.close();
    const before = await xactCommits(db);

    const proxies = Array.from({ length: nodes }, () => countingProxy());
    const pools: PgStorage[] = proxies.map((p) => {
      const u = new URL(url);
      u.hostname = "127.0.0.1";
      u.port = String(p.port);
      return openPostgres(u.toString(), { prepare: PREPARE, ...(POOL ? { max: POOL } : {}) });
    });
    await Promise.all(pools.map((p) => p.migrated));
    const ledgers = pools.map((p) => new PostgresCreditLedger(p, { leaseMax: LEASE_MAX }));
    const journalDir = JOURNAL ? mkdtempSync(join(tmpdir(), "pgcap-journal-")) : null;
    if (journalDir)
      await Promise.all(
        ledgers.map((l, i) =>
          l.useJournal(new CreditJournal(join(journalDir, `journal-${i}.sqlite`), `bench-node-${i}`), { shipMs: SHIP_MS }),
        ),
      );
    const statementsBefore = proxies.reduce((n, p) => n + p.statements(), 0);
    const walBefore = await walAt();
    let calls = 0;
    let refused = 0;
    const cpu0 = process.cpuUsage();
    const started = performance.now();
    const stopAt = started + DURATION_MS;
    let w = 0;
    const workers = ledgers.flatMap((ledger) =>
      Array.from({ length: INFLIGHT }, async () => {
        const account = accounts[w++ % accounts.length];
        let n = 0;
        const details = (cached: boolean) => ({
          keyId: "key_bench",
          fn: "word-count",
          requestId: `req_${crypto.randomUUID()}`,
          provider: "sim",
          cached,
        });
        while (performance.now() < stopAt) {
          if (KIND === "hit") {
            // an answer in hand: charged without a hold
            if (!(await ledger.charge(account, 1, details(true)))) throw new Error("a cache hit refused");
            calls++;
            n++;
            continue;
          }
          const r = await ledger.reserve(account, 1);
          if (!r) {
            refused++;
            if (KIND !== "refused") continue;
            calls++;
            n++;
            continue;
          }
          if (PROVIDER_MS > 0) await Bun.sleep(PROVIDER_MS);
          if (KIND === "failed") ledger.release(r);
          else await ledger.settle(r, details(false));
          calls++;
          n++;
        }
        return n;
      }),
    );
    await Promise.all(workers);
    // releases ride the next batch; a node's leases are given back as it closes (absent before issue 40)
    await Promise.all(ledgers.map((l) => ((l as { close?: () => Promise<void> }).close ? l.close() : l.flush())));
    const seconds = (performance.now() - started) / 1000;
    if (journalDir) rmSync(journalDir, { recursive: true, force: true });
    const pgCpuMs = await backendCpuMs(db);
    const walBytes = (await walAt()) - walBefore;
    const cpu = process.cpuUsage(cpu0);
    const cpuShare = (cpu.user + cpu.system) / 1e6 / seconds;
    for (const l of ledgers) {
      // (absent from a tree before batching, which this script can be run against too)
      const b = (l as { batchStats?: PostgresCreditLedger["batchStats"] }).batchStats;
      if (b && b.transactions > 0)
        console.log(
          `${scenario}: ${b.transactions} batches of ${((b.holds + b.charges) / b.transactions).toFixed(1)} holds and charges, ${(b.ms / b.transactions).toFixed(2)} ms each`,
        );
    }
    const statements = proxies.reduce((n, p) => n + p.statements(), 0) - statementsBefore;
    await Promise.all(pools.map((p) => p.close()));
    for (const p of proxies) p.stop();
    const after = await xactCommits(db);
    // each pool's start (a few) included
    const transactions = after.commits + after.rollbacks - before.commits - before.rollbacks;
    // exact: every call charged once, the balance moved by exactly that
    const u = new SQL(url.toString(), { max: 1 });
    const check = await (async () => {
      try {
        const [row] =
          await u`SELECT count(*)::int AS n, coalesce(-sum(amount), 0)::float8 AS spent FROM ledger WHERE kind = 'charge'`;
        const [holds] = await u`SELECT count(*)::int AS n FROM credit_holds`;
        return { rows: row.n as number, spent: Number(row.spent), holds: holds.n as number };
      } finally {
        await u.close();
      }
    })();
    const charged = KIND === "charged" || KIND === "hit" ? calls : 0;
    if (check.rows !== charged || check.spent !== charged || check.holds !== 0)
      throw new Error(
        `${scenario}: ${calls} calls but ${check.rows} ledger rows, ${check.spent} spent, ${check.holds} holds left`,
      );
    return {
      scenario,
      nodes,
      inflight: INFLIGHT,
      calls,
      refused,
      seconds,
      transactions,
      statements,
      cpuShare,
      pgCpuMs,
      walBytes,
    };
  } finally {
    await dropOwnDatabase(pgAdmin, db).catch(() => {});
  }
}

const rows: Outcome[] = [];
if (ONLY.has("spread")) rows.push(await run("spread", 1));
if (ONLY.has("hot")) rows.push(await run("hot", NODES));
if (ONLY.has("primary")) rows.push(await run("primary", NODES));
// --json: one line for `bun run bench --only pg-capacity` (bench/run.ts), after the table
const jsonLine = args.json ? `PGCAPACITY ${JSON.stringify(rows)}` : null;

console.log(
  `pg-capacity ${new Date().toISOString().slice(0, 10)}: ${KIND} calls, ${DURATION_MS / 1000}s each, provider ${PROVIDER_MS} ms, pool ${POOL ?? "default"}, prepare ${PREPARE}, journal ${JOURNAL ? `on (ship every ${SHIP_MS} ms)` : "off"}`,
);
console.log(
  "| scenario | nodes x in flight | calls/s | transactions per call | statements per call | PostgreSQL CPU µs per call | WAL bytes per call | bench CPU (cores) |",
);
console.log("|---|--:|--:|--:|--:|--:|--:|--:|");
for (const r of rows)
  console.log(
    `| ${r.scenario} | ${r.nodes} x ${r.inflight} | ${Math.round(r.calls / r.seconds).toLocaleString("en")} | ${(r.transactions / r.calls).toFixed(3)} | ${(r.statements / r.calls).toFixed(2)} | ${r.pgCpuMs === null ? "n/a" : Math.round((r.pgCpuMs * 1000) / r.calls)} | ${Math.round(r.walBytes / r.calls)} | ${r.cpuShare.toFixed(2)} |`,
  );
if (jsonLine) console.log(jsonLine);
process.exit(0);
