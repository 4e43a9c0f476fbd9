import type { Config } from "../config";
import { clientClosed, GatewayError, modelNotFound, type ProviderAttempt } from "../errors";
import { globMatch } from "../offline-engine/phrase-scan";
import type { RequestTrace } from "../trace";
import { type AttemptResult, attemptFunction } from "./attempt";
import { type BreakerState, Breakers } from "./breaker";
import {
  API_FN,
  capableTargets,
  type ProxyCall,
  type ProxyEnv,
  type ProxyOutcome,
  type ProxyStreamOutcome,
  runProxy,
  runProxyStream,
} from "./chat";
import { fallback, type OutcomeHook } from "./fallback";
import { type GateHow, type GroupNeed, ModelGroups, type Tags } from "./groups/groups";
import type { DeploymentState } from "./groups/state";
import type { RequestGuard } from "./guardrails";
import {
  canServeWith,
  orderRoute,
  parseModel,
  planTargets,
  routedModel,
  servesModel,
  servingTargets,
  type Target,
  targetModel,
} from "./route-plan";
import type { Provider, ProxyApi, RoutedFunction } from "./types";
import { setupAdvice, vendorOf } from "./vendors";

/** the longest model id a provider is asked about */
const MAX_MODEL_ID = 256;

export interface RouteCall {
  def: RoutedFunction;
  /** validated and normalized request */
  request: unknown;
  accountId: string;
  /** the request's "model" field: "model" or "provider/model" */
  model?: string;
  /** content-generation's provider field */
  preferProvider?: string;
  /** the key policy's allowed models: targets whose model it refuses are left out of the route */
  allowModel?: (model: string) => boolean;
  signal: AbortSignal;
  /** epoch ms */
  deadlineMs: number;
  /** the request's trace: one span per provider attempt */
  trace?: RequestTrace;
  /** the request's guardrails (docs/guardrails.md): what a provider outside the gateway is sent */
  guard?: RequestGuard;
  /** the caller's tags (a key's over its account's): a model group's deployments are restricted by them */
  tags?: Tags;
}

/** What routing reads of a call (the first provider, the cache key, the run). */
type PlanCall = { model?: string; preferProvider?: string; allowModel?: (model: string) => boolean; tags?: Tags };

export interface RouteOutcome {
  result: unknown;
  provider: string;
  model: string;
  attempts: ProviderAttempt[];
  /** an in-process engine answered (the offline engine, whatever its configured name) */
  inProcess: boolean;
  /** `provider/model` of the model group's deployment that answered (docs/routing.md) */
  deployment?: string;
}

export interface RouterOptions {
  /** clock for the circuit breakers (tests move it) */
  now?: () => number;
  /** the deployments' state of the model groups (`[[models]]`); required when some are configured */
  deploymentState?: DeploymentState;
}

export type { OutcomeHook } from "./fallback";

export interface ProviderStatus {
  type: string;
  /**
   * The provider's health, not one model's (docs/providers.md, "Breakers"): the worst breaker of
   * its vouched models, those it is configured with (default_model, models, embedding_model) and
   * those that have answered a call since start. A model only clients name, that never answered,
   * counts only while no vouched model has been tried: then the provider is open when every model
   * tried is (the best of their states). So one tenant naming a junk model the upstream fails
   * opens that model's breaker alone, and never the provider's alarm while its real models serve.
   */
  state: BreakerState;
  consecutiveFailures: number;
  /** how many of its models' breakers are open or half-open (vouched or not) */
  modelsOpen: number;
  /** the models whose breaker is not closed, has failures counted, or is paused by a 429 (`pausedMs`: the ms of it left) */
  models?: Record<string, { state: BreakerState; consecutiveFailures: number; pausedMs?: number }>;
}

/**
 * Routes function calls over the configured providers through the one fallback loop (fallback.ts,
 * shared with the OpenAI-compatible endpoints): ordered fallback, one circuit breaker per provider
 * and model, optional hedging, overall deadline and client abort. Every provider error falls
 * through to the next provider (recorded in `attempts`): a misconfigured provider (401, 404 model)
 * must not sink a request another provider can serve.
 */
