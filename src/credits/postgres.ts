import type { SQL } from "bun";
import type { AuditBy } from "../audit/interface";
import { appendAuditIn } from "../audit/postgres";
import { DEFAULT_CREDIT_LEASE_MAX } from "../config";
import { clientClosed, GatewayError } from "../errors";
import { databaseUnavailable, isPgUnavailable, type PgStorage, pgCall, schemaReady } from "../storage/postgres";
import { balanceTooLarge, credits, grantAmount, grantReason, MAX_BALANCE } from "./amount";
import { grantEntry } from "./audit";
import { GroupCommitLedger, type PendingCharge, takeBackRefused, VOIDED } from "./group-commit";
import { keyBudgetExceeded } from "./holds";
import {
  type ChargeDetails,
  type ChargeWatch,
  type CreditLedger,
  IDEMPOTENT_CHARGES_KEPT_MS,
  type KeyBudget,
  type MonthSummary,
  type Reservation,
  type UsageFigures,
} from "./interface";
import type { CreditJournal, JournalEntry } from "./journal";
import { dayOf, monthlyFrom, monthStart, monthToDateFrom, type UsageRow } from "./usage";

/** Key space (first half of a two-int advisory key) of the per-account lock under which holds are taken. */
const HOLD_LOCK = 7_263_012;
/** the database's clock in ms: every node compares expiries with the same clock */
const NOW_MS = "(extract(epoch from clock_timestamp()) * 1000)::bigint";
/** what calls in flight on every node hold now on the account in parameter `account` */
const liveHolds = (account: string) =>
  `(SELECT coalesce(sum(amount), 0) FROM credit_holds WHERE account_id = ${account} AND expires_at > ${NOW_MS})`;
/** A lease never longer than this: a killed node's holds stop counting within it. */
const MAX_LEASE_MS = 10_000;

/**
 * A take-back that must spare holds: the hold lock (no hold is taken meanwhile), then the account
 * row (a batch charging it has committed), so the next statement's snapshot is exact.
 */
const LOCK_HOLDS = `SELECT pg_advisory_xact_lock(${HOLD_LOCK}, hashtext($1))`;
const LOCK_ACCOUNT = "SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE";
/** SQLSTATE deadlock_detected */
const DEADLOCK = "40P01";
/** one batch of holds, charges and releases: one call of credit_batch() (migration 0012), one transaction */
const BATCH = "SELECT op_index, remaining, key_used, claimed FROM credit_batch";
/** what credit_batch() answers for each hold and charge */
interface BatchRow {
  op_index: number;
  remaining: number | null;
  key_used: number | null;
  claimed: boolean;
}

/** A hold waiting for the next batch. */
interface PendingHold {
  accountId: string;
  amount: number;
  budget?: KeyBudget;
  holdId: string;
  done: (out: { remaining: number | null; keyUsed: number | null }) => void;
  fail: (e: unknown) => void;
}

/**
 * A block of an account's balance this node holds as one hold row (a lease) and admits calls
 * against in memory, without a round trip (migration 0016). Its charges shrink it in the batch that
 * debits the balance.
 */
interface Lease {
  id: string;
  accountId: string;
  /** credits this node may still admit against it */
  free: number;
  /** calls admitted against it, not yet charged or given back */
  inFlight: number;
  /** performance.now() after which nothing is admitted against it: its row may have run out */
  safeUntil: number;
  /** performance.now() of its last admission */
  lastUse: number;
  /** the balance less every live hold just after it was granted, for a call's estimate of what remains */
  remainingAtGrant: number;
  /** a newer lease of the account took over: given back once nothing is in flight against it */
  retiring: boolean;
  /** with the journal: the allowance carved with it (its row's id), and how many credits that is */
  allowanceId?: string;
  allowance: number;
  /** credits of this lease's calls committed to the journal and not yet shipped (at most `allowance`) */
  unshipped: number;
  /** given back (its row released); its allowance waits for its journal entries to ship */
  ended: boolean;
  /** PostgreSQL answered that its row was gone (it lapsed) */
  lapsed: boolean;
  /** credits granted, and when (performance.now()): the rate its calls took it at */
  granted: number;
  grantedAt: number;
}

/** A lease waiting for the next batch. */
interface PendingLease {
  accountId: string;
  /** most and least wanted */
  amount: number;
  least: number;
  leaseId: string;
  /** its account's demand, asking no other lease meanwhile */
  demand: Demand;
  /** with the journal: the allowance asked for with it (granted whole, or no lease), and its row's id */
  allowance: number;
  allowanceId?: string;
}

/** An account's calls on this node in the current second: what asks for a lease. */
interface Demand {
  since: number;
  calls: number;
  credits: number;
  carving: boolean;
}

/** Calls of one account on this node within a second before the node asks for a lease. */
const LEASE_AFTER_CALLS = 8;
/** A lease asks for the credits this node's calls of the account took in this long. */
const LEASE_SPAN_MS = 2000;
/** A lease nothing was admitted against for this long is given back. */
const LEASE_IDLE_MS = 1000;

/** Journal entries shipped at most in one batch. */
const SHIP_MAX = 2000;
/** Entries pending that make the journal ship before its interval is up. */
const SHIP_AT = 512;
/** An allowance covers at least this many calls of the lease's account. */
const ALLOWANCE_CALLS = 8;
/** How many ship intervals of a lease's calls its allowance covers. */
const ALLOWANCE_INTERVALS = 2;

/** pushes expiries forward; never waits for a row another transaction holds (a charge deleting it) */
const RENEW = `UPDATE credit_holds SET expires_at = ${NOW_MS} + $2::bigint WHERE id IN (
  SELECT id FROM credit_holds WHERE id = ANY(string_to_array($1, ',')::uuid[]) AND expires_at > ${NOW_MS}
  FOR UPDATE SKIP LOCKED) RETURNING id::text AS id`;

