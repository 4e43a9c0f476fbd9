import { GatewayError, type ProviderAttempt } from "../errors";
import type { AttemptEnd, AttemptTrace, RequestTrace } from "../trace";
import type { Breakers, CircuitBreaker } from "./breaker";
import { OfflineBudgetExceeded } from "./local";
import type { Target } from "./route-plan";
import { ProviderError, type ProviderErrorKind } from "./types";

/** One try: a target and the model it is sent. */
export interface Step {
  target: Target;
  model: string;
}

export type OutcomeHook = (provider: string, fn: string, outcome: "ok" | "error", ms: number) => void;

/** What one provider is sent: `send` gets it in `sendAttempt`, the one place an attempt leaves for a provider. */
export interface Sending {
  step: Step;
  /** ends with the call's deadline, the client's abort, or this attempt losing a hedge */
  signal: AbortSignal;
  /** the trace's traceparent for the provider call */
  headers?: Record<string, string>;
}

/** One fallback: the function endpoints, the OpenAI-compatible endpoints and their streams all run it. */
export interface FallbackSpec<T> {
  /** function name in attempts, metrics and messages ("sentiment-analysis", "chat-completions") */
  fn: string;
  /** GenAI operation of the attempt spans: chat, embeddings, generate_content */
  operation: string;
  steps: Step[];
  /** the client's signal */
  signal: AbortSignal;
  /** epoch ms: no attempt runs past it (a stream: no first event after it) */
  deadlineMs: number;
  trace?: RequestTrace;
  breakers: Breakers;
  onOutcome?: OutcomeHook;
  /** a step that has not answered in this many ms gets company from the next one; the first answer wins */
  hedgeAfterMs?: number;
  /** the provider call; null: the provider declines this request (no failure, the route goes on) */
  send(sending: Sending): Promise<T | null>;
  /** what the attempt's span ends with on an answer; undefined: the span stays open (a stream ends it) */
  answered(value: T): AttemptEnd | undefined;
  /** a stream keeps using the signal after the first event; a plain answer is done with it */
  keepSignal?: boolean;
  /** kind of the ProviderError a thrown non-ProviderError counts as */
  unexpected: ProviderErrorKind;
  /** the output tokens the request asks for (the breaker's rule for what a timeout means) */
  outputTokens?: number;
  /** after a provider failure: the steps still to try (it may throw the client's answer instead) */
  afterFailure?(error: ProviderError, step: Step, left: Step[], attempts: ProviderAttempt[]): Step[];
  /** every provider tried answered 429: 429 rate_limited with the shortest Retry-After */
  rateLimited?: boolean;
  /** nothing was tried (every provider declined): this error */
  noneTried?(): GatewayError;
}

export interface FallbackOutcome<T> {
  value: T;
  step: Step;
  attempts: ProviderAttempt[];
  /** the winner's span, still open when `answered` said so */
  span?: AttemptTrace;
}

type Settled<T> = { i: number; ok: true; value: T | null } | { i: number; ok: false; error: unknown };
interface Running<T> {
  step: Step;
  breaker: CircuitBreaker;
  /** on the breaker's clock */
  startedAt: number;
  /** aborts this attempt alone (a hedged call's losers) */
  ctrl?: AbortController;
  started: number;
  promise: Promise<Settled<T>>;
  span?: AttemptTrace;
}

/**
 * The one place an attempt is sent to a provider: every function call, OpenAI-compatible call and
 * stream reaches a provider through here (`step.target.provider.inProcess` says whether it leaves
 * the process). A guard on what providers are sent belongs here.
 */
function sendAttempt<T>(spec: FallbackSpec<T>, sending: Sending): Promise<T | null> {
  return spec.send(sending);
}

/**
 * Tries the steps in order, each once, its breaker permitting (in-process engines have none).
 * With `hedgeAfterMs`, a step that has not answered in time gets company from the next one; the
 * first answer wins and the others are aborted. The deadline and the client's signal end the
 * whole call (provider_timeout, client_closed). A provider failure is recorded in `attempts`,
 * counted by its breaker (Breakers.failed) and the route goes on; a GatewayError an attempt throws
 * is the client's answer and ends it (the offline engine's CPU budget only when no step is left).
 */
