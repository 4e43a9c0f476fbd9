/**
 * Node leases (issue 40, migration 0016): a node whose calls of one account come fast takes a block
 * of the account's balance as one hold row of its own, admits calls against it in memory, and
 * charges them in its batches, shrinking the lease. Proven on PostgreSQL with ledgers of their own
 * (each a node: its own pool), against the database's own rows:
 *  - a hot account's calls stop taking holds, and the balance and the ledger stay exact;
 *  - two nodes draining one account end at exactly zero, every admitted call charged once;
 *  - a node that dies holding a lease (its pool gone, nothing given back) keeps the lease's credits
 *    from the others only until the lease's expiry; then the account spends its whole balance;
 *  - a node cut off from PostgreSQL stops admitting against its lease before the lease can run
 *    out, and its calls admitted before are charged at most once, never below zero.
 * Needs 127.0.0.1:5432; skips loudly without it, fails under CI.
 */
import { describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { PostgresKeyStore } from "../../src/auth/postgres";
import type { ChargeDetails, Reservation } from "../../src/credits/interface";
import { PostgresCreditLedger } from "../../src/credits/postgres";
import { openPostgres, type PgStorage } from "../../src/storage/postgres";
import { storesOn } from "../helpers/pgbouncer";
import { freshDatabase, sharedServersUp } from "../helpers/shared-servers";
import { TcpProxy } from "./tcp-proxy";

const shared = await sharedServersUp("the credit lease tests");

let seq = 0;
const details = (): ChargeDetails => ({
  keyId: "key_lease",
  fn: "word-count",
  requestId: `req_lease_${++seq}`,
  provider: "sim",
  cached: false,
});

/** A database of its own with one account of `credits`; `read` answers from a pool of its own. */
async function account(credits: number) {
  const db = await freshDatabase();
  const setup = openPostgres(db.url, { max: 1 });
  await setup.migrated;
  const { id } = await new PostgresKeyStore(setup, new PostgresCreditLedger(setup), { welcomeCredits: 0 }).createAccount({
    credits,
  });
  const read = new SQL(db.url, { max: 1 });
  // the nodes' pools: straight to the database, or through a pooler (TEXTAI_TEST_VIA_PGBOUNCER=1)
  const via = await storesOn(db.url);
  const state = async () => {
    const [acc] = await read`SELECT balance::float8 AS balance FROM accounts WHERE id = ${id}`;
    const [led] =
      await read`SELECT count(*)::int AS n, coalesce(-sum(amount), 0)::float8 AS charged FROM ledger WHERE account_id = ${id} AND kind = 'charge'`;
    const [h] =
      await read`SELECT count(*)::int AS n, coalesce(sum(amount), 0)::float8 AS held FROM credit_holds WHERE account_id = ${id}
      AND expires_at > (extract(epoch from clock_timestamp()) * 1000)::bigint`;
    return {
      balance: Number(acc.balance),
      charges: Number(led.n),
      charged: Number(led.charged),
      holds: Number(h.n),
      held: Number(h.held),
    };
  };
  return {
    id,
    url: db.url,
    state,
    pool: (max = 2) => via.open({ max }),
    async close() {
      await via.stop();
      await setup.close();
      await read.close();
      await db.drop();
    },
  };
}

/** One call: held, then charged; "refused" when not admitted. */
async function oneCall(ledger: PostgresCreditLedger, accountId: string, amount = 1): Promise<"charged" | "refused"> {
  const r = await ledger.reserve(accountId, amount);
  if (!r) return "refused";
  await ledger.settle(r, details());
  return "charged";
}

describe.skipIf(!shared)("credit leases on PostgreSQL", () => {
  test("a hot account's calls are admitted against the node's lease: few holds, exact balance and ledger", async () => {
    const acc = await account(100_000);
    const pool = acc.pool();
    const node = new PostgresCreditLedger(pool);
    try {
      let charged = 0;
      for (let round = 0; round < 20; round++) {
        const out = await Promise.all(Array.from({ length: 20 }, () => oneCall(node, acc.id)));
        charged += out.filter((o) => o === "charged").length;
      }
      expect(charged).toBe(400);
      console.log(
        `400 calls of one account on one node: ${node.batchStats.leasedCalls} admitted against ${node.batchStats.leases} lease(s), ${node.batchStats.holds} held one by one`,
      );
      expect(node.batchStats.leases).toBeGreaterThanOrEqual(1);
      expect(node.batchStats.leasedCalls).toBeGreaterThan(300);
      const mid = await acc.state();
      expect(mid).toMatchObject({ balance: 100_000 - 400, charges: 400, charged: 400, holds: 1 });
      // the lease counts as a hold: at most a twentieth of what was left when granted
      expect(mid.held).toBeLessThanOrEqual(100_000 / 20);
      await node.close();
      expect(await acc.state()).toMatchObject({ balance: 99_600, holds: 0, held: 0 });
    } finally {
      await pool.close();
      await acc.close();
    }
  });

  test("under sustained load a lease lives on: its own charges renew it (the node's batches keep its row locked)", async () => {
    const acc = await account(1_000_000);
    const pool = acc.pool();
    // a lease of 900 ms, loaded for more than three of them
    const node = new PostgresCreditLedger(pool, { requestTimeoutMs: 900 });
    try {
      const until = performance.now() + 3000;
      let n = 0;
      await Promise.all(
        Array.from({ length: 24 }, async () => {
          while (performance.now() < until) if ((await oneCall(node, acc.id)) === "charged") n++;
        }),
      );
      console.log(
        `${n} calls over 3 s on a 900 ms lease: ${node.batchStats.leases} lease(s), ${node.batchStats.leasesLapsed} lapsed, ${node.batchStats.leasedCalls} calls admitted against them`,
      );
      // none ran out unrenewed (a lease used up is replaced: that is not a lapse)
      expect(node.batchStats.leasesLapsed).toBe(0);
      expect(node.batchStats.leasedCalls).toBeGreaterThan(n * 0.9);
      await node.close();
      expect(await acc.state()).toMatchObject({ balance: 1_000_000 - n, charges: n, holds: 0 });
    } finally {
      await pool.close();
      await acc.close();
    }
  });

  test("a lease asked for while the database is slow is not the node's last: it leases again once that lease is used up", async () => {
    const acc = await account(1_000_000);
    const pool = acc.pool();
    const node = new PostgresCreditLedger(pool, { leaseMax: 100 });
    const locker = new SQL(acc.url, { max: 1 });
    try {
      // the account's row locked for 1.3 s: the node's first lease, asked for at once, waits past
      // the one-second count of its calls held one by one, while calls keep arriving (a copy of
      // that count made at the turn kept "asking" set for good: no lease ever again)
      const conn = await locker.reserve();
      await conn`BEGIN`;
      await conn`SELECT 1 FROM accounts WHERE id = ${acc.id} FOR UPDATE`;
      const unlock = Bun.sleep(1300).then(async () => {
        await conn`COMMIT`;
        conn.release();
      });
      const calls: Promise<string>[] = [];
      const until = performance.now() + 2600;
      while (performance.now() < until) {
        calls.push(oneCall(node, acc.id));
        await Bun.sleep(1);
      }
      await unlock;
      const out = await Promise.all(calls);
      const n = out.filter((o) => o === "charged").length;
      console.log(
        `${n} calls, the first 1.3 s against a locked row: ${node.batchStats.leases} leases of at most 100, ${node.batchStats.leasedCalls} calls admitted against them`,
      );
      expect(n).toBe(calls.length);
      // after the row is free, the node leases again each time a lease of 100 is used up
      expect(node.batchStats.leases).toBeGreaterThan(3);
      expect(node.batchStats.leasedCalls).toBeGreaterThan(300);
      await node.close();
      expect(await acc.state()).toMatchObject({ balance: 1_000_000 - n, charges: n, holds: 0 });
    } finally {
      await locker.close();
      await pool.close();
      await acc.close();
    }
  });

  test("a hot account's cache hits are charged against the lease too; a key with a monthly limit never uses it", async () => {
    const acc = await account(50_000);
    const pool = acc.pool();
    const node = new PostgresCreditLedger(pool);
    try {
      // warm: the account's calls take a lease
      await Promise.all(Array.from({ length: 20 }, () => oneCall(node, acc.id)));
      expect(node.batchStats.leases).toBe(1);
      const leasedBefore = node.batchStats.leasedCalls;
      const hits = await Promise.all(Array.from({ length: 30 }, () => node.charge(acc.id, 2, { ...details(), cached: true })));
      expect(hits.every((h) => h !== null && h.amount === 2)).toBe(true);
      expect(node.batchStats.leasedCalls - leasedBefore).toBe(30);
      // a key's monthly limit is exact only through per-call holds and charges: no lease
      const limited = node.batchStats.leasedCalls;
      const r = await node.reserve(acc.id, 1, { keyId: "key_limited", limit: 100 });
      expect(r?.leaseId).toBeUndefined();
      expect(r?.holdId).toBeDefined();
      await node.settle(r as Reservation, { ...details(), keyId: "key_limited" });
      const hit = await node.charge(acc.id, 1, { ...details(), keyId: "key_limited", cached: true, keyLimit: 100 });
      expect(hit?.amount).toBe(1);
      expect(node.batchStats.leasedCalls).toBe(limited);
      expect(await acc.state()).toMatchObject({ balance: 50_000 - 20 - 60 - 2, charges: 20 + 30 + 2, charged: 82 });
      await node.close();
      expect((await acc.state()).holds).toBe(0);
    } finally {
      await pool.close();
      await acc.close();
    }
  });

  test("two nodes draining one account end at exactly zero: every admitted call charged once", async () => {
    const acc = await account(3000);
    const pools = [acc.pool(), acc.pool()];
    const nodes = pools.map((p) => new PostgresCreditLedger(p));
    try {
      let charged = 0;
      // each node keeps 10 calls going until it is refused 10 times in a row after an idle lease could be back
      const drive = async (node: PostgresCreditLedger) => {
        let refusedInARow = 0;
        const worker = async () => {
          while (refusedInARow < 20) {
            const out = await oneCall(node, acc.id);
            if (out === "charged") {
              charged++;
              refusedInARow = 0;
            } else {
              refusedInARow++;
              // what another node holds ahead of its calls comes back once it stops using it
              await Bun.sleep(150);
            }
          }
        };
        await Promise.all(Array.from({ length: 10 }, worker));
      };
      await Promise.all(nodes.map(drive));
      expect(nodes.reduce((n, node) => n + node.batchStats.leasedCalls, 0)).toBeGreaterThan(0);
      expect(charged).toBe(3000);
      expect(await acc.state()).toMatchObject({ balance: 0, charges: 3000, charged: 3000 });
      for (const node of nodes) await node.close();
      expect(await acc.state()).toMatchObject({ balance: 0, holds: 0 });
    } finally {
      for (const p of pools) await p.close();
      await acc.close();
    }
  }, 60_000);

  test("a node that dies holding a lease keeps its credits from the others only until the lease's expiry", async () => {
    const acc = await account(10_000);
    const leaseMs = 1500;
    const dying = acc.pool();
    const dead = new PostgresCreditLedger(dying, { requestTimeoutMs: leaseMs });
    const pool = acc.pool();
    const other = new PostgresCreditLedger(pool, { requestTimeoutMs: leaseMs, leaseMax: 0 });
    try {
      await Promise.all(Array.from({ length: 30 }, () => oneCall(dead, acc.id)));
      await Promise.all(Array.from({ length: 10 }, () => oneCall(dead, acc.id)));
      const before = await acc.state();
      expect(before.holds).toBe(1);
      expect(before.held).toBeGreaterThan(0);
      // dies: its connections cut, nothing given back, nothing renewed
      await dying.close();
      const diedAt = performance.now();
      const spendable = before.balance - before.held;
      // the other node can spend what the lease leaves, not more
      const big = await other.reserve(acc.id, spendable + 1);
      expect(big).toBeNull();
      // once the lease has run out, the whole balance
      let whole: Reservation | null = null;
      while (!whole && performance.now() - diedAt < leaseMs + 3000) {
        whole = await other.reserve(acc.id, before.balance);
        if (!whole) await Bun.sleep(50);
      }
      const back = performance.now() - diedAt;
      console.log(
        `a lease of ${before.held} credits of a dead node came back ${back.toFixed(0)} ms after it died (lease ${leaseMs} ms)`,
      );
      expect(whole).not.toBeNull();
      expect(back).toBeLessThanOrEqual(leaseMs + 1000);
      await other.settle(whole as Reservation, details());
      expect(await acc.state()).toMatchObject({ balance: 0, holds: 0 });
    } finally {
      await other.close();
      await pool.close();
      await acc.close();
    }
  }, 30_000);

  test("a node cut off from PostgreSQL stops admitting against its lease before it can run out; its late charges never overspend", async () => {
    const acc = await account(2000);
    const leaseMs = 1500;
    const port = Number(new URL(acc.url).port || 5432);
    const proxy = new TcpProxy(port).up();
    const url = new URL(acc.url);
    url.port = String(proxy.port);
    const cutPool: PgStorage = openPostgres(url.toString(), { max: 2 });
    const cut = new PostgresCreditLedger(cutPool, { requestTimeoutMs: leaseMs });
    const pool = openPostgres(acc.url, { max: 2 });
    const other = new PostgresCreditLedger(pool, { requestTimeoutMs: leaseMs, leaseMax: 0 });
    try {
      await Promise.all(Array.from({ length: 30 }, () => oneCall(cut, acc.id)));
      // calls admitted against the lease, their charges not yet sent
      const inFlight: Reservation[] = [];
      for (let i = 0; i < 5; i++) {
        const r = await cut.reserve(acc.id, 1);
        expect(r?.leaseId).toBeDefined();
        inFlight.push(r as Reservation);
      }
      const before = await acc.state();
      expect(before.holds).toBe(1);
      proxy.down();
      const cutAt = performance.now();
      // admission against the lease stops within two thirds of a lease; nothing else is admitted while cut
      let lastAdmitted = 0;
      while (performance.now() - cutAt < leaseMs) {
        const r = await cut.reserve(acc.id, 1).catch(() => null);
        if (r) {
          lastAdmitted = performance.now() - cutAt;
          cut.release(r);
        }
        await Bun.sleep(20);
      }
      expect(lastAdmitted).toBeLessThan((leaseMs * 2) / 3 + 50);
      // the lease runs out; the other node spends everything left but the 5 calls' worth
      await Bun.sleep(600);
      const rest = (await acc.state()).balance - 5;
      const r = await other.reserve(acc.id, rest);
      expect(r).not.toBeNull();
      await other.settle(r as Reservation, details());
      // back: the 5 calls' charges go as charges without a live lease, covered by what is left
      proxy.up();
      const outcomes = await Promise.all(
        inFlight.map((x) =>
          cut.settle(x, details()).then(
            () => "charged",
            (e) => String((e as { code?: string }).code),
          ),
        ),
      );
      console.log(`5 calls admitted against a lease that ran out while its node was cut off: ${outcomes.join(", ")}`);
      const after = await acc.state();
      expect(after.balance).toBeGreaterThanOrEqual(0);
      expect(after.charged).toBe(2000 - after.balance);
      expect(outcomes.filter((o) => o === "charged").length).toBe(5 - after.balance);
    } finally {
      proxy.up();
      await cut.close().catch(() => {});
      await other.close();
      await cutPool.close();
      await pool.close();
      proxy.down();
      await acc.close();
    }
  }, 30_000);
});