/**
 * Credits in PostgreSQL, shared by every node. The balance is a column moved only by conditional
 * updates (`balance - cost >= floor`), so it never goes below zero whichever node charges, and a
 * CHECK constraint says so too.
 *
 * Holds are rows too (`credit_holds`), shared by every node: a hold admits a call only if the
 * balance minus every live hold covers it, under a per-account advisory lock, so no provider is
 * called on credits another node has promised. The charge deletes the hold in the transaction that
 * debits the balance; a failed call's release deletes it. A hold lives for a lease (the request
 * timeout, at most 10 s) that this node renews every third of it while the call runs (a stream can
 * outlive the request timeout), so the holds of a node that died (`kill -9`) stop counting within
 * one lease, and a release that could not reach the database costs no more than that.
 *
 * Batched per node: the holds, charges and releases asked for while a batch is in flight wait, and
 * go together as the next batch: ONE call of `credit_batch()` (migration 0012) in one transaction
 * (one round trip, two with charges: see runBatch), which takes its locks in one fixed order (so two nodes' batches
 * never wait on each other in a cycle) and answers each hold and charge in order. Each caller's
 * promise settles once that transaction has committed. If the database is unreachable the batch
 * fails with 503 service_unavailable: nothing was held or charged.
 */
export class PostgresCreditLedger extends GroupCommitLedger implements CreditLedger {
  private flushing: Promise<void> = Promise.resolve();
  /** Idempotency-Key charges committed, to sweep their records every 256 */
  private claims = 0;
  /** the alert watch (alerts/watch.ts), when alert endpoints are configured */
  watch: ChargeWatch | null = null;
  /** how long a hold counts unless renewed */
  readonly leaseMs: number;
  /** this node's holds in PostgreSQL: id -> when its expiry was last pushed (performance.now()) */
  private live = new Map<string, number>();
  private renewal: ReturnType<typeof setTimeout> | null = null;
  /** holds waiting for the next batch */
  private holdQueue: PendingHold[] = [];
  /** this node's holds given back (released, or their charge failed), deleted by the next batch */
  private releases: string[] = [];
  /** batches (transactions) and the holds they took, for tests and the capacity bench */
  readonly batchStats = { transactions: 0, holds: 0, charges: 0, releases: 0, ms: 0, leases: 0, leasedCalls: 0, leasesLapsed: 0 };
  /** the most credits one lease takes; 0: no leases, every call holds its own credits */
  readonly leaseMax: number;
  /** each account's current lease on this node */
  private leases = new Map<string, Lease>();
  /** every lease of this node by id (current and retiring) */
  private leaseById = new Map<string, Lease>();
  /** what each call admitted against a lease was admitted for */
  private leasedAmount = new WeakMap<Reservation, number>();
  private demand = new Map<string, Demand>();
  private leaseQueue: PendingLease[] = [];
  private leaseSweep: ReturnType<typeof setInterval> | null = null;
  /** the node-local credit journal (docs/many-nodes.md#credit-journal); null: every charge goes in a batch */
  private journal: CreditJournal | null = null;
  private shipMs = 100;
  /** journal entries committed locally and not yet shipped, oldest first (as in the file) */
  private unshipped: JournalEntry[] = [];
  /** the next batch ships the journal (its interval is up, or many are pending) */
  private shipDue = false;
  private shipTimer: ReturnType<typeof setInterval> | null = null;
  /** leases with an allowance, until the allowance is given back (after their last entry shipped) */
  private journalLeases = new Map<string, Lease>();
  /** the journal of an earlier run is being shipped: no lease is taken until it is, and its rows are gone */
  private recovering = false;
  /** resolves once the journal of an earlier run has been shipped and that run's rows given back */
  recovered: Promise<void> = Promise.resolve();
  /** test-only (TEXTAI_TEST_JOURNAL_CRASH_AFTER_SHIP): dies between PostgreSQL's commit and the local delete */
  private crashAfterShip = false;
  /**
   * Per account with journal charges: its balance after this node's last batch that charged it
   * (PostgreSQL's answer), and the credits journaled here since and not yet shipped. A journal
   * charge answers their difference as the balance after it (exact while only this node charges
   * the account; otherwise it misses what other nodes charged since). An account gets journal
   * charges only once a batch told this node its balance.
   */
  private known = new Map<string, { balance: number; pending: number; seenIn: number }>();
  /** allowances given back and not yet deleted by a committed batch (a failed one sends them again) */
  private allowancesBack = new Set<string>();
  /** charges found over their lease's allowance: they go in a batch, never looked at again by the journal */
  private batchOnly = new WeakSet<PendingCharge>();
  /** what the journal did, for /metrics and tests */
  readonly journalStats = { journaled: 0, ships: 0, shipped: 0, duplicates: 0, lost: 0, overAllowance: 0, fromAllowance: 0 };

  constructor(
    private pg: PgStorage,
    opts: { requestTimeoutMs?: number; leaseMax?: number } = {},
  ) {
    super();
    this.leaseMs = Math.max(100, Math.min(opts.requestTimeoutMs ?? MAX_LEASE_MS, MAX_LEASE_MS));
    this.leaseMax = Math.max(0, Math.floor(opts.leaseMax ?? DEFAULT_CREDIT_LEASE_MAX));
  }

