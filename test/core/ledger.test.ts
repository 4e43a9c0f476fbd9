import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChargeDetails } from "../../src/credits/interface";
import { SqliteCreditLedger } from "../../src/credits/sqlite";
import { openStorage } from "../../src/storage/db";

const dir = mkdtempSync(join(tmpdir(), "textai-ledger-"));
const path = join(dir, "ledger.db");
const storage = openStorage(path);
const ledger = new SqliteCreditLedger(storage);
afterAll(() => {
  storage.close();
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
function account(credits: number): string {
  const id = `acc_test_${++n}`;
  storage.sqlite.query("INSERT INTO accounts (id, plan, balance) VALUES (?, 'free', 0)").run(id);
  if (credits > 0) ledger.grant(id, credits, "grant", "test");
  return id;
}
const details = (requestId: string): ChargeDetails => ({
  keyId: "key_x",
  fn: "word-count",
  requestId,
  provider: "local",
  cached: false,
});
/** counts the ledger's balance reads from the file (its prepared statement) until `stop` */
function spyReads() {
  const stmt = (ledger as unknown as { balanceStmt: { get: (...a: unknown[]) => unknown } }).balanceStmt;
  const get = stmt.get.bind(stmt);
  let count = 0;
  stmt.get = (...args: unknown[]) => {
    count++;
    return get(...args);
  };
  return {
    count: () => count,
    stop: () => {
      stmt.get = get;
    },
  };
}
const ledgerSum = (id: string) =>
  (storage.sqlite.query("SELECT coalesce(sum(amount), 0) AS s FROM ledger WHERE account_id = ?").get(id) as { s: number }).s;

describe("credit ledger: holds in memory, charges group-committed", () => {
  test("charges of one event-loop turn commit in one transaction, each checked on its own", async () => {
    const a = account(3);
    const before = { ...ledger.stats };
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => ledger.charge(a, 1, details(`req_${i}`))));
    expect(ledger.stats.batches - before.batches).toBe(1);
    expect(ledger.stats.operations - before.operations).toBe(5);
    // three fit, two are refused; the refusals do not undo the others
    expect(results.filter((r) => r !== null).map((r) => r?.remaining)).toEqual([2, 1, 0]);
    expect(results.filter((r) => r === null).length).toBe(2);
    expect(ledger.balance(a)).toBe(0);
    expect(ledgerSum(a)).toBe(0);
  });

  test("a hold admits no more calls than the balance covers, writes nothing, and a release frees it", async () => {
    const a = account(10);
    const before = { ...ledger.stats };
    const r1 = ledger.reserve(a, 4);
    const r2 = ledger.reserve(a, 4);
    expect([r1?.remaining, r2?.remaining]).toEqual([6, 2]);
    expect(ledger.reserve(a, 4)).toBeNull();
    // a cache hit may not spend what calls in flight hold
    expect(await ledger.charge(a, 3, details("req_hit"))).toBeNull();
    expect(ledger.held(a)).toBe(8);
    expect(ledger.balance(a)).toBe(10);
    ledger.release(r2!);
    expect(ledger.held(a)).toBe(4);
    await ledger.settle(r1!, details("req_settled"));
    expect(r1!.remaining).toBe(6);
    // settling twice or releasing a settled reservation changes nothing
    await ledger.settle(r1!, details("req_settled"));
    ledger.release(r1!);
    expect(ledger.held(a)).toBe(0);
    expect(ledger.balance(a)).toBe(6);
    expect(ledgerSum(a)).toBe(6);
    // one committed charge; the refused hit and the released hold wrote nothing
    expect(ledger.stats.operations - before.operations).toBe(2);
  });

  test("a balance spent elsewhere while a call ran refuses its charge; it never goes below zero", async () => {
    const a = account(5);
    const r = ledger.reserve(a, 4)!;
    // another process spends from the same account meanwhile
    storage.sqlite.query("UPDATE accounts SET balance = balance - 3 WHERE id = ?").run(a);
    const err = await ledger.settle(r, details("req_late")).catch((e) => e);
    expect(err.code).toBe("insufficient_credits");
    expect(ledger.held(a)).toBe(0);
    expect(ledger.balance(a)).toBe(2);
  });

  test("holds are checked against the balance in memory, and see what another process committed", async () => {
    const a = account(10);
    const other = openStorage(path);
    const elsewhere = new SqliteCreditLedger(other);
    const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
    try {
      await ledger.settle(ledger.reserve(a, 4)!, details("req_mem_1"));
      // the balance this process keeps (6) is not read from the file for the next hold
      const reads = spyReads();
      const r = ledger.reserve(a, 1)!;
      expect(reads.count()).toBe(0);
      ledger.release(r);
      reads.stop();
      // another process (the CLI) grants: the next hold may use what it granted
      elsewhere.grant(a, 10, "grant", "elsewhere");
      await nextTurn();
      const big = ledger.reserve(a, 15);
      expect(big?.remaining).toBe(1);
      ledger.release(big!);
      // another process takes back: the next turn's hold no longer counts on those credits
      elsewhere.grant(a, -12, "grant", "take back");
      await nextTurn();
      expect(ledger.reserve(a, 5)).toBeNull();
      const fits = ledger.reserve(a, 4)!;
      await ledger.settle(fits, details("req_mem_2"));
      expect(fits.remaining).toBe(0);
      expect(ledger.balance(a)).toBe(0);
      expect(ledgerSum(a)).toBe(0);
    } finally {
      other.close();
    }
  });

  test("a hold the balance in memory would refuse is checked against the file first", () => {
    const a = account(2);
    ledger.release(ledger.reserve(a, 1)!); // the balance (2) is now kept in memory
    // changed on this very connection behind the ledger's back (no data_version change)
    storage.sqlite.query("UPDATE accounts SET balance = 9 WHERE id = ?").run(a);
    const r = ledger.reserve(a, 8);
    expect(r?.remaining).toBe(1);
    ledger.release(r!);
  });

  test("a statement that fails inside a batch fails only its own charge", async () => {
    const a = account(10);
    storage.sqlite.exec(
      "CREATE TRIGGER refuse_poison BEFORE INSERT ON ledger WHEN NEW.request_id = 'req_poison' BEGIN SELECT RAISE(ABORT, 'poisoned'); END",
    );
    try {
      const good = ledger.reserve(a, 1)!;
      const bad = ledger.reserve(a, 1)!;
      const outcomes = await Promise.allSettled([
        ledger.settle(good, details("req_fine")),
        ledger.settle(bad, details("req_poison")),
        ledger.charge(a, 2, details("req_poison")),
        ledger.charge(a, 3, details("req_also_fine")),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "rejected", "fulfilled"]);
      // the failed charges were given back inside the same transaction; no hold is left behind
      expect(ledger.held(a)).toBe(0);
      expect(ledger.balance(a)).toBe(10 - 1 - 3);
      expect(ledgerSum(a)).toBe(10 - 1 - 3);
    } finally {
      storage.sqlite.exec("DROP TRIGGER refuse_poison");
    }
  });

  test("a locked database fails the whole batch and applies none of it", async () => {
    const a = account(5);
    const other = new Database(path);
    other.exec("PRAGMA busy_timeout = 0");
    storage.sqlite.exec("PRAGMA busy_timeout = 0");
    other.exec("BEGIN IMMEDIATE");
    const r = ledger.reserve(a, 1)!;
    try {
      const outcomes = await Promise.allSettled([ledger.charge(a, 1, details("req_l1")), ledger.settle(r, details("req_l2"))]);
      expect(outcomes.map((o) => o.status)).toEqual(["rejected", "rejected"]);
      expect((outcomes[0] as PromiseRejectedResult).reason.code).toMatch(/^SQLITE_BUSY/);
    } finally {
      other.exec("ROLLBACK");
      other.close();
      storage.sqlite.exec("PRAGMA busy_timeout = 5000");
    }
    expect(ledger.held(a)).toBe(0);
    expect(ledger.balance(a)).toBe(5);
    expect(ledgerSum(a)).toBe(5);
    // and the ledger works again once the lock is gone
    expect((await ledger.charge(a, 1, details("req_after")))?.remaining).toBe(4);
  });

  test("flush() applies queued charges at once (shutdown)", () => {
    const a = account(2);
    const pending = ledger.charge(a, 1, details("req_flush"));
    ledger.flush();
    expect(ledger.balance(a)).toBe(1);
    return pending;
  });
});
