import { GatewayError } from "../errors";

/**
 * Credits are whole, finite, non-negative numbers no larger than Number.MAX_SAFE_INTEGER: a hold,
 * a charge, a balance and a key's monthly limit alike. Every ledger entry point passes its amounts
 * through `credits` before comparing anything, because every comparison with NaN is false: a
 * `balance - held < amount` with a NaN amount admits the call, whatever the balance.
 *
 * The gateway's own bounds (token caps, prices, per-call fees: docs/pricing.md) keep every amount
 * it computes far below the ceiling; an amount that is not credits anyway is a gateway fault,
 * answered 500 before anything is held, charged or sent to a provider.
 */
export type Credits = number;

/** Whether `v` is a credit amount: a safe integer >= 0 (finite, not NaN). */
export function isCredits(v: unknown): v is Credits {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}

/** A 500 naming what was not credits; nothing was held or charged. */
export function notCredits(what: string, v: unknown): GatewayError {
  return new GatewayError(
    "internal_error",
    `${what} is not a whole number of credits (${String(v)}): refused before anything was held or charged`,
  );
}

/** `v` when it is a credit amount; throws (500) otherwise, before any comparison can read it. */
export function credits(v: unknown, what: string): Credits {
  if (isCredits(v)) return v;
  throw notCredits(what, v);
}

/** Whole credits for an exact (fractional) amount, rounded up; throws when it is not finite and >= 0. */
export function creditsUp(exact: number, what: string): Credits {
  if (!(exact >= 0) || !Number.isFinite(exact)) throw notCredits(what, exact);
  return credits(Math.max(0, Math.ceil(exact - 1e-9)), what);
}

/** The most credits one grant, welcome or take-back moves: the admin API's bound, for every way in (CLI, keys and accounts create, admin, dashboard). */
export const MAX_GRANT = 1_000_000_000;
/** The most an account's balance holds: far below Number.MAX_SAFE_INTEGER, so balances, holds and sums stay exact. */
export const MAX_BALANCE = 1_000_000_000_000_000;

/**
 * `amount` when it is a grant the ledger takes: a safe integer from -MAX_GRANT to MAX_GRANT. Before,
 * `credits grant --amount 99999999999999999999` stored 1e20 (rounded), and every call of the account
 * then failed 500 for good. Refused with invalid_request (the CLI says it of --amount, exit 2).
 */
export function grantAmount(amount: unknown): number {
  if (typeof amount === "number" && Number.isSafeInteger(amount) && Math.abs(amount) <= MAX_GRANT && amount !== 0) return amount;
  throw new GatewayError(
    "invalid_request",
    amount === 0
      ? "amount must not be 0: a grant adds credits, a negative one takes them back"
      : `a grant is a whole number of credits from -${MAX_GRANT} to ${MAX_GRANT}, other than 0 (got ${String(amount)})${
          typeof amount === "number" && Number.isInteger(amount) ? "; grant more in several" : ""
        }`,
    { param: "amount" },
  );
}

/** The most characters of a grant's reason once trimmed. */
export const MAX_REASON = 500;

/**
 * A grant's reason as the ledger keeps it: none (null), or 1 to MAX_REASON characters once trimmed
 * (the trimmed text), else 400 naming `reason`. The one check for every way in (the ledgers run it
 * with grantAmount): before, the admin API kept an empty reason and the operator console cut a long
 * one to 500 characters without a word.
 */
export function grantReason(reason: unknown): string | null {
  if (reason === null || reason === undefined) return null;
  const t = typeof reason === "string" ? reason.trim() : "";
  if (t !== "" && t.length <= MAX_REASON) return t;
  const got = typeof reason !== "string" ? typeof reason : t === "" ? "an empty one" : `${t.length} characters`;
  throw new GatewayError(
    "invalid_request",
    `reason must be a text of 1 to ${MAX_REASON} characters (spaces at either end do not count), or left out; got ${got}`,
    { param: "reason" },
  );
}

/**
 * The credits a new account or key is given (`credits`; the welcome credits when not given): a whole
 * number from 0 to MAX_GRANT, else 400 naming `param`. The one check for every way in: the key
 * stores run it before anything is written, so `keys create --credits 1000000001` is refused naming
 * the credits (it was refused by the grant, naming its amount), and an empty or hexadecimal flag
 * (`--credits ""` gave 0 credits, `--credits 0x10` 16) never gets this far as a number.
 */
export function newCredits(v: unknown, param = "credits"): number {
  if (typeof v === "number" && Number.isSafeInteger(v) && v >= 0 && v <= MAX_GRANT) return v;
  throw new GatewayError("invalid_request", `${param} must be a whole number from 0 to ${MAX_GRANT} (got ${String(v)})`, {
    param,
  });
}

/** A grant refused because the balance would pass MAX_BALANCE. */
export function balanceTooLarge(amount: number, balance: number): GatewayError {
  return new GatewayError(
    "invalid_request",
    `cannot grant ${amount} credits: the balance is ${balance}, and a balance holds at most ${MAX_BALANCE}`,
    { param: "amount" },
  );
}
