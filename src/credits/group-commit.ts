import { GatewayError } from "../errors";
import type { MaybePromise } from "../maybe";
import { credits } from "./amount";
import { Holds, keyBudgetExceeded, shuttingDown } from "./holds";
import type { ChargeDetails, KeyBudget, MonthSummary, Reservation, UsageFigures } from "./interface";

/** A take-back that would leave less than zero, or less than calls in flight hold: 400, naming both. */
export function takeBackRefused(amount: number, balance: number, held: number): GatewayError {
  return new GatewayError(
    "invalid_request",
    `cannot take back ${-amount} credits: the balance is ${balance}${held ? `, of which calls in flight hold ${held}` : ""}, and a balance never goes below zero`,
    { param: "amount" },
  );
}

/** One charge waiting for the next group commit. */
export interface PendingCharge {
  accountId: string;
  amount: number;
  details: ChargeDetails;
  /** a charge without a hold (cache hit) must leave what calls in flight hold untouched */
  spareHolds: boolean;
  /** the reservation's hold where holds are rows (PostgreSQL): deleted with the debit */
  holdId?: string;
  /** the node's lease the call was admitted against (PostgreSQL): shrunk by the debit */
  leaseId?: string;
  /** the balance after the charge; null: not covered; VOIDED: a retry of its Idempotency-Key voided it */
  done: (balance: number | null | typeof VOIDED) => void;
  fail: (e: unknown) => void;
  out?: { balance: number | null | typeof VOIDED } | { error: unknown };
}

/**
 * The outcome of an Idempotency-Key call's charge when a retry that took the key over (the call
 * outlived its lease) voided its request id first: nothing is charged, and the call answers free.
 */
export const VOIDED = "voided" as const;

/**
 * What both ledgers share: the holds of this process's calls in flight, and the queue of charges
 * that `flush` commits together (the charges requested during one turn of the event loop, at the
 * next turn). Each caller's promise settles only once its charge's transaction has committed.
 */
export abstract class GroupCommitLedger {
  protected holds = new Holds();
  /** what this process's calls in flight hold per key with a monthly_credit_limit (SQLite) */
  protected keyHolds = new Holds();
  protected queue: PendingCharge[] = [];
  private scheduled = false;
  private refusing = false;
  /** group-commit transactions and the charges they held (for tests and metrics) */
  readonly stats = { batches: 0, operations: 0 };

  abstract balance(accountId: string): MaybePromise<number>;
  /** commits what is queued now */
  abstract flush(): MaybePromise<void>;
  abstract reserve(accountId: string, amount: number, budget?: KeyBudget): MaybePromise<Reservation | null>;
  abstract keySpent(keyId: string, now?: number): MaybePromise<number>;
  abstract grant(accountId: string, amount: number, kind: "welcome" | "grant", reason: string | null): MaybePromise<number>;
  abstract monthToDate(accountId: string, now?: Date): MaybePromise<UsageFigures>;
  abstract monthly(accountId: string, months?: number, now?: Date): MaybePromise<MonthSummary[]>;

  /** Credits calls in flight hold on a key with a monthly limit (this process's; every node's where holds are rows). */
  protected keyInFlight(keyId: string): MaybePromise<number> {
    return this.keyHolds.held(keyId);
  }

  /** Credits held by this process's calls in flight for the account. */
  held(accountId: string): number {
    return this.holds.held(accountId);
  }

  /** A reservation of `amount` out of the committed `balance`, or null when what is left does not cover it. */
  protected hold(accountId: string, amount: number, balance: number): Reservation | null {
    credits(amount, "a hold");
    if (amount <= 0) return { accountId, amount: 0, remaining: balance, done: false };
    return this.holds.take(accountId, amount, balance);
  }

