import type { SQL } from "bun";
import { monthStart } from "../auth/policy";
import { clientClosed } from "../errors";
import { databaseUnavailable, isPgUnavailable, type PgStorage, pgCall, schemaReady } from "../storage/postgres";
import { GroupCommitLedger, type PendingCharge, takeBackRefused, VOIDED } from "./group-commit";
import { keyBudgetExceeded } from "./holds";
import {
  type CreditLedger,
  IDEMPOTENT_CHARGES_KEPT_MS,
  type KeyBudget,
  type MonthSummary,
  type Reservation,
  type UsageFigures,
} from "./interface";
import { dayOf, monthlyFrom, monthToDateFrom, type UsageRow } from "./usage";

/** Key space (first half of a two-int advisory key) of the per-account lock under which holds are taken. */
const HOLD_LOCK = 7_263_012;
/** the database's clock in ms: every node compares expiries with the same clock */
const NOW_MS = "(extract(epoch from clock_timestamp()) * 1000)::bigint";
/** what calls in flight on every node hold now on the account in parameter `account` */
const liveHolds = (account: string) =>
  `(SELECT coalesce(sum(amount), 0) FROM credit_holds WHERE account_id = ${account} AND expires_at > ${NOW_MS})`;
/**
 * A charge without a hold (cache hit) of a key with a monthly_credit_limit ($14, null: none):
 * its month's charges (since $15) and live holds leave room for it. Read under the hold lock
 * and the account row's, like the floor.
 */
const withinKeyLimit = `($14::bigint IS NULL OR coalesce((SELECT -sum(amount) FROM ledger WHERE key_id = $4 AND kind = 'charge'
    AND created_at >= $15::bigint), 0) + coalesce((SELECT sum(amount) FROM credit_holds WHERE key_id = $4
    AND expires_at > ${NOW_MS}), 0) + $1 <= $14::bigint)`;
/** A lease never longer than this: a killed node's holds stop counting within it. */
const MAX_LEASE_MS = 10_000;

/**
 * One charge in one statement: the conditional debit, its ledger row and its day's rollup; a
 * held call's charge deletes its hold in the same statement, so the hold and the debit change
 * together for every snapshot.
 */
const chargeStatement = (floor: string, held: boolean, idempotent: boolean) => `WITH ${
  idempotent
    ? `claim AS (
  INSERT INTO idempotent_charges (request_id, account_id, state, created_at) VALUES ($6, $2, 'charged', $9)
  ON CONFLICT (request_id) DO NOTHING RETURNING 1
), `
    : ""
}upd AS (
  UPDATE accounts SET balance = balance - $1 WHERE id = $2 AND balance - $1 >= ${floor}${idempotent ? " AND EXISTS (SELECT 1 FROM claim)" : ""}${held ? "" : ` AND ${withinKeyLimit}`} RETURNING balance
), row AS (
  INSERT INTO ledger (account_id, key_id, amount, kind, function, request_id, provider, cached, created_at, input_tokens, output_tokens)
  SELECT $2, $4, -$1, 'charge', $5, $6, $7, $8, $9, $12::bigint, $13::bigint FROM upd
), roll AS (
  INSERT INTO usage_daily (account_id, day, kind, function, provider, requests, credits, cached, input_tokens, output_tokens)
  SELECT $2, $10, 'charge', $5, coalesce($7, ''), 1, $1, $11, coalesce($12::bigint, 0), coalesce($13::bigint, 0) FROM upd
  ON CONFLICT (account_id, day, kind, function, provider) DO UPDATE SET requests = usage_daily.requests + 1,
    credits = usage_daily.credits + excluded.credits, cached = usage_daily.cached + excluded.cached,
    input_tokens = usage_daily.input_tokens + excluded.input_tokens, output_tokens = usage_daily.output_tokens + excluded.output_tokens
)${held ? ", gone AS (DELETE FROM credit_holds WHERE id = $14::uuid)" : ""}
${
  idempotent
    ? "SELECT (SELECT balance::float8 FROM upd) AS balance, EXISTS (SELECT 1 FROM claim) AS claimed"
    : "SELECT balance::float8 AS balance, true AS claimed FROM upd"
}`;
/**
 * The charge statements: a held call (its own hold already kept its credits from everyone else)
 * or an answer in hand (a cache hit: must leave what every node's calls in flight hold), each
 * plain or for an Idempotency-Key call. The latter records the charge by request id first and
 * debits only if that record is new: a retry that took the key over may have voided the id. If a
 * retry's void is in flight, the insert waits for it (the primary key), and the other way round.
 */
