import { createHash, randomBytes } from "node:crypto";
import type { SignInAttempts } from "./interface";

/** Sessions end after this long without a request. */
export const SESSION_IDLE_MS = 12 * 3600_000;
export const COOKIE = "textai_session";
export const MIN_PASSWORD = 10;
export const MAX_PASSWORD = 200;

export const newSessionToken = (): string => randomBytes(32).toString("base64url");
export const hashToken = (token: string): string => createHash("sha256").update(token).digest("hex");

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
  dummy ??= hashPassword(newSessionToken());
}
/**
 * Checks a password against a login's hash, or against a hash of a random password when there
 * is no such login, so an unknown email costs the same argon2id work as a wrong password.
 */
export async function verifyPassword(password: string, hash: string | null): Promise<boolean> {
  dummy ??= hashPassword(newSessionToken());
  const ok = await Bun.password.verify(password, hash ?? (await dummy));
  return hash !== null && ok;
}

export function readCookie(request: Request, name = COOKIE): string | null {
  const raw = request.headers.get("cookie");
  if (!raw) return null;
  for (const part of raw.split(";")) {
    const i = part.indexOf("=");
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim() || null;
  }
  return null;
}

export function sessionCookie(token: string, secure: boolean): string {
  return `${COOKIE}=${token}; Path=/dashboard; HttpOnly; SameSite=Strict${secure ? "; Secure" : ""}`;
}

export function clearedCookie(secure: boolean): string {
  return `${COOKIE}=; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=0${secure ? "; Secure" : ""}`;
}

/**
 * How the request reached us. X-Forwarded-Proto and X-Forwarded-For count only when the peer is
 * one of the configured trusted proxies; from anyone else they are ignored.
 */
export function requestOrigin(
  request: Request,
  peer: string | null,
  trustedProxies: readonly string[],
): { secure: boolean; client: string; origin: string } {
  const url = new URL(request.url);
  const trusted = peer !== null && trustedProxies.includes(normalizeIp(peer));
  let secure = url.protocol === "https:";
  let client = peer ?? "unknown";
  if (trusted) {
    const proto = request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase();
    if (proto) secure = proto === "https";
    const forwarded = request.headers.get("x-forwarded-for");
    const last = forwarded?.split(",").at(-1)?.trim();
    if (last) client = last;
  }
  const host = request.headers.get("host") ?? url.host;
  return { secure, client: normalizeIp(client), origin: `${secure ? "https" : "http"}://${host}` };
}

function normalizeIp(ip: string): string {
  return ip.startsWith("::ffff:") ? ip.slice(7) : ip;
}

/**
 * A state-changing request is ours only when its Origin is the gateway's own. Browsers send
 * Origin on every POST; without one, Sec-Fetch-Site must not say another site sent it.
 */
export function sameOrigin(request: Request, origin: string): boolean {
  const presented = request.headers.get("origin");
  if (presented !== null) return presented === origin;
  const site = request.headers.get("sec-fetch-site");
  return site === null || site === "same-origin" || site === "none";
}

/** Five failures per email and twenty per client address in 15 minutes. */
export const SIGN_IN_LIMITS = { perEmail: 5, perClient: 20, windowMs: 15 * 60_000 };
export type SignInLimits = typeof SIGN_IN_LIMITS;

/**
 * Sign-in attempts counted per email and per client address in a fixed window, in memory: the
 * single node's limiter, and a Redis-backed node's fallback while Redis is down.
 */
export class SignInLimiter implements SignInAttempts {
  private seen = new Map<string, { count: number; resetAt: number }>();
  constructor(
    private limits: SignInLimits,
    private now: () => number = Date.now,
  ) {}

  attempt(email: string, client: string): boolean {
    if (this.count(`e:${email}`) >= this.limits.perEmail || this.count(`c:${client}`) >= this.limits.perClient) return false;
    const t = this.now();
    for (const k of [`e:${email}`, `c:${client}`]) {
      const e = this.seen.get(k);
      if (e && e.resetAt > t) e.count++;
      else {
        if (this.seen.size >= 100_000) this.prune(t);
        this.seen.set(k, { count: 1, resetAt: t + this.limits.windowMs });
      }
    }
    return true;
  }

  succeeded(email: string, client: string): void {
    for (const k of [`e:${email}`, `c:${client}`]) {
      const e = this.seen.get(k);
      if (e && e.count > 0) e.count--;
    }
  }

  private count(k: string): number {
    const e = this.seen.get(k);
    return e && e.resetAt > this.now() ? e.count : 0;
  }

  private prune(t: number): void {
    for (const [k, e] of this.seen) if (e.resetAt <= t) this.seen.delete(k);
    if (this.seen.size >= 100_000) this.seen.clear();
  }
}
