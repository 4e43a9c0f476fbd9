/**
 * An account's members and their roles (docs/teams.md, CONTRACT section 17): what a role may do,
 * the store's results, invitation tokens and what the audit trail records of a member's change
 * (its email and role, never a password or an invitation's token).
 */
import { createHash } from "node:crypto";
import { auditDraft } from "../audit/chain";
import type { AuditBy, AuditDraft } from "../audit/interface";
import { randomBase62 } from "../ids";
import type { MaybePromise } from "../maybe";

export const ROLES = ["owner", "admin", "developer", "viewer"] as const;
export type Role = (typeof ROLES)[number];
export const isRole = (v: unknown): v is Role => typeof v === "string" && (ROLES as readonly string[]).includes(v);

/** Each role does what the ones below it do: viewer (reads), developer (its own keys, the playground), admin (keys, policies), owner (members). */
const RANK: Record<Role, number> = { viewer: 0, developer: 1, admin: 2, owner: 3 };
export const roleAtLeast = (role: Role, needed: Role): boolean => RANK[role] >= RANK[needed];

export interface Member {
  id: string;
  accountId: string;
  email: string;
  name: string | null;
  role: Role;
  createdAt: number;
}

/** A member as the APIs answer it. */
export const memberView = (m: Member) => ({
  id: m.id,
  account_id: m.accountId,
  email: m.email,
  name: m.name,
  role: m.role,
  created_at: new Date(m.createdAt).toISOString(),
});

export type InviteResult =
  | { ok: true; id: string; expiresAt: number }
  | { ok: false; reason: "unknown_account" | "taken" | "forbidden" };
export type AcceptResult =
  | { ok: true; member: Member }
  | { ok: false; reason: "unknown" | "expired" | "used" | "wrong_account" | "taken" };
/**
 * Who a single sign-on is, as the store matches it (docs/sso.md): the identity provider's issuer
 * (the ID token's `iss`) and subject (`sub`), which a member is bound to at its first sign-in, and
 * the verified email (lower-cased) and name it gave.
 */
export interface SsoLogin {
  issuer: string;
  subject: string;
  email: string;
  name: string | null;
}

/** A member with the (issuer, subject) it is bound to (both null: never signed in by single sign-on since binding began). */
export type BoundMember = Member & { ssoIssuer: string | null; ssoSubject: string | null };

/**
 * A single sign-on's member: found (by its subject, or by its email and then bound), or made on its
 * first sign-in (`created`). `emailKept`: the provider gave the member a new email that another
 * member has, so the member kept its own. Refused: the account does not exist, the member is
 * another account's, or the email is a member's bound to another subject (`bound_elsewhere`).
 */
export type SsoMemberResult =
  | { ok: true; member: Member; created: boolean; emailKept?: string }
  | { ok: false; reason: "unknown_account" | "other_account" | "bound_elsewhere" };

/** What a single sign-on does, decided from the member bound to its subject and the member that has its email. */
export type SsoPlan =
  | { kind: "refuse"; reason: "other_account" | "bound_elsewhere" }
  /** the member bound to the subject; `newEmail`: the provider's new email to store (no other member has it) */
  | { kind: "signin"; member: Member; newEmail: string | null; emailKept?: string }
  /** a member never bound, with the login's email: bind it to the subject now (once) */
  | { kind: "bind"; member: Member }
  | { kind: "create" };

const plain = ({ ssoIssuer: _i, ssoSubject: _s, ...m }: BoundMember): Member => m;

/**
 * The rule of docs/sso.md#matching: the subject first (its member keeps its id whatever its email
 * becomes); else the email, only of a member never bound (bound once, then matched by subject); an
 * email of a member bound to another subject is never signed in as that member.
 */
export function ssoPlan(accountId: string, login: SsoLogin, bySubject: BoundMember | null, byEmail: BoundMember | null): SsoPlan {
  if (bySubject) {
    if (bySubject.accountId !== accountId) return { kind: "refuse", reason: "other_account" };
    if (bySubject.email === login.email) return { kind: "signin", member: plain(bySubject), newEmail: null };
    if (byEmail && byEmail.id !== bySubject.id)
      return { kind: "signin", member: plain(bySubject), newEmail: null, emailKept: login.email };
    return { kind: "signin", member: plain(bySubject), newEmail: login.email };
  }
  if (!byEmail) return { kind: "create" };
  if (byEmail.ssoSubject !== null) return { kind: "refuse", reason: "bound_elsewhere" };
  if (byEmail.accountId !== accountId) return { kind: "refuse", reason: "other_account" };
  return { kind: "bind", member: plain(byEmail) };
}

export type MemberChange = { ok: true; member: Member } | { ok: false; reason: "not_found" | "last_owner" | "forbidden" };

/** What each refusal of an invitation link says (the join page and the envelope). */
export const ACCEPT_REFUSALS: Record<Exclude<AcceptResult, { ok: true }>["reason"], string> = {
  unknown: "This invitation link is not valid.",
  expired: "This invitation has expired: ask an owner of the account for a new one.",
  used: "This invitation has already been used: sign in instead.",
  wrong_account: "This invitation is for another account.",
  taken: "This email already belongs to a member: sign in instead.",
};

