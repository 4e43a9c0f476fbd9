import type { Database } from "bun:sqlite";
import type { AuditBy } from "../audit/interface";
import { appendAudit } from "../audit/sqlite";
import { NO_PASSWORD } from "../auth/passwords";
import { newId } from "../ids";
import {
  type AcceptResult,
  actingMember,
  type BoundMember,
  type InviteResult,
  inviteEntry,
  joinEntry,
  type Member,
  type MemberChange,
  type MemberStore,
  type Role,
  removeEntry,
  roleEntry,
  type SsoLogin,
  type SsoMemberResult,
  ssoBindEntry,
  ssoEmailEntry,
  ssoJoinEntry,
  ssoPlan,
} from "./members";

export const MEMBER_COLUMNS = "id, account_id AS accountId, email, name, role, created_at AS createdAt";
const BOUND_COLUMNS = `${MEMBER_COLUMNS}, sso_issuer AS ssoIssuer, sso_subject AS ssoSubject`;
type InvitationRow = { id: string; accountId: string; email: string; role: Role; expiresAt: number; usedAt: number | null };

/** Members and invitations on the embedded SQLite file (migration 0020_members). */
export class SqliteMemberStore implements MemberStore {
  constructor(protected sqlite: Database) {}

  listMembers(accountId: string): Member[] {
    return this.sqlite
      .query<Member, [string]>(`SELECT ${MEMBER_COLUMNS} FROM members WHERE account_id = ? ORDER BY created_at, id`)
      .all(accountId);
  }

  memberById(id: string): Member | null {
    return this.sqlite.query<Member, [string]>(`SELECT ${MEMBER_COLUMNS} FROM members WHERE id = ?`).get(id);
  }

  invite(accountId: string, email: string, role: Role, tokenHash: string, expiresAt: number, audit: AuditBy): InviteResult {
    const e = email.toLowerCase();
    return this.sqlite
      .transaction((): InviteResult => {
        if (!this.sqlite.query("SELECT 1 FROM accounts WHERE id = ?").get(accountId))
          return { ok: false, reason: "unknown_account" };
        if (!this.ownsNow(accountId, audit)) return { ok: false, reason: "forbidden" };
        if (this.sqlite.query("SELECT 1 FROM members WHERE email = ?").get(e)) return { ok: false, reason: "taken" };
        const id = newId("inv");
        this.sqlite
          .query(
            "INSERT INTO invitations (id, account_id, email, role, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
          )
          .run(id, accountId, e, role, tokenHash, Date.now(), expiresAt);
        appendAudit(this.sqlite, inviteEntry(audit, accountId, id, e, role, expiresAt));
        return { ok: true, id, expiresAt };
      })
      .immediate();
  }

  invitationOf(tokenHash: string): InvitationRow | null {
    return this.sqlite
      .query<InvitationRow, [string]>(
        "SELECT id, account_id AS accountId, email, role, expires_at AS expiresAt, used_at AS usedAt FROM invitations WHERE token_hash = ?",
      )
      .get(tokenHash);
  }

  acceptInvitation(
    accountId: string,
    tokenHash: string,
    passwordHash: string,
    name: string | null,
    now: number,
    client: string | null,
  ): AcceptResult {
    return this.sqlite
      .transaction((): AcceptResult => {
        const inv = this.invitationOf(tokenHash);
        if (!inv) return { ok: false, reason: "unknown" };
        if (inv.accountId !== accountId) return { ok: false, reason: "wrong_account" };
        if (inv.usedAt !== null) return { ok: false, reason: "used" };
        if (inv.expiresAt <= now) return { ok: false, reason: "expired" };
        if (this.sqlite.query("SELECT 1 FROM members WHERE email = ?").get(inv.email)) return { ok: false, reason: "taken" };
        const member: Member = { id: newId("mem"), accountId, email: inv.email, name, role: inv.role, createdAt: now };
        this.sqlite.query("UPDATE invitations SET used_at = ? WHERE id = ?").run(now, inv.id);
        this.sqlite
          .query(
            "INSERT INTO members (id, account_id, email, name, role, password_hash, created_at, password_changed_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)",
          )
          .run(member.id, accountId, member.email, name, member.role, passwordHash, now);
        appendAudit(this.sqlite, joinEntry(member, client));
        return { ok: true, member };
      })
      .immediate();
  }

