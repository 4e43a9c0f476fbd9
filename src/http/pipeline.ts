import type { AuthInfo } from "../auth/interface";
import { keyBudget, modelFilter } from "../auth/policy";
import { canonicalJson, digest } from "../cache/canonical";
import type { CachedAnswer, ResponseCache } from "../cache/interface";
import type { Config } from "../config";
import { chargedAnswer } from "../credits/charged-answer";
import type { CreditLedger, Reservation } from "../credits/interface";
import { GatewayError, type ProviderAttempt } from "../errors";
import type { AnyFunctionDef } from "../functions/define";
import { offlineNotes, withDeclineReason } from "../functions/offline-reach";
import { validateAgainst } from "../functions/validate";
import type { IdempotencyBegin, IdempotencyStore } from "../idempotency/interface";
import type { Logger } from "../log";
import { fixedLabels, type Metrics } from "../metrics";
import { budgetText, CpuBudgetExceeded, withCpuBudget } from "../offline-engine/budget";
import type { Tags } from "../providers/groups/groups";
import { textsOf } from "../providers/guard-walk";
import type { GuardCounts, RequestGuard } from "../providers/guardrails";
import type { RouteCall, RouteOutcome } from "../providers/router";
import type { SecretStore } from "../storage/secrets";
import {
  admitGuarded,
  admitModels,
  admitTags,
  cacheKeyOf,
  cacheWanted,
  type FirstTrip,
  firstTrip,
  type LimitDeps,
  limitOnRefusal,
  routeOf,
} from "./admission";
import type { Edge } from "./edge";
import { renderSuccess } from "./envelope";
import { countRedactions, markGuarded } from "./guardrails";
import { idempotencyKeyOf, refuseRepeat, replayStored } from "./idempotent";
import { mark, type RequestState, serverTiming } from "./state";

/** What the pipeline needs from the provider router. */
export interface FunctionRouter {
  run(call: RouteCall): Promise<RouteOutcome>;
  resolveModel(
    def: AnyFunctionDef,
    call: { model?: string; preferProvider?: string; allowModel?: (model: string) => boolean; tags?: Tags },
  ): { provider: string; model: string } | null;
  /** why the function's route serves no provider of `model` (404 model_not_found), or null */
  unservedFunctionModel?(def: AnyFunctionDef, model: string, preferProvider?: string): GatewayError | null;
}

/** The services the pipeline asks; the limiter and the first trip are the admission stage's (`LimitDeps`). */
export interface PipelineDeps extends LimitDeps {
  config: Config;
  ledger: CreditLedger;
  cache: ResponseCache;
  idempotency: IdempotencyStore;
  router: FunctionRouter;
  metrics: Metrics;
  secrets: SecretStore;
  logger?: Logger;
}

interface Answer extends CachedAnswer {
  attempts: ProviderAttempt[];
}

/** Where a call goes (FunctionPipeline.route). */
interface Route {
  model?: string;
  preferProvider?: string;
  allowModel?: (model: string) => boolean;
  guard: RequestGuard | null;
  /** the caller's tags (residency): a model group's deployments are restricted by them */
  tags?: Tags;
  /** null: the cache is bypassed */
  cacheKey: string | null;
  /** the key policy refuses the call's model: thrown where the call meets it (after its Idempotency-Key) */
  refusal?: unknown;
}

/** What a call finds when the edge took its limit: no first trip. */
const NO_TRIP: FirstTrip = Object.freeze({});
const isNull = (x: unknown) => x === null;

/** Runs `work` under a CPU budget of `ms`; past it the request is a 413, before anything is held or charged. */
function withinCpuBudget<T>(ms: number, fn: string, work: () => T): T {
  try {
    return withCpuBudget(ms, work);
  } catch (err) {
    if (!(err instanceof CpuBudgetExceeded)) throw err;
    throw new GatewayError(
      "payload_too_large",
      `${fn}: reading this request needs more than the CPU budget of ${budgetText(err.budgetMs)} per call; send a smaller request`,
    );
  }
}

