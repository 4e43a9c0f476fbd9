import type { ProviderError } from "./types";

export type BreakerState = "closed" | "open" | "half_open";

export interface BreakerOptions {
  /** consecutive failures that open the circuit */
  failureThreshold: number;
  /** how long an open circuit refuses calls before letting one probe through */
  cooldownMs: number;
  /** injected clock (ms) so tests can move time */
  now?: () => number;
}

/**
 * Circuit breaker for one provider and model. closed -> open after `failureThreshold` consecutive failures;
 * open -> half_open once `cooldownMs` passed, where exactly one probe call is let through;
 * the probe's success closes it, its failure opens it again for another cool-down.
 *
 * Callers ask `tryAcquire()` before a call and must report the call with `success()` or
 * `failure()`; a call that ends for reasons that say nothing about the provider (the client went
 * away, the request deadline) reports `release()` so a half-open probe slot is not lost.
 *
 * A rate limit (429) is neither: the provider is alive but busy. `pauseFor()` skips it for the
 * time it asked (at most one cool-down) beside the failures' state, which the pause leaves alone:
 * it neither counts toward the threshold nor opens the circuit, and when it is over the breaker is
 * where it was (closed calls go through; a half-open one lets its probe through).
 */
export class CircuitBreaker {
  private _state: BreakerState = "closed";
  private failures = 0;
  private openedAt = 0;
  private probeInFlight = false;
  /** until when (clock ms) the provider asked to be left alone (a 429): apart from the failures' state */
  private pausedUntil = Number.NEGATIVE_INFINITY;
  /** when a call last succeeded (clock ms): the provider was alive then */
  private lastSuccessAt = Number.NEGATIVE_INFINITY;
  private readonly now: () => number;
  /** told when the circuit opens from closed and when it closes again (alerts: provider.circuit_*) */
  onChange?: (state: "open" | "closed") => void;
  /** an opening was told: its closing is told too (a pause is no opening) */
  private toldOpen = false;

  constructor(private readonly opts: BreakerOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** The state as of now (an open circuit whose cool-down has passed reads as half_open). */
  get state(): BreakerState {
    if (this._state === "open" && this.now() - this.openedAt >= this.opts.cooldownMs) return "half_open";
    return this._state;
  }

  get consecutiveFailures(): number {
    return this.failures;
  }

  /** True once a call through it has succeeded (since start): the model is real and was served. */
  get everSucceeded(): boolean {
    return this.lastSuccessAt !== Number.NEGATIVE_INFINITY;
  }

  /** True when a call may go ahead now: not paused, and in half_open only the first caller gets true. */
  tryAcquire(): boolean {
    if (this.now() < this.pausedUntil) return false;
    const state = this.state;
    if (state === "closed") return true;
    if (state === "open") return false;
    if (this.probeInFlight) return false;
    this._state = "half_open";
    this.probeInFlight = true;
    return true;
  }

  /** The breaker's clock: a call notes when it began, for timedOut. */
  time(): number {
    return this.now();
  }

  success(): void {
    // a pause stands: a call that succeeds now began before it (none goes out during one)
    this.lastSuccessAt = this.now();
    this.failures = 0;
    this.probeInFlight = false;
    this._state = "closed";
    if (this.toldOpen) {
      this.toldOpen = false;
      this.onChange?.("closed");
    }
  }

  failure(): void {
    this.failures++;
    const wasProbe = this.probeInFlight;
    this.probeInFlight = false;
    if (wasProbe || this._state === "half_open" || this.failures >= this.opts.failureThreshold) {
      if (this._state === "closed" && !this.toldOpen) {
        this.toldOpen = true;
        this.onChange?.("open");
      }
      this._state = "open";
      this.openedAt = this.now();
    }
  }

  /**
   * The provider answered a rate limit (a 429): skip it for `ms` (its Retry-After, at most one
   * cool-down; a longer pause it already has stands). Not a failure: the count of failures and the
   * circuit's state stay as they were (a half-open probe that got it frees its slot, so the next
   * call after the pause probes). Answers the pause now left in ms.
   */
  pauseFor(ms: number): number {
    this.probeInFlight = false;
    const pause = Math.min(Math.max(ms, 0), this.opts.cooldownMs);
    this.pausedUntil = Math.max(this.pausedUntil, this.now() + pause);
    return this.pauseLeftMs();
  }

  /**
   * The ms left of a pause the provider asked for (pauseFor), when that is what keeps calls away:
   * 0 when it is not paused, or when its circuit is open by failures (then `backInMs` says when it
   * may be tried). A call skipped for a pause tells the client to come back later (429), as the call
   * that got the 429 did, rather than that the provider failed.
   */
  pauseLeftMs(): number {
    if (this.state === "open") return 0;
    return Math.max(0, this.pausedUntil - this.now());
  }

  /**
   * How long until a call may go to it again: the pause left or the cool-down left, whichever ends
   * later; 0 when it may be tried now (closed or half-open; a half-open one with its probe out may
   * be free any moment).
   */
  backInMs(): number {
    const now = this.now();
    const pause = Math.max(0, this.pausedUntil - now);
    const open = this.state === "open" ? this.openedAt + this.opts.cooldownMs - now : 0;
    return Math.max(pause, open, 0);
  }

  /** The call ended without telling anything about the provider's health. */
  release(): void {
    this.probeInFlight = false;
  }

  /**
   * A call that began at `startedAt` (this breaker's clock) timed out. When another call succeeded
   * since then, the provider was answering meanwhile: the time went on this call's own work (a
   * long generation), which says nothing about the provider's health, so it does not count.
   */
  timedOut(startedAt: number): void {
    if (this.lastSuccessAt >= startedAt) this.release();
    else this.failure();
  }
}

/** A 429 without Retry-After pauses its provider and model this long (as a model group's deployment, CONTRACT section 16). */
export const DEFAULT_RATE_LIMIT_PAUSE_MS = 10_000;

/**
 * How long a failure asks its provider and model to be left alone, when it is a rate limit (a 429):
 * its Retry-After, else DEFAULT_RATE_LIMIT_PAUSE_MS; undefined for any other failure. (A 503 with a
 * Retry-After stays a failure: it says the provider is unavailable, not that it is busy.)
 */
export function rateLimitPauseMs(err: ProviderError): number | undefined {
  if (err.status !== 429) return undefined;
  return err.retryAfterMs ?? DEFAULT_RATE_LIMIT_PAUSE_MS;
}

/**
 * Only failures that say something about the provider's health count toward opening its circuit
 * (contract section 9): connection errors, timeouts, 408/409/5xx. A 429 says it is alive but busy:
 * it pauses the provider for its Retry-After instead (rateLimitPauseMs, Breakers.failed). Errors caused by this particular
 * request (too long for the context, a 400 about its content) and answers that fail a function's
 * schema or checks do not: the request still falls through to the next provider, but a model that
 * handles one prompt badly must not cut its provider off for every function and account.
 */
export function countsAgainstProvider(err: ProviderError): boolean {
  if (err.kind === "context_length" || err.kind === "aborted" || err.kind === "unsupported") return false;
  // a content filter's verdict is about this request's text
  if (err.kind === "content_filter") return false;
  if (err.kind === "invalid_output") return false;
  // A client error (400, 401, 404 model, 413, 422) is about this request or our configuration, not the provider's health.
  if (err.kind === "status") return err.status === 408 || err.status === 409 || (err.status ?? 500) >= 500;
  return true;
}

/** The output tokens a request asks for at most (max_tokens and its newer names), if it says. */
export function askedOutputTokens(body: Record<string, unknown>): number | undefined {
  let most: number | undefined;
  for (const k of ["max_tokens", "max_completion_tokens", "max_output_tokens"]) {
    const v = body[k];
    if (typeof v === "number" && Number.isFinite(v)) most = Math.max(most ?? v, v);
  }
  return most;
}

export interface FailedCall {
  /** when the call began, on its breaker's clock */
  startedAt: number;
  /** the output tokens the request asked for at most, when it said */
  outputTokens?: number;
}

/** Models a provider keeps breakers for; past it the least recently used healthy one is forgotten. */
const MAX_MODELS_PER_PROVIDER = 256;

/**
 * The circuit breakers of a router: one per provider and model, so a model that fails (or that
 * one caller keeps busy) is skipped without taking its provider's other models along. Clients
 * name models freely, so each provider keeps at most MAX_MODELS_PER_PROVIDER, forgetting the
 * least recently used closed one first (a forgotten breaker starts closed, as on start-up).
 */
export class Breakers {
  private readonly byProvider = new Map<string, Map<string, CircuitBreaker>>();
  /** told when a provider and model's circuit opens from closed or closes again */
  onChange?: (provider: string, model: string, state: "open" | "closed") => void;

