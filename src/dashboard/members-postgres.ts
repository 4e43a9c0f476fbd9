import type { SQL } from "bun";
import type { AuditBy } from "../audit/interface";
import { appendAuditIn } from "../audit/postgres";
import { NO_PASSWORD } from "../auth/passwords";
import { newId } from "../ids";
import { type PgStorage, pgCall } from "../storage/postgres";
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

type Row = Record<string, unknown>;
export const memberOfRow = (r: Row | undefined): Member | null =>
  r
    ? {
        id: r.id as string,
        accountId: r.account_id as string,
        email: r.email as string,
        name: (r.name as string | null) ?? null,
        role: r.role as Role,
        createdAt: Number(r.created_at),
      }
    : null;
const invitationOfRow = (r: Row | undefined) =>
  r
    ? {
        id: r.id as string,
        accountId: r.account_id as string,
        email: r.email as string,
        role: r.role as Role,
        expiresAt: Number(r.expires_at),
        usedAt: r.used_at === null || r.used_at === undefined ? null : Number(r.used_at),
      }
    : null;

/** The member of the account (its row locked), and whether it is its only owner (the owners locked too, so two demotions cannot both pass). */
async function inAccount(tx: SQL, accountId: string, memberId: string, by: AuditBy) {
  // the owners locked (two changes of one account's owners wait for each other), read after the lock
  const owners = await tx`SELECT id FROM members WHERE account_id = ${accountId} AND role = 'owner' ORDER BY id FOR UPDATE`;
  const [r] = await tx`SELECT * FROM members WHERE id = ${memberId} AND account_id = ${accountId} FOR UPDATE`;
  const member = memberOfRow(r);
  const actor = actingMember(by);
  const ownsNow = actor === null || owners.some((o: Row) => o.id === actor);
  return member ? { member, lastOwner: member.role === "owner" && owners.length <= 1, ownsNow } : null;
}

const boundOfRow = (r: Row | undefined): BoundMember | null => {
  const m = memberOfRow(r);
  return m && r
    ? { ...m, ssoIssuer: (r.sso_issuer as string | null) ?? null, ssoSubject: (r.sso_subject as string | null) ?? null }
    : null;
};

/** One try of `ssoMember` (docs/sso.md#matching): its answer, or null when a concurrent sign-in's commit beat its write. */
async function ssoAttempt(
  tx: SQL,
  accountId: string,
  login: SsoLogin,
  role: Role,
  now: number,
  client: string | null,
): Promise<SsoMemberResult | null> {
  const [bySubject] = await tx`SELECT * FROM members WHERE sso_issuer = ${login.issuer} AND sso_subject = ${login.subject}`;
  const [byEmail] = await tx`SELECT * FROM members WHERE email = ${login.email}`;
  const plan = ssoPlan(accountId, login, boundOfRow(bySubject), boundOfRow(byEmail));
  if (plan.kind === "refuse") return { ok: false, reason: plan.reason };
  if (plan.kind === "signin") {
    if (!plan.newEmail) return { ok: true, member: plan.member, created: false, emailKept: plan.emailKept };
    const member = { ...plan.member, email: plan.newEmail };
    const moved = await tx`UPDATE members SET email = ${member.email} WHERE id = ${member.id} AND email = ${plan.member.email}
      AND NOT EXISTS (SELECT 1 FROM members WHERE email = ${member.email}) RETURNING id`;
    if (moved.length === 0) return null;
    await appendAuditIn(tx, ssoEmailEntry(member, plan.member.email, client));
    return { ok: true, member, created: false };
  }
  if (plan.kind === "bind") {
    const bound = await tx`UPDATE members SET sso_issuer = ${login.issuer}, sso_subject = ${login.subject}
      WHERE id = ${plan.member.id} AND sso_subject IS NULL RETURNING id`;
    if (bound.length === 0) return null;
    await appendAuditIn(tx, ssoBindEntry(plan.member, login, client));
    return { ok: true, member: plan.member, created: false };
  }
  if ((await tx`SELECT 1 FROM accounts WHERE id = ${accountId}`).length === 0) return { ok: false, reason: "unknown_account" };
  const member: Member = { id: newId("mem"), accountId, email: login.email, name: login.name, role, createdAt: now };
  // two first sign-ins of one identity (or one email) at once: one inserts, the other plans again from its row
  const made =
    await tx`INSERT INTO members (id, account_id, email, name, role, password_hash, created_at, password_changed_at, sso_issuer, sso_subject)
    VALUES (${member.id}, ${accountId}, ${member.email}, ${member.name}, ${role}, ${NO_PASSWORD}, ${now}, ${now}, ${login.issuer}, ${login.subject})
    ON CONFLICT DO NOTHING RETURNING id`;
  if (made.length === 0) return null;
  await appendAuditIn(tx, ssoJoinEntry(member, login, client));
  return { ok: true, member, created: true };
}