/**
 * The headers a stored answer keeps for its replays: the guardrails' and `X-Cache` (every function
 * answer carries it: CONTRACT section 4); the rest is the replay's own (its request id, its Server-Timing).
 */
function keptHeaders(state: RequestState): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of ["x-textai-guardrails", "X-Cache"]) {
    const v = state.headers[name];
    if (v !== undefined) kept[name] = v;
  }
  return kept;
}

/**
 * The one pipeline every function runs through: read body, authenticate, rate-limit, validate,
 * idempotency, reserve credits, cache or single-flight or provider route, settle, envelope.
 */
export class FunctionPipeline {
  /** each function's metric labels (metrics.ts fixedLabels) */
  private fnLabels = new Map<string, Record<string, string>>();
  constructor(private deps: PipelineDeps) {}

  costOf(def: AnyFunctionDef): number {
    return this.deps.config.costs[def.name] ?? def.cost;
  }

  /**
   * `edge`: what the request edge resolved (the edge plugin's `key: functionEdge(def)`, or its
   * `sessionCall` for the dashboard's playground, the session's account as the caller); `params` (path parameters such as a
   * knowledge base id) are merged into the body before validation.
   */
  async handle(def: AnyFunctionDef, request: Request, state: RequestState, edge: Edge, params?: Record<string, string>) {
    if (params) Object.assign(edge.body, params);
    // the edge leaves the limit here only when the app has a first trip to take it in (deps.callStarter)
    if (!state.limitDeferred) return this.run(def, request, state, edge);
    try {
      return await this.run(def, request, state, edge);
    } catch (err) {
      await limitOnRefusal(this.deps, edge.auth, state);
      throw err;
    }
  }

  private async run(def: AnyFunctionDef, request: Request, state: RequestState, edge: Edge): Promise<Response> {
    const { config } = this.deps;
    const { auth, body } = edge;
    const t = performance.now();

    // Reading the request is request-shaped work like the offline engine's (a caller's schema is
    // parsed here): it runs under the same CPU budget, before credits are held.
    let req = withinCpuBudget(config.limits.offlineCpuMs, def.name, () => {
      // strict: an unknown (misspelled) field is a 400, not silently ignored and charged; api_key may ride in the body
      const valid = validateAgainst<Record<string, unknown>>(def.request, body, config.limits.maxTextChars, {
        strict: true,
        ignore: ["api_key"],
      });
      return def.normalize ? def.normalize(valid) : valid;
    });
    // guardrails (docs/guardrails.md): a request carrying a blocked kind ends here, uncharged and
    // before anything (a `prepare` that embeds a query included) sends it anywhere
    const guard = admitGuarded(this.deps, auth, state, textsOf, req);
    if (def.prepare)
      req = await def.prepare(req, {
        accountId: auth.accountId,
        signal: request.signal,
        secret: (name) => this.deps.secrets.get(name),
        outbound: guard ? (text) => guard.outbound(text) : undefined,
        allowModel: modelFilter(auth.policy),
      });
    mark(state, "validate", t);

    const idemKey = idempotencyKeyOf(request);
    const route = this.route(def, req, auth, request, guard);
    const bodyHash = idemKey !== null ? digest(def.name, canonicalJson(req)) : "";
    // a call its key's policy refuses looks nothing up
    const first = state.limitDeferred
      ? await firstTrip(this.deps, state, auth, idemKey, bodyHash, route.refusal === undefined ? route.cacheKey : null)
      : NO_TRIP;
    let paidBy: string | null = null;
    if (idemKey !== null) {
      const begun = await this.beginIdempotent(auth, idemKey, bodyHash, state, first.begun);
      if (begun instanceof Response) return begun;
      paidBy = begun;
    }
    let res: Response;
    try {
      res = await this.execute(def, req, auth, request, state, route, paidBy, idemKey !== null, first.lookedUp);
    } catch (err) {
      // nothing was charged: the key is free for a retry at once
      if (idemKey !== null) await this.deps.idempotency.abandon(auth.accountId, idemKey);
      throw err;
    }
    if (idemKey === null) return res;
    try {
      // kept before the answer leaves, so a retry after a crash from here on replays it
      await this.deps.idempotency.complete(auth.accountId, idemKey, {
        status: res.status,
        body: state.responseBody ?? "",
        // a replay says what the guardrails did, as the answer did
        headers: keptHeaders(state),
      });
    } catch (err) {
      // The call is charged and answered; only keeping its answer failed (database locked, Redis
      // gone). The record stays in flight, not abandoned: once its lease ends, a retry takes it
      // over, finds this charge in the ledger and runs free, where an abandoned key charged again.
      this.deps.logger?.log("warn", "idempotency: the answer could not be kept", {
        request_id: state.requestId,
        error_message: (err as Error).message,
      });
    }
    return res;
  }

