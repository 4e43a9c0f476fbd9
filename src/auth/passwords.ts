/**
 * Account logins: the rules a login's email and password follow, and the argon2id hash a password
 * is stored under. Used by the dashboard's sign-up and settings, the admin API and the CLI alike.
 */
import { randomBytes } from "node:crypto";

export const MIN_PASSWORD = 10;
export const MAX_PASSWORD = 200;

export function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, { algorithm: "argon2id" });
}

export function passwordProblem(password: string): string | null {
  if (password.length < MIN_PASSWORD) return `the password must have at least ${MIN_PASSWORD} characters`;
  if (password.length > MAX_PASSWORD) return `the password must have at most ${MAX_PASSWORD} characters`;
  return null;
}

export function emailProblem(email: string): string | null {
  return /^[^\s@]{1,64}@[^\s@]{1,190}$/.test(email) ? null : "the email address is not valid";
}

let dummy: Promise<string> | null = null;
/** Hashes the stand-in password ahead of the first sign-in, so that one is not slower. */
export function warmDummyHash(): void {
  dummy ??= hashPassword(randomBytes(32).toString("base64url"));
}
/**
 * Checks a password against a login's hash, or against a hash of a random password when there
 * is no such login, so an unknown email costs the same argon2id work as a wrong password.
 */
export async function verifyPassword(password: string, hash: string | null): Promise<boolean> {
  dummy ??= hashPassword(randomBytes(32).toString("base64url"));
  // a member made by single sign-on has no password (NO_PASSWORD): the same work, never a match
  const usable = hash?.startsWith("$argon2") === true;
  const ok = await Bun.password.verify(password, usable ? hash : await dummy);
  return usable && ok;
}

/** What a member made by single sign-on stores for a password: no password matches it (docs/sso.md). */
export const NO_PASSWORD = "!sso";