export class ProviderRouter {
  onOutcome?: OutcomeHook;
  private readonly breakers: Breakers;
  private readonly proxyRoutes = new Map<ProxyApi, readonly string[]>();
  /** the model groups (docs/routing.md); null when none is configured (no cost on the other calls) */
  readonly groups: ModelGroups | null;
  /** the groups' deployment state: asked, when every deployment refused a call, whether it was reachable */
  private readonly deploymentState: DeploymentState | undefined;
  /** the /v1 calls' environments, made on first use (env, groupEnv) */
  private plainEnv?: ProxyEnv;
  private groupsEnv?: ProxyEnv;

  constructor(
    private readonly config: Config,
    private readonly providers: Map<string, Provider>,
    opts: RouterOptions = {},
  ) {
    this.breakers = new Breakers({ ...config.breaker, now: opts.now });
    this.deploymentState = opts.deploymentState;
    const models = config.models ?? [];
    if (models.length === 0) this.groups = null;
    else {
      if (!opts.deploymentState) throw new Error("model groups ([[models]]) need a deployment state");
      this.groups = new ModelGroups(models, providers, opts.deploymentState, config.pricing, config.breaker.cooldownMs);
    }
  }

  /** told when a provider and model's circuit opens or closes again (alerts, docs/alerts.md) */
  set onBreaker(fn: (provider: string, model: string, state: "open" | "closed") => void) {
    this.breakers.onChange = fn;
  }

  routeFor(def: RoutedFunction, preferProvider?: string): string[] {
    const configured = this.config.routes[def.name];
    const groups = this.groups;
    // a model group in the route stands for its deployments' providers (docs/routing.md)
    const route =
      groups && configured?.some((n) => groups.has(n))
        ? configured.flatMap((n) => (groups.has(n) ? groups.providersOf(n) : [n]))
        : configured;
    return orderRoute(def, this.providers, route, preferProvider);
  }

  canServe(def: RoutedFunction): boolean {
    return this.routeFor(def).length > 0;
  }

  /** The first provider that would be tried and its model; stable while circuits open and close, so cache keys are too. */
  resolveModel(def: RoutedFunction, call: PlanCall): { provider: string; model: string } | null {
    const first = this.plan(def, call)[0];
    if (!first) return null;
    // a group's answer is the group's (the deployment that serves it changes call to call)
    if (first.deployment) return { provider: first.deployment.group, model: first.deployment.group };
    return { provider: first.name, model: targetModel(first, def.name) };
  }

  private plan(def: RoutedFunction, call: PlanCall): Target[] {
    const targets = this.groups ? this.groupPlan(this.groups, def, call) : undefined;
    const planned = targets ?? planTargets(this.routeFor(def, call.preferProvider), this.providers, call.model);
    const allow = call.allowModel;
    return allow ? planned.filter((t) => allow(routedModel(t, def.name))) : planned;
  }

  /**
   * The targets of a function call that names a model group (its `model`, or an entry of its
   * configured route): the group's deployments that can serve it, the route's providers in their
   * place; undefined when no group is involved.
   */
  private groupPlan(groups: ModelGroups, def: RoutedFunction, call: PlanCall): Target[] | undefined {
    const serves = (t: Target) => canServeWith(t.provider, def);
    if (call.model && groups.has(call.model)) return groups.targets(call.model, call.tags).filter(serves);
    const route = this.config.routes[def.name];
    if (call.model || !route?.some((n) => groups.has(n))) return undefined;
    return route
      .flatMap((n): Target[] => {
        if (groups.has(n)) return [...groups.targets(n, call.tags)];
        const provider = this.providers.get(n);
        return provider ? [{ name: n, provider }] : [];
      })
      .filter(serves);
  }