  /**
   * Charges of calls admitted against a lease go to `journal` from now on, shipped every
   * `shipMs`. Ships first what an earlier run of this node left in it, then gives back that run's
   * lease and allowance rows; no lease is taken until then (`recovered`). The operator's `textai
   * credits journal ship FILE` does only that, for a node that is gone.
   */
  useJournal(journal: CreditJournal, opts: { shipMs?: number; crashAfterShip?: boolean } = {}): Promise<void> {
    this.journal = journal;
    this.shipMs = Math.max(1, opts.shipMs ?? 100);
    this.crashAfterShip = opts.crashAfterShip === true;
    this.unshipped = journal.pending();
    this.recovering = true;
    this.shipTimer = setInterval(() => {
      if (this.unshipped.length === 0 && this.allowancesBack.size === 0) return;
      this.shipDue = true;
      this.schedule();
    }, this.shipMs);
    this.shipTimer.unref?.();
    this.recovered = this.recover();
    return this.recovered;
  }

  private async recover(): Promise<void> {
    const journal = this.journal as CreditJournal;
    for (;;) {
      try {
        while (this.unshipped.length > 0) {
          const before = this.unshipped.length;
          this.shipDue = true;
          await this.flush();
          if (this.unshipped.length >= before) throw new Error("not shipped");
        }
        await this.pg.sql`DELETE FROM credit_holds WHERE node_id = ${journal.nodeId}`;
        break;
      } catch {
        // PostgreSQL unreachable: tried again; this node's calls hold their own credits meanwhile
        await Bun.sleep(Math.max(200, this.shipMs));
      }
    }
    this.recovering = false;
  }

  /**
   * Holds `amount` for a call about to run, with the next batch: null when the balance minus what
   * calls in flight hold on every node does not cover it.
   */
  async reserve(accountId: string, amount: number, budget?: KeyBudget): Promise<Reservation | null> {
    credits(amount, "a hold");
    if (budget) credits(budget.limit, "a key's monthly_credit_limit");
    if (amount <= 0) return { accountId, amount: 0, remaining: await this.balance(accountId), done: false };
    if (!budget && this.leaseMax > 0) {
      const leased = this.fromLease(accountId, amount);
      if (leased) return leased;
      this.noteDemand(accountId, amount);
    }
    const holdId = crypto.randomUUID();
    const out = await new Promise<{ remaining: number | null; keyUsed: number | null }>((done, fail) => {
      this.holdQueue.push({ accountId, amount, budget, holdId, done, fail });
      this.schedule();
    });
    if (budget && out.keyUsed !== null) throw keyBudgetExceeded(budget.limit, out.keyUsed, amount);
    if (out.remaining === null) return null;
    // what this node holds, for held(); admission was decided above
    this.holds.add(accountId, amount);
    this.live.set(holdId, performance.now());
    this.renewSoon();
    return { accountId, amount, remaining: out.remaining, done: false, holdId, keyId: budget?.keyId };
  }

  /** A call admitted against this node's lease of the account, in memory; null when it has none that covers it. */
  private fromLease(accountId: string, amount: number): Reservation | null {
    const lease = this.leases.get(accountId);
    if (!lease) return null;
    const now = performance.now();
    if (now >= lease.safeUntil) {
      // past the point where its row may have run out unrenewed (its node cut off, or renewals missed)
      if (lease.safeUntil > 0) this.batchStats.leasesLapsed++;
      lease.safeUntil = 0;
      lease.retiring = true;
      return null;
    }
    // a lease on its way back (replaced, idle, or found gone) admits nothing more
    if (lease.retiring || lease.free < amount) return null;
    lease.free -= amount;
    lease.inFlight++;
    lease.lastUse = now;
    this.batchStats.leasedCalls++;
    this.holds.add(accountId, amount);
    const r: Reservation = {
      accountId,
      amount,
      remaining: lease.remainingAtGrant + lease.free,
      done: false,
      leaseId: lease.id,
    };
    this.leasedAmount.set(r, amount);
    return r;
  }

  /**
   * Counts an account's calls on this node that held their own credits; past LEASE_AFTER_CALLS in a
   * second, asks for a lease (with the next batch) of what they took in LEASE_SPAN_MS, at most
   * leaseMax, and at least what LEASE_AFTER_CALLS such calls take. The database grants at most a
   * twentieth of what the balance less every live hold leaves, and nothing below that least: an
   * account close to empty (less than 20 x 8 calls' worth left) gets no lease, so no node keeps its
   * last credits from the others, and its calls are admitted one by one as before.
   */
  private noteDemand(accountId: string, amount: number): void {
    if (this.recovering && this.journal) return;
    const now = performance.now();
    let d = this.demand.get(accountId);
    if (!d) {
      if (this.demand.size >= 10_000) this.demand.clear();
      d = { since: now, calls: 0, credits: 0, carving: false };
      this.demand.set(accountId, d);
    } else if (now - d.since >= 1000) {
      // a new second, counted in the same record: a lease asked for in the last one answers it
      // (a copy here kept `carving` set for good, and the account never leased again)
      d.since = now;
      d.calls = 0;
      d.credits = 0;
    }
    d.calls++;
    d.credits += amount;
    if (d.carving || d.calls < LEASE_AFTER_CALLS) return;
    const perMs = d.credits / Math.max(1, now - d.since);
    const want = Math.min(this.leaseMax, Math.max(amount * LEASE_AFTER_CALLS, Math.ceil(perMs * LEASE_SPAN_MS)));
    const least = amount * LEASE_AFTER_CALLS;
    if (want < least) return;
    d.carving = true;
    // the allowance: what the node's calls of the account take in ALLOWANCE_INTERVALS ship
    // intervals (at the rate its last lease was spent, or that of its calls held one by one), at
    // least ALLOWANCE_CALLS calls' worth, at most the lease
    let allowance = 0;
    if (this.journal) {
      const last = this.leases.get(accountId);
      const lastRate = last ? (last.granted - last.free) / Math.max(1, now - last.grantedAt) : 0;
      const rate = Math.max(perMs, lastRate);
      allowance = Math.min(want, Math.max(amount * ALLOWANCE_CALLS, Math.ceil(rate * ALLOWANCE_INTERVALS * this.shipMs)));
    }
    this.leaseQueue.push({
      accountId,
      amount: want,
      least,
      leaseId: crypto.randomUUID(),
      demand: d,
      allowance,
      allowanceId: allowance > 0 ? crypto.randomUUID() : undefined,
    });
    this.schedule();
  }

