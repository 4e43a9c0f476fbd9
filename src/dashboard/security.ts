import { createHash, createHmac, randomBytes } from "node:crypto";
import type { Session, SessionLimits } from "./interface";

/**
 * How long a session lasts: it ends after `idleMs` without a request, and `lifetimeMs` after it
 * began whatever the activity. Expired sessions are deleted by a sweep every `sweepEveryMs` (and at
 * start), not only when presented.
 */
export const SESSION_LIMITS: SessionLimits = {
  account: { idleMs: 12 * 3600_000, lifetimeMs: 7 * 24 * 3600_000 },
  operator: { idleMs: 12 * 3600_000, lifetimeMs: 8 * 3600_000 },
};
export const SESSION_SWEEP_EVERY_MS = 10 * 60_000;

/** Whether a session has ended by its idle time or its lifetime at `now`. */
export function sessionExpired(
  s: Pick<Session, "kind" | "createdAt" | "lastSeenAt">,
  now: number,
  limits: SessionLimits,
): boolean {
  const l = limits[s.kind];
  return now - s.lastSeenAt > l.idleMs || now - s.createdAt > l.lifetimeMs;
}
export const COOKIE = "textai_session";

export const newSessionToken = (): string => randomBytes(32).toString("base64url");
export const hashToken = (token: string): string => createHash("sha256").update(token).digest("hex");
/**
 * An operator session is stored under an HMAC of its token keyed with the admin token, so it is
 * found only while the gateway runs with the admin token it was opened with.
 */
export const operatorTokenHash = (token: string, adminToken: string): string =>
  createHmac("sha256", adminToken).update(token).digest("hex");

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

/** The server a handler was called on, as far as telling the peer's address goes. */
export type Peer = { requestIP(r: Request): { address: string } | null } | null;

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