  /** Each provider's health (ProviderStatus.state), and its models that are not healthy. */
  status(): Record<string, ProviderStatus> {
    const rank: Record<BreakerState, number> = { closed: 0, half_open: 1, open: 2 };
    const out: Record<string, ProviderStatus> = {};
    for (const [name, p] of this.providers) {
      const s: ProviderStatus = { type: p.type, state: "closed", consecutiveFailures: 0, modelsOpen: 0 };
      const configured = new Set(p.listModels?.() ?? []);
      let vouched: BreakerState | null = null;
      let unvouched: BreakerState | null = null;
      let unvouchedFailures = 0;
      for (const [model, b] of this.breakers.of(name)) {
        const state = b.state;
        if (state !== "closed") s.modelsOpen++;
        if (configured.has(model) || b.everSucceeded) {
          if (vouched === null || rank[state] > rank[vouched]) vouched = state;
          s.consecutiveFailures = Math.max(s.consecutiveFailures, b.consecutiveFailures);
        } else {
          if (unvouched === null || rank[state] < rank[unvouched]) unvouched = state;
          unvouchedFailures = Math.max(unvouchedFailures, b.consecutiveFailures);
        }
        const pausedMs = b.pauseLeftMs();
        if (state !== "closed" || b.consecutiveFailures > 0 || pausedMs > 0)
          s.models = {
            ...s.models,
            [model]: { state, consecutiveFailures: b.consecutiveFailures, ...(pausedMs > 0 ? { pausedMs } : {}) },
          };
      }
      s.state = vouched ?? unvouched ?? "closed";
      if (vouched === null) s.consecutiveFailures = unvouchedFailures;
      out[name] = s;
    }
    return out;
  }

  /** The model groups' names, then "provider/model" ids of the remote providers' known models, for GET /v1/models. */
  models(): string[] {
    const ids: string[] = this.groups?.names() ?? [];
    for (const p of this.providers.values()) {
      if (p.functionsOnly) continue;
      for (const m of p.listModels?.() ?? []) ids.push(`${p.name}/${m}`);
    }
    return ids;
  }

  async run(call: RouteCall): Promise<RouteOutcome> {
    const { def } = call;
    const targets = this.plan(def, call);
    const groups = this.groups;
    if (!groups || !targets.some((t) => t.deployment)) return this.runTargets(call, targets);
    // a model group's call: its deployments in the strategy's order, each attempt gated (groups/groups.ts)
    const need = functionNeed(call.request);
    return inOrder(groups, targets, need, (ordered) => this.runTargets(call, ordered, groups, need));
  }

  private async runTargets(
    call: RouteCall,
    targets: readonly Target[],
    groups?: ModelGroups,
    need?: GroupNeed,
  ): Promise<RouteOutcome> {
    const { def } = call;
    if (targets.length === 0) throw noProvider(def, this.config.routes[def.name] !== undefined);
    if (call.signal.aborted) throw clientClosed(`${def.name}: the client closed the request`);
    const { value, step, attempts } = await fallback<AttemptResult>({
      fn: def.name,
      operation: def.kind === "image" ? "generate_content" : "chat",
      steps: targets.map((target) => ({ target, model: targetModel(target, def.name) })),
      signal: call.signal,
      deadlineMs: call.deadlineMs,
      trace: call.trace,
      breakers: this.breakers,
      onOutcome: this.onOutcome,
      hedgeAfterMs: this.config.hedgeAfterMs[def.name],
      send: ({ step, signal, headers }) =>
        attemptFunction({
          def,
          request: guardedRequest(call, step.target.provider),
          accountId: call.accountId,
          provider: step.target.provider,
          model: step.target.model,
          signal,
          cpuBudgetMs: this.config.limits.offlineCpuMs,
          headers,
          outbound: guardedOutbound(call),
          allowModel: call.allowModel,
        }),
      gate: groups && need ? (step, go) => groups.gate(step, need.input + need.output, go, FUNCTION_USED) : undefined,
      answered: (r) => ({ model: r.model, usage: r.usage }),
      unexpected: "invalid_output",
      rateLimited: true,
      noneTried: (refused) =>
        need
          ? groupsBusy(def.name, this.deploymentState, refused)
          : noProvider(def, this.config.routes[def.name] !== undefined, true),
    });
    const inProcess = step.target.provider.inProcess === true;
    const result = guardedResult(call, step.target.provider, value.result);
    const d = step.target.deployment;
    const deployment = d?.served;
    return { result, provider: step.target.name, model: value.model, attempts, inProcess, deployment };
  }

