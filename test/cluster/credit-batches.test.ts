/**
 * Credits on PostgreSQL go in batches (issue 26): a node's holds, charges and releases asked for
 * while a batch is in flight travel together as the next one, one call of credit_batch() in one
 * transaction. Proven from outside: PostgreSQL's own transaction count (pg_stat_database) for many
 * calls, and exactness under concurrency (balance, ledger rows, holds) over several nodes.
 * Needs 127.0.0.1:5432 and :6379; skips loudly without them, fails under CI.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { PostgresKeyStore } from "../../src/auth/postgres";
import type { ChargeDetails, Reservation } from "../../src/credits/interface";
import { PostgresCreditLedger } from "../../src/credits/postgres";
import { openPostgres } from "../../src/storage/postgres";
import { storesOn } from "../helpers/pgbouncer";
import { freshDatabase, PG_ADMIN_URL, sharedServersUp } from "../helpers/shared-servers";
import type { Upstream } from "../helpers/upstream";
import { balanceOn, type Cluster, chat, expectNothingCharged, killWhileChargeWaits, newKey, startSimCluster } from "./nodes";

const shared = await sharedServersUp("the credit batch tests");

const details = (requestId: string): ChargeDetails => ({
  keyId: "key_batch",
  fn: "word-count",
  requestId,
  provider: "sim",
  cached: false,
});

/** Transactions PostgreSQL counted for a database, once every connection to it has gone (a backend flushes its statistics as it exits). */
async function transactionsOf(name: string): Promise<number> {
  const admin = new SQL(PG_ADMIN_URL, { max: 1 });
  try {
    for (let i = 0; i < 200; i++) {
      const [row] = await admin`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = ${name}`;
      if (row.n === 0) break;
      await Bun.sleep(25);
    }
    const [row] = await admin`SELECT (xact_commit + xact_rollback)::float8 AS n FROM pg_stat_database WHERE datname = ${name}`;
    return Number(row?.n ?? 0);
  } finally {
    await admin.close();
  }
}