  /**
   * A lease the batch sent at `sentAt` granted (or refused: null). Admission against it stops a
   * third of a lease before its row can run out: renewals (every third of a lease) move that on.
   * The account's previous lease retires: given back once nothing is in flight against it.
   */
  private leaseAnswered(p: PendingLease, sentAt: number, out: { granted: number; remaining: number } | null): void {
    p.demand.carving = false;
    if (!out) return;
    const previous = this.leases.get(p.accountId);
    const lease: Lease = {
      id: p.leaseId,
      accountId: p.accountId,
      free: out.granted,
      inFlight: 0,
      safeUntil: sentAt + (this.leaseMs * 2) / 3,
      lastUse: performance.now(),
      remainingAtGrant: out.remaining,
      retiring: false,
      allowanceId: p.allowanceId,
      allowance: p.allowanceId ? p.allowance : 0,
      unshipped: 0,
      ended: false,
      lapsed: false,
      granted: out.granted,
      grantedAt: performance.now(),
    };
    this.leases.set(p.accountId, lease);
    if (lease.allowanceId) this.journalLeases.set(lease.id, lease);
    this.leaseById.set(lease.id, lease);
    this.live.set(lease.id, sentAt);
    this.batchStats.leases++;
    this.renewSoon();
    if (previous) {
      previous.retiring = true;
      this.endLeaseIfIdle(previous);
    }
    this.sweepLeasesSoon();
  }

  /** A batch sent at `sentAt` charged against a lease: renewed it (`lived`), or found its row gone. */
  private leaseSeen(id: string, sentAt: number, lived: boolean): void {
    const lease = this.leaseById.get(id);
    if (!lease) return;
    if (!lived) {
      if (lease.safeUntil > 0) this.batchStats.leasesLapsed++;
      lease.safeUntil = 0;
      lease.retiring = true;
      lease.lapsed = true;
      return;
    }
    lease.safeUntil = Math.max(lease.safeUntil, sentAt + (this.leaseMs * 2) / 3);
    if (this.live.has(id)) this.live.set(id, Math.max(this.live.get(id) ?? 0, sentAt));
  }

  /** Gives a lease back (its row deleted by the next batch) once nothing is in flight against it. */
  private endLeaseIfIdle(lease: Lease): boolean {
    if (lease.inFlight > 0) return false;
    if (this.leases.get(lease.accountId) === lease) this.leases.delete(lease.accountId);
    this.leaseById.delete(lease.id);
    this.live.delete(lease.id);
    this.releases.push(lease.id);
    lease.ended = true;
    this.allowanceBackIfShipped(lease);
    this.schedule();
    return true;
  }

  /** An ended lease whose journal entries have all shipped gives its allowance back (with the next batch). */
  private allowanceBackIfShipped(lease: Lease): void {
    if (!lease.ended || lease.unshipped > 0 || !lease.allowanceId || !this.journalLeases.has(lease.id)) return;
    this.journalLeases.delete(lease.id);
    this.releases.push(lease.allowanceId);
    this.allowancesBack.add(lease.allowanceId);
    this.schedule();
  }

  /** Every half an idle time: gives back the leases nothing was admitted against for LEASE_IDLE_MS. */
  private sweepLeasesSoon(): void {
    if (this.leaseSweep) return;
    this.leaseSweep = setInterval(() => {
      const now = performance.now();
      for (const lease of [...this.leaseById.values()])
        if (lease.retiring || now - lease.lastUse >= LEASE_IDLE_MS || now >= lease.safeUntil) {
          if (!this.endLeaseIfIdle(lease)) lease.retiring = true;
        }
      if (this.leaseById.size === 0 && this.leaseSweep) {
        clearInterval(this.leaseSweep);
        this.leaseSweep = null;
      }
    }, LEASE_IDLE_MS / 2);
    this.leaseSweep.unref?.();
  }

  /** A call admitted against a lease ended: charged `r.amount` of what it was admitted for, or nothing. */
  private leasedCallEnded(r: Reservation, charged: boolean): void {
    const lease = r.leaseId ? this.leaseById.get(r.leaseId) : undefined;
    if (!lease) return;
    lease.inFlight--;
    // a charge gives back what it did not use; a failed charge gives back nothing (the lease may
    // have shrunk in a batch whose answer was lost): its row keeps the difference until it ends
    if (charged) lease.free += Math.max(0, (this.leasedAmount.get(r) ?? r.amount) - r.amount);
    if (lease.retiring) this.endLeaseIfIdle(lease);
  }

  /** A call admitted against a lease given back uncharged: its credits return to the lease. */
  override release(r: Reservation): void {
    if (!r.done && r.leaseId) {
      const lease = this.leaseById.get(r.leaseId);
      if (lease) lease.free += r.amount;
    }
    super.release(r);
  }

  /**
   * A cache hit of a hot account is charged against this node's lease (one batch, no hold of its
   * own to spare); otherwise as a charge without a hold, sparing every node's holds.
   */
  override async charge(accountId: string, amount: number, details: ChargeDetails): Promise<Reservation | null> {
    if (details.keyLimit !== undefined || amount <= 0 || this.leaseMax === 0) return super.charge(accountId, amount, details);
    const r = this.fromLease(accountId, credits(amount, "a charge"));
    if (!r) {
      this.noteDemand(accountId, amount);
      return super.charge(accountId, amount, details);
    }
    try {
      await this.settle(r, details);
    } catch (err) {
      // the lease ran out (its node could not renew it) and the balance no longer covers the hit
      if (err instanceof GatewayError && err.code === "insufficient_credits") return null;
      throw err;
    }
    return r;
  }