  ssoMember(accountId: string, given: SsoLogin, role: Role, now: number, client: string | null): SsoMemberResult {
    const login = { ...given, email: given.email.toLowerCase() };
    return this.sqlite
      .transaction((): SsoMemberResult => {
        const bound = (where: string, ...args: string[]) =>
          this.sqlite.query<BoundMember, string[]>(`SELECT ${BOUND_COLUMNS} FROM members WHERE ${where}`).get(...args);
        const plan = ssoPlan(
          accountId,
          login,
          bound("sso_issuer = ? AND sso_subject = ?", login.issuer, login.subject),
          bound("email = ?", login.email),
        );
        if (plan.kind === "refuse") return { ok: false, reason: plan.reason };
        if (plan.kind === "signin") {
          if (!plan.newEmail) return { ok: true, member: plan.member, created: false, emailKept: plan.emailKept };
          const member = { ...plan.member, email: plan.newEmail };
          this.sqlite.query("UPDATE members SET email = ? WHERE id = ?").run(member.email, member.id);
          appendAudit(this.sqlite, ssoEmailEntry(member, plan.member.email, client));
          return { ok: true, member, created: false };
        }
        if (plan.kind === "bind") {
          this.sqlite
            .query("UPDATE members SET sso_issuer = ?, sso_subject = ? WHERE id = ?")
            .run(login.issuer, login.subject, plan.member.id);
          appendAudit(this.sqlite, ssoBindEntry(plan.member, login, client));
          return { ok: true, member: plan.member, created: false };
        }
        if (!this.sqlite.query("SELECT 1 FROM accounts WHERE id = ?").get(accountId))
          return { ok: false, reason: "unknown_account" };
        const member: Member = { id: newId("mem"), accountId, email: login.email, name: login.name, role, createdAt: now };
        this.sqlite
          .query(
            "INSERT INTO members (id, account_id, email, name, role, password_hash, created_at, password_changed_at, sso_issuer, sso_subject) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?8, ?9)",
          )
          .run(member.id, accountId, member.email, member.name, role, NO_PASSWORD, now, login.issuer, login.subject);
        appendAudit(this.sqlite, ssoJoinEntry(member, login, client));
        return { ok: true, member, created: true };
      })
      .immediate();
  }

  /** Whether the member making a change (if one is) is an owner of the account now, in the change's transaction. */
  private ownsNow(accountId: string, by: AuditBy): boolean {
    const actor = actingMember(by);
    if (!actor) return true;
    return !!this.sqlite.query("SELECT 1 FROM members WHERE id = ? AND account_id = ? AND role = 'owner'").get(actor, accountId);
  }

  /** The member of the account, and whether it is its only owner. */
  private inAccount(accountId: string, memberId: string): { member: Member; lastOwner: boolean } | null {
    const member = this.memberById(memberId);
    if (!member || member.accountId !== accountId) return null;
    const owners =
      this.sqlite
        .query<{ n: number }, [string]>("SELECT count(*) AS n FROM members WHERE account_id = ? AND role = 'owner'")
        .get(accountId)?.n ?? 0;
    return { member, lastOwner: member.role === "owner" && owners <= 1 };
  }

  setRole(accountId: string, memberId: string, role: Role, audit: AuditBy): MemberChange {
    return this.sqlite
      .transaction((): MemberChange => {
        const found = this.inAccount(accountId, memberId);
        if (!found) return { ok: false, reason: "not_found" };
        if (!this.ownsNow(accountId, audit)) return { ok: false, reason: "forbidden" };
        if (found.lastOwner && role !== "owner") return { ok: false, reason: "last_owner" };
        const before = found.member.role;
        const member = { ...found.member, role };
        if (before === role) return { ok: true, member };
        this.sqlite.query("UPDATE members SET role = ? WHERE id = ?").run(role, memberId);
        appendAudit(this.sqlite, roleEntry(audit, member, before));
        return { ok: true, member };
      })
      .immediate();
  }

  removeMember(accountId: string, memberId: string, audit: AuditBy): MemberChange {
    return this.sqlite
      .transaction((): MemberChange => {
        const found = this.inAccount(accountId, memberId);
        if (!found) return { ok: false, reason: "not_found" };
        if (!this.ownsNow(accountId, audit)) return { ok: false, reason: "forbidden" };
        if (found.lastOwner) return { ok: false, reason: "last_owner" };
        this.sqlite.query("DELETE FROM dashboard_sessions WHERE member_id = ?").run(memberId);
        this.sqlite.query("DELETE FROM members WHERE id = ?").run(memberId);
        appendAudit(this.sqlite, removeEntry(audit, found.member));
        return { ok: true, member: found.member };
      })
      .immediate();
  }

  setKeyOwner(keyId: string, memberId: string): void {
    this.sqlite.query("UPDATE api_keys SET owner_member_id = ? WHERE id = ?").run(memberId, keyId);
  }

  keysOwnedBy(memberId: string): string[] {
    return this.sqlite
      .query<{ id: string }, [string]>("SELECT id FROM api_keys WHERE owner_member_id = ?")
      .all(memberId)
      .map((r) => r.id);
  }
}
