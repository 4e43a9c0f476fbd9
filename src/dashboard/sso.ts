/**
 * Single sign-on with OpenID Connect (docs/sso.md, CONTRACT section 17): the authorisation code
 * flow with PKCE, `state` and `nonce`, through `openid-client` (which verifies the ID token's
 * signature by the issuer's published keys, and its `iss`, `aud`, `exp`, `iat` and `nonce`).
 *
 * A sign-in in progress lives in the browser, in a cookie sealed with an HMAC under a key drawn
 * from the client's secret (so every node of a cluster opens it), valid for ten minutes: its state,
 * nonce and PKCE verifier. The callback checks the `state` it carries against the cookie's, and
 * its route claims the state once across nodes (a reused state is refused).
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import * as oidc from "openid-client";
import type { SsoConfig } from "../config";

/** How long a sign-in may take between the start and the callback. */
export const SSO_PENDING_MS = 10 * 60_000;
export const SSO_COOKIE = "textai_sso";
/** the issuer's requests (discovery, keys, token, userinfo) give up after this many seconds */
const ISSUER_TIMEOUT_S = 10;

/** A sign-in between its start and its callback, as the sealed cookie carries it. */
export interface PendingSignIn {
  state: string;
  nonce: string;
  verifier: string;
  /** to the operator console (`?operator=1`) */
  operator: boolean;
  expiresAt: number;
}

/** Who the issuer says signed in: from the verified ID token, and its userinfo where the token lacks them. */
export interface SsoIdentity {
  /** the verified ID token's `iss`: with `sub`, who this is, whatever the email (docs/sso.md#matching) */
  issuer: string;
  sub: string;
  email: string | null;
  emailVerified: boolean | null;
  name: string | null;
  groups: string[];
}

/** A sign-in refused: what the page says (never a token or a secret). */
export class SsoRefusal extends Error {
  constructor(
    message: string,
    readonly status = 403,
  ) {
    super(message);
  }
}

export class SsoClient {
  private discovered: Promise<oidc.Configuration> | null = null;
  private readonly sealKey: Buffer;

  constructor(readonly config: SsoConfig) {
    this.sealKey = createHash("sha256").update(`textai sso state\0${config.clientSecret}`).digest();
  }

  /** The issuer's metadata and keys, discovered once (again after a failure). */
  private configuration(): Promise<oidc.Configuration> {
    if (!this.discovered) {
      const c = this.config;
      const found = oidc.discovery(new URL(c.issuer), c.clientId, undefined, oidc.ClientSecretBasic(c.clientSecret), {
        // the ID token's signature is checked even though it comes straight from the token
        // endpoint (where OpenID Connect lets a client skip it and trust TLS alone)
        execute: c.insecureHttp
          ? [oidc.enableNonRepudiationChecks, oidc.allowInsecureRequests]
          : [oidc.enableNonRepudiationChecks],
        timeout: ISSUER_TIMEOUT_S,
      });
      this.discovered = found;
      found.catch(() => {
        if (this.discovered === found) this.discovered = null;
      });
    }
    return this.discovered;
  }

  /** Where to send the browser, and the cookie value that carries the sign-in until the callback. */
  async start(operator: boolean, now = Date.now()): Promise<{ url: string; sealed: string }> {
    const cfg = await this.configuration().catch((err) => {
      throw unreachable(err);
    });
    const pending: PendingSignIn = {
      state: oidc.randomState(),
      nonce: oidc.randomNonce(),
      verifier: oidc.randomPKCECodeVerifier(),
      operator,
      expiresAt: now + SSO_PENDING_MS,
    };
    const url = oidc.buildAuthorizationUrl(cfg, {
      redirect_uri: this.config.redirectUri,
      scope: this.config.scopes.join(" "),
      code_challenge: await oidc.calculatePKCECodeChallenge(pending.verifier),
      code_challenge_method: "S256",
      state: pending.state,
      nonce: pending.nonce,
    });
    return { url: url.href, sealed: this.seal(pending) };
  }

  /** The sign-in a cookie carries, if it is this gateway's, unexpired and unaltered; else null. */
  open(sealed: string | null, now = Date.now()): PendingSignIn | null {
    if (!sealed) return null;
    const dot = sealed.indexOf(".");
    if (dot <= 0) return null;
    const body = sealed.slice(0, dot);
    const mac = Buffer.from(sealed.slice(dot + 1), "base64url");
    const want = createHmac("sha256", this.sealKey).update(body).digest();
    if (mac.length !== want.length || !timingSafeEqual(mac, want)) return null;
    try {
      const p = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as PendingSignIn;
      return typeof p.expiresAt === "number" && p.expiresAt > now ? p : null;
    } catch {
      return null;
    }
  }

  private seal(p: PendingSignIn): string {
    const body = Buffer.from(JSON.stringify(p)).toString("base64url");
    return `${body}.${createHmac("sha256", this.sealKey).update(body).digest("base64url")}`;
  }

