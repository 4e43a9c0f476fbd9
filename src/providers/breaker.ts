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
 * Circuit breaker for one provider. closed -> open after `failureThreshold` consecutive failures;
 * open -> half_open once `cooldownMs` passed, where exactly one probe call is let through;
 * the probe's success closes it, its failure opens it again for another cool-down.
 *
 * Callers ask `tryAcquire()` before a call and must report the call with `success()` or
 * `failure()`; a call that ends for reasons that say nothing about the provider (the client went
 * away, the request deadline) reports `release()` so a half-open probe slot is not lost.
 */
export class CircuitBreaker {
  private _state: BreakerState = "closed";
  private failures = 0;
  private openedAt = 0;
  private probeInFlight = false;
  private readonly now: () => number;

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

  /** True when a call may go ahead now; in half_open only the first caller gets true. */
  tryAcquire(): boolean {
    const state = this.state;
    if (state === "closed") return true;
    if (state === "open") return false;
    if (this.probeInFlight) return false;
    this._state = "half_open";
    this.probeInFlight = true;
    return true;
  }

  success(): void {
    this.failures = 0;
    this.probeInFlight = false;
    this._state = "closed";
  }

  failure(): void {
    this.failures++;
    const wasProbe = this.probeInFlight;
    this.probeInFlight = false;
    if (wasProbe || this._state === "half_open" || this.failures >= this.opts.failureThreshold) {
      this._state = "open";
      this.openedAt = this.now();
    }
  }

  /**
   * The provider asked for a pause (429 with Retry-After): skip it for `ms` (at most one cool-down),
   * then probe as after any cool-down. Consecutive failures still count toward the threshold.
   */
  pauseFor(ms: number): void {
    this.probeInFlight = false;
    const pause = Math.min(Math.max(ms, 0), this.opts.cooldownMs);
    if (pause <= 0) return;
    const until = this.now() + pause;
    // Never shortens a cool-down the failure count already started.
    if (this._state === "open" && this.openedAt + this.opts.cooldownMs >= until) return;
    this._state = "open";
    this.openedAt = until - this.opts.cooldownMs;
  }

  /** The call ended without telling anything about the provider's health. */
  release(): void {
    this.probeInFlight = false;
  }
}

/**
 * Only failures that say something about the provider's health open its circuit (contract
 * section 9): connection errors, timeouts, 408/409/429/5xx. Errors caused by this particular
 * request (too long for the context, a 400 about its content) and answers that fail a function's
 * schema or checks do not: the request still falls through to the next provider, but a model that
 * handles one prompt badly must not cut its provider off for every function and account.
 */
export function countsAgainstProvider(err: ProviderError): boolean {
  if (err.kind === "context_length" || err.kind === "aborted" || err.kind === "unsupported") return false;
  if (err.kind === "invalid_output") return false;
  // A client error (400, 401, 404 model, 413, 422) is about this request or our configuration, not the provider's health.
  if (err.kind === "status") return err.status === 408 || err.status === 409 || err.status === 429 || (err.status ?? 500) >= 500;
  return true;
}
