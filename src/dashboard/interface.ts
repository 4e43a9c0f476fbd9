import type { MaybePromise } from "../maybe";

export interface Login {
  accountId: string;
  email: string;
  passwordHash: string;
}

export interface Session {
  tokenHash: string;
  /** null for an operator session */
  accountId: string | null;
  kind: "account" | "operator";
  createdAt: number;
  lastSeenAt: number;
}

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
  created_at: string;
}

/**
 * What the dashboard keeps besides accounts and keys (those stay in the KeyStore): logins
 * (email and argon2id hash), sessions (by the SHA-256 of their token), and the reads the pages
 * need (account search with emails, ledger pages) plus the operator's plan change.
 */
export interface DashboardStore {
  loginByEmail(email: string): MaybePromise<Login | null>;
  loginOf(accountId: string): MaybePromise<Login | null>;
  /** Creates or replaces the account's login; false when the email belongs to another account. Ends the account's sessions. */
  setLogin(accountId: string, email: string, passwordHash: string): MaybePromise<boolean>;
  /** Replaces the password hash and ends every session of the account. */
  setPassword(accountId: string, passwordHash: string): MaybePromise<void>;
  createSession(s: Session): MaybePromise<void>;
  /**
   * The session if it was seen within `idleMs` (its last-seen time moves to `now`, at most once a
   * minute); an idle one is deleted and null is answered.
   */
  touchSession(tokenHash: string, now: number, idleMs: number): MaybePromise<Session | null>;
  deleteSession(tokenHash: string): MaybePromise<void>;
  /** Accounts whose id, name or email contains `q` (all when empty), newest first. */
  searchAccounts(q: string, limit: number): MaybePromise<AccountSummary[]>;
  /** The account's plan and its keys' plans; false for an unknown account. */
  setPlan(accountId: string, plan: string): MaybePromise<boolean>;
  /** Ledger rows, newest first. */
  ledgerPage(accountId: string, limit: number, offset: number): MaybePromise<{ rows: LedgerRow[]; total: number }>;
}

/**
 * Sign-in attempts counted per email and per client address in a fixed window (CONTRACT 12). An
 * attempt is counted before the password is checked, so concurrent guesses cannot all slip in
 * under the limit; an attempt that succeeds is given back. In memory per process on one node; in
 * Redis when TEXTAI_REDIS_URL is set, so every node counts the same attempts.
 */
export interface SignInAttempts {
  /** counts one attempt for the email and one for the client; false (nothing counted): over the limit */
  attempt(email: string, client: string): MaybePromise<boolean>;
  /** gives back an attempt that succeeded */
  succeeded(email: string, client: string): MaybePromise<void>;
}
