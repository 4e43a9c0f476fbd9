import type { AuditBy, AuditDraft } from "../audit/interface";
import type { MaybePromise } from "../maybe";
import type { MemberStore, Role } from "./members";

/** A member's sign-in (docs/teams.md): its email, role and argon2id hash. */
export interface Login {
  accountId: string;
  memberId: string;
  role: Role;
  email: string;
  passwordHash: string;
}

export interface Session {
  tokenHash: string;
  /** null for an operator session */
  accountId: string | null;
  kind: "account" | "operator";
  /** the member an account session is of (null: an operator session, or one opened before members) */
  memberId?: string | null;
  /**
   * who an operator session is when single sign-on opened it (`operator:EMAIL`, or
   * `operator:sub:SUBJECT` without a verified email): the actor of the changes it makes in the
   * audit trail; null or absent: `operator` (opened with the admin token)
   */
  actor?: string | null;
  createdAt: number;
  lastSeenAt: number;
}

/** Per kind of session: the idle time and the lifetime after which it ends. */
export type SessionLimits = Record<Session["kind"], { idleMs: number; lifetimeMs: number }>;

export interface AccountSummary {
  id: string;
  name: string | null;
  email: string | null;
  plan: string;
  balance: number;
  created_at: string;
}

export interface LedgerRow {
  /** the entry's public id (random, `led_…`), not its internal key */
  id: string;
  kind: "welcome" | "grant" | "charge";
  amount: number;
  function: string | null;
  key_id: string | null;
  request_id: string | null;
  reason: string | null;
  /** a /v1 charge's tokens; null on other rows */
  input_tokens: number | null;
  output_tokens: number | null;
  created_at: string;
}

/**
 * What the dashboard keeps besides accounts and keys (those stay in the KeyStore): members and
 * their logins (email and argon2id hash, members.ts), sessions (by the SHA-256 of their token), and
 * the reads the pages need (account search with emails, ledger pages) plus the operator's plan change.
 */
export interface DashboardStore extends MemberStore {
  /** The member whose email this is (emails are one member's in the whole gateway). */
  loginByEmail(email: string): MaybePromise<Login | null>;
  /** The account's first owner's login (the login the account was made with). */
  loginOf(accountId: string): MaybePromise<Login | null>;
  /**
   * Creates or replaces the login of the account's first owner (an owner member when it has
   * none); false when the email belongs to a member of another account. Ends the account's sessions.
   * With `audit`, its `login.set` entry is appended in the same transaction
   * (the email and the password's change time, never the password or its hash), as for the changes below.
   */
  setLogin(accountId: string, email: string, passwordHash: string, audit?: AuditBy): MaybePromise<boolean>;
  /**
   * Replaces a member's password hash (`memberId`; the account's first owner's when not given) and
   * ends that member's sessions (`password.change`).
   */
  setPassword(accountId: string, passwordHash: string, audit?: AuditBy, memberId?: string): MaybePromise<void>;
  /** Stores a session; with `entry` (a single sign-on's, docs/audit.md) its audit entry in the same transaction. */
  createSession(s: Session, entry?: AuditDraft): MaybePromise<void>;
  /**
   * The session if it has not ended under `limits` (idle time and lifetime of its kind); its
   * last-seen time moves to `now`, at most once a minute. An ended one is deleted and null is answered.
   */
  touchSession(tokenHash: string, now: number, limits: SessionLimits): MaybePromise<Session | null>;
  deleteSession(tokenHash: string): MaybePromise<void>;
  /** Deletes every session that has ended under `limits` by `now`; answers how many. */
  sweepSessions(now: number, limits: SessionLimits): MaybePromise<number>;
  /** Accounts whose id, name or email contains `q` (all when empty), newest first. */
  searchAccounts(q: string, limit: number): MaybePromise<AccountSummary[]>;
  /** The account's plan and its keys' plans (`plan.change`); false for an unknown account. */
  setPlan(accountId: string, plan: string, audit?: AuditBy): MaybePromise<boolean>;
  /** Ledger rows, newest first. */
  ledgerPage(accountId: string, limit: number, offset: number): MaybePromise<{ rows: LedgerRow[]; total: number }>;
}

/** A guess let through, or refused with how long to wait. */
export interface GuessVerdict {
  allowed: boolean;
  /** 0 when allowed */
  retryAfterMs: number;
}

/**
 * Guesses at secrets (passwords, the admin token) and sign-ups, counted per client address and per
 * target under the policy of guessing.ts (docs/security.md). In memory per process on one node; in
 * Redis when TEXTAI_REDIS_URL is set, so every node counts the same guesses.
 */
export interface SignInAttempts {
  /**
   * Counts one guess at `target` from `client` before the secret is checked (so concurrent guesses
   * cannot all slip in under a limit), unless the policy refuses it (then nothing is counted).
   */
  attempt(target: string, client: string): MaybePromise<GuessVerdict>;
  /** What `attempt` would answer, counting nothing: the path of a secret already found right. */
  check(target: string, client: string): MaybePromise<GuessVerdict>;
  /** gives back an attempt whose secret was right */
  succeeded(target: string, client: string): MaybePromise<void>;
  /** counts one sign-up from `client`, refused past the per-address limit; never given back */
  signUp(client: string): MaybePromise<GuessVerdict>;
}
