/**
 * Dashboard sessions as the request edge reads them (src/http/edge-plugin.ts): the request's
 * context (origin, client address), its session, and the redirect a page answers without one.
 */
import type { Config } from "../config";
import type { Session } from "../dashboard/interface";
import {
  hashToken,
  operatorTokenHash,
  type Peer,
  readCookie,
  requestOrigin,
  SESSION_LIMITS,
  sameOrigin,
} from "../dashboard/security";
import { GatewayError } from "../errors";
import type { AppDeps } from "./deps";
import { type RequestState, stateOf } from "./state";

/** A dashboard request: its state, whether it came over HTTPS, the client address and its own origin. */
export interface Ctx {
  request: Request;
  state: RequestState;
  secure: boolean;
  /** the address guesses are counted by (an IPv6 address as its network, docs/security.md) */
  client: string;
  /** the client's whole address, as the audit trail records it */
  address: string;
  origin: string;
}

export type SessionDeps = { config: Pick<Config, "adminToken" | "dashboard">; dashboard: AppDeps["dashboard"] };

/** A route's Elysia context, as far as the dashboard reads it. */
export type RouteContext = { request: Request; server: Peer };

export function dashboardCtx(deps: SessionDeps, context: RouteContext): Ctx {
  const { request, server } = context;
  const state = stateOf(context);
  state.fn = "dashboard";
  const peer = server?.requestIP(request)?.address ?? null;
  return {
    request,
    state,
    ...requestOrigin(request, peer, deps.config.dashboard.trustedProxies, deps.config.dashboard.ipv6PrefixBits),
    address: clientAddress(deps, request, server),
  };
}

/** The client's whole address (behind a trusted proxy, the one it forwards), as the audit trail records it. */
export function clientAddress(deps: Pick<SessionDeps, "config">, request: Request, server: Peer): string {
  const peer = server?.requestIP(request)?.address ?? null;
  return requestOrigin(request, peer, deps.config.dashboard.trustedProxies, 128).client;
}

/** Every dashboard page's security headers (docs/security.md). */
export const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "x-frame-options": "DENY",
};

const escapeText = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** A page a member's role may not open: 403, saying which role it needs, with the way back (docs/teams.md). */
export function forbiddenPage(c: Ctx, message: string): Response {
  c.state.status = 403;
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Not allowed · Text-AI Gateway</title><link rel="stylesheet" href="/dashboard/assets/app.css"></head>
<body><header><a class="brand" href="/dashboard">Text-AI Gateway</a></header><main id="main"><h1>Not allowed</h1>
<p class="flash error" role="alert">${escapeText(message)}</p><p><a href="/dashboard">Back to the overview</a></p></main></body></html>`;
  return new Response(body, {
    status: 403,
    headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", ...SECURITY_HEADERS, ...c.state.headers },
  });
}

/** A state-changing request from another origin (a form posted by another site): 403. */
export function checkOrigin(c: Ctx): void {
  if (!sameOrigin(c.request, c.origin)) throw new GatewayError("forbidden", "cross-origin request refused");
}

/** The hash a session token is stored under: an operator's is bound to the admin token (security.ts). */
export function storedHash(deps: SessionDeps, token: string, kind: Session["kind"]): string {
  const { adminToken } = deps.config;
  return kind === "operator" && adminToken ? operatorTokenHash(token, adminToken) : hashToken(token);
}

/** The session the request's cookie names, touched (its idle time starts again); null without one. */
export async function sessionOf(deps: SessionDeps, request: Request): Promise<Session | null> {
  const token = readCookie(request);
  if (!token || token.length > 100) return null;
  const now = Date.now();
  const store = deps.dashboard;
  const s = await store.touchSession(hashToken(token), now, SESSION_LIMITS);
  if (s?.kind === "account") return s;
  // an operator session stored under the plain hash was opened before sessions were bound to the token
  if (s) await store.deleteSession(s.tokenHash);
  if (!deps.config.adminToken) return null;
  const op = await store.touchSession(storedHash(deps, token, "operator"), now, SESSION_LIMITS);
  return op?.kind === "operator" ? op : null;
}

/** 303 to `to`, with the request's headers (x-request-id, …); never cached. */
export function redirect(c: Ctx, to: string, headers: Record<string, string> = {}): Response {
  c.state.status = 303;
  return new Response(null, {
    status: 303,
    headers: { location: to, "cache-control": "no-store", ...c.state.headers, ...headers },
  });
}
