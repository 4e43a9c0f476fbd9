/**
 * What the audit trail records of keys and accounts (docs/audit.md#what-is-recorded): never a
 * key or its hash, only its id and prefix; the key stores build their entries from these.
 */
import { policyFromColumn, policyView, tagsFromColumn } from "./policy";

/** A new key's fields as an entry shows them (its policy's set fields, null: none): no secret, the plaintext and its hash are never read here. */
export const keyFields = (k: { label: string; plan: string; status: string; prefix: string; policy: string | null }) => ({
  label: k.label,
  plan: k.plan,
  status: k.status,
  prefix: k.prefix,
  policy: policyFromColumn(k.policy) ?? null,
});

/** A key's policy as an entry shows it: every field, unset ones null. */
export const policyFields = (policy: string | null): Record<string, unknown> => ({ ...policyView(policyFromColumn(policy)) });

/** An account's fields as an entry shows them. */
export const accountFields = (a: {
  name: string | null;
  plan: string;
  balance: number;
  tags: string | null;
  email?: string | null;
}): Record<string, unknown> => ({
  name: a.name,
  plan: a.plan,
  balance: Number(a.balance),
  tags: tagsFromColumn(a.tags) ?? null,
  ...(a.email !== undefined ? { email: a.email } : {}),
});
