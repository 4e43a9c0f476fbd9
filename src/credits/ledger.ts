import type { Statement } from "bun:sqlite";
import { isStorageUnavailable, type Storage } from "../storage/db";

export interface Reservation {
  accountId: string;
  amount: number;
  /** balance after the reservation, i.e. what remains once the call is settled */
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

/** what an operation produced inside the transaction, handed out only after it commits */
interface Outcome {
  out?: { reservation?: Reservation | null; error?: unknown };
}

type Op = Outcome &
  (
    | { kind: "reserve"; accountId: string; amount: number; done: (r: Reservation | null) => void; fail: (e: unknown) => void }
    | {
        kind: "charge";
        accountId: string;
        amount: number;
        details: ChargeDetails;
        done: (r: Reservation | null) => void;
        fail: (e: unknown) => void;
      }
    | { kind: "settle"; r: Reservation; details: ChargeDetails; done: () => void; fail: (e: unknown) => void }
    | { kind: "release"; r: Reservation; done: () => void; fail: (e: unknown) => void }
  );

/**
 * Credits: reserve before a provider is called, settle (one ledger row) on success, release on
 * failure; `charge` reserves and settles at once when the answer is already in hand (cache hit,
 * offline engine). A reservation is a conditional UPDATE, so the balance can never go below zero,
 * whatever the concurrency and across processes sharing the file. A reservation lost in a crash
 * is recovered at start-up by `reconcile`, which recomputes every balance from the ledger.
 *
 * Group commit: operations requested during one turn of the event loop are applied in order in
 * ONE SQLite transaction at the next turn (setImmediate), and each caller's promise settles only
 * after that transaction has committed. A write transaction costs about 30 µs whatever it holds,
 * so under load this divides the cost of credits by the batch size without weakening anything:
 * an answer is still sent only after its charge is durable, and each operation is checked on its
 * own (one refused reservation does not affect its neighbours). If the commit itself fails (the
 * database is locked beyond busy_timeout, the disk is full), every operation of the batch fails
 * and none of them took effect.
 */
export class CreditLedger {
  private reserveStmt: Statement<{ balance: number }>;
  private releaseStmt: Statement;
  private chargeStmt: Statement;
  private balanceStmt: Statement<{ balance: number; plan: string }>;
  private queue: Op[] = [];
  private scheduled = false;
  /** how many transactions and operations group commit has applied (for tests and metrics) */
  readonly stats = { batches: 0, operations: 0 };

  constructor(private storage: Storage) {
    const q = storage.sqlite;
    this.reserveStmt = q.prepare("UPDATE accounts SET balance = balance - ?1 WHERE id = ?2 AND balance >= ?1 RETURNING balance");
    this.releaseStmt = q.prepare("UPDATE accounts SET balance = balance + ?1 WHERE id = ?2");
    this.chargeStmt = q.prepare(
      "INSERT INTO ledger (account_id, key_id, amount, kind, function, request_id, provider, cached, created_at) VALUES (?, ?, ?, 'charge', ?, ?, ?, ?, ?)",
    );
    this.balanceStmt = q.prepare("SELECT balance, plan FROM accounts WHERE id = ?");
  }

  /** Holds `amount` credits; null when the balance is too low. */
  reserve(accountId: string, amount: number): Promise<Reservation | null> {
    if (amount <= 0) return Promise.resolve({ accountId, amount: 0, remaining: this.balance(accountId), done: false });
    return new Promise((done, fail) => this.enqueue({ kind: "reserve", accountId, amount, done, fail }));
  }

  /** Reserve and settle in one step, for an answer already in hand; null when the balance is too low. */
  charge(accountId: string, amount: number, details: ChargeDetails): Promise<Reservation | null> {
    if (amount <= 0) return Promise.resolve({ accountId, amount: 0, remaining: this.balance(accountId), done: true });
    return new Promise((done, fail) => this.enqueue({ kind: "charge", accountId, amount, details, done, fail }));
  }

  /** Turns the reservation into a charge: exactly one ledger row, at most once. */
  settle(r: Reservation, details: ChargeDetails): Promise<void> {
    if (r.done) return Promise.resolve();
    r.done = true;
    if (r.amount === 0) return Promise.resolve();
    return new Promise((done, fail) =>
      this.enqueue({
        kind: "settle",
        r,
        details,
        done,
        fail: (err) => {
          // not recorded: the caller releases the reservation
          r.done = false;
          fail(err);
        },
      }),
    );
  }

  /** Gives a reservation back; resolves once that is committed. Never rejects (start-up reconcile is the backstop). */
  release(r: Reservation): Promise<void> {
    if (r.done) return Promise.resolve();
    r.done = true;
    if (r.amount <= 0) return Promise.resolve();
    return new Promise((done) => this.enqueue({ kind: "release", r, done, fail: () => done() }));
  }

  /** Applies whatever is queued now, synchronously (shutdown, tests). */
  flush(): void {
    if (this.queue.length === 0) return;
    const ops = this.queue;
    this.queue = [];
    try {
      // IMMEDIATE: take the write lock up front, so a locked database fails the batch at once
      this.storage.sqlite
        .transaction(() => {
          for (const op of ops) this.apply(op);
        })
        .immediate();
    } catch (err) {
      for (const op of ops) op.fail(err);
      return;
    }
    this.stats.batches++;
    this.stats.operations += ops.length;
    for (const op of ops) this.finish(op);
  }

  private enqueue(op: Op): void {
    this.queue.push(op);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private apply(op: Op): void {
    try {
      switch (op.kind) {
        case "reserve": {
          const row = this.reserveStmt.get(op.amount, op.accountId);
          op.out = {
            reservation: row ? { accountId: op.accountId, amount: op.amount, remaining: row.balance, done: false } : null,
          };
          return;
        }
        case "charge": {
          const row = this.reserveStmt.get(op.amount, op.accountId);
          if (!row) {
            op.out = { reservation: null };
            return;
          }
          try {
            this.insertCharge(op.accountId, op.amount, op.details);
          } catch (err) {
            this.releaseStmt.run(op.amount, op.accountId);
            throw err;
          }
          op.out = { reservation: { accountId: op.accountId, amount: op.amount, remaining: row.balance, done: true } };
          return;
        }
        case "settle":
          this.insertCharge(op.r.accountId, op.r.amount, op.details);
          op.out = {};
          return;
        case "release":
          this.releaseStmt.run(op.r.amount, op.r.accountId);
          op.out = {};
          return;
      }
    } catch (err) {
      // the database as a whole is unavailable: the batch fails and rolls back
      if (isStorageUnavailable(err)) throw err;
      // one statement failed (SQLite rolled back just that statement); the rest of the batch goes on
      op.out = { error: err };
    }
  }

  private finish(op: Op): void {
    const res = op.out;
    if (!res || res.error !== undefined) op.fail(res?.error ?? new Error("credit operation was not applied"));
    else if (op.kind === "reserve" || op.kind === "charge") op.done(res.reservation ?? null);
    else op.done();
  }

  private insertCharge(accountId: string, amount: number, d: ChargeDetails): void {
    this.chargeStmt.run(accountId, d.keyId, -amount, d.fn, d.requestId, d.provider, d.cached ? 1 : 0, Date.now());
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

  /** Balance := sum of the ledger, for every account (drops reservations a crash left behind). */
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
