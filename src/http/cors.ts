import type { Config } from "../config";
import type { RequestState } from "./state";

/**
 * CORS for /api and /v1 (docs/configuration.md#cors): browser pages of the configured origins may
 * call the gateway with a key of their own, and read its answers and headers. Off unless `[cors]
 * allowed_origins` lists an origin. Keys are sent as headers, never as cookies, so no answer allows
 * credentials; the dashboard and the admin API are never offered to other origins.
 */

/** The gateway's own headers a page may read (a browser hides any other but the simple ones). */
const EXPOSED = [
  "x-request-id",
  "retry-after",
  "x-ratelimit-limit",
  "x-ratelimit-remaining",
  "x-ratelimit-reset",
  "ratelimit-limit",
  "ratelimit-remaining",
  "ratelimit-reset",
  "x-cache",
  "server-timing",
  "idempotent-replayed",
  "idempotent-recovered",
  "idempotent-superseded",
  "allow",
  "x-textai-guardrails",
  "x-textai-provider",
  "x-textai-deployment",
  "x-textai-route",
  "x-textai-credits-deducted",
  "x-textai-credits-remaining",
].join(", ");

/** Access-Control-Request-Headers as a browser writes it: header names and commas, nothing else, not too long. */
const HEADER_LIST = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+(?:[ \t]*,[ \t]*[A-Za-z0-9!#$%&'*+.^_`|~-]+)*$/;
const MAX_HEADER_LIST = 2000;

export interface Cors {
  /**
   * For a request to an API path (`origin`: its Origin header, null without one): `Vary: Origin`,
   * and for an allowed origin its answer's CORS headers, go into the request state (every API
   * answer, error and stream is built from it); an allowed origin's preflight is answered here
   * (204) when the path has routes. Null otherwise: the request goes on.
   */
  answer(request: Request, origin: string | null, state: RequestState, methods: () => string[]): Response | null;
}

/** The CORS of `settings`, or null when no origin is allowed (nothing is added to any request). */
export function corsOf(settings: Config["cors"]): Cors | null {
  const { anyOrigin, origins, maxAgeSeconds } = settings;
  if (!anyOrigin && origins.size === 0) return null;
  return {
    answer(request, origin, state, methods) {
      const h = state.headers;
      // every API answer varies by Origin once CORS is on (with it, without it, another's): a cache
      // must not give one origin's answer, or one without the header, to another
      h.vary = "Origin";
      if (origin === null || (!anyOrigin && !origins.has(origin))) return null;
      // the origin itself, not "*", even when any is allowed: one rule for caches (Vary: Origin)
      h["access-control-allow-origin"] = origin;
      const asked = request.method === "OPTIONS" ? request.headers.get("access-control-request-method") : null;
      if (asked === null) {
        h["access-control-expose-headers"] = EXPOSED;
        return null;
      }
      const allow = methods();
      if (allow.length === 0) return null;
      const headers: Record<string, string> = {
        ...h,
        vary: "Origin, Access-Control-Request-Method, Access-Control-Request-Headers",
        "access-control-allow-methods": allow.join(", "),
        "access-control-max-age": String(maxAgeSeconds),
      };
      const wanted = request.headers.get("access-control-request-headers");
      if (wanted !== null && wanted.length <= MAX_HEADER_LIST && HEADER_LIST.test(wanted.trim()))
        headers["access-control-allow-headers"] = wanted.trim();
      return new Response(null, { status: 204, headers });
    },
  };
}