  /**
   * Charges a reservation: exactly one ledger row, at most once. Resolves with the balance after
   * the charge; rejects with insufficient_credits if the balance no longer covers it (spent by
   * another process meanwhile), or with the storage error if the commit failed. Either way the
   * hold is gone once it settles.
   */
  async settle(r: Reservation, details: ChargeDetails, actual?: number): Promise<void> {
    if (r.done) return;
    const amount = credits(r.amount, "a hold");
    if (actual !== undefined) {
      // priced on usage: at most what was held; nothing to charge gives the hold back
      const charge = Math.min(amount, credits(actual, "a charge"));
      if (charge === 0 && amount > 0) {
        this.release(r);
        r.amount = 0;
        r.remaining = await this.balance(r.accountId);
        return;
      }
      r.amount = charge;
    }
    r.done = true;
    if (r.amount === 0) return;
    let charged = false;
    try {
      const balance = await this.enqueue(r.accountId, r.amount, details, false, r.holdId, r.leaseId);
      if (balance === VOIDED) {
        r.amount = 0;
        r.voided = true;
        r.remaining = await this.balance(r.accountId);
        return;
      }
      charged = balance !== null;
      if (balance === null) {
        const now = await Promise.resolve(this.balance(r.accountId)).catch(() => "unknown");
        throw new GatewayError(
          "insufficient_credits",
          `insufficient credits: the call costs ${r.amount}, balance is ${now} (spent elsewhere while the call ran)`,
        );
      }
      r.remaining = balance;
    } finally {
      this.holds.give(r.accountId, amount);
      if (r.keyId) this.keyHolds.give(r.keyId, amount);
      this.holdEnded(r, charged);
    }
  }

  /** Gives a reservation's hold back; nothing was written, so nothing needs writing. */
  release(r: Reservation): void {
    if (r.done) return;
    r.done = true;
    this.holds.give(r.accountId, r.amount);
    if (r.keyId) this.keyHolds.give(r.keyId, r.amount);
    this.holdEnded(r, false);
  }

  /**
   * A reservation's hold has ended, by its charge (`charged`) or not. Memory holds need nothing
   * more; a ledger whose holds are rows elsewhere removes what the charge did not.
   */
  protected holdEnded(_r: Reservation, _charged: boolean): void {}

  /**
   * Reserve and settle in one step, for an answer already in hand (a cache hit): null when the
   * balance, less what calls in flight hold, does not cover it.
   */
  async charge(accountId: string, amount: number, details: ChargeDetails): Promise<Reservation | null> {
    credits(amount, "a charge");
    if (details.keyLimit !== undefined) credits(details.keyLimit, "a key's monthly_credit_limit");
    if (amount <= 0) return { accountId, amount: 0, remaining: await this.balance(accountId), done: true };
    const balance = await this.enqueue(accountId, amount, details, true);
    if (balance === null) {
      // refused by the key's limit or by the balance: the answer names the right one
      const limit = details.keyLimit;
      if (limit !== undefined) {
        const used = (await this.keySpent(details.keyId)) + (await this.keyInFlight(details.keyId));
        if (used + amount > limit) throw keyBudgetExceeded(limit, used, amount);
      }
      return null;
    }
    if (balance === VOIDED) return { accountId, amount: 0, remaining: await this.balance(accountId), done: true, voided: true };
    return { accountId, amount, remaining: balance, done: true };
  }

  /**
   * Shutdown past its deadline: the calls still running will not get their answers out, so the
   * charges not yet committed fail, and so does every later one. Nothing is charged unseen.
   */
  refuseCharges(): void {
    this.refusing = true;
    const batch = this.queue;
    this.queue = [];
    for (const c of batch) c.fail(shuttingDown());
  }

  private enqueue(
    accountId: string,
    amount: number,
    details: ChargeDetails,
    spareHolds: boolean,
    holdId?: string,
    leaseId?: string,
  ): Promise<number | null | typeof VOIDED> {
    if (this.refusing) return Promise.reject(shuttingDown());
    return new Promise((done, fail) => {
      this.queue.push({ accountId, amount, details, spareHolds, holdId, leaseId, done, fail });
      this.schedule();
    });
  }

  /** Flushes at the next turn of the event loop, once for everything queued during this one. */
  protected schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }
}