  leaseStats(): { held: number; free: number; granted: number; calls: number } {
    let free = 0;
    for (const lease of this.leaseById.values()) free += lease.free;
    return { held: this.leaseById.size, free, granted: this.batchStats.leases, calls: this.batchStats.leasedCalls };
  }

  /** Shutdown, once no call is in flight: this node's leases are given back, then everything queued is committed. */
  async close(): Promise<void> {
    if (this.leaseSweep) clearInterval(this.leaseSweep);
    this.leaseSweep = null;
    for (const lease of [...this.leaseById.values()]) this.endLeaseIfIdle(lease);
    if (this.journal) this.shipDue = true;
    await this.flush();
    if (this.journal) {
      // everything pending (a batch carries at most SHIP_MAX), while PostgreSQL takes it
      for (let left = this.unshipped.length; left > 0; ) {
        this.shipDue = true;
        await this.flush();
        if (this.unshipped.length >= left) break;
        left = this.unshipped.length;
      }
      // the allowances whose entries those batches shipped are given back by the next
      await this.flush();
      if (this.shipTimer) clearInterval(this.shipTimer);
      this.shipTimer = null;
      // what did not ship (PostgreSQL unreachable) stays in the file, shipped at the next start
      this.journal.close();
      this.journal = null;
    }
  }

  /** The journal's figures for /metrics: entries pending, ships, and credits in doubt. */
  journalFigures(): { pending: number; pendingCredits: number; ships: number; inDoubt: number; lost: number } | null {
    if (!this.journal) return null;
    let pendingCredits = 0;
    for (const e of this.unshipped) pendingCredits += e.amount;
    // in doubt: unshipped credits of leases PostgreSQL said had lapsed, and of an earlier run's
    let inDoubt = 0;
    for (const lease of this.journalLeases.values()) if (lease.lapsed) inDoubt += lease.unshipped;
    if (this.recovering) inDoubt = pendingCredits;
    return {
      pending: this.unshipped.length,
      pendingCredits,
      ships: this.journalStats.ships,
      inDoubt,
      lost: this.journalStats.lost,
    };
  }

  protected override async keyInFlight(keyId: string): Promise<number> {
    await this.flush();
    return pgCall(this.pg, async () => {
      const [row] = await this.pg.sql.unsafe(
        `SELECT coalesce(sum(amount), 0)::float8 AS held FROM credit_holds WHERE key_id = $1 AND expires_at > ${NOW_MS}`,
        [keyId],
      );
      return Number(row?.held ?? 0);
    });
  }

  /**
   * The key's charges this month (UTC); its holds are not counted here. What this node asked for
   * before (charges, releases, still queued for the next batch) is applied first, so a node reads
   * its own writes, as it did when each went to the database at once.
   */
  async keySpent(keyId: string, now = Date.now()): Promise<number> {
    await this.flush();
    return pgCall(this.pg, async () => {
      const [row] = await this.pg.sql`SELECT coalesce(-sum(amount), 0)::float8 AS used FROM ledger
        WHERE key_id = ${keyId} AND kind = 'charge' AND created_at >= ${monthStart(now)}`;
      return Number(row?.used ?? 0);
    });
  }