  constructor(private readonly opts: BreakerOptions & { longOutputTokens: number }) {}

  get(provider: string, model: string): CircuitBreaker {
    let models = this.byProvider.get(provider);
    if (!models) {
      models = new Map();
      this.byProvider.set(provider, models);
    }
    let b = models.get(model);
    if (b) {
      // most recently used last, for forgetting
      models.delete(model);
      models.set(model, b);
      return b;
    }
    b = new CircuitBreaker(this.opts);
    b.onChange = (state) => this.onChange?.(provider, model, state);
    models.set(model, b);
    if (models.size > MAX_MODELS_PER_PROVIDER) {
      let forget: string | undefined;
      for (const [m, x] of models)
        if (x.state === "closed" && x.consecutiveFailures === 0 && x.backInMs() === 0) {
          forget = m;
          break;
        }
      models.delete(forget ?? (models.keys().next().value as string));
    }
    return b;
  }

  /** The breakers of a provider by model (those it has seen calls for). */
  of(provider: string): ReadonlyMap<string, CircuitBreaker> {
    return this.byProvider.get(provider) ?? new Map();
  }

  /**
   * Reports a call that failed with `err`. A rate limit (429) pauses the provider and model for its
   * Retry-After (rateLimitPauseMs) and counts as no failure. Another failure counts against them
   * only when it says something about their health (countsAgainstProvider), and a timeout only when
   * the request did not cause it: not when it asked for more than long_output_tokens of output (its
   * own oversized ask), nor when the model answered another call while this one waited.
   */
  failed(b: CircuitBreaker, err: ProviderError, call: FailedCall): void {
    const pause = rateLimitPauseMs(err);
    if (pause !== undefined) b.pauseFor(pause);
    else if (!countsAgainstProvider(err)) b.release();
    else if (err.kind !== "timeout") b.failure();
    else if (call.outputTokens !== undefined && call.outputTokens > this.opts.longOutputTokens) b.release();
    else b.timedOut(call.startedAt);
  }
}
