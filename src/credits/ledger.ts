import type { Statement } from "bun:sqlite";
import { GatewayError } from "../errors";
import { isStorageUnavailable, type Storage } from "../storage/db";

export interface Reservation {
  accountId: string;
  amount: number;
  /** balance once the call is charged (after settle: as committed, less what other calls hold) */
  remaining: number;
  done: boolean;
}

export interface ChargeDetails {
  keyId: string;
  fn: string;
  requestId: string;
  provider: string | null;
  cached: boolean;
}

export interface UsageFigures {
  account_id: string;
  plan: string;
  balance: number;
  period: { start: string; end: string };
  requests: number;
  credits_used: number;
  credits_granted: number;
  cached_requests: number;
  by_function: { function: string; requests: number; credits: number; cached: number }[];
  by_provider: { provider: string; requests: number; credits: number }[];
}

export interface MonthSummary {
  month: string;
  requests: number;
  credits_used: number;
  credits_granted: number;
  by_function: { function: string; requests: number; credits: number }[];
}

/** One charge waiting for the next group commit. */
interface PendingCharge {
  accountId: string;
  amount: number;
  details: ChargeDetails;
  /** a charge without a hold (cache hit) must leave what calls in flight hold untouched */
  spareHolds: boolean;
  done: (balance: number | null) => void;
  fail: (e: unknown) => void;
  out?: { balance: number | null } | { error: unknown };
}

/**
 * Credits. A call holds its cost before any provider is called and is charged when it succeeds:
 * one ledger row and one conditional `UPDATE … WHERE balance >= …`, in the same transaction.
 *
 * Holds live in memory: `reserve` reads the committed balance and admits the call only if the
 * balance minus what this process's calls in flight already hold covers it, so no provider is
 * ever called on credits that are promised to another call. A failed call releases its hold and
 * writes nothing; a crash loses only holds, never a charge. The charge itself is conditional, so
 * the balance never goes below zero, even if another process spends from the same account at
 * the same moment (that call is then refused with insufficient_credits after all).
 *
 * Group commit: the charges requested during one turn of the event loop are applied in order in
 * ONE SQLite transaction at the next turn (setImmediate), each checked on its own, and each
 * caller's promise settles only after that transaction has committed, so an answer is never sent
 * before its charge is durable. A write transaction costs about 30 µs whatever it holds, so
 * under load this divides the cost of credits by the batch size. If the commit fails (database
 * locked beyond busy_timeout, disk full) every charge of the batch fails and none took effect.
 */
export class CreditLedger {
  private chargeBalanceStmt: Statement<{ balance: number }>;
  private insertStmt: Statement;
  private refundStmt: Statement;
  private balanceStmt: Statement<{ balance: number; plan: string }>;
  private holds = new Map<string, number>();
  private queue: PendingCharge[] = [];
  private scheduled = false;
  /** group-commit transactions and the charges they held (for tests and metrics) */
  readonly stats = { batches: 0, operations: 0 };

  constructor(private storage: Storage) {
    const q = storage.sqlite;
    this.chargeBalanceStmt = q.prepare(
      "UPDATE accounts SET balance = balance - ?1 WHERE id = ?2 AND balance - ?1 >= ?3 RETURNING balance",
    );
    this.insertStmt = q.prepare(
      "INSERT INTO ledger (account_id, key_id, amount, kind, function, request_id, provider, cached, created_at) VALUES (?, ?, ?, 'charge', ?, ?, ?, ?, ?)",
    );
    this.refundStmt = q.prepare("UPDATE accounts SET balance = balance + ?1 WHERE id = ?2");
    this.balanceStmt = q.prepare("SELECT balance, plan FROM accounts WHERE id = ?");
  }

  /** Credits held by this process's calls in flight for the account. */
  held(accountId: string): number {
    return this.holds.get(accountId) ?? 0;
  }

  /** Holds `amount` credits for a call about to run; null when the balance does not cover it. */
  reserve(accountId: string, amount: number): Reservation | null {
    const balance = this.balance(accountId);
    if (amount <= 0) return { accountId, amount: 0, remaining: balance - this.held(accountId), done: false };
    const held = this.held(accountId);
    if (balance - held < amount) return null;
    this.holds.set(accountId, held + amount);
    return { accountId, amount, remaining: balance - held - amount, done: false };
  }

