import { auditDraft } from "../audit/chain";
import type { AuditBy, AuditDraft } from "../audit/interface";

/** The `credits.grant` entry of a grant (a negative amount takes credits back): the balance before and after. */
export const grantEntry = (by: AuditBy, accountId: string, amount: number, reason: string | null, balance: number): AuditDraft =>
  auditDraft(by, "credits.grant", accountId, accountId, { balance: balance - amount }, { balance, amount, reason });