const CHARGE = {
  held: chargeStatement("$3", true, false),
  spare: chargeStatement(`greatest($3, ${liveHolds("$2")})`, false, false),
  heldIdempotent: chargeStatement("$3", true, true),
  spareIdempotent: chargeStatement(`greatest($3, ${liveHolds("$2")})`, false, true),
};
/**
 * Before a charge that must spare holds: the hold lock (no hold is taken meanwhile), then the
 * account row (a batch charging it has committed), so the next statement's snapshot is exact.
 */
const LOCK_HOLDS = `SELECT pg_advisory_xact_lock(${HOLD_LOCK}, hashtext($1))`;
const LOCK_ACCOUNT = "SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE";
/** pushes expiries forward; never waits for a row another transaction holds (a charge deleting it) */
const RENEW = `UPDATE credit_holds SET expires_at = ${NOW_MS} + $2::bigint WHERE id IN (
  SELECT id FROM credit_holds WHERE id = ANY(string_to_array($1, ',')::uuid[]) AND expires_at > ${NOW_MS}
  FOR UPDATE SKIP LOCKED)`;

/**
 * Credits in PostgreSQL, shared by every node. The balance is a column moved only by conditional
 * updates (`balance - cost >= floor`), so it never goes below zero whichever node charges, and a
 * CHECK constraint says so too.
 *
 * Holds are rows too (`credit_holds`), shared by every node: `reserve` is one call of
 * `credit_hold()` (migration 0003), which admits a call only if the balance minus every live hold
 * covers it, under a per-account advisory lock, so no provider is called on credits another node
 * has promised. The charge deletes the hold in the statement that debits the balance; a failed
 * call's release deletes it (fire-and-forget). A hold lives for a lease (the request timeout, at
 * most 10 s) that this node renews every third of it while the call runs (a stream can outlive
 * the request timeout), so the holds of a node that died (`kill -9`) stop counting within one
 * lease, and a release that could not reach the database costs no more than that.
 *
 * Group commit as on SQLite: the charges of one event-loop turn go in ONE transaction, pipelined
 * on one connection, in account order (so two nodes' batches never wait on each other in a
 * cycle), and each caller's promise settles once that transaction has committed. If the database
 * is unreachable the batch fails with 503 service_unavailable and nothing was charged.
 */
export class PostgresCreditLedger extends GroupCommitLedger implements CreditLedger {
  private flushing: Promise<void> = Promise.resolve();
  /** Idempotency-Key charges committed, to sweep their records every 256 */
  private claims = 0;
  /** how long a hold counts unless renewed */
  readonly leaseMs: number;
  /** this node's holds in PostgreSQL: id -> when its expiry was last pushed (performance.now()) */
  private live = new Map<string, number>();
  private renewal: ReturnType<typeof setTimeout> | null = null;
  /** per account, the deletes of this node's released holds not yet done */
  private releasing = new Map<string, Promise<unknown>>();

  constructor(
    private pg: PgStorage,
    opts: { requestTimeoutMs?: number } = {},
  ) {
    super();
    this.leaseMs = Math.max(100, Math.min(opts.requestTimeoutMs ?? MAX_LEASE_MS, MAX_LEASE_MS));
  }

  /**
   * Holds `amount` for a call about to run, in one round trip: null when the balance minus what
   * calls in flight hold on every node does not cover it.
   */
  async reserve(accountId: string, amount: number, budget?: KeyBudget): Promise<Reservation | null> {
    if (amount <= 0) return { accountId, amount: 0, remaining: await this.balance(accountId), done: false };
    await this.releasing.get(accountId);
    const holdId = crypto.randomUUID();
    const [row] = await pgCall(this.pg, () =>
      budget
        ? this.pg.sql`SELECT remaining, key_used FROM credit_hold_key(${holdId}::uuid, ${accountId}, ${amount}::bigint,
            ${this.leaseMs}::bigint, ${budget.keyId}, ${budget.limit}::bigint, ${monthStart()}::bigint)`
        : this.pg.sql`SELECT credit_hold(${holdId}::uuid, ${accountId}, ${amount}::bigint, ${this.leaseMs}::bigint) AS remaining`,
    );
    if (budget && row?.key_used !== null && row?.key_used !== undefined)
      throw keyBudgetExceeded(budget.limit, Number(row.key_used), amount);
    if (row?.remaining === null || row?.remaining === undefined) return null;
    // what this node holds, for held(); admission was decided above
    this.holds.take(accountId, amount, Number.POSITIVE_INFINITY);
    this.live.set(holdId, performance.now());
    this.renewSoon();
    return { accountId, amount, remaining: Number(row.remaining), done: false, holdId, keyId: budget?.keyId };
  }

  protected override keyInFlight(keyId: string): Promise<number> {
    return pgCall(this.pg, async () => {
      const [row] = await this.pg.sql.unsafe(
        `SELECT coalesce(sum(amount), 0)::float8 AS held FROM credit_holds WHERE key_id = $1 AND expires_at > ${NOW_MS}`,
        [keyId],
      );
      return Number(row?.held ?? 0);
    });
  }

