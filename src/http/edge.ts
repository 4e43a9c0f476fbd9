import { authenticate } from "../auth/authenticate";
import type { AuthInfo, KeyStore } from "../auth/interface";
import { checkFunction, underCeiling } from "../auth/policy";
import type { Config } from "../config";
import type { RateClass, RateLimiter } from "../ratelimit/interface";
import { deferLimit, takeLimit } from "./admission";
import { readJson } from "./body";
import { brokenPath, decodablePath, pathOf } from "./path";
import { mark, type RequestState } from "./state";

export type EdgeDeps = { keys: KeyStore; limiter: RateLimiter; config: Pick<Config, "limits" | "planPolicies"> };

export interface Edge {
  auth: AuthInfo;
  /** the JSON body without api_key ({} for a request without a body) */
  body: Record<string, unknown>;
}

/**
 * The request edge every route family runs before its own logic, written once: read the JSON
 * body (when the route takes one), authenticate (an expired key: 401), apply the key's policy
 * (`fn` outside its allowed_functions: 403), take one request from the key's own bucket for `fn`
 * when its policy sets rate_limit_per_minute, then from the account's bucket for `fn`, which all
 * its keys share (429 with Retry-After when either is empty; the key's bucket first, so a call
 * its own limit refuses takes nothing from the account's). The RateLimit-* headers describe the
 * bucket that refused, else the one with fewer requests left. Marks the body, auth and ratelimit
 * stages.
 */
export async function requestEdge(
  deps: EdgeDeps,
  request: Request,
  state: RequestState,
  opts: { fn: string; rateClass: RateClass; body: boolean; auth?: AuthInfo; deferLimit?: boolean },
): Promise<Edge> {
  state.fn = opts.fn;
  let t = performance.now();
  let body: Record<string, unknown> = {};
  // a caller known before the body (the dashboard's session): a body refused below is in its log.
  // A key's refusals before it is checked are recorded by the app's error handler (app.ts callerOfRefusal)
  if (opts.auth) state.auth = opts.auth;
  if (opts.body) {
    ({ body, sent: state.sentBody, bytes: state.bodyBytes } = await readJson(request, deps.config.limits));
    state.parsedBody = body;
  }
  t = mark(state, "body", t);
  // a dashboard session is its own credential: a key in the body is dropped all the same
  if (opts.auth) delete body.api_key;
  let caller: AuthInfo;
  try {
    caller = opts.auth ?? (await authenticate(deps.keys, request.headers, body));
  } catch (err) {
    state.keyRefused = true;
    throw err;
  }
  // the plan's ceiling (the operator's), which the key's own policy only narrows: every check
  // below and every provider call the route makes for the caller runs under it
  const ceiling = deps.config.planPolicies[caller.plan];
  const auth = ceiling ? { ...caller, policy: underCeiling(ceiling, caller.policy) } : caller;
  state.auth = auth;
  t = mark(state, "auth", t);
  // the credential first (401 wins, as on every route), then the path its parameters come from
  if (!decodablePath(state.path ?? pathOf(request.url))) throw brokenPath();
  checkFunction(auth.policy, opts.fn);
  if (opts.deferLimit) {
    // the function pipeline takes it in the call's first trip to Redis (http/admission.ts)
    deferLimit(state, opts.fn, opts.rateClass);
    return { auth, body };
  }
  await takeLimit(deps, auth, state, opts.fn, opts.rateClass, t);
  return { auth, body };
}