  private async beginIdempotent(
    auth: AuthInfo,
    key: string,
    bodyHash: string,
    state: RequestState,
    /** the claim made by the call's first trip, if it made one */
    claimed?: IdempotencyBegin,
  ): Promise<Response | string | null> {
    const begun = claimed ?? (await this.deps.idempotency.begin(auth.accountId, key, bodyHash, state.requestId));
    refuseRepeat(begun);
    if (begun.state === "replay") return replayStored(begun.response, state, await this.deps.ledger.balance(auth.accountId));
    if (!begun.earlier) return null;
    // an earlier call with this key died in flight: if it was killed after its charge committed and
    // before its answer was kept, the client paid for an answer it never got, so this run is free
    try {
      return await this.deps.ledger.chargedRequest(auth.accountId, begun.earlier);
    } catch (err) {
      await this.deps.idempotency.abandon(auth.accountId, key);
      throw err;
    }
  }

  /**
   * Where the call goes and its cache key, worked out before any trip (nothing here waits); the
   * key policy's refusal of its model is kept to be thrown where the call would meet it.
   */
  private route(
    def: AnyFunctionDef,
    req: Record<string, unknown>,
    auth: AuthInfo,
    request: Request,
    guard: RequestGuard | null,
  ): Route {
    const { config, router } = this.deps;
    const asked = typeof req.model === "string" && req.model ? req.model : undefined;
    const preferProvider = def.name === "content-generation" && typeof req.provider === "string" ? req.provider : undefined;
    const out: Route = { model: asked, preferProvider, allowModel: modelFilter(auth.policy), guard, cacheKey: null };
    try {
      // the caller's tags (a key contradicting its account is refused), then a conditional route's
      // group in place of the model asked for (docs/routing.md)
      const tags = admitTags(auth);
      const route = asked === undefined ? undefined : routeOf(config, request, asked, tags);
      const model = route?.model;
      out.tags = tags;
      out.model = model;
      const unserved = model === undefined ? null : (router.unservedFunctionModel?.(def, model, preferProvider) ?? null);
      if (unserved) throw unserved;
      const resolved = admitModels(
        auth.policy,
        def.name,
        asked,
        (allowModel) => router.resolveModel(def, { model, preferProvider, allowModel, tags }),
        isNull,
        route?.via,
      );
      if (resolved !== null && cacheWanted(config, request, true))
        out.cacheKey = cacheKeyOf(
          guard,
          auth.accountId,
          def.name,
          def.promptVersion,
          resolved.provider,
          resolved.model,
          canonicalJson(req),
        );
    } catch (err) {
      out.refusal = err;
    }
    return out;
  }