/** Members and invitations in PostgreSQL (drizzle/pg 0018_members), shared by every node. */
export class PostgresMemberStore implements MemberStore {
  constructor(protected pg: PgStorage) {}

  listMembers(accountId: string): Promise<Member[]> {
    return pgCall(this.pg, async () => {
      const rows = await this.pg.sql`SELECT * FROM members WHERE account_id = ${accountId} ORDER BY created_at, id`;
      return rows.map((r: Row) => memberOfRow(r) as Member);
    });
  }

  memberById(id: string): Promise<Member | null> {
    return pgCall(this.pg, async () => memberOfRow((await this.pg.sql`SELECT * FROM members WHERE id = ${id}`)[0]));
  }

  invite(
    accountId: string,
    email: string,
    role: Role,
    tokenHash: string,
    expiresAt: number,
    audit: AuditBy,
  ): Promise<InviteResult> {
    const e = email.toLowerCase();
    return pgCall(this.pg, () =>
      this.pg.sql.begin(async (tx): Promise<InviteResult> => {
        if ((await tx`SELECT 1 FROM accounts WHERE id = ${accountId}`).length === 0)
          return { ok: false, reason: "unknown_account" };
        const actor = actingMember(audit);
        // the acting owner's row held (FOR SHARE) until the invitation commits: a demotion waits for it
        if (
          actor &&
          (await tx`SELECT 1 FROM members WHERE id = ${actor} AND account_id = ${accountId} AND role = 'owner' FOR SHARE`)
            .length === 0
        )
          return { ok: false, reason: "forbidden" };
        if ((await tx`SELECT 1 FROM members WHERE email = ${e}`).length > 0) return { ok: false, reason: "taken" };
        const id = newId("inv");
        await tx`INSERT INTO invitations (id, account_id, email, role, token_hash, created_at, expires_at)
          VALUES (${id}, ${accountId}, ${e}, ${role}, ${tokenHash}, ${Date.now()}, ${expiresAt})`;
        await appendAuditIn(tx, inviteEntry(audit, accountId, id, e, role, expiresAt));
        return { ok: true, id, expiresAt };
      }),
    );
  }

  invitationOf(tokenHash: string) {
    return pgCall(this.pg, async () =>
      invitationOfRow((await this.pg.sql`SELECT * FROM invitations WHERE token_hash = ${tokenHash}`)[0]),
    );
  }