  /**
   * The providers an OpenAI-compatible API may use: its configured route, else every remote
   * provider. Made once per API (configuration and providers are fixed for the router's life);
   * callers only read it.
   */
  proxyRoute(api: ProxyApi): readonly string[] {
    let route = this.proxyRoutes.get(api);
    if (!route) {
      const named = (this.config.routes[API_FN[api]] ?? [...this.providers.keys()]).filter((n) => {
        const p = this.providers.get(n);
        return p !== undefined && !p.functionsOnly;
      });
      route = [...new Set(named)];
      this.proxyRoutes.set(api, route);
    }
    return route;
  }

  /**
   * Whether `model` ("model" or "provider/model") is served on `api`: some provider in its route
   * names it or matches it with a pattern (docs/openai-compatible.md). GET /v1/models says the same.
   */
  servesModel(api: ProxyApi, model: string): boolean {
    if (this.groups?.has(model)) return true;
    const route = this.proxyRoute(api);
    const picked = parseModel(model, this.providers);
    if (picked.provider !== undefined) {
      const p = this.providers.get(picked.provider);
      return route.includes(picked.provider) && p !== undefined && (picked.model === undefined || servesModel(p, picked.model));
    }
    const wanted = picked.model ?? model;
    return route.some((n) => {
      const p = this.providers.get(n);
      return p !== undefined && servesModel(p, wanted);
    });
  }

  /**
   * The provider of the `/v1` routes that serves `model` ("model" or "provider/model"), for
   * GET /v1/models/{id}: one that names it; else one whose pattern matches it and whose own catalog
   * has it (asked of the provider, kept a while: model-lookup.ts), or that cannot be asked (mock).
   * Undefined when none does; a provider error when none confirms it and one could not be asked.
   */
  async modelOwner(model: string): Promise<string | undefined> {
    if (this.groups?.has(model)) return model;
    const route = [...new Set((Object.keys(API_FN) as ProxyApi[]).flatMap((api) => this.proxyRoute(api)))];
    const picked = parseModel(model, this.providers);
    const names = picked.provider !== undefined ? route.filter((n) => n === picked.provider) : route;
    const wanted = picked.model;
    // "provider/" (or a functions-only provider's name) asks for the provider's own models
    if (wanted === undefined) return names[0];
    const serving = names.filter((n) => {
      const p = this.providers.get(n);
      return p !== undefined && servesModel(p, wanted);
    });
    const named = serving.find((n) => this.providers.get(n)?.listModels?.().includes(wanted));
    if (named) return named;
    let failure: unknown;
    for (const n of serving) {
      const p = this.providers.get(n) as Provider;
      if (!p.knowsModel) return n;
      // an id no catalog could have is not sent to one (OpenAI's ids are short)
      if (wanted.length > MAX_MODEL_ID || wanted === "." || wanted === "..") continue;
      try {
        if (await p.knowsModel(wanted)) return n;
      } catch (err) {
        failure ??= err;
      }
    }
    if (failure !== undefined)
      throw new GatewayError("provider_error", failure instanceof Error ? failure.message : "the provider could not be asked");
    return undefined;
  }

  /**
   * The targets of an OpenAI-compatible call (never the offline engine): the configured route of
   * its function or every provider, minus those that cannot serve the request as sent.
   */
  proxyTargets(call: Pick<ProxyCall, "api" | "body">, tags?: Tags, routed?: string): readonly Target[] {
    // `routed`: the model group a conditional route picked for the body's model (docs/routing.md)
    const model = routed ?? (typeof call.body.model === "string" ? call.body.model : undefined);
    if (model && this.groups?.has(model)) return capableTargets(call.api, call.body, this.groups.targets(model, tags));
    // no provider at all: what to configure, whatever the model (never a 404 that blames the model)
    if (this.proxyRoute(call.api).length === 0) throw this.proxyNoProvider([call.api]);
    // "" asks for the providers' own models, as before this check
    if (model && !this.servesModel(call.api, model)) throw this.unservedModel(model, [call.api]);
    return capableTargets(call.api, call.body, servingTargets(this.proxyRoute(call.api), this.providers, model));
  }

