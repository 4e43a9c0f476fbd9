import { authenticate } from "../auth/authenticate";
import type { AuthInfo, KeyStore } from "../auth/interface";
import type { Config } from "../config";
import { GatewayError } from "../errors";
import type { RateClass, RateLimiter } from "../ratelimit/interface";
import { rateLimitHeaders } from "../ratelimit/limiter";
import { readJsonBody } from "./body";
import { mark, type RequestState } from "./state";

export type EdgeDeps = { keys: KeyStore; limiter: RateLimiter; config: Pick<Config, "limits"> };

export interface Edge {
  auth: AuthInfo;
  /** the JSON body without api_key ({} for a request without a body) */
  body: Record<string, unknown>;
}

/**
 * The request edge every route family runs before its own logic, written once: read the JSON
 * body (when the route takes one), authenticate, and take one request from the account's bucket
 * for `fn`, which all its keys share (429 with Retry-After when empty). Marks the body, auth and
 * ratelimit stages.
 */
export async function requestEdge(
  deps: EdgeDeps,
  request: Request,
  state: RequestState,
  opts: { fn: string; rateClass: RateClass; body: boolean; auth?: AuthInfo },
): Promise<Edge> {
  state.fn = opts.fn;
  let t = performance.now();
  const body = opts.body ? await readJsonBody(request, deps.config.limits) : {};
  t = mark(state, "body", t);
  // a dashboard session is its own credential: a key in the body is dropped all the same
  if (opts.auth) delete body.api_key;
  const auth = opts.auth ?? (await authenticate(deps.keys, request.headers, body));
  state.auth = auth;
  t = mark(state, "auth", t);
  const d = await deps.limiter.check(auth.accountId, auth.plan, opts.fn, opts.rateClass);
  mark(state, "ratelimit", t);
  Object.assign(state.headers, rateLimitHeaders(d));
  if (!d.allowed) {
    throw new GatewayError(
      "rate_limited",
      `rate limit of ${d.limit} requests per minute for ${opts.fn} exceeded; retry in ${d.retryAfterSeconds}s`,
    );
  }
  return { auth, body };
}