  /**
   * The callback's query, checked against the sign-in it belongs to: the code exchanged (with the
   * PKCE verifier) and the ID token verified. Throws SsoRefusal saying why.
   */
  async finish(query: URLSearchParams, pending: PendingSignIn): Promise<SsoIdentity> {
    const error = query.get("error");
    if (error) {
      const why = query.get("error_description");
      throw new SsoRefusal(`The identity provider refused the sign-in: ${clip(error)}${why ? ` (${clip(why)})` : ""}.`);
    }
    if (query.get("state") !== pending.state)
      throw new SsoRefusal("The sign-in's state does not match the one this browser started: start again.");
    const cfg = await this.configuration().catch((err) => {
      throw unreachable(err);
    });
    // the URL the issuer sent the browser to, as registered (never the Host the request names)
    const current = new URL(this.config.redirectUri);
    current.search = query.toString();
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(cfg, current, {
        pkceCodeVerifier: pending.verifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
    } catch (err) {
      // the token endpoint or the keys out of reach is the provider's outage, not a failed check
      if (isUnreachable(err)) throw unreachable(err);
      throw new SsoRefusal(`The identity provider's answer failed verification: ${describe(err)}.`);
    }
    const claims = tokens.claims();
    if (!claims) throw new SsoRefusal("The identity provider sent no ID token.");
    let all: Record<string, unknown> = { ...claims };
    const groupsIn = (c: Record<string, unknown>) => readPath(c, this.config.groupsClaim) !== undefined;
    if ((typeof all.email !== "string" || !groupsIn(all)) && cfg.serverMetadata().userinfo_endpoint) {
      try {
        const info = await oidc.fetchUserInfo(cfg, tokens.access_token, claims.sub);
        all = { ...info, ...all };
        if (typeof all.email !== "string" && typeof info.email === "string") all.email = info.email;
        if (!groupsIn(claims) && groupsIn(info)) all[this.config.groupsClaim] = readPath(info, this.config.groupsClaim);
      } catch (err) {
        if (isUnreachable(err)) throw unreachable(err);
        throw new SsoRefusal(`The identity provider's userinfo could not be read: ${describe(err)}.`);
      }
    }
    return identityOf(claims.iss, claims.sub, all, this.config.groupsClaim);
  }
}

/** The identity in a set of claims; `groupsClaim` may be a dotted path (`realm_access.roles`). */
export function identityOf(issuer: string, sub: string, claims: Record<string, unknown>, groupsClaim: string): SsoIdentity {
  const raw = claims[groupsClaim] !== undefined ? claims[groupsClaim] : readPath(claims, groupsClaim);
  const groups = Array.isArray(raw)
    ? raw.filter((g): g is string => typeof g === "string")
    : typeof raw === "string"
      ? [raw]
      : [];
  const email = typeof claims.email === "string" ? claims.email.trim().toLowerCase() : null;
  const verified = claims.email_verified;
  return {
    issuer,
    sub,
    email: email || null,
    emailVerified: typeof verified === "boolean" ? verified : verified === "true" ? true : verified === "false" ? false : null,
    name: typeof claims.name === "string" ? claims.name.slice(0, 200) : null,
    groups,
  };
}

function readPath(claims: Record<string, unknown>, path: string): unknown {
  let at: unknown = claims;
  for (const part of path.split(".")) {
    if (at === null || typeof at !== "object") return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

/** the codes of a request that never got an answer: refused, reset, timed out, no such host, a TLS failure */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPROTO",
  "ConnectionRefused",
  "ConnectionClosed",
  "FailedToOpenSocket",
  "OAUTH_TIMEOUT",
  "OAUTH_ABORT",
]);
const TLS_CODE_PREFIXES = ["CERT_", "UNABLE_TO_", "ERR_TLS_", "ERR_SSL_", "DEPTH_ZERO_", "SELF_SIGNED_"];

/**
 * Whether an error of a request to the issuer (discovery, keys, token, userinfo) means the issuer
 * could not be reached: no answer (a network, DNS, TLS failure or the timeout, at any depth of
 * causes), or an answer of a server error (5xx). Anything else is an answer that failed a check.
 */
export function isUnreachable(err: unknown): boolean {
  for (let at: unknown = err, depth = 0; at && typeof at === "object" && depth < 5; depth++) {
    const e = at as { code?: unknown; status?: unknown; name?: unknown; cause?: unknown };
    if (
      typeof e.code === "string" &&
      (NETWORK_CODES.has(e.code) || TLS_CODE_PREFIXES.some((p) => (e.code as string).startsWith(p)))
    )
      return true;
    if (e.name === "TimeoutError" || e.name === "AbortError") return true;
    // a Response the library found unexpected, or an error body, of a server error
    if (typeof e.status === "number" && e.status >= 500) return true;
    at = e.cause;
  }
  return false;
}

/** The refusal of an issuer out of reach: 503, the page docs/sso.md shows. */
function unreachable(err: unknown): SsoRefusal {
  return new SsoRefusal(`The identity provider could not be reached (${describe(err)}). Try again later.`, 503);
}

const clip = (s: string) => s.replace(/[^\x20-\x7e]/g, "?").slice(0, 200);
/** An error's message: the library's own detail (its cause: "unexpected JWT "exp" … claim value") where it has one. */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return clip(String(err));
  return clip(err.cause instanceof Error ? err.cause.message : err.message);
}