describe.skipIf(!shared)("credit batches on PostgreSQL", () => {
  test("two nodes, 100 holds at once on 60 credits, then releases, charges and new holds together: exact, in a handful of transactions", async () => {
    const db = await freshDatabase();
    try {
      // the account, made on a pool closed before counting starts
      const setup = openPostgres(db.url, { max: 1 });
      await setup.migrated;
      const { id } = await new PostgresKeyStore(setup, new PostgresCreditLedger(setup), { welcomeCredits: 0 }).createAccount({
        credits: 60,
      });
      await setup.close();
      const before = await transactionsOf(db.name);

      // the nodes' pools: straight to the database, or through a pooler (TEXTAI_TEST_VIA_PGBOUNCER=1)
      const via = await storesOn(db.url);
      const pools = [via.open({ max: 2 }), via.open({ max: 2 })];
      await Promise.all(pools.map((p) => p.migrated));
      const nodes = pools.map((p) => new PostgresCreditLedger(p));
      const nodeOf = (i: number) => nodes[i % 2];
      let operations = 0;

      // 100 holds of 1 at once over both nodes: exactly 60 admitted, whatever the batches' order
      const first = await Promise.all(Array.from({ length: 100 }, (_, i) => nodeOf(i).reserve(id, 1)));
      operations += 100;
      const held = first.flatMap((r, i) => (r ? [{ r, i }] : []));
      expect(held).toHaveLength(60);
      // every admitted hold saw what was left after it: 59 down to 0, each once
      expect(held.map(({ r }) => r.remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => i));

      // 10 calls fail (their holds go back), and the database has them before anything else
      for (const { r, i } of held.slice(0, 10)) nodeOf(i).release(r);
      await Promise.all(nodes.map((n) => n.flush()));
      operations += 10;
      // 50 calls answered and charged while 20 new calls ask for holds, on both nodes at once:
      // the new ones get exactly the 10 credits given back, and no charge is refused
      const charging = held.slice(10).map(({ r, i }) => nodeOf(i).settle(r, details(`req_a${i}`)));
      const second = await Promise.all(Array.from({ length: 20 }, async (_, i) => ({ i, r: await nodeOf(i).reserve(id, 1) })));
      await Promise.all(charging);
      operations += 70;
      const more = second.filter((s): s is { i: number; r: Reservation } => s.r !== null);
      expect(more).toHaveLength(10);
      await Promise.all(more.map(({ r, i }) => nodeOf(i).settle(r, details(`req_b${i}`))));
      operations += 10;

      const batches = nodes.reduce((n, l) => n + l.stats.batches, 0);
      await Promise.all(pools.map((p) => p.close()));
      await via.stop();
      // counted from outside, each pool's start (a few) included
      const transactions = (await transactionsOf(db.name)) - before;
      console.log(
        `credit batches: ${operations} holds, charges and releases in ${transactions} PostgreSQL transactions (${batches} batches)`,
      );
      expect(transactions).toBeGreaterThan(0);
      // one transaction per hold was the old way: 120 holds alone made 120
      expect(transactions).toBeLessThan(120 / 4);

      const check = new SQL(db.url, { max: 1 });
      try {
        const [acc] = await check`SELECT balance::int AS balance FROM accounts WHERE id = ${id}`;
        expect(acc.balance).toBe(0);
        const [rows] = await check`SELECT count(*)::int AS n, count(DISTINCT request_id)::int AS distinct_ids,
          coalesce(-sum(amount), 0)::int AS spent FROM ledger WHERE account_id = ${id} AND kind = 'charge'`;
        expect(rows).toEqual({ n: 60, distinct_ids: 60, spent: 60 });
        const [holds] = await check`SELECT count(*)::int AS n FROM credit_holds`;
        expect(holds.n).toBe(0);
        const [usage] = await check`SELECT sum(requests)::int AS requests, sum(credits)::int AS credits FROM usage_daily
          WHERE account_id = ${id} AND kind = 'charge'`;
        expect(usage).toEqual({ requests: 60, credits: 60 });
      } finally {
        await check.close();
      }
    } finally {
      await db.drop();
    }
  }, 30_000);

  test("a batch mixes accounts, cache-hit charges, key limits and Idempotency-Key charges, each decided as if alone", async () => {
    const db = await freshDatabase();
    const via = await storesOn(db.url);
    const pg = via.open({ max: 2 });
    try {
      await pg.migrated;
      const ledger = new PostgresCreditLedger(pg);
      const keys = new PostgresKeyStore(pg, ledger, { welcomeCredits: 0 });
      const a = (await keys.createAccount({ credits: 10 })).id;
      const b = (await keys.createAccount({ credits: 3 })).id;
      const poor = (await keys.createAccount({ credits: 0 })).id;
      const holdA = (await ledger.reserve(a, 4))!;
      const voided = (await ledger.reserve(a, 1))!;
      expect(await ledger.chargedRequest(a, ["req_void"])).toBeNull();
      const batchesBefore = ledger.stats.batches;
      // all in one turn of the event loop, so one batch
      const out = await Promise.allSettled([
        ledger.settle(holdA, details("req_held"), 3), // charged 3 of its 4: 1 back
        ledger.settle(voided, { ...details("req_void"), idempotent: true }), // a retry voided it: free
        ledger.charge(a, 2, details("req_hit")), // a cache hit: must spare the holds below
        ledger.reserve(a, 4), // 10 - 3 - 2 = 5 left: admitted
        ledger.reserve(a, 2), // 1 left: refused
        ledger.reserve(a, 1, { keyId: "key_lim", limit: 1 }), // admitted, the key's whole limit
        ledger.reserve(b, 2, { keyId: "key_lim_b", limit: 1 }), // over the key's limit
        ledger.reserve(b, 3),
        ledger.charge(b, 1, details("req_hit_b")), // b's charges come before its holds: leaves 2, so the hold of 3 is refused
        ledger.reserve(poor, 1),
        ledger.charge("acc_nobody", 1, details("req_nobody")),
      ]);
      expect(ledger.stats.batches - batchesBefore).toBe(1);
      const value = (i: number) => (out[i] as PromiseFulfilledResult<unknown>).value;
      expect(out.map((o) => o.status)).toEqual([
        "fulfilled",
        "fulfilled",
        "fulfilled",
        "fulfilled",
        "fulfilled",
        "fulfilled",
        "rejected",
        "fulfilled",
        "fulfilled",
        "fulfilled",
        "fulfilled",
      ]);
      expect(holdA).toMatchObject({ amount: 3, remaining: 7 });
      expect(voided).toMatchObject({ amount: 0, voided: true });
      expect(value(2)).toMatchObject({ amount: 2, remaining: 5 });
      expect(value(3)).toMatchObject({ amount: 4, remaining: 1 });
      expect(value(4)).toBeNull();
      expect(value(5)).toMatchObject({ amount: 1, remaining: 0, keyId: "key_lim" });
      expect((out[6] as PromiseRejectedResult).reason).toMatchObject({ code: "key_budget_exceeded" });
      expect(value(7)).toBeNull();
      expect(value(8)).toMatchObject({ amount: 1, remaining: 2 });
      expect(value(9)).toBeNull();
      expect(value(10)).toBeNull();
      expect(await ledger.balance(a)).toBe(5);
      expect(await ledger.balance(b)).toBe(2);
      const [holds] = await pg.sql`SELECT coalesce(sum(amount), 0)::int AS held FROM credit_holds WHERE account_id = ${a}`;
      expect(holds.held).toBe(5);
      const ids = await pg.sql`SELECT request_id FROM ledger WHERE kind = 'charge' ORDER BY request_id`;
      expect(ids.map((r: { request_id: string }) => r.request_id)).toEqual(["req_held", "req_hit", "req_hit_b"]);
    } finally {
      await pg.close();
      await via.stop();
      await db.drop();
    }
  });

  test("one account's holds come and go: a batch reads its live holds, not every hold deleted since the last vacuum", async () => {
    // migration 0014: every statement of credit_batch() reads by key, through an index. Left to the
    // planner, the sums of live holds went by bitmap scan (statistics of a table under load) or by
    // sequential scan (of a small one, as here after the analyze), and either way read every hold
    // deleted since the last vacuum, on every batch; a plain index scan marks a deleted hold's entry
    // dead, and later scans skip it
    const db = await freshDatabase();
    try {
      const setup = openPostgres(db.url, { max: 1 });
      await setup.migrated;
      // no vacuum comes round during the test (an analyze, below): what is read is what the scans leave
      await setup.sql.unsafe("ALTER TABLE credit_holds SET (autovacuum_enabled = false)");
      const { id } = await new PostgresKeyStore(setup, new PostgresCreditLedger(setup), { welcomeCredits: 0 }).createAccount({
        credits: 1_000_000,
      });
      await setup.close();
      /**
       * n calls on a pool of its own (closed after: its backend's statistics are flushed as it
       * exits), in `lanes` lanes of calls one after another
       */
      const calls = async (n: number, from: number, lanes = 1) => {
        const pg = openPostgres(db.url, { max: 1 });
        await pg.migrated;
        // every call its own hold (no lease): the holds' index scans are what is measured
        const ledger = new PostgresCreditLedger(pg, { leaseMax: 0 });
        const lane = async (k: number) => {
          for (let i = k; i < n; i += lanes) {
            const r = (await ledger.reserve(id, 1)) as Reservation;
            await ledger.settle(r, details(`req_vac_${from + i}`));
          }
        };
        await Promise.all(Array.from({ length: lanes }, (_, k) => lane(k)));
        await pg.close();
      };
      const entriesRead = async () => {
        const admin = new SQL(db.url, { max: 1 });
        try {
          for (let i = 0; i < 200; i++) {
            const [row] =
              await admin`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = ${db.name} AND pid <> pg_backend_pid()`;
            if (row.n === 0) break;
            await Bun.sleep(25);
          }
          const [row] = await admin`SELECT i.idx_tup_read::float8 AS n, t.seq_scan::float8 AS seq
            FROM pg_stat_user_indexes i JOIN pg_stat_user_tables t USING (relid) WHERE i.indexrelname = 'credit_holds_account_idx'`;
          return { entries: Number(row.n), seqScans: Number(row.seq) };
        } finally {
          await admin.close();
        }
      };
      // 2,000 holds taken and deleted (10 lanes at a time: their batches hold several each), each
      // a row and an index entry of its own, that no vacuum removes
      await calls(2000, 0, 10);
      // statistics of a small table, as an analyze leaves them between bursts (the planner then
      // prefers a sequential scan for the sums); an analyze removes nothing
      const stats = new SQL(db.url, { max: 1 });
      await stats.unsafe("ANALYZE credit_holds");
      await stats.close();
      const before = await entriesRead();
      await calls(50, 2000);
      const after = await entriesRead();
      expect(after.seqScans - before.seqScans).toBe(0);
      // each call is two batches (its hold, its charge), each reading the account's live holds:
      // a handful of index entries, not the 2,000 and more of the holds deleted before
      const perCall = (after.entries - before.entries) / 50;
      expect(perCall).toBeGreaterThan(0);
      expect(perCall).toBeLessThan(40);
    } finally {
      await db.drop();
    }
  }, 60_000);
});

