/**
 * Who an identity from single sign-on becomes (docs/sso.md): the operator (a member of one of
 * `operator_groups`, for the console), or a member of an account with a role, by the first entry of
 * `[[sso.map]]` its groups or its email's domain match. Anything else is refused, saying why.
 */
import type { AccountRow, KeyStore } from "../auth/interface";
import type { SsoConfig } from "../config";
import type { MaybePromise } from "../maybe";
import { closest } from "../words";
import type { Role } from "./members";
import { type SsoIdentity, SsoRefusal } from "./sso";

export type SsoTarget = { kind: "operator" } | { kind: "account"; accountId: string; role: Role };

export function ssoTarget(
  config: Pick<SsoConfig, "operatorGroups" | "map" | "trustMissingEmailVerified">,
  id: SsoIdentity,
  operator: boolean,
): SsoTarget {
  if (operator) {
    if (!id.groups.some((g) => config.operatorGroups.includes(g)))
      throw new SsoRefusal(
        "Your identity is not in any of the groups allowed to use the operator console (sso.operator_groups).",
      );
    return { kind: "operator" };
  }
  if (!id.email)
    throw new SsoRefusal(
      "The identity provider gave no email address for you (the gateway asks for the email scope); it is needed to sign you in.",
    );
  if (id.emailVerified === false) throw new SsoRefusal("The identity provider says your email address is not verified.");
  // absent is not verified: a member may be found, and an account mapped, by the email (docs/sso.md#matching)
  if (id.emailVerified === null && !config.trustMissingEmailVerified)
    throw new SsoRefusal(
      "The identity provider did not say your email address is verified (no email_verified claim); the gateway's operator can trust such providers with sso.trust_missing_email_verified.",
    );
  const domain = id.email.slice(id.email.lastIndexOf("@") + 1);
  for (const m of config.map) {
    if ((m.group !== undefined && id.groups.includes(m.group)) || (m.emailDomain !== undefined && m.emailDomain === domain))
      return { kind: "account", accountId: m.account, role: m.role };
  }
  throw new SsoRefusal(
    `No account of this gateway is mapped to ${id.email} or to your groups: ask the gateway's operator (sso.map).`,
  );
}

/** the most accounts read to find the id an unknown one was meant to be (the newest first) */
const NEAR_SCAN = 100_000;

/**
 * The start's refusal of an `[sso]` that names an account that does not exist (docs/sso.md): a typo
 * in `sso_required` would leave the meant account's passwords working, one in `[[sso.map]]` would
 * refuse every sign-in it maps. Names the key, the unknown id and the existing id closest to it;
 * null when every account named exists. A value at once on SQLite, later on PostgreSQL.
 */
export function ssoAccountsRefusal(
  sso: Pick<SsoConfig, "ssoRequired" | "map"> | null,
  keys: Pick<KeyStore, "accountExists" | "listAccounts">,
): MaybePromise<string | null> {
  if (!sso) return null;
  const named = [
    ...[...sso.ssoRequired].map((id) => ({ key: "sso.sso_required", id })),
    ...sso.map.map((m, i) => ({ key: `sso.map[${i}].account`, id: m.account })),
  ];
  const found = named.map((n) => keys.accountExists(n.id));
  const decide = (exists: boolean[]): MaybePromise<string | null> => {
    const missing = named.find((_, i) => !exists[i]);
    if (!missing) return null;
    const say = (rows: AccountRow[]) => {
      const near = closest(
        missing.id,
        rows.map((r) => r.id),
      );
      return `${missing.key} names the account "${missing.id}", which does not exist: ${near ? `did you mean "${near}"?` : "no account has an id near it"} (the accounts' ids: the operator console, GET /admin/v1/accounts)`;
    };
    const rows = keys.listAccounts(NEAR_SCAN, 0);
    return rows instanceof Promise ? rows.then(say) : say(rows);
  };
  return found.some((f) => f instanceof Promise) ? Promise.all(found).then(decide) : decide(found as boolean[]);
}
