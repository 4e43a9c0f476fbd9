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
 * one of the configured trusted proxies; from anyone else they are ignored. `client` is the
 * address that guesses and sign-ups are counted by: an IPv4 address as it is, an IPv6 address as
 * its network of `ipv6PrefixBits` (default /64, what one subscriber or host usually holds), so
 * the addresses of one network are one client (docs/security.md).
 */
export function requestOrigin(
  request: Request,
  peer: string | null,
  trustedProxies: readonly string[],
  ipv6PrefixBits = 64,
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
  return { secure, client: addressGroup(normalizeIp(client), ipv6PrefixBits), origin: `${secure ? "https" : "http"}://${host}` };
}

function normalizeIp(ip: string): string {
  return ip.startsWith("::ffff:") ? ip.slice(7) : ip;
}

/**
 * The client an address counts as: IPv4 (and anything that is not IPv6) as it is; IPv6 as its
 * network of `prefixBits` bits, written `2001:db8:1:2:0:0:0:0/64` (every group, zero-filled past the
 * prefix). An IPv4-mapped address (`::ffff:1.2.3.4`) is its IPv4 address. A text that does not
 * parse as IPv6 is kept as it is.
 */
export function addressGroup(ip: string, prefixBits: number): string {
  const groups = ipv6Groups(ip);
  if (!groups) return ip;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff)
    return `${groups[6] >> 8}.${groups[6] & 255}.${groups[7] >> 8}.${groups[7] & 255}`;
  const bits = Math.max(0, Math.min(128, prefixBits));
  const masked = groups.map((g, i) => {
    const keep = Math.max(0, Math.min(16, bits - i * 16));
    return keep === 0 ? 0 : g & ((0xffff << (16 - keep)) & 0xffff);
  });
  return `${masked.map((g) => g.toString(16)).join(":")}/${bits}`;
}

/** The eight 16-bit groups of an IPv6 address (`::` compressed, an IPv4 tail, a `%zone` allowed), or null. */
function ipv6Groups(text: string): number[] | null {
  const ip = text.split("%")[0] as string;
  if (!ip.includes(":") || ip.length > 45) return null;
  const halves = ip.split("::");
  if (halves.length > 2) return null;
  const parse = (part: string): number[] | null => {
    if (part === "") return [];
    const out: number[] = [];
    const pieces = part.split(":");
    for (const [i, piece] of pieces.entries()) {
      if (i === pieces.length - 1 && piece.includes(".")) {
        const v4 = piece.split(".").map(Number);
        if (v4.length !== 4 || v4.some((n) => !Number.isInteger(n) || n < 0 || n > 255)) return null;
        const [a, b, c, d] = v4 as [number, number, number, number];
        out.push((a << 8) | b, (c << 8) | d);
        continue;
      }
      if (!/^[0-9a-f]{1,4}$/i.test(piece)) return null;
      out.push(Number.parseInt(piece, 16));
    }
    return out;
  };
  const head = parse(halves[0] as string);
  const tail = halves.length === 2 ? parse(halves[1] as string) : [];
  if (!head || !tail) return null;
  if (halves.length === 1) return head.length === 8 ? head : null;
  const fill = 8 - head.length - tail.length;
  return fill >= 1 ? [...head, ...Array(fill).fill(0), ...tail] : null;
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
