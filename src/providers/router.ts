import type { Config } from "../config";
import { clientClosed, GatewayError, modelNotFound, type ProviderAttempt } from "../errors";
import type { AttemptTrace, RequestTrace } from "../tracing/interface";
import { type AttemptResult, attemptFunction, OfflineBudgetExceeded } from "./attempt";
import { type BreakerState, Breakers, type CircuitBreaker } from "./breaker";
import {
  API_FN,
  capableTargets,
  type ProxyCall,
  type ProxyOutcome,
  type ProxyStreamOutcome,
  runProxy,
  runProxyStream,
} from "./chat";
import type { RequestGuard } from "./guardrails";
import { orderRoute, parseModel, planTargets, servesModel, type Target, targetModel } from "./route-plan";
import { type Provider, ProviderError, type ProxyApi, type RoutedFunction } from "./types";

export interface RouteCall {
  def: RoutedFunction;
  /** validated and normalized request */
  request: unknown;
  accountId: string;
  /** the request's "model" field: "model" or "provider/model" */
  model?: string;
  /** content-generation's provider field */
  preferProvider?: string;
  signal: AbortSignal;
  /** epoch ms */
  deadlineMs: number;
  /** the request's trace: one span per provider attempt */
  trace?: RequestTrace;
  /** the request's guardrails (docs/guardrails.md): what a provider outside the gateway is sent */
  guard?: RequestGuard;
}

export interface RouteOutcome {
  result: unknown;
  provider: string;
  model: string;
  attempts: ProviderAttempt[];
}

export interface RouterOptions {
  /** clock for the circuit breakers (tests move it) */
  now?: () => number;
}

export type OutcomeHook = (provider: string, fn: string, outcome: "ok" | "error", ms: number) => void;

type Settled = { i: number; ok: true; value: AttemptResult | null } | { i: number; ok: false; error: unknown };
interface Running {
  target: Target;
  breaker: CircuitBreaker;
  /** on the breaker's clock */
  startedAt: number;
  ctrl: AbortController;
  started: number;
  promise: Promise<Settled>;
  span?: AttemptTrace;
}

export interface ProviderStatus {
  type: string;
  /** the worst of its models' breakers */
  state: BreakerState;
  consecutiveFailures: number;
  /** the models whose breaker is not closed or has failures counted */
  models?: Record<string, { state: BreakerState; consecutiveFailures: number }>;
}

/**
 * Routes function calls over the configured providers: ordered fallback, one circuit breaker per
 * provider and model, optional hedging, overall deadline and client abort. Every provider error falls
 * through to the next provider (recorded in `attempts`): a misconfigured provider (401, 404 model)
 * must not sink a request another provider can serve.
 */
export class ProviderRouter {
  onOutcome?: OutcomeHook;
  private readonly breakers: Breakers;

  constructor(
    private readonly config: Config,
    private readonly providers: Map<string, Provider>,
    opts: RouterOptions = {},
  ) {
    this.breakers = new Breakers({ ...config.breaker, now: opts.now });
  }

  routeFor(def: RoutedFunction, preferProvider?: string): string[] {
    return orderRoute(def, this.providers, this.config.routes[def.name], preferProvider);
  }

  canServe(def: RoutedFunction): boolean {
    return this.routeFor(def).length > 0;
  }

  /** The first provider that would be tried and its model; stable while circuits open and close, so cache keys are too. */
  resolveModel(
    def: RoutedFunction,
    call: { model?: string; preferProvider?: string },
  ): { provider: string; model: string } | null {
    const first = planTargets(this.routeFor(def, call.preferProvider), this.providers, call.model)[0];
    return first ? { provider: first.name, model: targetModel(first, def.name) } : null;
  }

  /** Each provider's breakers: the worst state of its models, and the models that are not healthy. */
  status(): Record<string, ProviderStatus> {
    const rank: Record<BreakerState, number> = { closed: 0, half_open: 1, open: 2 };
    const out: Record<string, ProviderStatus> = {};
    for (const [name, p] of this.providers) {
      const s: ProviderStatus = { type: p.type, state: "closed", consecutiveFailures: 0 };
      for (const [model, b] of this.breakers.of(name)) {
        const state = b.state;
        if (rank[state] > rank[s.state]) s.state = state;
        s.consecutiveFailures = Math.max(s.consecutiveFailures, b.consecutiveFailures);
        if (state !== "closed" || b.consecutiveFailures > 0)
          s.models = { ...s.models, [model]: { state, consecutiveFailures: b.consecutiveFailures } };
      }
      out[name] = s;
    }
    return out;
  }

  /** "provider/model" ids of the remote providers' known models, for GET /v1/models. */
  models(): string[] {
    const ids: string[] = [];
    for (const p of this.providers.values()) {
      if (p.type === "local") continue;
      for (const m of p.listModels?.() ?? []) ids.push(`${p.name}/${m}`);
    }
    return ids;
  }