  /**
   * Charges a reservation: exactly one ledger row, at most once. Resolves with the balance after
   * the charge; rejects with insufficient_credits if the balance no longer covers it (spent by
   * another process meanwhile), or with the storage error if the commit failed. Either way the
   * hold is gone once it settles.
   */
  async settle(r: Reservation, details: ChargeDetails): Promise<void> {
    if (r.done) return;
    r.done = true;
    if (r.amount === 0) return;
    try {
      const balance = await this.enqueue(r.accountId, r.amount, details, false);
      if (balance === null) throw this.exhausted(r.accountId, r.amount);
      r.remaining = balance - this.held(r.accountId) + r.amount;
    } finally {
      this.unhold(r.accountId, r.amount);
    }
  }

  /** Gives a reservation's hold back; nothing was written, so nothing needs writing. */
  release(r: Reservation): void {
    if (r.done) return;
    r.done = true;
    this.unhold(r.accountId, r.amount);
  }

  /**
   * Reserve and settle in one step, for an answer already in hand (a cache hit): null when the
   * balance, less what calls in flight hold, does not cover it.
   */
  async charge(accountId: string, amount: number, details: ChargeDetails): Promise<Reservation | null> {
    if (amount <= 0) return { accountId, amount: 0, remaining: this.balance(accountId) - this.held(accountId), done: true };
    const balance = await this.enqueue(accountId, amount, details, true);
    if (balance === null) return null;
    return { accountId, amount, remaining: balance - this.held(accountId), done: true };
  }