/**
 * A member who manages members (the dashboard's Members page) must still be an owner when its
 * change commits: the page checks the role first, and the store again in the change's transaction,
 * so an owner demoted a moment before cannot finish one more change (with three owners, demote a
 * third). Changes by the admin token, the CLI or single sign-on have no member behind them.
 */
export const actingMember = (by: AuditBy): string | null => (by.actor?.startsWith("mem_") ? by.actor : null);
export const NOT_AN_OWNER = "only an owner of the account manages its members, and you are no longer one";

export const LAST_OWNER = "the account's last owner cannot leave, be removed or be demoted: make another member owner first";

/** Members, invitations and the keys members made: kept beside the logins' sessions (the DashboardStore extends it). */
export interface MemberStore {
  /** The account's members, oldest first. */
  listMembers(accountId: string): MaybePromise<Member[]>;
  memberById(id: string): MaybePromise<Member | null>;
  /**
   * An invitation of `email` with `role` to the account, stored by its token's hash (`member.invite`);
   * refused when the account is unknown or the email is already a member's (of any account).
   */
  invite(
    accountId: string,
    email: string,
    role: Role,
    tokenHash: string,
    expiresAt: number,
    audit: AuditBy,
  ): MaybePromise<InviteResult>;
  /** Uses an invitation: the invitee becomes a member with the invited role (`member.join`, its actor the new member). */
  acceptInvitation(
    accountId: string,
    tokenHash: string,
    passwordHash: string,
    name: string | null,
    now: number,
    client: string | null,
  ): MaybePromise<AcceptResult>;
  /** The invitation a token is for, unused or not (null: none), so the join page can say what it is. */
  invitationOf(
    tokenHash: string,
  ): MaybePromise<{ accountId: string; email: string; role: Role; expiresAt: number; usedAt: number | null } | null>;
  /**
   * The member a single sign-on is (docs/sso.md#matching, `ssoPlan`): the member bound to the
   * login's (issuer, subject), its email updated when the provider's changed (`member.email.update`);
   * else the account's member with this email that was never bound, bound now (`member.sso.bind`);
   * else a new one with `role`, no password and the subject bound (`member.join`, `via: "sso"`, its
   * actor the new member). Refused when the account does not exist, the member is another
   * account's, or the email is a member's bound to another subject.
   */
  ssoMember(accountId: string, login: SsoLogin, role: Role, now: number, client: string | null): MaybePromise<SsoMemberResult>;
  /** A member's new role (`member.role.update`); the last owner is never demoted. */
  setRole(accountId: string, memberId: string, role: Role, audit: AuditBy): MaybePromise<MemberChange>;
  /** Removes a member and ends its sessions (`member.remove`); the last owner is never removed. */
  removeMember(accountId: string, memberId: string, audit: AuditBy): MaybePromise<MemberChange>;
  /** The member who made a key in the dashboard. */
  setKeyOwner(keyId: string, memberId: string): MaybePromise<void>;
  /** The ids of the keys a member made. */
  keysOwnedBy(memberId: string): MaybePromise<string[]>;
}

/** The SHA-256 an invitation's token is stored and found under (as a session's, security.ts `hashToken`). */
export const invitationHash = (token: string): string => createHash("sha256").update(token).digest("hex");

/** A new invitation token (`inv_…`, shown once in its URL) and the hash it is stored under. */
export function newInvitationToken(): { token: string; hash: string } {
  const token = `inv_${randomBase62(40)}`;
  return { token, hash: invitationHash(token) };
}

const fields = (m: Pick<Member, "email" | "role">) => ({ email: m.email, role: m.role });

export const inviteEntry = (
  by: AuditBy,
  accountId: string,
  id: string,
  email: string,
  role: Role,
  expiresAt: number,
): AuditDraft =>
  auditDraft(by, "member.invite", accountId, id, null, { email, role, expires_at: new Date(expiresAt).toISOString() });
export const joinEntry = (m: Member, client: string | null): AuditDraft =>
  auditDraft({ actor: m.id, client }, "member.join", m.accountId, m.id, null, fields(m));
export const ssoJoinEntry = (m: Member, login: SsoLogin, client: string | null): AuditDraft =>
  auditDraft({ actor: m.id, client }, "member.join", m.accountId, m.id, null, {
    ...fields(m),
    via: "sso",
    sso_issuer: login.issuer,
    sso_subject: login.subject,
  });
/** A member found by its email at its first single sign-on since binding began, bound to the login's subject. */
export const ssoBindEntry = (m: Member, login: SsoLogin, client: string | null): AuditDraft =>
  auditDraft(
    { actor: "sso", client },
    "member.sso.bind",
    m.accountId,
    m.id,
    { sso_subject: null },
    { sso_issuer: login.issuer, sso_subject: login.subject },
  );
/** A member bound by subject whose email the identity provider changed. */
export const ssoEmailEntry = (m: Member, before: string, client: string | null): AuditDraft =>
  auditDraft({ actor: "sso", client }, "member.email.update", m.accountId, m.id, { email: before }, { email: m.email });
export const roleEntry = (by: AuditBy, m: Member, before: Role): AuditDraft =>
  auditDraft(by, "member.role.update", m.accountId, m.id, { role: before }, { role: m.role });
export const removeEntry = (by: AuditBy, m: Member): AuditDraft =>
  auditDraft(by, "member.remove", m.accountId, m.id, fields(m), { removed: true });