  /**
   * Why `model` is served on none of `apis` (every /v1 answer for a model goes through here): no
   * provider in any of their routes is `503 no_provider` saying what to configure; else `404
   * model_not_found` naming GET /v1/models, the models served, and `model_patterns` for the
   * self-hosted providers of the route (docs/openai-compatible.md#which-models-are-served).
   */
  unservedModel(model: string, apis: readonly ProxyApi[]): GatewayError {
    const route = [...new Set(apis.flatMap((api) => this.proxyRoute(api)))];
    if (route.length === 0) return this.proxyNoProvider(apis);
    const id = shownModel(model);
    const served = [...new Set(route.flatMap((n) => this.providers.get(n)?.listModels?.() ?? []))];
    const shown = served.slice(0, 5).map((m) => `\`${m}\``);
    const own = route.filter((n) => selfHosted(this.providers.get(n)));
    const patterns =
      own.length > 0
        ? `, or, to forward it to ${own.join(" or ")} (a self-hosted provider serves only the models its config entry names), add a \`model_patterns\` that matches it to that [[providers]] entry (e.g. model_patterns = ["${id}"], or ["*"] for any id)`
        : " (a provider forwards only the ids its `model_patterns` match)";
    const list = shown.length ? `: ${shown.join(", ")}${served.length > shown.length ? ", ..." : ""}` : "";
    // a vendor's entry whose default patterns would take it but for its being another vendor's model
    const others = route.filter((n) => {
      const p = this.providers.get(n);
      return p?.othersModels?.some((f) => globMatch(f, model)) && p.modelPatterns?.some((f) => globMatch(f, model));
    });
    const whose =
      others.length > 0
        ? `; it is another vendor's model: ${others.join(" and ")} ${others.length > 1 ? "are" : "is"} sent only ${others.length > 1 ? "their" : "its"} own vendor's models unless ${others.length > 1 ? "their entries'" : "its entry's"} \`model_patterns\` name it`
        : "";
    return modelNotFound(
      `The model \`${id}\` is not served by this gateway's /v1 providers (${route.join(", ")}): ask for one they serve (GET /v1/models lists them${list})${patterns}${whose}; see ${MODELS_DOC}.`,
    );
  }

  /**
   * Why a function call's `model` is served by no provider of its route: 404 model_not_found naming
   * the route (null when one serves it, when it names a model group, or when it is `provider/model`
   * of a provider of the route, which picks both). The offline engine does not count: it answers
   * with its own model. A walkthrough (2026-12-06): `"model": "openai/gpt-4o"` on a gateway without
   * an `openai` provider was answered by the offline engine, saying nothing of the model asked for.
   */
  unservedFunctionModel(def: RoutedFunction, model: string, preferProvider?: string): GatewayError | null {
    if (this.groups?.has(model)) return null;
    const route = this.routeFor(def, preferProvider);
    const picked = parseModel(model, this.providers);
    // `provider/model` picks both (CONTRACT section 9): a provider of the route is sent the model it is named with
    if (picked.provider !== undefined) {
      if (route.includes(picked.provider)) return null;
    } else if (
      route.some((n) => {
        const p = this.providers.get(n);
        return p !== undefined && p.functionsOnly !== true && servesModel(p, picked.model ?? model);
      })
    )
      return null;
    const id = shownModel(model);
    const slash = id.indexOf("/");
    const prefix = slash > 0 ? id.slice(0, slash) : "";
    const hint =
      prefix && !this.providers.has(prefix)
        ? ` (\`${prefix}\` is no provider of this gateway: its [[providers]] entries are ${[...this.providers.keys()].join(", ")})`
        : "";
    return modelNotFound(
      `The model \`${id}\` is served by no provider of ${def.name}'s route (${route.join(", ") || "none"})${hint}: name a model one of them serves, or leave \`model\` out for each provider's own; see ${PROVIDERS_DOC}.`,
    );
  }

