/**
 * What the audit trail records of logins, plans and single sign-ons (docs/audit.md#what-is-recorded):
 * a login's email and when its password changed, never the password or its hash; who a single
 * sign-on was (email, issuer and subject), never a token.
 */
import { auditDraft, changedFields } from "../audit/chain";
import type { AuditBy, AuditDraft } from "../audit/interface";

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** `login.set`: the login's email and password change time, before (null fields: no login) and after. */
export function loginEntry(
  by: AuditBy,
  accountId: string,
  before: { email: string; changedAt: number } | null,
  after: { email: string; changedAt: number },
): AuditDraft {
  const change = changedFields(
    { email: before?.email ?? null, password_changed_at: iso(before?.changedAt ?? null) },
    { email: after.email, password_changed_at: iso(after.changedAt) },
  );
  return auditDraft(by, "login.set", accountId, accountId, change.before, change.after);
}

/** `password.change`: when the password changed, before and after. */
export const passwordEntry = (by: AuditBy, accountId: string, before: number | null, at: number): AuditDraft =>
  auditDraft(by, "password.change", accountId, accountId, { password_changed_at: iso(before) }, { password_changed_at: iso(at) });

/** `plan.change`: the account's plan (its keys' plans follow it). */
export const planEntry = (by: AuditBy, accountId: string, before: string, after: string): AuditDraft =>
  auditDraft(by, "plan.change", accountId, accountId, { plan: before }, { plan: after });

/** Who single sign-on said signed in, as a sign-in's entry records it. */
export interface SsoSignedIn {
  issuer: string;
  subject: string;
  /** the verified email (null: none, or not verified) */
  email: string | null;
}

/**
 * The audit actor of an operator signed in by single sign-on: `operator:EMAIL` (a verified email),
 * else `operator:sub:SUBJECT`. The changes its session makes carry it instead of `operator`.
 */
export const ssoOperatorActor = (who: SsoSignedIn): string =>
  who.email ? `operator:${who.email}` : `operator:sub:${who.subject}`;

/** `operator.sso.signin`: an operator console session opened by single sign-on; the actor is who. */
export const operatorSignInEntry = (who: SsoSignedIn, client: string | null): AuditDraft =>
  auditDraft({ actor: ssoOperatorActor(who), client }, "operator.sso.signin", null, null, null, {
    email: who.email,
    sso_issuer: who.issuer,
    sso_subject: who.subject,
  });

/** `member.sso.signin`: a member's session opened by single sign-on; the actor is the member. */
export const memberSignInEntry = (
  who: SsoSignedIn,
  m: { id: string; accountId: string; role: string },
  client: string | null,
): AuditDraft =>
  auditDraft({ actor: m.id, client }, "member.sso.signin", m.accountId, m.id, null, {
    email: who.email,
    role: m.role,
    sso_issuer: who.issuer,
    sso_subject: who.subject,
  });
