import type { MaybePromise } from "../maybe";

/** Every action an entry may name (docs/audit.md#what-is-recorded): the filters and the dashboard's list offer these. */
export const AUDIT_ACTIONS = [
  "account.create",
  "account.signup",
  "account.tags.update",
  "credits.grant",
  "credits.journal.forfeit",
  "credits.reconcile",
  "key.create",
  "key.policy.update",
  "key.revoke",
  "login.set",
  "member.email.update",
  "member.invite",
  "member.join",
  "member.remove",
  "member.role.update",
  "member.sso.bind",
  "member.sso.signin",
  "operator.sso.signin",
  "password.change",
  "plan.change",
  "webhook.create",
  "webhook.remove",
  "webhook.resend",
  "webhook.rotate_secret",
] as const;
/** One of AUDIT_ACTIONS: what an entry is written with, so a new action is offered by the filters by construction. */
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/**
 * Who made a change and from where, as a route or CLI verb hands it to the store that makes it.
 * `actor`: `operator` (the console, signed in with the admin token), `operator:EMAIL` (the console,
 * signed in by single sign-on), `cli`, `admin-token` (the admin API), `sso`, or the id of the member
 * who made it in the dashboard (`mem_…`, docs/teams.md); null: the account the entry is about acted
 * itself (a sign-up, whose id the store draws).
 */
export interface AuditBy {
  actor: string | null;
  /** the client's address (null from the CLI) */
  client: string | null;
}

/** An entry as a store describes its change, before it is sealed into the chain. */
export interface AuditDraft {
  actor: string;
  client: string | null;
  /** a stable dotted name: `key.create`, `key.revoke`, `key.policy.update`, `credits.grant`, `plan.change`, … */
  action: string;
  accountId: string | null;
  targetId: string | null;
  /** the changed fields before and after (never a secret); null: none (a creation has no before) */
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

/** One entry of the trail, as the APIs answer it. */
export interface AuditEntry {
  seq: number;
  id: string;
  time: string;
  actor: string;
  account_id: string | null;
  action: string;
  target_id: string | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  client: string | null;
  prev_hash: string;
  hash: string;
}

/** An entry as stored: instants in ms, before and after as their canonical JSON text. */
export interface AuditRow {
  seq: number;
  id: string;
  at: number;
  actor: string;
  accountId: string | null;
  action: string;
  targetId: string | null;
  before: string | null;
  after: string | null;
  client: string | null;
  prevHash: string;
  hash: string;
}

export interface AuditQuery {
  /** 1 to 500 */
  limit: number;
  /** entries before this seq (the previous page's last) */
  beforeSeq?: number;
  accountId?: string;
  actor?: string;
  action?: string;
  /** ms since the epoch: entries at or after it */
  since?: number;
}

/** What `verify` found: the whole chain sound, or its first broken link. */
export type VerifyResult =
  | { ok: true; entries: number; head: { seq: number; hash: string } }
  | {
      ok: false;
      /** entries found sound before the break */
      entries: number;
      head: { seq: number; hash: string } | null;
      /** the seq where the chain breaks, the entry's id when there is one, and what is wrong */
      broken: { seq: number; id: string | null; problem: string };
    };

/**
 * The audit trail's reads (appends are made by the stores, in the transaction of each change:
 * audit/sqlite.ts `appendAudit`, audit/postgres.ts `appendAuditIn`).
 */
export interface AuditTrail {
  /** newest first */
  page(q: AuditQuery): MaybePromise<AuditRow[]>;
  /** walks the chain from its first entry to its head */
  verify(): MaybePromise<VerifyResult>;
}
