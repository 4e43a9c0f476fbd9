import type { AuditBy } from "../audit/interface";
import type { MaybePromise } from "../maybe";

export interface Reservation {
  accountId: string;
  amount: number;
  /**
   * balance once the call is charged: after settle, the balance the conditional update committed
   * (never below zero, whatever another process spent meanwhile); before, an estimate
   */
  remaining: number;
  done: boolean;
  /** the key whose monthly_credit_limit the hold counts against (memory holds per key) */
  keyId?: string;
  /** the hold's row where holds are shared (PostgreSQL); memory holds have none */
  holdId?: string;
  /**
   * the node's lease the call was admitted against (PostgreSQL, a hot account): no hold of its
   * own; its charge shrinks the lease (credits/postgres.ts)
   */
  leaseId?: string;
  /**
   * an Idempotency-Key call whose charge a retry voided (it took the key over when this call
   * outlived its lease): nothing was charged (`amount` 0), the retry pays
   */
  voided?: boolean;
}

export interface ChargeDetails {
  keyId: string;
  fn: string;
  requestId: string;
  provider: string | null;
  cached: boolean;
  /**
   * the client's request signal: a charge whose client has gone (aborted, or its connection
   * closed, as Bun does to pipelined requests) by the time the batch commits is not applied
   */
  signal?: AbortSignal;
  /**
   * the call carries an Idempotency-Key: its charge is recorded by request id (idempotent_charges)
   * in its transaction, and is not applied if a retry that took the key over voided the id first
   */
  idempotent?: boolean;
  /** tokens of a /v1 call (the provider's report, else the gateway's estimate), kept on its ledger row */
  tokens?: { input: number; output: number };
  /**
   * the key's monthly_credit_limit, for a charge without a hold (a cache hit): refused with
   * key_budget_exceeded when the key's month-to-date charges and holds leave less than it
   */
  keyLimit?: number;
}

/** A call held against its key's monthly_credit_limit as well as the account's balance. */
export interface KeyBudget {
  keyId: string;
  limit: number;
}

/** How long the charge records of Idempotency-Key calls are kept: longer than the key's 24 h. */
export const IDEMPOTENT_CHARGES_KEPT_MS = 48 * 3600_000;

/** What usage, usage-summary, the admin account view and `textai usage` show. */
export interface UsageFigures {
  account_id: string;
  plan: string;
  balance: number;
  period: { start: string; end: string };
  requests: number;
  credits_used: number;
  credits_granted: number;
  cached_requests: number;
  /** tokens of the month's /v1 calls (provider-reported, else estimated) */
  input_tokens: number;
  output_tokens: number;
  by_function: {
    function: string;
    requests: number;
    credits: number;
    cached: number;
    input_tokens: number;
    output_tokens: number;
  }[];
  by_provider: { provider: string; requests: number; credits: number }[];
  /** the month's days that have any ledger row, oldest first */
  by_day: { day: string; requests: number; credits_used: number; credits_granted: number }[];
}

export interface MonthSummary {
  month: string;
  requests: number;
  credits_used: number;
  credits_granted: number;
  input_tokens: number;
  output_tokens: number;
  by_function: { function: string; requests: number; credits: number; input_tokens: number; output_tokens: number }[];
}

/**
 * Usage figures read from running totals kept with each charge and grant, never from a scan of
 * the ledger: O(days x functions x providers) per read, whatever the ledger holds. Both keep
 * them in `usage_daily`, updated in the transaction of each charge and grant.
 */
export interface UsageReader {
  /** from the first instant of the current UTC month up to now, with the daily series */
  monthToDate(accountId: string, now?: Date): UsageFigures | Promise<UsageFigures>;
  /** the last `months` months with any activity, newest first */
  monthly(accountId: string, months?: number, now?: Date): MonthSummary[] | Promise<MonthSummary[]>;
}

/**
 * Credits: the committed balance and ledger rows plus the holds of calls in flight (SQLite: this
 * process's, in memory; PostgreSQL: every node's, as rows). A call holds its cost before any
 * provider is called and is charged when it succeeds, by a conditional update that never takes a
 * balance below zero.
 */