  /** The key's charges this month (UTC); its holds are not counted here. */
  keySpent(keyId: string, now = Date.now()): Promise<number> {
    return pgCall(this.pg, async () => {
      const [row] = await this.pg.sql`SELECT coalesce(-sum(amount), 0)::float8 AS used FROM ledger
        WHERE key_id = ${keyId} AND kind = 'charge' AND created_at >= ${monthStart(now)}`;
      return Number(row?.used ?? 0);
    });
  }

  /**
   * The charge deleted the hold with its debit; otherwise (refused, failed, released) it is
   * deleted now, not awaited by the caller: if that fails, the hold runs out at its expiry, as
   * nobody renews it. This node's next reserve on the account waits for the delete, so a call
   * right after a failed one is never refused on the failed one's hold.
   */
  protected override holdEnded(r: Reservation, charged: boolean): void {
    if (!r.holdId) return;
    this.live.delete(r.holdId);
    if (charged) return;
    const deleted = this.pg.sql`DELETE FROM credit_holds WHERE id = ${r.holdId}::uuid`.then(
      () => {},
      () => {},
    );
    const pending: Promise<unknown> = Promise.all([this.releasing.get(r.accountId), deleted]).then(() => {
      if (this.releasing.get(r.accountId) === pending) this.releasing.delete(r.accountId);
    });
    this.releasing.set(r.accountId, pending);
  }

  /** Every third of a lease, pushes forward the expiry of this node's holds that are a third of a lease old. */
  private renewSoon(): void {
    if (this.renewal || this.live.size === 0) return;
    this.renewal = setTimeout(() => void this.renew(), this.leaseMs / 3);
    this.renewal.unref?.();
  }

  private async renew(): Promise<void> {
    const now = performance.now();
    const due: string[] = [];
    for (const [id, since] of this.live) if (now - since >= this.leaseMs / 3) due.push(id);
    try {
      if (due.length > 0) {
        await this.pg.sql.unsafe(RENEW, [due.join(","), this.leaseMs]);
        for (const id of due) if (this.live.has(id)) this.live.set(id, now);
      }
    } catch {
      // unreachable: retried at the next tick; meanwhile these holds may run out (charges answer 503)
    } finally {
      this.renewal = null;
      this.renewSoon();
    }
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
    // accounts with a charge that must spare holds: locked first in their group (lock order:
    // account order, then hold lock before row lock, as everywhere)
    const spares = (c: PendingCharge) => c.spareHolds || c.holdId === undefined;
    const sparing = new Set(live.filter(spares).map((c) => c.accountId));
    let results: (number | null | typeof VOIDED)[];
    try {
      await schemaReady(this.pg);
      results = await this.pg.sql.begin(async (tx) => {
        // queries start (in this order, pipelined on the transaction's connection) at then()
        const locks: Promise<unknown>[] = [];
        const statements: Promise<number | null | typeof VOIDED>[] = [];
        let group: string | null = null;
        for (const c of live) {
          if (c.accountId !== group) {
            group = c.accountId;
            if (sparing.has(group)) {
              locks.push(tx.unsafe(LOCK_HOLDS, [group]).then(() => null));
              locks.push(tx.unsafe(LOCK_ACCOUNT, [group]).then(() => null));
            }
          }
          const d = c.details;
          const at = Date.now();
          const held = !spares(c);
          const params = [
            c.amount,
            c.accountId,
            0,
            d.keyId,
            d.fn,
            d.requestId,
            d.provider,
            d.cached,
            at,
            dayOf(at),
            d.cached ? 1 : 0,
            d.tokens?.input ?? null,
            d.tokens?.output ?? null,
          ];
          const sql = d.idempotent ? (held ? CHARGE.heldIdempotent : CHARGE.spareIdempotent) : held ? CHARGE.held : CHARGE.spare;
          statements.push(
            tx
              .unsafe(sql, held ? [...params, c.holdId] : [...params, d.keyLimit ?? null, monthStart(at)])
              .then((rows: { balance: number | null; claimed: boolean }[]) => {
                const row = rows[0];
                if (!row) return null;
                if (!row.claimed) return VOIDED;
                return row.balance === null ? null : Number(row.balance);
              }),
          );
        }
        const [, charged] = await Promise.all([Promise.all(locks), Promise.all(statements)]);
        return charged;
      });
    } catch (err) {
      const e = isPgUnavailable(err) ? databaseUnavailable() : err;
      for (const c of live) c.fail(e);
      return;
    }
    this.stats.batches++;
    this.stats.operations += live.length;
    for (const [i, c] of live.entries()) c.done(results[i]);
    const claims = live.filter((c) => c.details.idempotent).length;
    if (claims > 0 && Math.floor((this.claims + claims) / 256) > Math.floor(this.claims / 256)) this.sweepClaims();
    this.claims += claims;
  }