  /** Applies whatever is queued now, synchronously (shutdown, tests). */
  flush(): void {
    if (this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    try {
      // IMMEDIATE: take the write lock up front, so a locked database fails the batch at once
      this.storage.sqlite
        .transaction(() => {
          for (const c of batch) this.apply(c);
        })
        .immediate();
    } catch (err) {
      for (const c of batch) c.fail(err);
      return;
    }
    this.stats.batches++;
    this.stats.operations += batch.length;
    for (const c of batch) {
      const out = c.out;
      if (!out) c.fail(new Error("charge was not applied"));
      else if ("error" in out) c.fail(out.error);
      else c.done(out.balance);
    }
  }

  private enqueue(accountId: string, amount: number, details: ChargeDetails, spareHolds: boolean): Promise<number | null> {
    return new Promise((done, fail) => {
      this.queue.push({ accountId, amount, details, spareHolds, done, fail });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.flush();
      });
    });
  }

  private apply(c: PendingCharge): void {
    let updated = false;
    try {
      const floor = c.spareHolds ? this.held(c.accountId) : 0;
      const row = this.chargeBalanceStmt.get(c.amount, c.accountId, floor);
      if (!row) {
        c.out = { balance: null };
        return;
      }
      updated = true;
      const d = c.details;
      this.insertStmt.run(c.accountId, d.keyId, -c.amount, d.fn, d.requestId, d.provider, d.cached ? 1 : 0, Date.now());
      c.out = { balance: row.balance };
    } catch (err) {
      // the database as a whole is unavailable: the batch fails and rolls back
      if (isStorageUnavailable(err)) throw err;
      // only this charge failed: a failed statement rolls back just itself, so an UPDATE that
      // went through before a failed INSERT is undone here; the rest of the batch goes on
      if (updated) this.refundStmt.run(c.amount, c.accountId);
      c.out = { error: err };
    }
  }

  private unhold(accountId: string, amount: number): void {
    const left = this.held(accountId) - amount;
    if (left > 0) this.holds.set(accountId, left);
    else this.holds.delete(accountId);
  }

  private exhausted(accountId: string, amount: number): GatewayError {
    return new GatewayError(
      "insufficient_credits",
      `insufficient credits: the call costs ${amount}, balance is ${this.balance(accountId)} (spent elsewhere while the call ran)`,
    );
  }

  grant(accountId: string, amount: number, kind: "welcome" | "grant", reason: string | null): number {
    const q = this.storage.sqlite;
    return q.transaction(() => {
      const updated = q
        .query<{ balance: number }, [number, string]>("UPDATE accounts SET balance = balance + ? WHERE id = ? RETURNING balance")
        .get(amount, accountId);
      if (!updated) throw new Error(`account ${accountId} not found`);
      q.query("INSERT INTO ledger (account_id, amount, kind, reason, created_at) VALUES (?, ?, ?, ?, ?)").run(
        accountId,
        amount,
        kind,
        reason,
        Date.now(),
      );
      return updated.balance;
    })();
  }

  balance(accountId: string): number {
    return this.balanceStmt.get(accountId)?.balance ?? 0;
  }

  /** Balance := sum of the ledger, for every account (a database edited by hand, or by an older version that kept reservations on disk). */
  reconcile(): number {
    return this.storage.sqlite
      .query(
        "UPDATE accounts SET balance = (SELECT coalesce(sum(amount), 0) FROM ledger WHERE ledger.account_id = accounts.id) WHERE balance != (SELECT coalesce(sum(amount), 0) FROM ledger WHERE ledger.account_id = accounts.id)",
      )
      .run().changes;
  }

  usage(accountId: string, from: number, to: number): UsageFigures {
    const q = this.storage.sqlite;
    const acc = this.balanceStmt.get(accountId);
    const byFn = q
      .query<{ function: string; requests: number; credits: number; cached: number }, [string, number, number]>(
        "SELECT function, count(*) AS requests, -sum(amount) AS credits, sum(cached) AS cached FROM ledger WHERE account_id = ? AND kind = 'charge' AND created_at >= ? AND created_at < ? GROUP BY function ORDER BY credits DESC, function",
      )
      .all(accountId, from, to);
    const byProvider = q
      .query<{ provider: string; requests: number; credits: number }, [string, number, number]>(
        "SELECT coalesce(provider, 'none') AS provider, count(*) AS requests, -sum(amount) AS credits FROM ledger WHERE account_id = ? AND kind = 'charge' AND created_at >= ? AND created_at < ? GROUP BY 1 ORDER BY credits DESC",
      )
      .all(accountId, from, to);
    const granted =
      q
        .query<{ g: number | null }, [string, number, number]>(
          "SELECT sum(amount) AS g FROM ledger WHERE account_id = ? AND kind != 'charge' AND created_at >= ? AND created_at < ?",
        )
        .get(accountId, from, to)?.g ?? 0;
    return {
      account_id: accountId,
      plan: acc?.plan ?? "free",
      balance: acc?.balance ?? 0,
      period: { start: new Date(from).toISOString(), end: new Date(to).toISOString() },
      requests: byFn.reduce((s, r) => s + r.requests, 0),
      credits_used: byFn.reduce((s, r) => s + r.credits, 0),
      credits_granted: granted,
      cached_requests: byFn.reduce((s, r) => s + r.cached, 0),
      by_function: byFn,
      by_provider: byProvider,
    };
  }

  /** `usage` from the first instant of the current UTC month up to now. */
  monthToDate(accountId: string, now = new Date()): UsageFigures {
    return this.usage(accountId, Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1), now.getTime() + 1);
  }

  monthly(accountId: string, months = 12): MonthSummary[] {
    const rows = this.storage.sqlite
      .query<{ month: string; function: string | null; kind: string; n: number; amount: number }, [string]>(
        "SELECT strftime('%Y-%m', created_at / 1000, 'unixepoch') AS month, function, kind, count(*) AS n, sum(amount) AS amount FROM ledger WHERE account_id = ? GROUP BY month, function, kind ORDER BY month DESC",
      )
      .all(accountId);
    const byMonth = new Map<string, MonthSummary>();
    for (const r of rows) {
      let m = byMonth.get(r.month);
      if (!m) {
        m = { month: r.month, requests: 0, credits_used: 0, credits_granted: 0, by_function: [] };
        byMonth.set(r.month, m);
      }
      if (r.kind === "charge") {
        m.requests += r.n;
        m.credits_used += -r.amount;
        m.by_function.push({ function: r.function ?? "unknown", requests: r.n, credits: -r.amount });
      } else m.credits_granted += r.amount;
    }
    return [...byMonth.values()].slice(0, months);
  }
}