export async function fallback<T>(spec: FallbackSpec<T>): Promise<FallbackOutcome<T>> {
  // One controller and one timer per call: the deadline's timer or the client's leaving (one
  // listener, removed when the call is over) aborts it; no composite signal to build or to settle.
  const overall = new AbortController();
  let timedOut = false;
  const timer = setTimeout(
    () => {
      timedOut = true;
      overall.abort();
    },
    Math.max(0, spec.deadlineMs - Date.now()),
  );
  const client = spec.signal;
  const onClientAbort = () => overall.abort();
  if (client.aborted) overall.abort();
  else client.addEventListener("abort", onClientAbort, { once: true });
  let served = false;
  try {
    const out = await loop(spec, overall.signal, () => timedOut && !client.aborted);
    served = true;
    return out;
  } finally {
    clearTimeout(timer);
    // A stream being served keeps the client's listener: its upstream request still runs on the
    // signal, and goes when the client does. Otherwise the call is over and nothing may keep it.
    if (!(spec.keepSignal && served)) client.removeEventListener("abort", onClientAbort);
  }
}

async function loop<T>(spec: FallbackSpec<T>, overall: AbortSignal, timedOut: () => boolean): Promise<FallbackOutcome<T>> {
  const { fn } = spec;
  const attempts: ProviderAttempt[] = [];
  const running = new Map<number, Running<T>>();
  let queue = [...spec.steps];
  let count = 0;
  let ran = 0;
  let limited = 0;
  let retryAfterMs: number | undefined;

  const startNext = (): void => {
    for (let step = queue.shift(); step; step = queue.shift()) {
      const { target, model } = step;
      const breaker = spec.breakers.get(target.name, model);
      if (!target.provider.inProcess && !breaker.tryAcquire()) {
        const pause = breaker.pauseLeftMs();
        if (pause > 0) {
          // the provider's own 429 still holds: counted as that answer again, with the Retry-After left
          attempts.push({ provider: target.name, model, error: "paused", status: 429, ms: 0 });
          ran++;
          limited++;
          retryAfterMs = Math.min(retryAfterMs ?? pause, pause);
        } else attempts.push({ provider: target.name, model, error: "circuit_open", ms: 0 });
        continue;
      }
      const i = count++;
      // only a hedged call has losers to abort while the call goes on; otherwise the overall signal is the attempt's
      const ctrl = spec.hedgeAfterMs ? new AbortController() : undefined;
      const signal = ctrl ? AbortSignal.any([overall, ctrl.signal]) : overall;
      const span = spec.trace?.attempt({
        provider: target.name,
        type: target.provider.type,
        inProcess: target.provider.inProcess,
        model,
        operation: spec.operation,
      });
      const promise = sendAttempt(spec, { step, signal, headers: span?.headers }).then(
        (value): Settled<T> => ({ i, ok: true, value }),
        (error: unknown): Settled<T> => ({ i, ok: false, error }),
      );
      running.set(i, { step, breaker, startedAt: breaker.time(), ctrl, started: performance.now(), promise, span });
      return;
    }
  };
  const stopAll = (): void => {
    for (const r of running.values()) {
      r.ctrl?.abort();
      r.breaker.release();
      r.span?.end({ error: "aborted" });
    }
    running.clear();
  };
  // made on first need: a listener on the composite signal is a real cost on every call
  let abortedP: Promise<"abort"> | undefined;
  const aborted = (): Promise<"abort"> =>
    (abortedP ??= new Promise<"abort">((resolve) => {
      if (overall.aborted) resolve("abort");
      else overall.addEventListener("abort", () => resolve("abort"), { once: true });
    }));

  try {
    startNext();
    while (running.size > 0) {
      let hedgeTimer: ReturnType<typeof setTimeout> | undefined;
      let got: Settled<T> | "abort" | "hedge";
      const [only] = running.size === 1 ? running.values() : [];
      if (only && !spec.hedgeAfterMs && !only.step.target.provider.inProcess) {
        // one provider call out of the process, nothing to hedge: its request runs on `overall`, so
        // the deadline and the client's leaving end it (fetch rejects), and no race is needed
        got = await only.promise;
      } else {
        const waits: Promise<Settled<T> | "abort" | "hedge">[] = [...[...running.values()].map((r) => r.promise), aborted()];
        if (spec.hedgeAfterMs && queue.length > 0)
          waits.push(new Promise((resolve) => (hedgeTimer = setTimeout(() => resolve("hedge"), spec.hedgeAfterMs))));
        got = await Promise.race(waits);
        clearTimeout(hedgeTimer);
      }
      if (got === "hedge") {
        startNext();
        continue;
      }
      if (got === "abort" || overall.aborted) {
        const late = timedOut();
        const error = late ? "timeout" : "aborted";
        for (const r of running.values()) {
          attempts.push({
            provider: r.step.target.name,
            model: r.step.model,
            error,
            ms: Math.round(performance.now() - r.started),
          });
          r.span?.end({ error });
        }
        if (late) throw new GatewayError("provider_timeout", `${fn}: no provider answered before the deadline`, { attempts });
        throw new GatewayError("client_closed", `${fn}: the client closed the request`, { attempts });
      }
      const r = running.get(got.i) as Running<T>;
      running.delete(got.i);
      const { step, breaker, span } = r;
      const { target, model } = step;
      const ms = Math.round(performance.now() - r.started);
      if (got.ok && got.value !== null) {
        const end = spec.answered(got.value);
        if (end) span?.end(end);
        breaker.success();
        spec.onOutcome?.(target.name, fn, "ok", ms);
        return { value: got.value, step, attempts, span };
      }
      if (got.ok) {
        breaker.release(); // declined this request: no failure, just next
        span?.end({ error: "declined" });
      } else if (got.error instanceof OfflineBudgetExceeded && queue.length > 0) {
        // the offline engine's CPU budget ran out: a model further along the route can still answer
        breaker.release();
        attempts.push({ provider: target.name, model, error: "cpu_budget", ms });
        span?.end({ error: "cpu_budget" });
      } else if (got.error instanceof GatewayError) {
        // a function implementation's answer for the client (not_found, invalid_request): not a provider failure
        breaker.release();
        span?.end({ error: got.error.code });
        throw got.error;
      } else {
        const e =
          got.error instanceof ProviderError ? got.error : new ProviderError(spec.unexpected, "provider failed unexpectedly");
        span?.end({ error: e.code });
        attempts.push({ provider: target.name, model, error: e.code, status: e.status, ms });
        ran++;
        spec.breakers.failed(breaker, e, { startedAt: r.startedAt, outputTokens: spec.outputTokens });
        if (e.status === 429) {
          limited++;
          if (e.retryAfterMs !== undefined) {
            breaker.pauseFor(e.retryAfterMs);
            retryAfterMs = Math.min(retryAfterMs ?? e.retryAfterMs, e.retryAfterMs);
          }
        }
        spec.onOutcome?.(target.name, fn, "error", ms);
        if (spec.afterFailure) queue = spec.afterFailure(e, step, queue, attempts);
      }
      if (running.size === 0) startNext();
    }
  } finally {
    stopAll();
  }
  if (attempts.length === 0 && spec.noneTried) throw spec.noneTried();
  const list = attempts.map((a) => `${a.provider}: ${a.error}`).join(", ");
  if (spec.rateLimited && ran > 0 && limited === ran) {
    const seconds = Math.max(1, Math.ceil((retryAfterMs ?? 1000) / 1000));
    throw new GatewayError("rate_limited", `${fn}: every provider is rate-limited (${list})`, {
      attempts,
      headers: { "Retry-After": String(seconds) },
    });
  }
  throw new GatewayError("provider_error", `${fn}: every provider failed (${list})`, { attempts });
}
