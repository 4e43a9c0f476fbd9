import { GatewayError, type ProviderAttempt } from "../errors";
import type { AttemptEnd, AttemptTrace, RequestTrace } from "../trace";
import type { Breakers, CircuitBreaker } from "./breaker";
import { OfflineBudgetExceeded } from "./local";
import type { Target } from "./route-plan";
import { ProviderError, type ProviderErrorKind } from "./types";

/**
 * A model group's gate refused an attempt before anything was sent (groups.ts `gate`): its
 * deployment at its rpm or tpm, cooling down after a 429 (on any node), or its shared state unable
 * to count the call. No failure: recorded as an attempt named by `code` (rpm_limit, tpm_limit,
 * cooling_down, state_unavailable) and counted as rate-limited for `inMs`, the time until it
 * could take the call (0: unknown).
 */
export class GateRefusal extends Error {
  constructor(
    readonly code: string,
    readonly inMs: number,
  ) {
    super(`refused at the model group's gate: ${code}`);
    this.name = "GateRefusal";
  }
}

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
  /** a model group's gate around an attempt on one of its deployments (groups/groups.ts `gate`) */
  gate?: (step: Step, go: () => Promise<T | null>) => Promise<T | null>;
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
  /** every provider tried answered 429 (or is paused by one): 429 rate_limited with the soonest Retry-After */
  rateLimited?: boolean;
  /**
   * nothing was tried (every provider declined): this error; or every attempt was refused at a
   * model group's gate (`refused`: the 429 the loop would answer, with its attempts and Retry-After)
   */
  noneTried?(refused?: GatewayError): GatewayError;
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
  if (spec.gate && sending.step.target.deployment) return spec.gate(sending.step, () => spec.send(sending));
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

/** One fallback call's state: the steps left, the attempts made and the ones running. */
class FallbackRun<T> {
  readonly attempts: ProviderAttempt[] = [];
  readonly running = new Map<number, Running<T>>();
  private queue: Step[];
  private count = 0;
  /** answers from providers (a 429 pause counts as one), and how many of them were 429s */
  private ran = 0;
  private limited = 0;
  /** of those answers, how many were a content filter's refusal */
  private filtered = 0;
  /** the shortest Retry-After of those 429s */
  private retryAfterMs: number | undefined;
  /** attempts on a provider that cannot take a call now (paused, circuit open, or just opened or paused by this call) */
  private unavailable = 0;
  /** the soonest of those comes back, in ms */
  private backInMs: number | undefined;
  /** attempts a model group's gate refused (GateRefusal) */
  private gated = 0;
  /** made on first need: a listener on the composite signal is a real cost on every call */
  private abortedP: Promise<"abort"> | undefined;

  constructor(
    private readonly spec: FallbackSpec<T>,
    private readonly overall: AbortSignal,
    private readonly timedOut: () => boolean,
  ) {
    this.queue = [...spec.steps];
  }

  /** Starts the next step its breaker permits (in-process engines have none); a step refused is recorded and skipped. */
  startNext(): void {
    const { spec, attempts } = this;
    for (let step = this.queue.shift(); step; step = this.queue.shift()) {
      const { target, model } = step;
      const breaker = spec.breakers.get(target.name, model);
      if (!target.provider.inProcess && !breaker.tryAcquire()) {
        const pause = breaker.pauseLeftMs();
        if (pause > 0) {
          // the provider's own 429 still holds: counted as that answer again, with the Retry-After left
          attempts.push({ provider: target.name, model, error: "paused", status: 429, ms: 0 });
          this.ran++;
          this.rateLimitedFor(pause);
        } else attempts.push({ provider: target.name, model, error: "circuit_open", ms: 0 });
        this.unavailableFor(breaker.backInMs());
        continue;
      }
      const i = this.count++;
      // only a hedged call has losers to abort while the call goes on; otherwise the overall signal is the attempt's
      const ctrl = spec.hedgeAfterMs ? new AbortController() : undefined;
      const signal = ctrl ? AbortSignal.any([this.overall, ctrl.signal]) : this.overall;
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
      this.running.set(i, { step, breaker, startedAt: breaker.time(), ctrl, started: performance.now(), promise, span });
      return;
    }
  }

  /** A 429 (or the pause one left): counted for "every provider is rate-limited", its Retry-After kept if shorter. */
  private rateLimitedFor(retryAfterMs: number): void {
    this.limited++;
    this.retryAfterMs = Math.min(this.retryAfterMs ?? retryAfterMs, retryAfterMs);
  }

