import type { Statement } from "bun:sqlite";
import { auditDraft } from "../audit/chain";
import type { AuditBy } from "../audit/interface";
import { appendAudit } from "../audit/sqlite";
import { clientClosed } from "../errors";
import { timeOrderedId } from "../ids";
import { isStorageUnavailable, type Storage } from "../storage/db";
import { balanceTooLarge, credits, grantAmount, grantReason, MAX_BALANCE } from "./amount";
import { grantEntry } from "./audit";
import { GroupCommitLedger, type PendingCharge, takeBackRefused, VOIDED } from "./group-commit";
import { keyBudgetExceeded } from "./holds";
import {
  type ChargeWatch,
  type CreditLedger,
  IDEMPOTENT_CHARGES_KEPT_MS,
  type KeyBudget,
  type MonthSummary,
  type Reservation,
  type UsageFigures,
} from "./interface";
import { dayOf, monthlyFrom, monthStart, monthToDateFrom, type UsageRow } from "./usage";

/** balances kept in memory at most; past it they are dropped and read again */
const MAX_KEPT_BALANCES = 20_000;

/**
 * Credits. A call holds its cost before any provider is called and is charged when it succeeds:
 * one ledger row and one conditional `UPDATE … WHERE balance >= …`, plus the day's usage rollup
 * (`usage_daily`, one upsert per account, function and provider of a batch), in the same
 * transaction, so usage reads never scan the ledger.
 *
 * Holds live in memory: `reserve` admits the call only if the committed balance minus what this
 * process's calls in flight already hold covers it, so no provider is ever called on credits that
 * are promised to another call. The committed balance is kept in memory too (`committed`): set by
 * each read, charge and grant of this connection, and dropped as a whole when another connection
 * (a CLI verb, another process) has committed anything since (`PRAGMA data_version`, checked once
 * per turn of the event loop); a call it would refuse is checked against the file before it is
 * refused. A failed call releases its hold and
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
export class SqliteCreditLedger extends GroupCommitLedger implements CreditLedger {
  private chargeBalanceStmt: Statement<{ balance: number }>;
  private insertStmt: Statement;
  private balanceStmt: Statement<{ balance: number; plan: string }>;
  private rollupStmt: Statement;
  private usageRowsStmt: Statement<UsageRow, [string, string, string]>;
  private monthlyStmt: Statement<UsageRow & { month: string }, [string, string]>;
  private refundStmt: Statement;
  private chargedStmt: Statement<{ request_id: string }, [string, string]>;
  private claimStmt: Statement;
  private unclaimStmt: Statement;
  private voidStmt: Statement;
  private sweepClaimsStmt: Statement;
  private keySpentStmt: Statement<{ used: number }, [string, number]>;
  private dataVersionStmt: Statement<{ data_version: number }>;
  private claims = 0;
  /** the alert watch (alerts/watch.ts), when alert endpoints are configured */
  watch: ChargeWatch | null = null;
  /** the UTC day of the rollups, made again once the clock passes `dayEnds` */
  private day = "";
  private dayEnds = 0;
  /** committed balances as this connection last read or wrote them (see the class comment) */
  private committed = new Map<string, number>();
  private dataVersion = -1;
  /** data_version was read during this turn of the event loop */
  private versionRead = false;
  constructor(private storage: Storage) {
    super();
    const q = storage.sqlite;
    this.chargeBalanceStmt = q.prepare(
      "UPDATE accounts SET balance = balance - ?1 WHERE id = ?2 AND balance - ?1 >= ?3 RETURNING balance",
    );
    this.insertStmt = q.prepare(
      `INSERT INTO ledger (account_id, key_id, amount, kind, function, request_id, provider, cached, created_at, input_tokens, output_tokens, public_id) VALUES (?, ?, ?, 'charge', ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.balanceStmt = q.prepare("SELECT balance, plan FROM accounts WHERE id = ?");
    this.dataVersionStmt = q.prepare("PRAGMA data_version");
    this.rollupStmt = q.prepare(
      "INSERT INTO usage_daily (account_id, day, kind, function, provider, requests, credits, cached, input_tokens, output_tokens) VALUES (?1, ?2, ?3, ?4, ?5, ?8, ?6, ?7, ?9, ?10) ON CONFLICT (account_id, day, kind, function, provider) DO UPDATE SET requests = requests + excluded.requests, credits = credits + excluded.credits, cached = cached + excluded.cached, input_tokens = input_tokens + excluded.input_tokens, output_tokens = output_tokens + excluded.output_tokens",
    );
    this.usageRowsStmt = q.prepare(
      "SELECT day, kind, function, provider, requests, credits, cached, input_tokens, output_tokens FROM usage_daily WHERE account_id = ?1 AND day >= ?2 AND day <= ?3 ORDER BY day",
    );
    this.monthlyStmt = q.prepare(
      "SELECT substr(day, 1, 7) AS month, '' AS day, kind, function, '' AS provider, sum(requests) AS requests, sum(credits) AS credits, sum(cached) AS cached, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens FROM usage_daily WHERE account_id = ?1 AND day >= ?2 GROUP BY month, kind, function ORDER BY month DESC, credits DESC",
    );
    this.refundStmt = q.prepare("UPDATE accounts SET balance = balance + ?1 WHERE id = ?2");
    this.chargedStmt = q.prepare(
      "SELECT request_id FROM ledger WHERE request_id IN (SELECT value FROM json_each(?1)) AND account_id = ?2 AND kind = 'charge' LIMIT 1",
    );
    this.claimStmt = q.prepare(
      "INSERT INTO idempotent_charges (request_id, account_id, state, created_at) VALUES (?1, ?2, 'charged', ?3) ON CONFLICT (request_id) DO NOTHING",
    );
    this.unclaimStmt = q.prepare("DELETE FROM idempotent_charges WHERE request_id = ?1 AND state = 'charged'");
    this.voidStmt = q.prepare(
      "INSERT INTO idempotent_charges (request_id, account_id, state, created_at) SELECT value, ?2, 'void', ?3 FROM json_each(?1) WHERE true ON CONFLICT (request_id) DO NOTHING",
    );
    this.keySpentStmt = q.prepare(
      "SELECT coalesce(-sum(amount), 0) AS used FROM ledger WHERE key_id = ?1 AND created_at >= ?2 AND kind = 'charge'",
    );
    this.sweepClaimsStmt = q.prepare(
      "DELETE FROM idempotent_charges WHERE rowid IN (SELECT rowid FROM idempotent_charges WHERE created_at < ?1 LIMIT 500)",
    );
  }

  /**
   * Holds `amount` credits for a call about to run; null when the balance does not cover it. With
   * a budget, the key's month-to-date charges plus this process's holds on it must leave room too
   * (synchronous, so no other call of this process comes between the read and the hold).
   */
  reserve(accountId: string, amount: number, budget?: KeyBudget): Reservation | null {
    credits(amount, "a hold");
    const limit = budget && credits(budget.limit, "a key's monthly_credit_limit");
    if (!budget || limit === undefined || amount <= 0) return this.holdFromCommitted(accountId, amount);
    const used = credits(this.keySpent(budget.keyId) + this.keyHolds.held(budget.keyId), "a key's month-to-date use");
    if (used + amount > limit) throw keyBudgetExceeded(limit, used, amount);
    const r = this.holdFromCommitted(accountId, amount);
    if (r) {
      this.keyHolds.add(budget.keyId, amount);
      r.keyId = budget.keyId;
    }
    return r;
  }

  /**
   * A hold against the balance kept in memory; one it would refuse is tried once more against the
   * file, so a stale balance never refuses a call the committed one covers.
   */
  private holdFromCommitted(accountId: string, amount: number): Reservation | null {
    if (amount <= 0) return this.hold(accountId, amount, this.balance(accountId));
    this.forgetIfChangedElsewhere();
    const known = this.committed.get(accountId);
    if (known === undefined) return this.hold(accountId, amount, this.balance(accountId));
    return this.hold(accountId, amount, known) ?? this.hold(accountId, amount, this.balance(accountId));
  }

  /** Drops the balances kept in memory if another connection has committed since the last look (once per turn). */
  private forgetIfChangedElsewhere(): void {
    if (this.versionRead) return;
    this.versionRead = true;
    setImmediate(() => {
      this.versionRead = false;
    });
    const v = this.dataVersionStmt.get()?.data_version ?? -1;
    if (v !== this.dataVersion) {
      this.committed.clear();
      this.dataVersion = v;
    }
  }

  /** Keeps `balance` as the account's committed balance, unless inside a transaction that may still roll back. */
  private remember(accountId: string, balance: number): void {
    if (this.storage.sqlite.inTransaction) {
      this.committed.delete(accountId);
      return;
    }
    if (this.committed.size >= MAX_KEPT_BALANCES) this.committed.clear();
    this.committed.set(accountId, balance);
  }

  keySpent(keyId: string, now = Date.now()): number {
    return this.keySpentStmt.get(keyId, monthStart(now))?.used ?? 0;
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
          const day = this.today();
          for (const c of batch) this.apply(c);
          this.addRollups(batch, day);
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
      else {
        // in batch order: an account's last charge leaves what its transaction committed
        if (typeof out.balance === "number") this.remember(c.accountId, out.balance);
        c.done(out.balance);
      }
    }
  }

  private apply(c: PendingCharge): void {
    if (c.details.signal?.aborted) {
      c.out = { error: clientClosed("the client went away before its answer: not charged") };
      return;
    }
    let updated = false;
    let claimed = false;
    const d = c.details;
    try {
      // an Idempotency-Key call's charge: recorded by request id, unless a retry voided it first
      if (d.idempotent) {
        if (this.claimStmt.run(d.requestId, c.accountId, Date.now()).changes === 0) {
          c.out = { balance: VOIDED };
          return;
        }
        claimed = true;
        if (++this.claims % 256 === 0) this.sweepClaimsStmt.run(Date.now() - IDEMPOTENT_CHARGES_KEPT_MS);
      }
      // a charge without a hold under a key's monthly limit: within it, counting the batch so far
      if (
        c.spareHolds &&
        d.keyLimit !== undefined &&
        this.keySpent(d.keyId) + this.keyHolds.held(d.keyId) + c.amount > d.keyLimit
      ) {
        if (claimed) this.unclaimStmt.run(d.requestId);
        c.out = { balance: null };
        return;
      }
      const floor = c.spareHolds ? this.held(c.accountId) : 0;
      const row = this.chargeBalanceStmt.get(c.amount, c.accountId, floor);
      if (!row) {
        if (claimed) this.unclaimStmt.run(d.requestId);
        c.out = { balance: null };
        return;
      }
      updated = true;
      const at = Date.now();
      this.insertStmt.run(
        c.accountId,
        d.keyId,
        -c.amount,
        d.fn,
        d.requestId,
        d.provider,
        d.cached ? 1 : 0,
        at,
        d.tokens?.input ?? null,
        d.tokens?.output ?? null,
        timeOrderedId("led", at),
      );
      c.out = { balance: row.balance };
      // alerts (docs/alerts.md): one lookup in memory, and only a watched account's events written here
      if (this.watch?.watches(c.accountId))
        this.watch.chargedSqlite(this.storage.sqlite, {
          accountId: c.accountId,
          keyId: d.keyId,
          amount: c.amount,
          balance: row.balance,
        });
    } catch (err) {
      // the database as a whole is unavailable: the batch fails and rolls back
      if (isStorageUnavailable(err)) throw err;
      // only this charge failed: a failed statement rolls back just itself, so an UPDATE that
      // went through before a failed INSERT is undone here; the rest of the batch goes on
      if (updated) this.refundStmt.run(c.amount, c.accountId);
      if (claimed) this.unclaimStmt.run(d.requestId);
      c.out = { error: err };
    }
  }

  /** The UTC day (YYYY-MM-DD) of now, made once a day. */
  private today(): string {
    const now = Date.now();
    if (now >= this.dayEnds || now < this.dayEnds - 86_400_000) {
      this.day = dayOf(now);
      this.dayEnds = (Math.floor(now / 86_400_000) + 1) * 86_400_000;
    }
    return this.day;
  }

  /**
   * The day's usage rollups of the batch's charges that went through, one upsert per account,
   * function and provider instead of one per charge (under load a batch holds tens of charges of
   * the same few keys). Inside the batch's transaction: rollups and ledger commit together.
   */
  private addRollups(batch: PendingCharge[], day: string): void {
    if (batch.length === 1) {
      // one charge (a quiet gateway, one connection): its own upsert, without the grouping
      const c = batch[0] as PendingCharge;
      if (c.out && !("error" in c.out) && typeof c.out.balance === "number") {
        const d = c.details;
        this.rollupStmt.run(
          c.accountId,
          day,
          "charge",
          d.fn,
          d.provider ?? "",
          c.amount,
          d.cached ? 1 : 0,
          1,
          d.tokens?.input ?? 0,
          d.tokens?.output ?? 0,
        );
      }
      return;
    }
    const sums = new Map<
      string,
      { c: PendingCharge; requests: number; credits: number; cached: number; input: number; output: number }
    >();
    for (const c of batch) {
      if (!c.out || "error" in c.out || typeof c.out.balance !== "number") continue;
      const k = `${c.accountId}\u0000${c.details.fn}\u0000${c.details.provider ?? ""}`;
      const sum = sums.get(k) ?? { c, requests: 0, credits: 0, cached: 0, input: 0, output: 0 };
      sum.requests++;
      sum.credits += c.amount;
      sum.input += c.details.tokens?.input ?? 0;
      sum.output += c.details.tokens?.output ?? 0;
      if (c.details.cached) sum.cached++;
      sums.set(k, sum);
    }
    for (const { c, requests, credits, cached, input, output } of sums.values())
      this.rollupStmt.run(
        c.accountId,
        day,
        "charge",
        c.details.fn,
        c.details.provider ?? "",
        credits,
        cached,
        requests,
        input,
        output,
      );
  }

  /**
   * Adds credits, or takes them back when `amount` is negative: the same conditional update as a
   * charge, so a debit never takes the balance below zero, nor below what this process's calls in
   * flight hold (it is refused with invalid_request instead).
   */
  grant(accountId: string, amount: number, kind: "welcome" | "grant", reason: string | null, audit?: AuditBy): number {
    const q = this.storage.sqlite;
    grantAmount(amount);
    reason = grantReason(reason);
    const balance = q.transaction(() => {
      const floor = amount < 0 ? this.held(accountId) : Number.MIN_SAFE_INTEGER;
      const updated = q
        .query<{ balance: number }, [number, string, number, number]>(
          "UPDATE accounts SET balance = balance + ?1 WHERE id = ?2 AND balance + ?1 >= ?3 AND balance + ?1 <= ?4 RETURNING balance",
        )
        .get(amount, accountId, floor, MAX_BALANCE);
      if (!updated) {
        const acc = this.balanceStmt.get(accountId);
        if (!acc) throw new Error(`account ${accountId} not found`);
        if (amount > 0) throw balanceTooLarge(amount, acc.balance);
        throw takeBackRefused(amount, acc.balance, this.held(accountId));
      }
      const at = Date.now();
      q.query("INSERT INTO ledger (account_id, amount, kind, reason, created_at, public_id) VALUES (?, ?, ?, ?, ?, ?)").run(
        accountId,
        amount,
        kind,
        reason,
        at,
        timeOrderedId("led", at),
      );
      this.rollupStmt.run(accountId, dayOf(at), "grant", "", "", amount, 0, 1, 0, 0);
      if (audit) appendAudit(q, grantEntry(audit, accountId, amount, reason, updated.balance));
      if (this.watch?.watches(accountId))
        this.watch.chargedSqlite(q, { accountId, keyId: null, amount: -amount, balance: updated.balance });
      return updated.balance;
    })();
    this.remember(accountId, balance);
    return balance;
  }

  /** The committed balance, read from the file. */
  balance(accountId: string): number {
    const row = this.balanceStmt.get(accountId);
    if (!row) return 0;
    this.remember(accountId, row.balance);
    return row.balance;
  }

  /** Voids the ids not charged, then finds a charged one, in one transaction: a charge commits either before (found) or never. */
  chargedRequest(accountId: string, requestIds: string[]): string | null {
    const ids = JSON.stringify(requestIds);
    return this.storage.sqlite
      .transaction(() => {
        this.voidStmt.run(ids, accountId, Date.now());
        return this.chargedStmt.get(ids, accountId)?.request_id ?? null;
      })
      .immediate();
  }

  /** Balance := sum of the ledger, for every account (a database edited by hand, or by an older version that kept reservations on disk). */
  reconcile(audit?: AuditBy): number {
    this.committed.clear();
    const q = this.storage.sqlite;
    const sum = "(SELECT coalesce(sum(amount), 0) FROM ledger WHERE ledger.account_id = accounts.id)";
    return q
      .transaction(() => {
        // the entry names at most 1000 of the accounts corrected, with their balances before and after
        const rows = audit
          ? q
              .query<{ id: string; balance: number; sum: number }, []>(
                `SELECT id, balance, ${sum} AS sum FROM accounts WHERE balance != ${sum} LIMIT 1000`,
              )
              .all()
          : [];
        const changed = q.query(`UPDATE accounts SET balance = ${sum} WHERE balance != ${sum}`).run().changes;
        if (audit) {
          const balances = (pick: (r: (typeof rows)[number]) => number) => Object.fromEntries(rows.map((r) => [r.id, pick(r)]));
          const before = { balances: balances((r) => r.balance) };
          const after = { balances: balances((r) => r.sum), accounts_corrected: changed };
          appendAudit(q, auditDraft(audit, "credits.reconcile", null, null, before, after));
        }
        return changed;
      })
      .immediate();
  }

  /**
   * Usage from the first day of the current UTC month up to now, read from the daily rollups
   * (at most days × functions × providers rows, whatever the ledger holds).
   */
  monthToDate(accountId: string, now = new Date()): UsageFigures {
    const from = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
    const rows = this.usageRowsStmt.all(accountId, dayOf(from), dayOf(now.getTime()));
    return monthToDateFrom(accountId, this.balanceStmt.get(accountId) ?? null, rows, from, now);
  }

  /** The last `months` months that have any ledger row, newest first, from the daily rollups. */
  monthly(accountId: string, months = 12, now = new Date()): MonthSummary[] {
    const since = dayOf(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - (months - 1), 1));
    return monthlyFrom(this.monthlyStmt.all(accountId, since), months);
  }
}
