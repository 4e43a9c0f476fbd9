/**
 * The admission stage both pipelines run (http/pipeline.ts for functions, http/proxy-pipeline.ts
 * for `/v1`), written once: the key's model policy, the guardrails' inspection, the cache decision
 * and its key, and the rate-limit decision. The hold and the charge are `credits/charged-answer.ts`
 * (`chargedAnswer`, and `chargedStream` for a stream), which both call.
 */
import type { AuthInfo } from "../auth/interface";
import { checkModel, type KeyPolicy, modelFilter, noAllowedModel } from "../auth/policy";
import { digest } from "../cache/canonical";
import type { CachedAnswer } from "../cache/interface";
import type { CallStart, CallStarter } from "../callstart/interface";
import type { Config } from "../config";
import { invalidRequest } from "../errors";
import type { IdempotencyBegin } from "../idempotency/interface";
import type { Metrics } from "../metrics";
import type { Tags } from "../providers/groups/groups";
import type { RequestGuard } from "../providers/guardrails";
import type { RateClass, RateDecision, RateLimiter } from "../ratelimit/interface";
import { limitRefusal, rateLimitHeaders } from "../ratelimit/limiter";
import { guardFor, inspectOrRefuse } from "./guardrails";
import { mark, type RequestState } from "./state";

type ModelFilter = (model: string) => boolean;

/**
 * The key's allowed_models (docs/key-policies.md), for a call that asked for `model` (if any): 403
 * for a model it may not use; then `route` picks where the call goes under the filter, and a route
 * the filter leaves no model of (`none`), where the unfiltered one had some, is 403 too.
 */
export function admitModels<R>(
  policy: KeyPolicy | undefined,
  fn: string,
  model: string | undefined,
  route: (allow: ModelFilter | undefined) => R,
  none: (routed: R) => boolean,
  via?: { asked: string; group: string; why: string },
): R {
  if (model) checkModel(policy, model);
  const allow = modelFilter(policy);
  const routed = route(allow);
  if (allow && none(routed) && !none(route(undefined))) throw noAllowedModel(policy, fn, via);
  return routed;
}

/**
 * The guardrails of the call (its plan's and its key's; docs/guardrails.md), null when none: the
 * texts `texts(subject)` names are inspected, and a blocked kind ends the request here (422
 * guardrail_blocked), uncharged and sent nowhere.
 */
export function admitGuarded<S>(
  deps: { config: Config; metrics: Metrics },
  auth: AuthInfo,
  state: RequestState,
  texts: (subject: S) => Iterable<string>,
  subject: S,
): RequestGuard | null {
  const guard = guardFor(deps.config, auth, auth.policy?.guardrails);
  if (guard) inspectOrRefuse(guard, texts(subject), state, deps.metrics);
  return guard;
}

/**
 * The caller's tags, which restrict a model group's deployments (docs/routing.md, residency): its
 * account's tags, to which the key's policy `tags` add; undefined when there are none (no cost on
 * the call). A key only narrows: a tag its account also carries with another value would need a
 * deployment carrying both, so the call is refused (400 naming the tag), nothing sent.
 */
export function admitTags(auth: AuthInfo): Tags | undefined {
  const own = auth.policy?.tags;
  const account = auth.accountTags;
  if (!account) return own;
  if (!own) return account;
  for (const [k, v] of Object.entries(own))
    if (k in account && account[k] !== v)
      throw invalidRequest(
        `this key's tag ${k}="${v}" contradicts its account's ${k}="${account[k]}": a key's tags add to its account's and may only narrow them; nothing was sent`,
        "tags",
      );
  return { ...account, ...own };
}

/** The request header a `[[model_routes]]` rule's `when_header` reads (docs/routing.md). */
export const ROUTE_HEADER = "x-textai-route";

/**
 * Conditional routing (`[[model_routes]]`, docs/routing.md): the model group the first matching
 * rule for the requested `model` picks (its `when_header` equal to the request's `x-textai-route`
 * header, every tag of its `when_tags` among the caller's `tags`), else the model as asked. The
 * caller's tags still restrict the group picked (residency), and its key's allowed_models must
 * allow it; no rules configured: the model as asked, at no cost. `via`: why a rule sent it
 * elsewhere, which the 403 of a key that may not use that group says.
 */
export function routeOf(
  config: Config,
  request: Request,
  model: string,
  tags: Tags | undefined,
): { model: string; via?: { asked: string; group: string; why: string } } {
  if (config.modelRoutes.length === 0) return { model };
  const header = request.headers.get(ROUTE_HEADER)?.trim();
  for (const r of config.modelRoutes) {
    if (r.model !== model) continue;
    if (r.whenHeader !== undefined && r.whenHeader !== header) continue;
    if (r.whenTags && !Object.entries(r.whenTags).every(([k, v]) => tags?.[k] === v)) continue;
    const why = [
      r.whenHeader !== undefined ? `the request's ${ROUTE_HEADER}: ${r.whenHeader}` : "",
      r.whenTags
        ? `the caller's tags ${Object.entries(r.whenTags)
            .map(([k, v]) => `${k}=${v}`)
            .join(", ")}`
        : "",
    ]
      .filter(Boolean)
      .join(" and ");
    return { model: r.group, via: { asked: model, group: r.group, why: why || "its rule for that model" } };
  }
  return { model };
}