export interface CreditLedger extends UsageReader {
  /** Credits held by this process's calls in flight for the account. */
  held(accountId: string): number;
  /**
   * Holds `amount` credits for a call about to run; null when the balance, less what calls in
   * flight already hold (this process's on SQLite, every node's on PostgreSQL), does not cover it.
   * With a `budget`, also refused (key_budget_exceeded, thrown) when the key's month-to-date
   * charges plus its calls in flight plus `amount` pass its limit: exact as the balance is.
   */
  reserve(accountId: string, amount: number, budget?: KeyBudget): MaybePromise<Reservation | null>;
  /**
   * Credits the key was charged since the first instant of the UTC month (its ledger rows), for
   * its monthly_credit_limit.
   */
  keySpent(keyId: string, now?: number): MaybePromise<number>;
  /**
   * Charges a reservation, at most once: rejects with insufficient_credits if the balance no
   * longer covers it, or with the storage error if the commit failed. The hold is gone after.
   * `amount` (a call priced on its usage) charges that much instead, never more than was held;
   * `r.amount` says what was charged.
   */
  settle(r: Reservation, details: ChargeDetails, amount?: number): Promise<void>;
  /** Gives a reservation's hold back; nothing was written. */
  release(r: Reservation): void;
  /** Reserve and settle in one step, for an answer already in hand (a cache hit). */
  charge(accountId: string, amount: number, details: ChargeDetails): Promise<Reservation | null>;
  /**
   * Adds credits, or takes them back (negative), never below zero; the balance after. With
   * `audit`, its `credits.grant` entry is appended in the same transaction.
   */
  grant(
    accountId: string,
    amount: number,
    kind: "welcome" | "grant",
    reason: string | null,
    audit?: AuditBy,
  ): MaybePromise<number>;
  balance(accountId: string): MaybePromise<number>;
  /**
   * The first of these requests of the account that was charged (its ledger row carries its
   * request id), or null: a retry that takes over an Idempotency-Key whose call died, or ran past
   * its lease, asks this before charging. Every one of them that has not been charged is voided
   * first, so it can never be charged later: a call still running on another node gets its
   * answer uncharged, and the retry, which found it uncharged, is charged instead, once.
   */
  chargedRequest(accountId: string, requestIds: string[]): MaybePromise<string | null>;
  /** Applies whatever charges are queued now (shutdown, tests). */
  flush(): MaybePromise<void>;
  /** Where a node leases credit (PostgreSQL): what it holds now, and what it was granted and admitted so far, for /metrics. */
  leaseStats?(): { held: number; free: number; granted: number; calls: number };
  /**
   * Where charges of lease-admitted calls go to a node-local journal (PostgreSQL with
   * `[limits] credit_journal`): entries pending, their credits, ships so far, credits in doubt
   * (pending charges of leases that lapsed, or of an earlier run), entries lost; null without it.
   */
  journalFigures?(): { pending: number; pendingCredits: number; ships: number; inDoubt: number; lost: number } | null;
  /** Shutdown, once no call is in flight: gives back what this node holds ahead of calls (its leases) and flushes. */
  close?(): Promise<void>;
  /** Shutdown past its deadline: charges not yet committed fail, and every later one. */
  refuseCharges(): void;
  /** the alert watch: charges of the accounts it watches raise their events in their transaction */
  watch?: ChargeWatch | null;
  /** group-commit transactions and the charges they held */
  readonly stats: { batches: number; operations: number };
}

/** A charge (or a take-back) as the alert watch sees it, after it was applied in its transaction. */
export interface WatchedCharge {
  accountId: string;
  keyId: string | null;
  amount: number;
  /** the account's balance after it */
  balance: number;
}

/**
 * The alert watch (alerts/watch.ts), set on a ledger when alert endpoints exist: asked only
 * `watches` per charge (a lookup in memory), and for a watched account handed the charge inside
 * its transaction, to write the events it raises to the outbox there.
 */
export interface ChargeWatch {
  watches(accountId: string): boolean;
  /** SQLite: on the ledger's connection, inside the batch's transaction */
  chargedSqlite(sqlite: import("bun:sqlite").Database, c: WatchedCharge): void;
  /** PostgreSQL: on the batch's connection, after credit_batch() and before its COMMIT */
  chargedPg(tx: import("bun").SQL, charges: WatchedCharge[]): Promise<void>;
}