describe.skipIf(!shared)("three nodes with a pool of 2 connections each", () => {
  let sim: Upstream;
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let cluster: Cluster;
  let pg: SQL;
  let close: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    if (!shared) return;
    ({ sim, db, cluster, pg, close } = await startSimCluster({
      n: 3,
      latencyMs: 20,
      // the provider's failures here are on purpose: they must not open its circuit breaker
      configExtra: "\n[breaker]\nfailure_threshold = 1000\n",
      env: { TEXTAI_DATABASE_POOL: "2" },
      pgMax: 1,
    }));
  }, 60_000);

  afterAll(async () => {
    await close?.();
  }, 30_000);

  test("150 concurrent calls on 100 credits, 30 failing at the provider: each answer charged once, no credit lost, at most 2 connections a node", async () => {
    const { key, accountId } = await newKey(cluster.nodes[0], 100);
    sim.reset();
    // the first 30 calls to reach the provider get a 500: their holds go back to the account
    sim.program([{ status: 500, times: 30 }]);
    let peak = 0;
    let watching = true;
    const watch = (async () => {
      while (watching) {
        const [row] = await pg`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = ${db.name}`;
        peak = Math.max(peak, row.n - 1);
        await Bun.sleep(5);
      }
    })();
    const results = await Promise.all(
      Array.from({ length: 150 }, (_, i) => chat(cluster.nodes[i % 3], key, `batch ${i}`, { "cache-control": "no-cache" })),
    );
    watching = false;
    await watch;
    const ok = results.filter((r) => r.status === 200).length;
    const failed = results.filter((r) => r.status >= 500).length;
    const refused = results.filter((r) => r.status === 402).length;
    console.log(
      `150 calls on 100 credits over three nodes (pool 2): ${ok} answered, ${failed} failed upstream, ${refused} refused; ${sim.calls.count} provider calls; at most ${peak} connections`,
    );
    expect(ok + failed + refused).toBe(150);
    expect(failed).toBe(30);
    expect(ok).toBeLessThanOrEqual(100);
    // every refusal came before its provider call: the provider saw the answered and the failed ones only
    expect(sim.calls.count).toBe(ok + failed);
    const [rows] = await pg`SELECT count(*)::int AS n, count(DISTINCT request_id)::int AS ids,
      coalesce(-sum(amount), 0)::int AS spent FROM ledger WHERE account_id = ${accountId} AND kind = 'charge'`;
    expect(rows).toEqual({ n: ok, ids: ok, spent: ok });
    for (const n of cluster.nodes) expect(await balanceOn(n, key)).toBe(100 - ok);
    // the failed calls' holds came back: what is left buys exactly that many more calls
    let more = 0;
    for (let i = 0; more < 200; i++) {
      const r = await chat(cluster.nodes[i % 3], key, `rest ${i}`, { "cache-control": "no-cache" });
      if (r.status === 402) break;
      expect(r.status).toBe(200);
      more++;
    }
    expect(ok + more).toBe(100);
    for (const n of cluster.nodes) expect(await balanceOn(n, key)).toBe(0);
    const [holds] = await pg`SELECT count(*)::int AS n FROM credit_holds WHERE account_id = ${accountId}`;
    expect(holds.n).toBe(0);
    expect(peak).toBeLessThanOrEqual(3 * 2);
  }, 60_000);

  test("kill -9 of a node whose charge waits for a lock: nothing is charged for the answer it never sent", async () => {
    const { key, accountId } = await newKey(cluster.nodes[0], 10);
    const { waiting, answer } = await killWhileChargeWaits({ cluster, sim, pg, db, key, accountId });
    expect(waiting).toBe(1);
    expect(answer).toBe("no answer");
    // the batch got its lock after its node had gone: it was never committed
    await Bun.sleep(300);
    await expectNothingCharged(pg, accountId, 10);
  }, 30_000);
});