  /** An attempt's provider cannot take a call for `ms` (paused or open): counted, the soonest kept. */
  private unavailableFor(ms: number): void {
    this.unavailable++;
    this.backInMs = Math.min(this.backInMs ?? ms, ms);
  }

  /** Ends every attempt still running (the call is over: answered, failed or aborted). */
  stopAll(): void {
    for (const r of this.running.values()) {
      r.ctrl?.abort();
      r.breaker.release();
      r.span?.end({ error: "aborted" });
    }
    this.running.clear();
  }

  private aborted(): Promise<"abort"> {
    const overall = this.overall;
    this.abortedP ??= new Promise<"abort">((resolve) => {
      if (overall.aborted) resolve("abort");
      else overall.addEventListener("abort", () => resolve("abort"), { once: true });
    });
    return this.abortedP;
  }

  /** What happens next: a running attempt settles, the call is aborted (deadline, client), or it is time to hedge. */
  next(): Promise<Settled<T> | "abort" | "hedge"> {
    const [only] = this.running.size === 1 ? this.running.values() : [];
    // one provider call out of the process, nothing to hedge: its request runs on `overall`, so
    // the deadline and the client's leaving end it (fetch rejects), and no race is needed
    if (only && !this.spec.hedgeAfterMs && !only.step.target.provider.inProcess) return only.promise;
    return this.race();
  }

  /** The first of: an attempt settling, the call's abort, the hedge timer (while a step is left to add). */
  private async race(): Promise<Settled<T> | "abort" | "hedge"> {
    const { spec, running } = this;
    let hedgeTimer: ReturnType<typeof setTimeout> | undefined;
    const waits: Promise<Settled<T> | "abort" | "hedge">[] = [...[...running.values()].map((r) => r.promise), this.aborted()];
    if (spec.hedgeAfterMs && this.queue.length > 0)
      waits.push(new Promise((resolve) => (hedgeTimer = setTimeout(() => resolve("hedge"), spec.hedgeAfterMs))));
    const got = await Promise.race(waits);
    clearTimeout(hedgeTimer);
    return got;
  }

  /** The deadline or the client ended the call: each attempt still running recorded, and the client's error. */
  abortError(): GatewayError {
    const { attempts, spec } = this;
    const late = this.timedOut();
    const error = late ? "timeout" : "aborted";
    for (const r of this.running.values()) {
      attempts.push({ provider: r.step.target.name, model: r.step.model, error, ms: Math.round(performance.now() - r.started) });
      r.span?.end({ error });
    }
    if (late) return new GatewayError("provider_timeout", `${spec.fn}: no provider answered before the deadline`, { attempts });
    return new GatewayError("client_closed", `${spec.fn}: the client closed the request`, { attempts });
  }

  /**
   * One attempt settled: an answer ends the call (its outcome); a decline, the offline engine's
   * CPU budget with steps left, or a provider failure is recorded and the route goes on
   * (undefined); a GatewayError is the client's answer and is thrown.
   */
  settled(got: Settled<T>): FallbackOutcome<T> | undefined {
    const { spec, attempts } = this;
    const r = this.running.get(got.i) as Running<T>;
    this.running.delete(got.i);
    const { step, breaker, span } = r;
    const { target, model } = step;
    const ms = Math.round(performance.now() - r.started);
    if (got.ok && got.value !== null) {
      const end = spec.answered(got.value);
      if (end) span?.end(end);
      breaker.success();
      spec.onOutcome?.(target.name, spec.fn, "ok", ms);
      return { value: got.value, step, attempts, span };
    }
    if (got.ok) {
      breaker.release(); // declined this request: no failure, just next
      span?.end({ error: "declined" });
    } else if (got.error instanceof OfflineBudgetExceeded && this.queue.length > 0) {
      // the offline engine's CPU budget ran out: a model further along the route can still answer
      breaker.release();
      attempts.push({ provider: target.name, model, error: "cpu_budget", ms });
      span?.end({ error: "cpu_budget" });
    } else if (got.error instanceof GateRefusal) {
      // not sent: the deployment cannot take it now (rpm, tpm, cooling down), as a pause is told
      breaker.release();
      span?.end({ error: got.error.code });
      this.refusedAtGate(step, got.error);
    } else if (got.error instanceof GatewayError) {
      // a function implementation's answer for the client (not_found, invalid_request): not a provider failure
      breaker.release();
      span?.end({ error: got.error.code });
      throw got.error;
    } else this.failed(got.error, r, ms);
    return undefined;
  }

  /** An attempt its deployment's gate refused: recorded with why, counted as rate-limited until it could take the call. */
  private refusedAtGate(step: Step, r: GateRefusal): void {
    this.attempts.push({ provider: step.target.name, model: step.model, error: r.code, ms: 0 });
    this.ran++;
    this.gated++;
    this.rateLimitedFor(r.inMs);
    this.unavailableFor(r.inMs);
  }

