import type { AuthInfo } from "../auth/key-store";

/** Per-request facts shared by the hooks, the pipeline, the error handler and the access log. */
export interface RequestState {
  requestId: string;
  startedAt: number;
  startedPerf: number;
  headers: Record<string, string>;
  auth?: AuthInfo;
  fn?: string;
  provider?: string;
  credits?: number;
  cached?: boolean;
  status?: number;
  errorCode?: string;
  /** Server-Timing stages and their durations in ms, rendered once into the header */
  timings?: { name: string; ms: number }[];
  /** kept only for Idempotency-Key replays (memory only) */
  responseBody?: string;
}

const states = new WeakMap<Request, RequestState>();

export function beginRequest(request: Request, requestId: string): RequestState {
  const state: RequestState = {
    requestId,
    startedAt: Date.now(),
    startedPerf: performance.now(),
    headers: { "x-request-id": requestId },
  };
  states.set(request, state);
  return state;
}

/** The state `beginRequest` attached to this request (a fresh one if a hook ran before it). */
export function stateOf(request: Request): RequestState {
  return states.get(request) ?? beginRequest(request, `req_${crypto.randomUUID()}`);
}
