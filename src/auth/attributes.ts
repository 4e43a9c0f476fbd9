/**
 * The attributes of keys and accounts as they come in, one check each, for every way in: the CLI,
 * the admin API, the dashboard and the operator console. The key stores run `checkNewKey` and
 * `checkNewAccount` before they write anything, so no way in can skip them; a form calls the same
 * check earlier when it must refuse before it spends something (the dashboard's key-creation
 * limit). A refusal is 400 invalid_request naming the field (`param`); the CLI says it of the flag
 * and exits 2. The rules are in docs/cli.md and docs/api.md; the policy fields' are in policy.ts,
 * credits' in credits/amount.ts, a plan's in `checkPlan`.
 *
 * 2026-12-06, a newcomer walkthrough: `keys create --label ""` stored an empty label,
 * `--expires 2020-01-01` a key born expired, and `--account ""` (an empty shell variable) made a
 * new account instead of naming one.
 */
import { newCredits } from "../credits/amount";
import { invalidRequest } from "../errors";
import { checkPlan, type NewAccountOptions, type NewKeyOptions } from "./interface";
import { expired } from "./policy";

/** The most characters of a key's label once trimmed. */
export const MAX_LABEL = 200;
/** The most characters of an account's or a member's name once trimmed: an email address fits (it stands for a name not given). */
export const MAX_NAME = 254;

/** What is wrong with text that must have 1 to `max` characters once trimmed; null when nothing is. */
function textProblem(v: unknown, param: string, max: number): string | null {
  const t = typeof v === "string" ? v.trim() : "";
  if (t !== "" && t.length <= max) return null;
  const got = typeof v !== "string" ? "none" : t === "" ? "an empty one" : `${t.length} characters`;
  return `${param} must be a text of 1 to ${max} characters (spaces at either end do not count); got ${got}`;
}

/** Text of 1 to `max` characters once trimmed (the trimmed text), else 400 naming `param`. */
function trimmedText(v: unknown, param: string, max: number): string {
  const problem = textProblem(v, param, max);
  if (problem) throw invalidRequest(problem, param);
  return (v as string).trim();
}

/** A key's label: 1 to 200 characters once trimmed; the trimmed label. */
export const keyLabel = (v: unknown): string => trimmedText(v, "label", MAX_LABEL);

/** An account's or a member's name, when one is given: 1 to 254 characters once trimmed. */
export const displayName = (v: unknown, param = "name"): string => trimmedText(v, param, MAX_NAME);
/** displayName's rule as a form's message (a page, not an envelope); null when the name is good. */
export const displayNameProblem = (v: unknown, param = "name"): string | null => textProblem(v, param, MAX_NAME);

/** The account a new key goes to, when one is named: an id, never empty (no account named: a new one). */
export function accountRef(v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  const id = v.trim();
  if (id === "")
    throw invalidRequest("account_id is empty: name an account (acc_…), or leave it out to make a new one", "account_id");
  return id;
}

/**
 * A new key's attributes, checked and normalised (the label trimmed): the label, the account named,
 * the plan, the credits, and a policy that has not expired already (a key born expired could never
 * be used; a key that exists may be given a time past, which ends it at once: docs/key-policies.md).
 */
export function checkNewKey(opts: NewKeyOptions, plans: readonly string[] | undefined, now: number): NewKeyOptions {
  const label = keyLabel(opts.label);
  const accountId = accountRef(opts.accountId);
  checkPlan(plans, opts.plan);
  const credits = opts.credits === undefined ? undefined : newCredits(opts.credits);
  if (expired(opts.policy, now))
    throw invalidRequest(
      `policy.expires_at ${opts.policy?.expires_at} is not in the future: a key made with it could never be used`,
      "policy.expires_at",
    );
  return { ...opts, label, accountId, credits };
}

/** A new account's attributes, checked and normalised: its name when given, its plan, its credits. */
export function checkNewAccount(opts: NewAccountOptions, plans: readonly string[] | undefined): NewAccountOptions {
  checkPlan(plans, opts.plan);
  const name = opts.name === undefined ? undefined : displayName(opts.name);
  const credits = opts.credits === undefined ? undefined : newCredits(opts.credits);
  return { ...opts, name, credits };
}