  /**
   * The charge deleted the hold with its debit; otherwise (refused, failed, released) the next
   * batch deletes it, before any hold of that batch is taken, so a call right after a failed one
   * is never refused on the failed one's hold. If that batch fails, the hold runs out at its
   * expiry, as nobody renews it.
   */
  protected override holdEnded(r: Reservation, charged: boolean): void {
    if (r.leaseId) {
      this.leasedCallEnded(r, charged);
      return;
    }
    if (!r.holdId) return;
    this.live.delete(r.holdId);
    if (charged) return;
    this.releases.push(r.holdId);
    this.schedule();
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
        const renewed = (await this.pg.sql.unsafe(RENEW, [due.join(","), this.leaseMs])) as { id: string }[];
        for (const { id } of renewed) {
          if (this.live.has(id)) this.live.set(id, now);
          // a lease admits calls until a third of a lease before the expiry just set
          const lease = this.leaseById.get(id);
          if (lease) lease.safeUntil = now + (this.leaseMs * 2) / 3;
        }
      }
    } catch {
      // unreachable: retried at the next tick; meanwhile these holds may run out (charges answer 503)
    } finally {
      this.renewal = null;
      this.renewSoon();
    }
  }

  /**
   * Commits what is queued now (one batch at a time, in order). With the journal, the charges of
   * calls admitted against a lease are first committed to it, at once (they wait for no batch).
   */
  flush(): Promise<void> {
    if (this.journal) {
      this.journalTurn();
      if (!this.pgWork()) return this.flushing;
    }
    this.flushing = this.flushing.then(() => this.commit());
    return this.flushing;
  }

  /** Anything for the next batch. */
  private pgWork(): boolean {
    return (
      this.queue.length > 0 ||
      this.holdQueue.length > 0 ||
      this.releases.length > 0 ||
      this.leaseQueue.length > 0 ||
      (this.shipDue && this.unshipped.length > 0)
    );
  }

  /**
   * The group commit of the journal, once per turn of the event loop: every queued charge of a
   * call admitted against a lease with an allowance, while the lease's unshipped credits stay
   * within its allowance, is committed to the journal file in one transaction, and its caller
   * answered. The rest (over the allowance, Idempotency-Key calls, accounts the alert watch
   * watches, calls held one by one) stay queued for the next batch, as without the journal.
   */
  private journalTurn(): void {
    const journal = this.journal;
    if (!journal || this.queue.length === 0) return;
    const keep: PendingCharge[] = [];
    const take: { c: PendingCharge; lease: Lease }[] = [];
    for (const c of this.queue) {
      if (this.batchOnly.has(c)) {
        keep.push(c);
        continue;
      }
      const lease = c.leaseId !== undefined ? this.leaseById.get(c.leaseId) : undefined;
      if (!lease?.allowanceId || c.details.idempotent || this.watch?.watches(c.accountId) || !this.known.has(c.accountId)) {
        keep.push(c);
        continue;
      }
      if (lease.unshipped + c.amount > lease.allowance) {
        // over the allowance PostgreSQL keeps for it: charged in the next batch instead
        this.journalStats.overAllowance++;
        this.batchOnly.add(c);
        this.shipDue = true;
        keep.push(c);
        continue;
      }
      if (c.details.signal?.aborted) {
        c.fail(clientClosed("the client went away before its answer: not charged"));
        continue;
      }
      lease.unshipped += c.amount;
      take.push({ c, lease });
    }
    this.queue = keep;
    if (take.length === 0) return;
    const at = Date.now();
    let entries: JournalEntry[];
    try {
      entries = journal.append(
        take.map(({ c, lease }) => ({
          accountId: c.accountId,
          amount: c.amount,
          leaseId: lease.id,
          allowanceId: lease.allowanceId as string,
          keyId: c.details.keyId,
          fn: c.details.fn,
          requestId: c.details.requestId,
          provider: c.details.provider,
          cached: c.details.cached,
          at,
          inputTokens: c.details.tokens?.input ?? null,
          outputTokens: c.details.tokens?.output ?? null,
        })),
      );
    } catch (err) {
      // the node's disk refused it: nothing was charged, nor will the answer be sent
      for (const { c, lease } of take) {
        lease.unshipped -= c.amount;
        c.fail(err);
      }
      return;
    }
    for (const e of entries) this.unshipped.push(e);
    this.journalStats.journaled += entries.length;
    for (const { c, lease } of take) {
      const k = this.known.get(c.accountId) as { balance: number; pending: number; seenIn: number };
      k.pending += c.amount;
      c.done(Math.max(0, k.balance - k.pending));
      if (lease.unshipped * 2 >= lease.allowance) this.shipDue = true;
    }
    if (this.unshipped.length >= SHIP_AT) this.shipDue = true;
    if (this.shipDue) this.schedule();
  }

  /** The batch operation of a charge waiting for its answer (`credit_batch()`'s "c"). */
  private chargeOp(c: PendingCharge, i: number, at: number, day: string): Record<string, unknown> {
    const d = c.details;
    const op: Record<string, unknown> = {
      k: "c",
      i,
      a: c.accountId,
      n: c.amount,
      key: d.keyId,
      fn: d.fn,
      rid: d.requestId,
      prov: d.provider,
      cached: d.cached,
      at,
      day,
      ti: d.tokens?.input ?? null,
      tout: d.tokens?.output ?? null,
      idem: d.idempotent === true,
    };
    // a held call's charge removes its hold, a leased one's shrinks its lease; one without (a
    // cache hit) must spare every hold
    if (c.leaseId !== undefined) {
      op.h = c.leaseId;
      op.ls = true;
      op.l = this.leaseMs;
    } else if (!c.spareHolds && c.holdId !== undefined) op.h = c.holdId;
    else if (d.keyLimit !== undefined) {
      op.lim = d.keyLimit;
      op.since = monthStart(at);
    }
    return op;
  }

  /** The batch operation asking for a lease, with its allowance when the journal is on ("l"). */
  private leaseOp(p: PendingLease, i: number): Record<string, unknown> {
    const op: Record<string, unknown> = { k: "l", i, a: p.accountId, n: p.amount, mn: p.least, h: p.leaseId, l: this.leaseMs };
    if (p.allowanceId) {
      op.ax = p.allowance;
      op.xa = p.allowanceId;
      op.nd = this.journal?.nodeId;
    }
    return op;
  }

  /** The batch operation of a journal entry: a charge answered already, applied once by its sequence ("c" with "sq"). */
  private shipOp(e: JournalEntry, i: number): Record<string, unknown> {
    return {
      k: "c",
      i,
      a: e.accountId,
      n: e.amount,
      key: e.keyId,
      fn: e.fn,
      rid: e.requestId,
      prov: e.provider,
      cached: e.cached,
      at: e.at,
      day: dayOf(e.at),
      ti: e.inputTokens,
      tout: e.outputTokens,
      idem: false,
      h: e.leaseId,
      ls: true,
      l: this.leaseMs,
      xa: e.allowanceId,
      sq: e.seq,
      jr: this.journal?.journalId,
      nd: this.journal?.nodeId,
    };
  }

  private async commit(): Promise<void> {
    const shipping = this.shipDue ? this.unshipped.slice(0, SHIP_MAX) : [];
    this.shipDue = false;
    if (
      this.queue.length === 0 &&
      this.holdQueue.length === 0 &&
      this.releases.length === 0 &&
      this.leaseQueue.length === 0 &&
      shipping.length === 0
    )
      return;
    const batch = this.queue;
    const holds = this.holdQueue;
    const releases = this.releases;
    const leases = this.leaseQueue;
    this.queue = [];
    this.holdQueue = [];
    this.releases = [];
    this.leaseQueue = [];
    // a client gone before the commit is not charged
    const live: PendingCharge[] = [];
    for (const c of batch) {
      if (c.details.signal?.aborted) c.fail(clientClosed("the client went away before its answer: not charged"));
      else live.push(c);
    }
    if (live.length === 0 && holds.length === 0 && releases.length === 0 && leases.length === 0 && shipping.length === 0) return;
    const since = monthStart();
    const ops: Record<string, unknown>[] = [];
    for (const h of releases) ops.push({ k: "r", h });
    for (let i = 0; i < holds.length; i++) {
      const h = holds[i] as PendingHold;
      const op: Record<string, unknown> = { k: "h", i, a: h.accountId, n: h.amount, h: h.holdId, l: this.leaseMs };
      if (h.budget) {
        op.key = h.budget.keyId;
        op.lim = h.budget.limit;
        op.since = since;
      }
      ops.push(op);
    }
    const at = Date.now();
    const day = dayOf(at);
    for (const [j, c] of live.entries()) ops.push(this.chargeOp(c, holds.length + j, at, day));
    const firstLease = holds.length + live.length;
    for (const [j, p] of leases.entries()) ops.push(this.leaseOp(p, firstLease + j));
    // journal entries: charges already answered, applied once by their sequence number
    const firstShip = firstLease + leases.length;
    for (const [j, e] of shipping.entries()) ops.push(this.shipOp(e, firstShip + j));
    let rows: BatchRow[] = [];
    const sentAt = performance.now();
    try {
      await schemaReady(this.pg);
      const t0 = performance.now();
      const text = JSON.stringify(ops);
      // a deadlock can only be with a node of a version that locks in another order (an upgrade
      // in progress): PostgreSQL cancelled this batch whole, so it is sent again
      for (let attempt = 1; ; attempt++) {
        try {
          rows = await this.runBatch(text, live.length > 0, this.watchedAfter(live, holds.length));
          break;
        } catch (err) {
          if (attempt >= 3 || String((err as { errno?: string }).errno) !== DEADLOCK) throw err;
        }
      }
      this.batchStats.ms += performance.now() - t0;
    } catch (err) {
      const e = err instanceof GatewayError ? err : isPgUnavailable(err) ? databaseUnavailable() : err;
      for (const h of holds) h.fail(e);
      for (const c of live) c.fail(e);
      // a lease whose batch failed was not granted (its transaction did not commit), or, holds and
      // leases alone going in autocommit, was and is unknown here: its row runs out unrenewed
      for (const p of leases) this.leaseAnswered(p, sentAt, null);
      // an allowance never runs out by time: its release is sent again with a later batch
      for (const h of releases) if (this.allowancesBack.has(h)) this.releases.push(h);
      // the journal's entries stay, shipped again with a later batch (once at most: by sequence)
      if (shipping.length > 0) this.shipDue = true;
      return;
    }
    this.stats.batches++;
    this.stats.operations += live.length + shipping.length;
    this.batchStats.transactions++;
    this.batchStats.holds += holds.length;
    this.batchStats.charges += live.length + shipping.length;
    this.batchStats.releases += releases.length;
    if (this.allowancesBack.size > 0) for (const h of releases) this.allowancesBack.delete(h);
    if (shipping.length > 0) this.shipped(shipping, rows, firstShip, sentAt);
    const out = new Array<(typeof rows)[number] | undefined>(holds.length + live.length);
    for (const r of rows) out[r.op_index] = r;
    const num = (v: number | null | undefined) => (v === null || v === undefined ? null : Number(v));
    for (const [i, h] of holds.entries()) h.done({ remaining: num(out[i]?.remaining), keyUsed: num(out[i]?.key_used) });
    for (const [j, c] of live.entries()) {
      const r = out[holds.length + j];
      // a leased charge renewed its lease (it lived), or found it gone: admit nothing more against it
      if (c.leaseId !== undefined) this.leaseSeen(c.leaseId, sentAt, num(r?.key_used) === 1);
      if (this.journal && r?.remaining !== null && r?.remaining !== undefined) this.balanceSeen(c.accountId, Number(r.remaining));
      c.done(r && r.claimed === false ? VOIDED : num(r?.remaining));
    }
    for (const [j, p] of leases.entries()) {
      const r = out[firstLease + j];
      const granted = num(r?.key_used);
      const remaining = num(r?.remaining);
      this.leaseAnswered(p, sentAt, granted !== null && remaining !== null ? { granted, remaining } : null);
    }
    const claims = live.filter((c) => c.details.idempotent).length;
    if (claims > 0 && Math.floor((this.claims + claims) / 256) > Math.floor(this.claims / 256)) this.sweepClaims();
    this.claims += claims;
  }

  /**
   * A batch committed a charge of the account leaving `balance`: the lowest such figure of a batch
   * is the balance at its commit (its charges of one account are decided in order).
   */
  private balanceSeen(accountId: string, balance: number): void {
    const k = this.known.get(accountId);
    if (k) {
      if (k.seenIn !== this.batchStats.transactions) k.balance = balance;
      else k.balance = Math.min(k.balance, balance);
      k.seenIn = this.batchStats.transactions;
      return;
    }
    if (this.known.size >= 10_000) for (const [id, v] of this.known) if (v.pending === 0) this.known.delete(id);
    this.known.set(accountId, { balance, pending: 0, seenIn: this.batchStats.transactions });
  }

  /**
   * A batch carrying journal entries committed: they are deleted from the journal (only now), and
   * their leases learn whether they lived. An entry PostgreSQL had applied before (key_used 2) is
   * not applied again; one not covered (its lease gone, its allowance forfeited, and the balance
   * less every hold short of it) is lost: counted.
   */
  private shipped(shipping: JournalEntry[], rows: BatchRow[], first: number, sentAt: number): void {
    if (this.crashAfterShip) process.kill(process.pid, "SIGKILL");
    const journal = this.journal as CreditJournal;
    const last = shipping[shipping.length - 1] as JournalEntry;
    journal.shipped(last.seq);
    this.unshipped.splice(0, shipping.length);
    this.journalStats.ships++;
    this.journalStats.shipped += shipping.length;
    const byIndex = new Map(rows.map((r) => [Number(r.op_index), r]));
    const lived = new Map<string, boolean>();
    for (const [j, e] of shipping.entries()) {
      const r = byIndex.get(first + j);
      const used = r?.key_used === null || r?.key_used === undefined ? null : Number(r.key_used);
      const k = this.known.get(e.accountId);
      if (k) k.pending = Math.max(0, k.pending - e.amount);
      if (r?.remaining !== null && r?.remaining !== undefined) this.balanceSeen(e.accountId, Number(r.remaining));
      if (used === 2) this.journalStats.duplicates++;
      else if (r?.remaining === null || r?.remaining === undefined) this.journalStats.lost++;
      if (used === 3) this.journalStats.fromAllowance++;
      if (used === 1 || used === 3) lived.set(e.leaseId, (lived.get(e.leaseId) ?? false) || used === 1);
      const lease = this.journalLeases.get(e.leaseId);
      if (lease) lease.unshipped -= e.amount;
    }
    for (const [id, ok] of lived) this.leaseSeen(id, sentAt, ok);
    for (const lease of [...this.journalLeases.values()]) this.allowanceBackIfShipped(lease);
    if (this.unshipped.length > 0 && this.unshipped.length >= SHIP_AT) this.shipDue = true;
  }

  /**
   * One batch in its own transaction. With charges, in two round trips: `BEGIN` and the call in one
   * message, then `COMMIT`, sent only once the call has returned. A node killed before that (its
   * batch waiting for a lock, say) leaves nothing committed: PostgreSQL rolls back a transaction
   * whose client has gone, also behind a pooler. (One statement in autocommit would commit whenever
   * it ran, client or not, and charge answers never delivered.) Holds and releases alone go as one
   * statement in autocommit, one round trip: holds committed for a node that has died only count
   * until their lease runs out, as when it dies just after. The operations travel as a string
   * literal, escaped for an E'' string whatever standard_conforming_strings says.
   */
  private async runBatch(
    text: string,
    charges: boolean,
    after?: (tx: SQL, rows: BatchRow[]) => Promise<void>,
  ): Promise<BatchRow[]> {
    if (!charges) return (await this.pg.sql.unsafe(`${BATCH}(($1::text)::jsonb)`, [text])) as BatchRow[];
    const literal = `E'${text.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
    const conn = await this.pg.sql.reserve();
    let open = false;
    try {
      open = true;
      const [, rows] = await conn.unsafe(`BEGIN; ${BATCH}(${literal}::jsonb)`);
      if (after) await after(conn, rows as BatchRow[]);
      await conn.unsafe("COMMIT");
      open = false;
      return rows as BatchRow[];
    } catch (err) {
      if (open) await conn.unsafe("ROLLBACK").catch(() => {});
      throw err;
    } finally {
      conn.release();
    }
  }

  /**
   * For a batch with charges of accounts the alert watch watches: what writes their events in the
   * batch's transaction, before its COMMIT (docs/alerts.md); undefined for every other batch.
   */
  private watchedAfter(live: PendingCharge[], first: number): ((tx: SQL, rows: BatchRow[]) => Promise<void>) | undefined {
    const watch = this.watch;
    if (!watch || !live.some((c) => watch.watches(c.accountId))) return undefined;
    return async (tx, rows) => {
      const byIndex = new Map(rows.map((r) => [Number(r.op_index), r]));
      const seen = [];
      for (const [j, c] of live.entries()) {
        const r = byIndex.get(first + j);
        if (!watch.watches(c.accountId) || !r || r.remaining === null || r.claimed === false) continue;
        seen.push({ accountId: c.accountId, keyId: c.details.keyId, amount: c.amount, balance: Number(r.remaining) });
      }
      if (seen.length > 0) await watch.chargedPg(tx, seen);
    };
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
    grantAmount(amount);
    reason = grantReason(reason);
    let held = 0;
    if (amount < 0) {
      await tx.unsafe(LOCK_HOLDS, [accountId]);
      await tx.unsafe(LOCK_ACCOUNT, [accountId]);
      const [h] = await tx.unsafe(`SELECT ${liveHolds("$1")}::float8 AS held`, [accountId]);
      held = Number(h.held);
    }
    const floor = amount < 0 ? held : Number.MIN_SAFE_INTEGER;
    const [updated] =
      await tx`UPDATE accounts SET balance = balance + ${amount} WHERE id = ${accountId} AND balance + ${amount} >= ${floor} AND balance + ${amount} <= ${MAX_BALANCE} RETURNING balance::float8 AS balance`;
    if (!updated) {
      const [acc] = await tx`SELECT balance::float8 AS balance FROM accounts WHERE id = ${accountId}`;
      if (!acc) throw new Error(`account ${accountId} not found`);
      if (amount > 0) throw balanceTooLarge(amount, acc.balance);
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

  grant(accountId: string, amount: number, kind: "welcome" | "grant", given: string | null, audit?: AuditBy): Promise<number> {
    // (checked before the transaction, so that the audit entry keeps the reason as the ledger does)
    const reason = grantReason(given);
    return pgCall(this.pg, () =>
      this.pg.sql.begin(async (tx) => {
        const balance = await this.grantIn(tx, accountId, amount, kind, reason);
        if (audit) await appendAuditIn(tx, grantEntry(audit, accountId, amount, reason, balance));
        if (this.watch?.watches(accountId))
          await this.watch.chargedPg(tx, [{ accountId, keyId: null, amount: -amount, balance }]);
        return balance;
      }),
    );
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