  async run(call: RouteCall): Promise<RouteOutcome> {
    const targets = planTargets(this.routeFor(call.def, call.preferProvider), this.providers, call.model);
    if (targets.length === 0) throw noProvider(call.def, this.config.routes[call.def.name] !== undefined);
    if (call.signal.aborted) throw clientClosed(`${call.def.name}: the client closed the request`);
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), Math.max(0, call.deadlineMs - Date.now()));
    try {
      return await this.race(call, targets, AbortSignal.any([call.signal, deadline.signal]), deadline.signal);
    } finally {
      clearTimeout(timer);
      // The call is over: aborting settles the composite signals and fires (so drops) their
      // listeners; left pending they stay reachable from the client's signal and leak per request.
      deadline.abort();
    }
  }

  /**
   * Tries targets in order. With hedge_after_ms for the function, a target that has not answered
   * in time gets company from the next one; the first valid answer wins and the others are aborted.
   */
  private async race(call: RouteCall, targets: Target[], overall: AbortSignal, deadline: AbortSignal): Promise<RouteOutcome> {
    const { def } = call;
    const attempts: ProviderAttempt[] = [];
    const running = new Map<number, Running>();
    const hedgeMs = this.config.hedgeAfterMs[def.name];
    let next = 0;

    const startNext = (): void => {
      while (next < targets.length) {
        const i = next++;
        const target = targets[i] as Target;
        const breaker = this.breakers.get(target.name, targetModel(target, def.name));
        if (target.provider.type !== "local" && !breaker.tryAcquire()) {
          attempts.push({ provider: target.name, model: targetModel(target, def.name), error: "circuit_open", ms: 0 });
          continue;
        }
        const ctrl = new AbortController();
        const signal = AbortSignal.any([overall, ctrl.signal]);
        const span = call.trace?.attempt({
          provider: target.name,
          type: target.provider.type,
          model: targetModel(target, def.name),
          operation: def.kind === "image" ? "generate_content" : "chat",
        });
        const input = {
          def,
          request: guardedRequest(call, target.provider),
          accountId: call.accountId,
          provider: target.provider,
          model: target.model,
          signal,
          cpuBudgetMs: this.config.limits.offlineCpuMs,
          headers: span?.headers,
          outbound: guardedOutbound(call),
        };
        const promise = attemptFunction(input).then(
          (value): Settled => ({ i, ok: true, value }),
          (error: unknown): Settled => ({ i, ok: false, error }),
        );
        running.set(i, { target, breaker, startedAt: breaker.time(), ctrl, started: performance.now(), promise, span });
        return;
      }
    };
    const stopAll = (): void => {
      for (const r of running.values()) {
        r.ctrl.abort();
        r.breaker.release();
        r.span?.end({ error: "aborted" });
      }
      running.clear();
    };
    const abortedP = new Promise<"abort">((resolve) => {
      if (overall.aborted) resolve("abort");
      else overall.addEventListener("abort", () => resolve("abort"), { once: true });
    });

    startNext();
    while (running.size > 0) {
      let hedgeTimer: ReturnType<typeof setTimeout> | undefined;
      const waits: Promise<Settled | "abort" | "hedge">[] = [...[...running.values()].map((r) => r.promise), abortedP];
      if (hedgeMs && next < targets.length)
        waits.push(new Promise((resolve) => (hedgeTimer = setTimeout(() => resolve("hedge"), hedgeMs))));
      const got = await Promise.race(waits);
      clearTimeout(hedgeTimer);
      if (got === "hedge") {
        startNext();
        continue;
      }
      if (got === "abort" || overall.aborted) {
        const timedOut = deadline.aborted && !call.signal.aborted;
        for (const r of running.values()) {
          const ms = Math.round(performance.now() - r.started);
          const error = timedOut ? "timeout" : "aborted";
          attempts.push({ provider: r.target.name, model: targetModel(r.target, def.name), error, ms });
          r.span?.end({ error });
        }
        stopAll();
        if (timedOut)
          throw new GatewayError("provider_timeout", `${def.name}: no provider answered before the deadline`, { attempts });
        throw new GatewayError("client_closed", `${def.name}: the client closed the request`, { attempts });
      }
      const r = running.get(got.i) as Running;
      running.delete(got.i);
      const ms = Math.round(performance.now() - r.started);
      const breaker = r.breaker;
      if (got.ok && got.value) {
        r.span?.end({ model: got.value.model, usage: got.value.usage });
        breaker.success();
        this.onOutcome?.(r.target.name, def.name, "ok", ms);
        stopAll();
        return {
          result: guardedResult(call, r.target.provider, got.value.result),
          provider: r.target.name,
          model: got.value.model,
          attempts,
        };
      }
      if (got.ok) {
        breaker.release(); // the local engine declined this request: no failure, just next
        r.span?.end({ error: "declined" });
      } else {
        if (got.error instanceof OfflineBudgetExceeded && next < targets.length) {
          // the offline engine's CPU budget ran out: a model further along the route can still answer
          breaker.release();
          attempts.push({ provider: r.target.name, model: targetModel(r.target, def.name), error: "cpu_budget", ms });
          r.span?.end({ error: "cpu_budget" });
          if (running.size === 0) startNext();
          continue;
        }
        if (got.error instanceof GatewayError) {
          // A local implementation's answer for the client (not_found, invalid_request): not a provider failure.
          breaker.release();
          r.span?.end({ error: got.error.code });
          stopAll();
          throw got.error;
        }
        const err =
          got.error instanceof ProviderError ? got.error : new ProviderError("invalid_output", "provider failed unexpectedly");
        attempts.push({
          provider: r.target.name,
          model: targetModel(r.target, def.name),
          error: err.code,
          status: err.status,
          ms,
        });
        r.span?.end({ error: err.code });
        // a function's request asks for no output length of its own: its prompt and schema are the gateway's
        this.breakers.failed(breaker, err, { startedAt: r.startedAt });
        if (err.status === 429 && err.retryAfterMs) breaker.pauseFor(err.retryAfterMs);
        this.onOutcome?.(r.target.name, def.name, "error", ms);
      }
      if (running.size === 0) startNext();
    }
    if (attempts.length === 0) throw noProvider(def, this.config.routes[def.name] !== undefined, true);
    throw new GatewayError("provider_error", `${def.name}: every provider failed (${summarize(attempts)})`, { attempts });
  }

  /**
   * The targets of an OpenAI-compatible call (never the offline engine): the configured route of
   * its function or every provider, minus those that cannot serve the request as sent.
   */
  /** The providers an OpenAI-compatible API may use: its configured route, else every remote provider. */
  proxyRoute(api: ProxyApi): string[] {
    const route = (this.config.routes[API_FN[api]] ?? [...this.providers.keys()]).filter((n) => {
      const p = this.providers.get(n);
      return p !== undefined && p.type !== "local";
    });
    return [...new Set(route)];
  }

  /**
   * Whether `model` ("model" or "provider/model") is served on `api`: some provider in its route
   * names it or matches it with a pattern (docs/openai-compat.md). GET /v1/models says the same.
   */
  servesModel(api: ProxyApi, model: string): boolean {
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

  proxyTargets(call: Pick<ProxyCall, "api" | "body">): Target[] {
    const model = typeof call.body.model === "string" ? call.body.model : undefined;
    // "" asks for the providers' own models, as before this check
    if (model && !this.servesModel(call.api, model)) throw modelNotFound(model);
    return capableTargets(call.api, call.body, planTargets(this.proxyRoute(call.api), this.providers, model));
  }

  /** An OpenAI-compatible call with the same breakers as the function endpoints. */
  proxy(call: ProxyCall, targets: Target[]): Promise<ProxyOutcome> {
    return runProxy(call, targets, { breakers: this.breakers, onOutcome: this.onOutcome });
  }

  proxyStream(call: ProxyCall, targets: Target[]): Promise<ProxyStreamOutcome> {
    return runProxyStream(call, targets, { breakers: this.breakers, onOutcome: this.onOutcome });
  }
}

