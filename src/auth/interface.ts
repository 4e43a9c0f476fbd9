import type { AuditBy } from "../audit/interface";
import { GatewayError } from "../errors";
import type { MaybePromise } from "../maybe";
import type { KeyPolicy, PolicyPatch, PolicyView } from "./policy";

export interface AuthInfo {
  keyId: string;
  accountId: string;
  plan: string;
  label: string;
  /** the key's policy, carried by the key cache (absent: none) */
  policy?: KeyPolicy;
  /** its account's tags, carried by the key cache (absent: none); the key's policy tags add to them */
  accountTags?: Readonly<Record<string, string>>;
}

export interface KeyView {
  id: string;
  label: string;
  account_id: string;
  plan: string;
  status: "active" | "revoked";
  masked_key: string;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  policy: PolicyView;
}

export interface CreatedKey {
  id: string;
  key: string;
  label: string;
  account_id: string;
  plan: string;
  prefix: string;
}

export interface AccountRow {
  id: string;
  name: string | null;
  plan: string;
  balance: number;
  created_at: string;
  /** residency and routing tags, which its keys' tags add to (docs/routing.md); null: none */
  tags: Record<string, string> | null;
}

/** What `createKey` is given: the key's label, and its account (or the new account's plan and credits). */
export interface NewKeyOptions {
  label: string;
  accountId?: string;
  plan?: string;
  credits?: number;
  policy?: KeyPolicy;
  /** who makes it: the store appends its `key.create` entry in the same transaction (docs/audit.md) */
  audit?: AuditBy;
}

/** What `createAccount` is given: every field optional (the welcome credits unless `credits`). */
export interface NewAccountOptions {
  name?: string;
  plan?: string;
  credits?: number;
  tags?: Record<string, string> | null;
  /** its dashboard login, written in the same transaction (a new account has no sessions to end) */
  login?: { email: string; passwordHash: string };
  /** who makes it: `account.create` (`account.signup` when the actor is the account itself) in the same transaction */
  audit?: AuditBy;
}

/**
 * Accounts and API keys: creation, the lookup of a presented key on every request, revocation.
 * Implementations: SQLite (one file) and PostgreSQL (many nodes). Lookups go through a key cache
 * whose entries live at most one second; `forget` drops a key from it at once (a revocation
 * broadcast by another node).
 */
export interface KeyStore {
  createAccount(opts?: NewAccountOptions): MaybePromise<{ id: string; plan: string; balance: number }>;
  accountExists(id: string): MaybePromise<boolean>;
  getAccount(id: string): MaybePromise<AccountRow | null>;
  listAccounts(limit: number, offset: number): MaybePromise<AccountRow[]>;
  /**
   * Replaces an account's tags (null clears them). Every key of the account is dropped from the
   * cache and told to `onRevoke`, as a policy change is, so every node reads the new tags at its
   * next request. null when there is no such account. With `audit`, its `account.tags.update`
   * entry is appended in the same transaction (as for every change below).
   */
  setAccountTags(id: string, tags: Record<string, string> | null, audit?: AuditBy): MaybePromise<AccountRow | null>;
  /**
   * A new key, on a new account unless `accountId` is given. An existing account holds at most
   * `maxKeys(its plan)` active keys (the store's option): one more is a KeyLimitError, checked
   * in the same transaction as the insert so concurrent creations cannot pass it.
   */
  createKey(opts: NewKeyOptions): MaybePromise<CreatedKey>;
  /**
   * Changes a key's policy (of `accountId` when given): the patch's fields replace the key's,
   * null clears one. `check` sees the policy before and after, in the transaction, and may throw
   * to refuse. The key is dropped from the cache and told to `onRevoke`, so every node reads the
   * new policy at its next request. null when there is no such key.
   */
  setPolicy(id: string, patch: PolicyPatch, opts?: PolicyChangeOptions): MaybePromise<KeyView | null>;
  /** Resolves a presented key; null for unknown and revoked keys alike. */
  authenticate(presented: string): MaybePromise<AuthInfo | null>;
  /** Revokes a key (of `accountId` when given); false when there is no such key. */
  revoke(id: string, accountId?: string, audit?: AuditBy): MaybePromise<boolean>;
  /** Drops a key hash from the key cache (a revocation or policy change made elsewhere). */
  forget(keyHash: string): void;
  /** Called with the key hash after each revocation or policy change made through this store. */
  onRevoke: ((keyHash: string) => void) | null;
  get(id: string): MaybePromise<KeyView | null>;
  /**
   * Who stands behind a key, read now in one lookup by its id (the account's audit trail is read
   * only with a key an owner or admin stands behind, docs/audit.md#reading-it); null when there is
   * no such key.
   */
  keyMaker(id: string): MaybePromise<KeyMaker | null>;
  /** Newest first; `page` bounds the rows read (every row without it). */
  list(accountId?: string, page?: KeyPage): MaybePromise<KeyView[]>;
  /** last_used_at is batched; this writes what is pending */
  flushLastUsed(): MaybePromise<void>;
  startBackgroundFlush(intervalMs?: number): void;
  stop(): MaybePromise<void>;
}

/** `setPolicy`'s options: the key's account, a check of the change, who makes it (`key.policy.update`). */
export interface PolicyChangeOptions {
  accountId?: string;
  check?: (before: KeyPolicy | undefined, after: KeyPolicy | undefined) => void;
  audit?: AuditBy;
}

/**
 * The member who made a key in the dashboard (`owner_member_id`) and its role now: `memberId` null
 * for a key made with the admin API or the CLI; `role` null when that member is no longer one of
 * the key's account (removed).
 */
export interface KeyMaker {
  memberId: string | null;
  role: "owner" | "admin" | "developer" | "viewer" | null;
}

export interface KeyPage {
  limit: number;
  offset: number;
}

/** Options every key store takes. */
export interface KeyStoreOptions {
  welcomeCredits: number;
  /** the plans an account may be given (the built-in ones and the config file's); any without it */
  plans?: readonly string[];
  /** active keys an account of this plan may hold; unbounded without it */
  maxKeys?: (plan: string) => number;
  cacheTtlMs?: number;
}

export class KeyStoreError extends Error {}

/** An account already holds as many active keys as its plan allows. */
export class KeyLimitError extends KeyStoreError {
  constructor(readonly max: number) {
    super(`this account already has ${max} active keys, the most its plan allows; revoke one to make another`);
  }
}

/**
 * Refuses a plan the gateway does not know (400, param plan): `keys create --plan platnum` made an
 * account that got the free plan's rate limits and the larger knowledge quotas of "any other plan".
 */
export function checkPlan(plans: readonly string[] | undefined, plan: string | undefined): void {
  if (plan === undefined || !plans || plans.includes(plan)) return;
  throw new GatewayError(
    "invalid_request",
    `unknown plan "${plan}": the plans are ${plans.join(", ")} (a plan is added as [plans.NAME] in the config file)`,
    { param: "plan" },
  );
}
