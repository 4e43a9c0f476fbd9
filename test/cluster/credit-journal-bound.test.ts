/**
 * The credit journal's bound (docs/many-nodes.md#credit-journal), on a ledger of its own against
 * PostgreSQL: while PostgreSQL cannot take a ship (the account's row held by another transaction),
 * the node journals at most its lease's allowance X, and every further call of the lease is charged
 * as without the journal (its answer waits for the batch). Once the row is free, balance and ledger
 * are exact and the allowance comes back with the lease.
 * Needs 127.0.0.1:5432; skips loudly without it, fails under CI.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { PostgresKeyStore } from "../../src/auth/postgres";
import { CreditJournal } from "../../src/credits/journal";
import { PostgresCreditLedger } from "../../src/credits/postgres";
import { openPostgres } from "../../src/storage/postgres";
import { storesOn } from "../helpers/pgbouncer";
import { freshDatabase, sharedServersUp } from "../helpers/shared-servers";
import { TcpProxy } from "./tcp-proxy";

const shared = await sharedServersUp("the credit journal's bound");

test.skipIf(!shared)(
  "while a ship cannot commit, the node journals at most its allowance X; the rest waits for a batch; then all exact",
  async () => {
    const db = await freshDatabase();
    const setup = openPostgres(db.url, { max: 1 });
    await setup.migrated;
    const { id } = await new PostgresKeyStore(setup, new PostgresCreditLedger(setup), { welcomeCredits: 0 }).createAccount({
      credits: 1_000_000,
    });
    const read = new SQL(db.url, { max: 2 });
    // the node's pool: straight to the database, or through a pooler (TEXTAI_TEST_VIA_PGBOUNCER=1)
    const via = await storesOn(db.url);
    const pool = via.open({ max: 2 });
    const node = new PostgresCreditLedger(pool);
    const dir = mkdtempSync(join(tmpdir(), "journal-bound-"));
    let seq = 0;
    const call = async () => {
      const r = await node.reserve(id, 1);
      if (!r) return "refused";
      await node.settle(r, { keyId: "k", fn: "word-count", requestId: `req_bound_${++seq}`, provider: "sim", cached: false });
      return r.leaseId ? "leased" : "held";
    };
    try {
      await node.useJournal(new CreditJournal(join(dir, "j.sqlite"), "bound-node"), { shipMs: 100 });
      // warm: the account leases, and journal charges start
      for (let i = 0; i < 30; i++) await Promise.all(Array.from({ length: 10 }, call));
      const warm = node.journalStats.journaled;
      expect(warm).toBeGreaterThan(0);
      // the account's row held: no batch charging it can commit
      const locker = await read.reserve();
      await locker`BEGIN`;
      await locker`SELECT 1 FROM accounts WHERE id = ${id} FOR UPDATE`;
      const [allowance] =
        await read`SELECT coalesce(sum(amount), 0)::float8 AS x FROM credit_holds WHERE account_id = ${id} AND lease_of IS NOT NULL`;
      const X = Number(allowance.x);
      expect(X).toBeGreaterThan(0);
      // calls keep coming (not awaited: those over the allowance wait for the blocked batches)
      const pending: Promise<string>[] = [];
      let most = 0;
      const until = performance.now() + 1500;
      while (performance.now() < until) {
        for (let i = 0; i < 10; i++) pending.push(call());
        await Bun.sleep(5);
        most = Math.max(most, node.journalFigures()?.pendingCredits ?? 0);
      }
      const figures = node.journalFigures();
      console.log(
        `row held 1.5 s: ${pending.length} calls asked, at most ${most} credits journaled unshipped (allowance ${X}); ${node.journalStats.overAllowance} charged past it in batches`,
      );
      // never more unshipped than the allowance PostgreSQL keeps for them
      expect(most).toBeLessThanOrEqual(X);
      expect(figures?.pendingCredits).toBeGreaterThan(0);
      expect(node.journalStats.overAllowance).toBeGreaterThan(0);
      await locker`COMMIT`;
      locker.release();
      const out = await Promise.all(pending);
      expect(out.filter((o) => o === "refused")).toEqual([]);
      await node.close();
      const [acc] = await read`SELECT balance::float8 AS b FROM accounts WHERE id = ${id}`;
      const [led] =
        await read`SELECT count(*)::int AS n, count(DISTINCT request_id)::int AS ids FROM ledger WHERE account_id = ${id} AND kind = 'charge'`;
      const [holds] = await read`SELECT count(*)::int AS n FROM credit_holds WHERE account_id = ${id}`;
      expect(led.n).toBe(seq);
      expect(led.ids).toBe(seq);
      expect(Number(acc.b)).toBe(1_000_000 - seq);
      expect(holds.n).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await pool.close();
      await via.stop();
      await read.close();
      await setup.close();
      await db.drop();
    }
  },
  30_000,
);

test.skipIf(!shared)(
  "an allowance given back while PostgreSQL is unreachable is given back once it is reachable (it never runs out by time)",
  async () => {
    const db = await freshDatabase();
    const setup = openPostgres(db.url, { max: 1 });
    await setup.migrated;
    const { id } = await new PostgresKeyStore(setup, new PostgresCreditLedger(setup), { welcomeCredits: 0 }).createAccount({
      credits: 1_000_000,
    });
    const read = new SQL(db.url, { max: 1 });
    const target = new URL(db.url);
    const proxy = new TcpProxy(Number(target.port || 5432)).up();
    const via = new URL(target);
    via.port = String(proxy.port);
    const pool = openPostgres(via.toString(), { max: 2 });
    const node = new PostgresCreditLedger(pool, { requestTimeoutMs: 1500 });
    const dir = mkdtempSync(join(tmpdir(), "journal-release-"));
    const allowance = async () => {
      const [a] =
        await read`SELECT count(*)::int AS n, coalesce(sum(amount), 0)::float8 AS x FROM credit_holds WHERE account_id = ${id} AND lease_of IS NOT NULL`;
      return { n: Number(a.n), x: Number(a.x) };
    };
    let seq = 0;
    try {
      await node.useJournal(new CreditJournal(join(dir, "j.sqlite"), "release-node"), { shipMs: 100 });
      for (let i = 0; i < 30; i++)
        await Promise.all(
          Array.from({ length: 10 }, async () => {
            const r = await node.reserve(id, 1);
            if (r)
              await node.settle(r, {
                keyId: "k",
                fn: "word-count",
                requestId: `req_rel_${++seq}`,
                provider: "sim",
                cached: false,
              });
          }),
        );
      expect(node.journalStats.journaled).toBeGreaterThan(0);
      // everything shipped, then cut off: the idle lease is given back while the database is out of reach
      for (let i = 0; i < 40 && (node.journalFigures()?.pending ?? 1) > 0; i++) await Bun.sleep(50);
      expect(node.journalFigures()?.pending).toBe(0);
      expect((await allowance()).n).toBeGreaterThan(0);
      proxy.down();
      await Bun.sleep(2500);
      const during = await allowance();
      expect(during.n).toBeGreaterThan(0);
      proxy.up();
      const back = performance.now();
      while ((await allowance()).n > 0 && performance.now() - back < 5000) await Bun.sleep(50);
      console.log(
        `an allowance of ${during.x} credits given back while cut off: gone ${(performance.now() - back).toFixed(0)} ms after the database was back`,
      );
      expect((await allowance()).n).toBe(0);
      await node.close();
      const [acc] = await read`SELECT balance::float8 AS b FROM accounts WHERE id = ${id}`;
      expect(Number(acc.b)).toBe(1_000_000 - seq);
    } finally {
      proxy.up();
      rmSync(dir, { recursive: true, force: true });
      await pool.close();
      proxy.down();
      await read.close();
      await setup.close();
      await db.drop();
    }
  },
  30_000,
);