/**
 * The guardrails' hook on an attempt: a provider outside the gateway gets the request redacted
 * (the same redaction for every attempt), the offline engine (inside it) the request as sent; so
 * a fallback to `local` sees the client's own text.
 */
function guardedRequest(call: RouteCall, provider: Provider): unknown {
  return call.guard && provider.type !== "local" ? call.guard.forProvider(call.request) : call.request;
}

/** What the offline engine sends out itself (a knowledge search's query to embed) goes redacted too. */
function guardedOutbound(call: RouteCall): ((text: string) => string) | undefined {
  const guard = call.guard;
  return guard ? (text) => guard.outbound(text) : undefined;
}

/** An outside provider's answer with the client's values back where it used a placeholder (restore_pii). */
function guardedResult(call: RouteCall, provider: Provider, result: unknown): unknown {
  return call.guard && provider.type !== "local" ? call.guard.restoreDeep(result) : result;
}

function summarize(attempts: ProviderAttempt[]): string {
  return attempts.map((a) => `${a.provider}: ${a.error}`).join(", ");
}

const CONFIGURE =
  "set OPENAI_API_KEY or GROQ_API_KEY, or add a [[providers]] entry (e.g. an openai-compatible base_url such as Ollama) to the TEXTAI_CONFIG file";

export function noProvider(def: RoutedFunction, routed: boolean, localDeclined = false): GatewayError {
  let message: string;
  if (def.kind === "image")
    message = `${def.name} needs a provider that generates images: set OPENAI_API_KEY or add a [[providers]] entry of type "openai" to the TEXTAI_CONFIG file`;
  else if (routed)
    message = `no provider in routes."${def.name}" can serve ${def.name}: add one that can (${CONFIGURE}) to that route`;
  else if (localDeclined)
    message = `the offline engine cannot answer this ${def.name} request and no AI provider is configured: ${CONFIGURE}`;
  else message = `${def.name} needs an AI provider: ${CONFIGURE}`;
  return new GatewayError("no_provider", message);
}