  private async execute(
    def: AnyFunctionDef,
    req: Record<string, unknown>,
    auth: AuthInfo,
    request: Request,
    state: RequestState,
    route: Route,
    /** the earlier request of this Idempotency-Key whose charge already paid for this answer */
    paidBy: string | null,
    /** the call carries an Idempotency-Key: its charge can be voided by a retry that takes the key over */
    idempotent = false,
    /** the cache's answer, looked up in the call's first trip */
    lookedUp?: { hit: CachedAnswer | null },
  ): Promise<Response> {
    const { config, ledger, cache, router } = this.deps;
    if (paidBy !== null) state.headers["Idempotent-Recovered"] = paidBy;
    if (route.refusal !== undefined) throw route.refusal;
    const { model, preferProvider, allowModel, guard, tags } = route;

    const cost = this.costOf(def);
    const insufficient = async () =>
      new GatewayError(
        "insufficient_credits",
        `insufficient credits: ${def.name} costs ${cost}, balance is ${await ledger.balance(auth.accountId)}`,
      );
    const charge = (provider: string | null, cached: boolean) => ({
      keyId: auth.keyId,
      fn: def.name,
      requestId: state.requestId,
      provider,
      cached,
      signal: request.signal,
      idempotent,
    });

    const call: RouteCall = {
      def,
      request: req,
      accountId: auth.accountId,
      model,
      preferProvider,
      allowModel,
      signal: request.signal,
      deadlineMs: state.startedAt + config.limits.requestTimeoutMs,
      trace: state.trace,
      guard: guard ?? undefined,
      tags,
    };
    const { answer, reservation, cached } = await chargedAnswer<Answer>({
      ledger,
      cache,
      mark: (stage, since) => mark(state, stage, since),
      accountId: auth.accountId,
      cost,
      budget: keyBudget(auth),
      cacheKey: route.cacheKey,
      lookedUp,
      details: charge,
      insufficient,
      produce: async () => {
        const out = await router.run(call).catch((err: unknown) => {
          throw withDeclineReason(req, err);
        });
        if (out.deployment) state.headers["x-textai-deployment"] = out.deployment;
        const offline = out.inProcess ? offlineNotes(req) : undefined;
        // meta.guardrails: kept with the answer, so a cache hit of it says so too
        const redacted = countRedactions(guard, this.deps.metrics);
        const notes = offline || redacted ? { ...offline, ...(redacted ? { guardrails: { redacted } } : {}) } : undefined;
        return {
          json: JSON.stringify(out.result),
          provider: out.provider,
          model: out.model,
          attempts: out.attempts,
          ...(notes ? { notes } : {}),
        };
      },
      fromCache: (hit) => ({ ...hit, attempts: [] }),
      paid: paidBy !== null,
    });
    if (reservation.voided) {
      // this call outlived its Idempotency-Key's lease and a retry took the key over and voided
      // its charge before it landed: the retry is charged, this answer goes out free
      state.headers["Idempotent-Superseded"] = "true";
      this.deps.logger?.log("warn", "idempotency: a retry took this call's key over; answered uncharged", {
        request_id: state.requestId,
      });
    }
    return this.respond(def, state, reservation, answer, cached);
  }

  private respond(def: AnyFunctionDef, state: RequestState, r: Reservation, answer: Answer, cached: boolean): Response {
    const m = this.deps.metrics;
    const labels = fixedLabels(this.fnLabels, def.name, () => ({ function: def.name }));
    m.inc("textai_credits_charged_total", "Credits charged", labels, r.amount);
    m.inc(
      cached ? "textai_cache_hits_total" : "textai_cache_misses_total",
      cached ? "Answers served from the cache" : "Answers not served from the cache",
      labels,
    );
    state.provider = answer.provider;
    state.model = answer.model;
    state.credits = r.amount;
    state.cached = cached;
    state.headers["X-Cache"] = cached ? "HIT" : "MISS";
    markGuarded(state, (answer.notes?.guardrails as { redacted?: GuardCounts } | undefined)?.redacted);
    const body = renderSuccess(state.requestId, `${def.name} completed`, answer.json, {
      credits_deducted: r.amount,
      credits_remaining: r.remaining,
      execution_time_ms: Math.round(performance.now() - state.startedPerf),
      cached,
      provider: answer.provider,
      model: answer.model,
      attempts: answer.attempts,
      ...answer.notes,
    });
    state.responseBody = body;
    mark(state, "total", state.startedPerf);
    return new Response(body, {
      status: 200,
      headers: { "content-type": "application/json", "Server-Timing": serverTiming(state), ...state.headers },
    });
  }
}
