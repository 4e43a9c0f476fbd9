import type { Statement } from "bun:sqlite";
import type { Storage } from "../storage/db";

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

/**
 * Credits: reserve before a provider is called, settle (one ledger row) on success, release on
 * failure. A reservation is a conditional UPDATE, so the balance can never go below zero, whatever
 * the concurrency and across processes sharing the file. A reservation lost in a crash is
 * recovered at start-up by `reconcile`, which recomputes every balance from the ledger.
 */
export class CreditLedger {
  private reserveStmt: Statement<{ balance: number }>;
  private releaseStmt: Statement;
  private chargeStmt: Statement;
  private balanceStmt: Statement<{ balance: number; plan: string }>;

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
  reserve(accountId: string, amount: number): Reservation | null {
    if (amount <= 0) return { accountId, amount: 0, remaining: this.balance(accountId), done: false };
    const row = this.reserveStmt.get(amount, accountId);
    return row ? { accountId, amount, remaining: row.balance, done: false } : null;
  }

  /** Turns the reservation into a charge: exactly one ledger row, at most once. */
  settle(r: Reservation, d: ChargeDetails): void {
    if (r.done) return;
    r.done = true;
    if (r.amount === 0) return;
    try {
      this.chargeStmt.run(r.accountId, d.keyId, -r.amount, d.fn, d.requestId, d.provider, d.cached ? 1 : 0, Date.now());
    } catch (err) {
      // the charge could not be recorded: give the credits back so balance and ledger agree
      r.done = false;
      this.release(r);
      throw err;
    }
  }

  release(r: Reservation): void {
    if (r.done) return;
    r.done = true;
    if (r.amount > 0) this.releaseStmt.run(r.amount, r.accountId);
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