  /** A provider failure: recorded, counted by its breaker (a 429 pauses it), and the steps left are the spec's to choose. */
  private failed(error: unknown, r: Running<T>, ms: number): void {
    const { spec, attempts } = this;
    const { step, breaker, span } = r;
    const { target, model } = step;
    const e = error instanceof ProviderError ? error : new ProviderError(spec.unexpected, "provider failed unexpectedly");
    span?.end({ error: e.code });
    attempts.push({ provider: target.name, model, error: e.code, status: e.status, ms });
    this.ran++;
    if (e.kind === "content_filter") this.filtered++;
    // a 429 pauses the provider for its Retry-After and is no failure; others count (Breakers.failed)
    spec.breakers.failed(breaker, e, { startedAt: r.startedAt, outputTokens: spec.outputTokens });
    const back = breaker.backInMs();
    if (e.status === 429) this.rateLimitedFor(back);
    if (back > 0) this.unavailableFor(back);
    spec.onOutcome?.(target.name, spec.fn, "error", ms);
    if (spec.afterFailure) this.queue = spec.afterFailure(e, step, this.queue, attempts);
  }

  /**
   * No step left and none answered: nothing tried, every provider rate-limited (429 with the
   * soonest Retry-After), every one content-filtered, or every provider failed (502; with a
   * Retry-After when none of them can take a call now, paused or open: the soonest comes back then).
   */
  exhausted(): GatewayError {
    const { spec, attempts } = this;
    if (attempts.length === 0 && spec.noneTried) return spec.noneTried();
    const list = listed(attempts);
    if (spec.rateLimited && this.ran > 0 && this.limited === this.ran) {
      const soonest = Math.min(this.retryAfterMs ?? 1000, this.backInMs ?? Number.POSITIVE_INFINITY);
      const allGated = this.gated === attempts.length;
      const what = allGated
        ? "every deployment of the model group is at its rpm/tpm limit or cooling down after a 429"
        : "every provider is rate-limited";
      const err = new GatewayError("rate_limited", `${spec.fn}: ${what} (${list})`, { attempts, headers: retryAfter(soonest) });
      // every attempt refused at a gate: the spec's to answer (a shared state out of reach is no client's limit)
      return allGated && spec.noneTried ? spec.noneTried(err) : err;
    }
    // every provider that answered refused the text itself: the client's answer, not a provider failure
    if (this.ran > 0 && this.filtered === this.ran)
      return new GatewayError("content_filtered", `${spec.fn}: the provider's content filter refused the request (${list})`, {
        attempts,
      });
    const headers = attempts.length > 0 && this.unavailable === attempts.length ? retryAfter(this.backInMs ?? 1000) : undefined;
    return new GatewayError("provider_error", `${spec.fn}: every provider failed (${list})`, { attempts, headers });
  }
}

/**
 * The attempts as a message lists them, `provider: error`; a provider tried for more than one
 * model (a group's deployments) is named with the model, `provider (model): error`.
 */
function listed(attempts: readonly ProviderAttempt[]): string {
  const seen = new Map<string, Set<string | undefined>>();
  for (const a of attempts) (seen.get(a.provider) ?? seen.set(a.provider, new Set()).get(a.provider))?.add(a.model);
  const name = (a: ProviderAttempt) => ((seen.get(a.provider)?.size ?? 0) > 1 ? `${a.provider} (${a.model})` : a.provider);
  return attempts.map((a) => `${name(a)}: ${a.error}`).join(", ");
}

/** A Retry-After header of `ms`, in whole seconds, at least 1. */
const retryAfter = (ms: number): Record<string, string> => ({ "Retry-After": String(Math.max(1, Math.ceil(ms / 1000))) });

/** The steps in turn (hedged when the spec says so) until one answers; see `fallback`. */
async function loop<T>(spec: FallbackSpec<T>, overall: AbortSignal, timedOut: () => boolean): Promise<FallbackOutcome<T>> {
  const run = new FallbackRun(spec, overall, timedOut);
  try {
    run.startNext();
    while (run.running.size > 0) {
      const got = await run.next();
      if (got === "hedge") {
        run.startNext();
        continue;
      }
      if (got === "abort" || overall.aborted) throw run.abortError();
      const outcome = run.settled(got);
      if (outcome) return outcome;
      if (run.running.size === 0) run.startNext();
    }
  } finally {
    run.stopAll();
  }
  throw run.exhausted();
}