  /** No provider in the routes of `apis`: 503 no_provider, saying what to set. */
  proxyNoProvider(apis: readonly ProxyApi[]): GatewayError {
    const fns = apis.map((api) => API_FN[api]);
    const routed = fns.filter((fn) => this.config.routes[fn] !== undefined);
    const where = apis.length === 1 ? `/v1/${apis[0]}` : "/v1";
    const message =
      routed.length > 0
        ? `no provider in routes."${routed[0]}" can serve ${where} (the offline engine serves no /v1 route): add one to that route (${CONFIGURE}); see ${PROVIDERS_DOC}`
        : `${where} needs an AI provider and none is configured: ${CONFIGURE}, then restart the gateway; see ${PROVIDERS_DOC}`;
    return new GatewayError("no_provider", message);
  }

  /** An OpenAI-compatible call with the same breakers as the function endpoints. */
  proxy(call: ProxyCall, targets: readonly Target[]): Promise<ProxyOutcome> {
    return this.proxyRun(call, targets, runProxy);
  }

  proxyStream(call: ProxyCall, targets: readonly Target[]): Promise<ProxyStreamOutcome> {
    return this.proxyRun(call, targets, runProxyStream);
  }

  /** `run` over a /v1 call's targets: a model group's in its order, in the group's environment; else as given. */
  private proxyRun<R>(
    call: ProxyCall,
    targets: readonly Target[],
    run: (call: ProxyCall, targets: readonly Target[], env: ProxyEnv) => Promise<R>,
  ): Promise<R> {
    const groups = this.groups;
    const need = call.need;
    if (groups && need && targets.some((t) => t.deployment))
      return inOrder(groups, targets, need, (ordered) => run(call, ordered, this.groupEnv(groups)));
    return run(call, targets, this.env());
  }

  /** The /v1 calls' environment (made once, again only when `onOutcome` is replaced). */
  private env(): ProxyEnv {
    let e = this.plainEnv;
    if (!e || e.onOutcome !== this.onOutcome) e = this.plainEnv = { breakers: this.breakers, onOutcome: this.onOutcome };
    return e;
  }

  /** A model group call's: each attempt on a deployment gated (groups/groups.ts) at the call's upper-bound tokens. */
  private groupEnv(groups: ModelGroups): ProxyEnv {
    let e = this.groupsEnv;
    if (!e || e.onOutcome !== this.onOutcome)
      e = this.groupsEnv = {
        breakers: this.breakers,
        onOutcome: this.onOutcome,
        gate: (step, go, how, call) => groups.gate(step, tokensOf(call.need), go, how),
        noneTried: (call, refused) => groupsBusy(API_FN[call.api], this.deploymentState, refused),
      };
    return e;
  }
}

/** A call's upper-bound tokens for its deployments' windows (0 without an estimate). */
const tokensOf = (need: GroupNeed | undefined): number => (need ? need.input + need.output : 0);

/**
 * `run` over a model group call's targets in its strategies' order (groups.order); when the order
 * reserved its first deployment, the reservation is let go once the call is over (groups.settle).
 * An order made at once that reserved nothing runs without a promise of its own.
 */
function inOrder<R>(
  groups: ModelGroups,
  targets: readonly Target[],
  need: GroupNeed,
  run: (ordered: readonly Target[]) => Promise<R>,
): Promise<R> {
  let asked: readonly Target[] | Promise<readonly Target[]>;
  try {
    asked = groups.order(targets, need);
  } catch (err) {
    return Promise.reject(err);
  }
  if (!(asked instanceof Promise) && !groups.holds(asked)) return run(asked);
  return (async () => {
    const ordered = await asked;
    try {
      return await run(ordered);
    } finally {
      groups.settle(ordered);
    }
  })();
}

