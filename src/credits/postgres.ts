import type { SQL } from "bun";
import { clientClosed, GatewayError } from "../errors";
import { databaseUnavailable, isPgUnavailable, type PgStorage, pgCall, schemaReady } from "../storage/postgres";
import { GroupCommitLedger, type PendingCharge, takeBackRefused } from "./group-commit";
import type { CreditLedger, MonthSummary, Reservation, UsageFigures } from "./interface";
import { dayOf, monthlyFrom, monthToDateFrom, type UsageRow } from "./usage";

/** One charge in one statement: the conditional debit, its ledger row and its day's rollup. */
const CHARGE = `WITH upd AS (
  UPDATE accounts SET balance = balance - $1 WHERE id = $2 AND balance - $1 >= $3 RETURNING balance
), row AS (
  INSERT INTO ledger (account_id, key_id, amount, kind, function, request_id, provider, cached, created_at)
  SELECT $2, $4, -$1, 'charge', $5, $6, $7, $8, $9 FROM upd
), roll AS (
  INSERT INTO usage_daily (account_id, day, kind, function, provider, requests, credits, cached)
  SELECT $2, $10, 'charge', $5, coalesce($7, ''), 1, $1, $11 FROM upd
  ON CONFLICT (account_id, day, kind, function, provider) DO UPDATE SET requests = usage_daily.requests + 1,
    credits = usage_daily.credits + excluded.credits, cached = usage_daily.cached + excluded.cached
)
SELECT balance::float8 AS balance FROM upd`;

/**
 * Credits in PostgreSQL, shared by every node. The balance is a column moved only by conditional
 * updates (`balance - cost >= floor`), so it never goes below zero whichever node charges, and a
 * CHECK constraint says so too. Holds of calls in flight are this node's (memory): a node admits a
 * call only if the committed balance minus its own holds covers it; calls admitted on two nodes
 * at once on the last credits both run, and the charge of the second is refused
 * (insufficient_credits, never an uncharged answer).
 *
 * Group commit as on SQLite: the charges of one event-loop turn go in ONE transaction, pipelined
 * on one connection, in account order (so two nodes' batches never wait on each other in a
 * cycle), and each caller's promise settles once that transaction has committed. If the database
 * is unreachable the batch fails with 503 service_unavailable and nothing was charged.
 */
export class PostgresCreditLedger extends GroupCommitLedger implements CreditLedger {
  private flushing: Promise<void> = Promise.resolve();

  constructor(private pg: PgStorage) {
    super();
  }

  async reserve(accountId: string, amount: number): Promise<Reservation | null> {
    return this.hold(accountId, amount, await this.balance(accountId));
  }

  /** Commits what is queued now (one batch at a time, in order). */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.commit());
    return this.flushing;
  }

  private async commit(): Promise<void> {
    if (this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    // a client gone before the commit is not charged
    const live: PendingCharge[] = [];
    for (const c of batch) {
      if (c.details.signal?.aborted) c.fail(clientClosed("the client went away before its answer: not charged"));
      else live.push(c);
    }
    if (live.length === 0) return;
    live.sort((a, b) => (a.accountId < b.accountId ? -1 : a.accountId > b.accountId ? 1 : 0));
    let results: (number | null)[];
    try {
      await schemaReady(this.pg);
      results = await this.pg.sql.begin(async (tx) =>
        Promise.all(
          live.map(async (c) => {
            const d = c.details;
            const at = Date.now();
            const floor = c.spareHolds ? this.held(c.accountId) : 0;
            const rows = await tx.unsafe(CHARGE, [
              c.amount,
              c.accountId,
              floor,
              d.keyId,
              d.fn,
              d.requestId,
              d.provider,
              d.cached,
              at,
              dayOf(at),
              d.cached ? 1 : 0,
            ]);
            return rows.length ? Number(rows[0].balance) : null;
          }),
        ),
      );
    } catch (err) {
      const e = isPgUnavailable(err) ? databaseUnavailable() : err;
      for (const c of live) c.fail(e);
      return;
    }
    this.stats.batches++;
    this.stats.operations += live.length;
    for (const [i, c] of live.entries()) c.done(results[i]);
  }

  /** A grant inside a caller's transaction (account creation). */
  async grantIn(tx: SQL, accountId: string, amount: number, kind: "welcome" | "grant", reason: string | null): Promise<number> {
    const floor = amount < 0 ? this.held(accountId) : Number.MIN_SAFE_INTEGER;
    const [updated] =
      await tx`UPDATE accounts SET balance = balance + ${amount} WHERE id = ${accountId} AND balance + ${amount} >= ${floor} RETURNING balance::float8 AS balance`;
    if (!updated) {
      const [acc] = await tx`SELECT balance::float8 AS balance FROM accounts WHERE id = ${accountId}`;
      if (!acc) throw new Error(`account ${accountId} not found`);
      throw takeBackRefused(amount, acc.balance, this.held(accountId));
    }
    const at = Date.now();
    await tx`INSERT INTO ledger (account_id, amount, kind, reason, created_at) VALUES (${accountId}, ${amount}, ${kind}, ${reason}, ${at})`;
    await tx`INSERT INTO usage_daily (account_id, day, kind, function, provider, requests, credits, cached)
      VALUES (${accountId}, ${dayOf(at)}, 'grant', '', '', 1, ${amount}, 0)
      ON CONFLICT (account_id, day, kind, function, provider) DO UPDATE SET requests = usage_daily.requests + 1,
        credits = usage_daily.credits + excluded.credits`;
    return Number(updated.balance);
  }

  grant(accountId: string, amount: number, kind: "welcome" | "grant", reason: string | null): Promise<number> {
    return pgCall(this.pg, () => this.pg.sql.begin((tx) => this.grantIn(tx, accountId, amount, kind, reason)));
  }

  balance(accountId: string): Promise<number> {
    return pgCall(this.pg, async () => {
      const [row] = await this.pg.sql`SELECT balance::float8 AS balance FROM accounts WHERE id = ${accountId}`;
      return row ? Number(row.balance) : 0;
    });
  }

  monthToDate(accountId: string, now = new Date()): Promise<UsageFigures> {
    return pgCall(this.pg, async () => {
      const from = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
      const rows = (await this.pg.sql`SELECT day, kind, function, provider, requests::float8 AS requests,
          credits::float8 AS credits, cached::float8 AS cached FROM usage_daily
        WHERE account_id = ${accountId} AND day >= ${dayOf(from)} AND day <= ${dayOf(now.getTime())} ORDER BY day`) as UsageRow[];
      const [acc] = await this.pg.sql`SELECT balance::float8 AS balance, plan FROM accounts WHERE id = ${accountId}`;
      return monthToDateFrom(accountId, acc ? { balance: Number(acc.balance), plan: acc.plan } : null, rows, from, now);
    });
  }

  monthly(accountId: string, months = 12, now = new Date()): Promise<MonthSummary[]> {
    return pgCall(this.pg, async () => {
      const since = dayOf(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - (months - 1), 1));
      const rows = (await this.pg.sql`SELECT substr(day, 1, 7) AS month, '' AS day, kind, function, '' AS provider,
          sum(requests)::float8 AS requests, sum(credits)::float8 AS credits, sum(cached)::float8 AS cached
        FROM usage_daily WHERE account_id = ${accountId} AND day >= ${since}
        GROUP BY month, kind, function ORDER BY month DESC, credits DESC`) as (UsageRow & { month: string })[];
      return monthlyFrom(rows, months);
    });
  }
}