  acceptInvitation(
    accountId: string,
    tokenHash: string,
    passwordHash: string,
    name: string | null,
    now: number,
    client: string | null,
  ): Promise<AcceptResult> {
    return pgCall(this.pg, () =>
      this.pg.sql.begin(async (tx): Promise<AcceptResult> => {
        // locked: two uses of one link at once, the second waits and finds it used
        const inv = invitationOfRow((await tx`SELECT * FROM invitations WHERE token_hash = ${tokenHash} FOR UPDATE`)[0]);
        if (!inv) return { ok: false, reason: "unknown" };
        if (inv.accountId !== accountId) return { ok: false, reason: "wrong_account" };
        if (inv.usedAt !== null) return { ok: false, reason: "used" };
        if (inv.expiresAt <= now) return { ok: false, reason: "expired" };
        if ((await tx`SELECT 1 FROM members WHERE email = ${inv.email}`).length > 0) return { ok: false, reason: "taken" };
        const member: Member = { id: newId("mem"), accountId, email: inv.email, name, role: inv.role, createdAt: now };
        await tx`UPDATE invitations SET used_at = ${now} WHERE id = ${inv.id}`;
        await tx`INSERT INTO members (id, account_id, email, name, role, password_hash, created_at, password_changed_at)
          VALUES (${member.id}, ${accountId}, ${member.email}, ${name}, ${member.role}, ${passwordHash}, ${now}, ${now})`;
        await appendAuditIn(tx, joinEntry(member, client));
        return { ok: true, member };
      }),
    );
  }

  ssoMember(accountId: string, given: SsoLogin, role: Role, now: number, client: string | null): Promise<SsoMemberResult> {
    const login = { ...given, email: given.email.toLowerCase() };
    return pgCall(this.pg, () =>
      this.pg.sql.begin(async (tx): Promise<SsoMemberResult> => {
        // each write is conditional: one that a sign-in of the same identity on another node beat
        // changes nothing, and the plan is made again from what that one committed
        for (let attempt = 0; attempt < 3; attempt++) {
          const done = await ssoAttempt(tx, accountId, login, role, now, client);
          if (done) return done;
        }
        throw new Error("single sign-on: the member kept changing under three attempts");
      }),
    );
  }

  setRole(accountId: string, memberId: string, role: Role, audit: AuditBy): Promise<MemberChange> {
    return pgCall(this.pg, () =>
      this.pg.sql.begin(async (tx): Promise<MemberChange> => {
        const found = await inAccount(tx, accountId, memberId, audit);
        if (!found) return { ok: false, reason: "not_found" };
        if (!found.ownsNow) return { ok: false, reason: "forbidden" };
        if (found.lastOwner && role !== "owner") return { ok: false, reason: "last_owner" };
        const before = found.member.role;
        const member = { ...found.member, role };
        if (before === role) return { ok: true, member };
        await tx`UPDATE members SET role = ${role} WHERE id = ${memberId}`;
        await appendAuditIn(tx, roleEntry(audit, member, before));
        return { ok: true, member };
      }),
    );
  }

  removeMember(accountId: string, memberId: string, audit: AuditBy): Promise<MemberChange> {
    return pgCall(this.pg, () =>
      this.pg.sql.begin(async (tx): Promise<MemberChange> => {
        const found = await inAccount(tx, accountId, memberId, audit);
        if (!found) return { ok: false, reason: "not_found" };
        if (!found.ownsNow) return { ok: false, reason: "forbidden" };
        if (found.lastOwner) return { ok: false, reason: "last_owner" };
        await tx`DELETE FROM dashboard_sessions WHERE member_id = ${memberId}`;
        await tx`DELETE FROM members WHERE id = ${memberId}`;
        await appendAuditIn(tx, removeEntry(audit, found.member));
        return { ok: true, member: found.member };
      }),
    );
  }

  setKeyOwner(keyId: string, memberId: string): Promise<void> {
    return pgCall(this.pg, async () => {
      await this.pg.sql`UPDATE api_keys SET owner_member_id = ${memberId} WHERE id = ${keyId}`;
    });
  }

  keysOwnedBy(memberId: string): Promise<string[]> {
    return pgCall(this.pg, async () =>
      (await this.pg.sql`SELECT id FROM api_keys WHERE owner_member_id = ${memberId}`).map((r: Row) => r.id as string),
    );
  }
}