  /** Drops charge records of Idempotency-Key calls older than their keys can be (not awaited). */
  private sweepClaims(): void {
    const before = Date.now() - IDEMPOTENT_CHARGES_KEPT_MS;
    this.pg.sql`DELETE FROM idempotent_charges WHERE request_id IN (
      SELECT request_id FROM idempotent_charges WHERE created_at < ${before} LIMIT 500)`.then(
      () => {},
      () => {},
    );
  }

  /**
   * A grant inside a caller's transaction (account creation). A take-back (negative) never leaves
   * less than what calls in flight hold on every node: it takes the hold lock and the account row
   * first, so the holds it reads are exact.
   */
  async grantIn(tx: SQL, accountId: string, amount: number, kind: "welcome" | "grant", reason: string | null): Promise<number> {
    let held = 0;
    if (amount < 0) {
      await tx.unsafe(LOCK_HOLDS, [accountId]);
      await tx.unsafe(LOCK_ACCOUNT, [accountId]);
      const [h] = await tx.unsafe(`SELECT ${liveHolds("$1")}::float8 AS held`, [accountId]);
      held = Number(h.held);
    }
    const floor = amount < 0 ? held : Number.MIN_SAFE_INTEGER;
    const [updated] =
      await tx`UPDATE accounts SET balance = balance + ${amount} WHERE id = ${accountId} AND balance + ${amount} >= ${floor} RETURNING balance::float8 AS balance`;
    if (!updated) {
      const [acc] = await tx`SELECT balance::float8 AS balance FROM accounts WHERE id = ${accountId}`;
      if (!acc) throw new Error(`account ${accountId} not found`);
      throw takeBackRefused(amount, acc.balance, held);
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

  /**
   * Voids the ids not charged, then looks for a charged one. Two statements, not one: if a charge
   * of one of them is committing, the void's insert waits for it, and only a later statement's
   * snapshot sees its ledger row (one statement would keep the snapshot from before the wait).
   */
  chargedRequest(accountId: string, requestIds: string[]): Promise<string | null> {
    return pgCall(this.pg, async () => {
      const at = Date.now();
      await this.pg.sql`INSERT INTO idempotent_charges (request_id, account_id, state, created_at)
        SELECT id, ${accountId}, 'void', ${at} FROM json_array_elements_text((${JSON.stringify(requestIds)}::text)::json) AS id
        ON CONFLICT (request_id) DO NOTHING`;
      // a handful of ids at most (one per crashed claim), each an index lookup
      for (const id of requestIds) {
        const [row] = await this.pg
          .sql`SELECT 1 AS one FROM ledger WHERE request_id = ${id} AND account_id = ${accountId} AND kind = 'charge' LIMIT 1`;
        if (row) return id;
      }
      return null;
    });
  }

  monthToDate(accountId: string, now = new Date()): Promise<UsageFigures> {
    return pgCall(this.pg, async () => {
      const from = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
      const rows = (await this.pg.sql`SELECT day, kind, function, provider, requests::float8 AS requests,
          credits::float8 AS credits, cached::float8 AS cached, input_tokens::float8 AS input_tokens,
          output_tokens::float8 AS output_tokens FROM usage_daily
        WHERE account_id = ${accountId} AND day >= ${dayOf(from)} AND day <= ${dayOf(now.getTime())} ORDER BY day`) as UsageRow[];
      const [acc] = await this.pg.sql`SELECT balance::float8 AS balance, plan FROM accounts WHERE id = ${accountId}`;
      return monthToDateFrom(accountId, acc ? { balance: Number(acc.balance), plan: acc.plan } : null, rows, from, now);
    });
  }

  monthly(accountId: string, months = 12, now = new Date()): Promise<MonthSummary[]> {
    return pgCall(this.pg, async () => {
      const since = dayOf(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - (months - 1), 1));
      const rows = (await this.pg.sql`SELECT substr(day, 1, 7) AS month, '' AS day, kind, function, '' AS provider,
          sum(requests)::float8 AS requests, sum(credits)::float8 AS credits, sum(cached)::float8 AS cached,
          sum(input_tokens)::float8 AS input_tokens, sum(output_tokens)::float8 AS output_tokens
        FROM usage_daily WHERE account_id = ${accountId} AND day >= ${since}
        GROUP BY month, kind, function ORDER BY month DESC, credits DESC`) as (UsageRow & { month: string })[];
      return monthlyFrom(rows, months);
    });
  }
}
