/**
 * What the audit trail records of logins and plans (docs/audit.md#what-is-recorded): a login's
 * email and when its password changed, never the password or its hash.
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