const NO_CACHE = /no-cache|no-store/i;

/**
 * Whether the cache may answer a call that has a route and whose request allows it (`cacheable`):
 * the cache is on, and the client did not ask to bypass it (`Cache-Control: no-cache` or `no-store`).
 */
export function cacheWanted(config: Config, request: Request, cacheable: boolean): boolean {
  return config.cache.enabled && cacheable && !NO_CACHE.test(request.headers.get("cache-control") ?? "");
}

/**
 * The cache key of a call: the account, then every part that tells its answer apart (function,
 * provider, model, canonical request); a guarded answer is the answer of its guardrails (restored
 * or not), never shared with other settings.
 */
export function cacheKeyOf(guard: RequestGuard | null, accountId: string, ...parts: (string | number)[]): string {
  return guard ? digest(accountId, ...parts, JSON.stringify(guard.settings)) : digest(accountId, ...parts);
}

// ---- the rate limit: the one place it is decided (the edge's, the first trip's, a refusal's) ----

export interface LimitDeps {
  limiter: RateLimiter;
  /** with Redis: the limit, the Idempotency-Key claim and the cache lookup in one trip */
  callStarter?: CallStarter | null;
}

/**
 * The edge's limit of a call the pipeline takes in its first trip to Redis (`firstTrip`), or with
 * `limitOnRefusal` if the call is refused before that trip, so that it is refused exactly as here.
 */
export function deferLimit(state: RequestState, fn: string, rateClass: RateClass): void {
  state.limitDeferred = { fn, rateClass };
}

/** One request from the key's own bucket for `fn` (if its policy sets one), then from the account's. */
export async function takeLimit(
  deps: Pick<LimitDeps, "limiter">,
  auth: AuthInfo,
  state: RequestState,
  fn: string,
  rateClass: RateClass,
  since = performance.now(),
): Promise<void> {
  const keyLimit = auth.policy?.rate_limit_per_minute;
  const own = keyLimit !== undefined ? await deps.limiter.checkKey(auth.accountId, auth.keyId, fn, keyLimit) : null;
  const d = own && !own.allowed ? own : await deps.limiter.check(auth.accountId, auth.plan, fn, rateClass);
  mark(state, "ratelimit", since);
  applyLimit(state, fn, own, d);
}

/**
 * The RateLimit-* headers of the bucket that refused, else of the one with fewer requests left;
 * 429 when `d` (the key's own bucket when it refused, else the account's) refused.
 */
function applyLimit(state: RequestState, fn: string, own: RateDecision | null, d: RateDecision): void {
  const shown = own && d.allowed && own.remaining < d.remaining ? own : d;
  Object.assign(state.headers, rateLimitHeaders(shown));
  if (!d.allowed)
    throw limitRefusal(
      d,
      fn,
      `${d === own ? "this key's own " : ""}rate limit of ${d.limit} requests per minute for ${fn} exceeded; retry in ${d.retryAfterSeconds}s`,
    );
}

/** What a call's first trip found besides its limit. */
export interface FirstTrip {
  begun?: IdempotencyBegin;
  lookedUp?: { hit: CachedAnswer | null };
}

/**
 * The call's first trip to Redis (callstart/): the limit the edge left to it, then the
 * Idempotency-Key's claim and the cache lookup (`cacheKey`; null: none), in one round trip; a
 * refusal is thrown as the edge throws it. Nothing is asked when the edge took the limit itself.
 */
export async function firstTrip(
  deps: LimitDeps,
  state: RequestState,
  auth: AuthInfo,
  idemKey: string | null,
  bodyHash: string,
  cacheKey: string | null,
): Promise<FirstTrip> {
  const deferred = state.limitDeferred;
  if (!deferred) return {};
  const t = performance.now();
  // taken by this trip, whatever it answers (a refusal of its Idempotency-Key included)
  state.limitDeferred = undefined;
  const start: CallStart = await (deps.callStarter as CallStarter).start({
    accountId: auth.accountId,
    keyId: auth.keyId,
    fn: deferred.fn,
    limit: deps.limiter.limitFor(auth.plan, deferred.fn, deferred.rateClass),
    keyLimit: auth.policy?.rate_limit_per_minute,
    idempotency: idemKey !== null ? { key: idemKey, bodyHash, requestId: state.requestId } : undefined,
    cacheKey,
  });
  mark(state, "ratelimit", t);
  const own = start.own;
  applyLimit(state, deferred.fn, own, own && !own.allowed ? own : (start.account as RateDecision));
  return { begun: start.idempotency, lookedUp: start.hit !== undefined ? { hit: start.hit } : undefined };
}

/**
 * A call refused before its first trip (invalid, guarded, a model its key may not use): the limit
 * the edge left is taken now, and an empty bucket answers 429 first, as when the edge took it.
 */
export async function limitOnRefusal(deps: LimitDeps, auth: AuthInfo, state: RequestState): Promise<void> {
  const deferred = state.limitDeferred;
  if (!deferred) return;
  state.limitDeferred = undefined;
  await takeLimit(deps, auth, state, deferred.fn, deferred.rateClass);
}
