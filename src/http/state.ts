import type { AuthInfo } from "../auth/interface";
import type { RateClass } from "../ratelimit/interface";
import type { RequestTrace } from "../trace";
import type { SentBody } from "./body";
import { newRequestId } from "./envelope";

/** Per-request facts shared by the hooks, the pipeline, the error handler and the access log. */
export interface RequestState {
  requestId: string;
  /** the request URL's path (`pathOf`), taken once by the app's onRequest */
  path?: string;
  startedAt: number;
  startedPerf: number;
  headers: Record<string, string>;
  auth?: AuthInfo;
  /**
   * the key edge checked the request's key and it did not authenticate (401, or the key store
   * failed): the error handler does not check it again for the request log (app.ts `callerOfRefusal`)
   */
  keyRefused?: boolean;
  /** the JSON body's text as sent, when the edge read one and removed nothing from it (body.ts's sentBytes) */
  sentBody?: SentBody;
  /** the JSON body's size in bytes as it arrived (what the /v1 hold is bounded by: docs/pricing.md) */
  bodyBytes?: number;
  /**
   * the JSON body the edge parsed, which `sentBody` and `bodyBytes` describe: a body a route made
   * of it (a translated one) is forwarded as the gateway serialises it, and sized anew
   */
  parsedBody?: Record<string, unknown>;
  fn?: string;
  provider?: string;
  /** the model that answered (or was asked for): the trace and the request log */
  model?: string;
  credits?: number;
  /** the account's balance, for meta.credits_remaining of answers that charge nothing (account endpoints) */
  creditsRemaining?: number;
  cached?: boolean;
  /** tokens of the call where known (the /v1 pass-through), for the request log */
  tokens?: { input: number; output: number };
  /** the answer was an Idempotency-Key replay */
  replayed?: boolean;
  /** a streamed answer: settles when the stream has ended (the request log waits for its outcome) */
  streamEnded?: Promise<void>;
  status?: number;
  errorCode?: string;
  /** Server-Timing stages and their durations in ms, rendered once into the header */
  timings?: { name: string; ms: number }[];
  /** the answer as sent, kept for Idempotency-Key replays */
  responseBody?: string;
  /** what the guardrails did, per kind ("redacted.email": 2, "blocked.credit_card": 1): the request log */
  guardrails?: Record<string, number>;
  /** this request's trace, when tracing is on (OTEL_EXPORTER_OTLP_ENDPOINT) */
  trace?: RequestTrace;
  /**
   * the rate limit the edge left to the call's first trip to Redis (http/admission.ts, which alone
   * sets, takes and clears it: `deferLimit`, `firstTrip`, `limitOnRefusal`)
   */
  limitDeferred?: { fn: string; rateClass: RateClass };
}

/**
 * What holds a request's state: Elysia's context for the request, one object from `onRequest` to
 * `onAfterResponse` (its hooks, the edge's resolvers, the route and the error handler all get it).
 */
export interface WithState {
  state?: RequestState;
}

export function newRequestState(requestId: string): RequestState {
  return { requestId, startedAt: Date.now(), startedPerf: performance.now(), headers: { "x-request-id": requestId } };
}

/**
 * The state the app's `onRequest` put in this request's Elysia context (a fresh one if a hook ran
 * before it). For routes off the fast paths: a hook or resolver that passes its context to a
 * function makes Elysia build the whole context (cookies, headers, query) for every request of the
 * routes it runs on, so the app's hooks and the key edge read `context.state` in place instead.
 */
export function stateOf(context: object): RequestState {
  const c = context as WithState;
  c.state ??= newRequestState(newRequestId());
  return c.state;
}

/** Records how long each stage took, for the Server-Timing header. */
export function mark(state: RequestState, name: string, since: number): number {
  const now = performance.now();
  state.timings ??= [];
  state.timings.push({ name, ms: now - since });
  state.trace?.stage(name, since, now);
  return now;
}

/** The Server-Timing header value: every stage marked so far. */
export function serverTiming(state: RequestState): string {
  let out = "";
  for (const t of state.timings ?? []) out += `${out ? ", " : ""}${t.name};dur=${Math.round(t.ms * 1000) / 1000}`;
  return out;
}

/**
 * Ends the request's trace, when tracing is on, with what the state knows (metadata only). The
 * access-log hook calls it for every request, a stream once more when it ends.
 */
export function endTrace(state: RequestState, request: Request, route?: string): void {
  if (!state.trace) return;
  state.trace.end({
    requestId: state.requestId,
    method: request.method,
    route,
    path: new URL(request.url).pathname,
    status: state.status ?? 200,
    errorCode: state.errorCode,
    fn: state.fn,
    provider: state.provider,
    model: state.model,
    credits: state.credits,
    cached: state.cached,
  });
}