/**
 * A function call's upper-bound tokens for a model group's choice: every byte of its request at
 * most one token, plus the template (as /v1 holds it, docs/pricing.md); its output is the function's.
 */
function functionNeed(request: unknown): GroupNeed {
  return { input: Buffer.byteLength(JSON.stringify(request) ?? "") + 256, output: 0 };
}

/** The tokens a function's answer reports (a model group's tpm window is corrected to them). */
const FUNCTION_USED: GateHow<AttemptResult> = { used: (r) => (r.usage ? r.usage.input + r.usage.output : undefined) };

/**
 * Every deployment of the call's groups refused it at its gate (at its rpm/tpm, or cooling down):
 * `refused`, the fallback's 429 naming each with why, its Retry-After the time until the first can
 * take the call; but 503 while the shared deployment state is unreachable (the refusal may be the
 * outage's, CONTRACT section 11). Without `refused` (every deployment declined the request): 429.
 */
function groupsBusy(fn: string, state: DeploymentState | undefined, refused?: GatewayError): GatewayError {
  if (state?.unreachable?.())
    return new GatewayError(
      "service_unavailable",
      `${fn}: the model group's shared deployment state (Redis) cannot be reached; retry shortly`,
      { headers: { "Retry-After": "1" }, attempts: refused?.attempts },
    );
  if (refused) return refused;
  return new GatewayError(
    "rate_limited",
    `${fn}: every deployment of the model group is at its rpm/tpm limit or cooling down after a 429; retry shortly`,
    { headers: { "Retry-After": "1" } },
  );
}

/**
 * The guardrails' hook on an attempt: a provider outside the gateway gets the request redacted
 * (the same redaction for every attempt), the offline engine (in process) the request as sent; so
 * a fallback to `local` sees the client's own text.
 */
function guardedRequest(call: RouteCall, provider: Provider): unknown {
  return call.guard && provider.inProcess !== true ? call.guard.forProvider(call.request) : call.request;
}

/** What the offline engine sends out itself (a knowledge search's query to embed) goes redacted too. */
function guardedOutbound(call: RouteCall): ((text: string) => string) | undefined {
  const guard = call.guard;
  return guard ? (text) => guard.outbound(text) : undefined;
}

/** An outside provider's answer with the client's values back where it used a placeholder (restore_pii). */
function guardedResult(call: RouteCall, provider: Provider, result: unknown): unknown {
  return call.guard && provider.inProcess !== true ? call.guard.restoreDeep(result) : result;
}

const SETUP = setupAdvice();
const CONFIGURE = `set ${SETUP.keys}, or add a [[providers]] entry${SETUP.hint ? ` (e.g. ${SETUP.hint})` : ""} to the TEXTAI_CONFIG file`;
const PROVIDERS_DOC = "docs/providers.md";

/** A model id as an error message shows it: at most 200 characters (a caller's id may be long). */
const shownModel = (model: string): string => (model.length > 200 ? `${model.slice(0, 200)}...` : model);
const MODELS_DOC = "docs/openai-compatible.md#which-models-are-served";
/** Whether a provider's catalog is the operator's: it serves only the models the config file names, unless `model_patterns` opens it. */
const selfHosted = (p: Provider | undefined) => p !== undefined && vendorOf(p.type)?.catalog === "operator";

export function noProvider(def: RoutedFunction, routed: boolean, localDeclined = false): GatewayError {
  let message: string;
  if (def.kind === "image")
    message = `${def.name} needs a provider that generates images: set ${SETUP.imageKeys} or add a [[providers]] entry of type ${SETUP.imageTypes} to the TEXTAI_CONFIG file`;
  else if (routed)
    message = `no provider in routes."${def.name}" can serve ${def.name}: add one that can (${CONFIGURE}) to that route`;
  else if (localDeclined)
    message = `the offline engine cannot answer this ${def.name} request and no AI provider is configured: ${CONFIGURE}`;
  else message = `${def.name} needs an AI provider: ${CONFIGURE}`;
  return new GatewayError("no_provider", message);
}
