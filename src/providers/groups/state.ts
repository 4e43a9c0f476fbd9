/**
 * What a model group's router asks of its deployments' state (issue 39, CONTRACT section 16). The
 * interface lives here, in the engines layer, so the router can use it; its implementations are a
 * service (src/deployments/: in memory on one node, in Redis across nodes), given to the router
 * when the app is built.
 */

/** A deployment's own limits (`[[models.deployments]]` rpm and tpm); absent: unlimited. */
export interface DeploymentLimits {
  rpm?: number;
  tpm?: number;
}

/** What is known of one deployment now: for the strategies, /metrics and the operator console. */
export interface DeploymentUsage {
  /** calls in flight on it (across nodes when the state is shared) */
  inFlight: number;
  /** calls and tokens admitted in the last 60 s (a sliding window) */
  rpmUsed: number;
  tpmUsed: number;
  /** epoch ms until which it is cooling down after a 429; 0 when it is not */
  coolingUntil: number;
  /** moving average of its time to first byte in ms; null until it has answered */
  latencyMs: number | null;
}

/** Why a deployment refused a call at its gate: its rpm or tpm window full, or cooling down after a 429 (on any node). */
export type RefusalReason = "rpm" | "tpm" | "cooling";

/**
 * A call a deployment's state did not admit. `inMs`: the time until it could take this call (the
 * window's oldest entry ageing out, or the cool-down's end; the later of them when more than one
 * holds), 0 when unknown (the shared state could not count it: an outage or an error).
 */
export interface Refusal {
  why: RefusalReason | "unavailable";
  inMs: number;
}

/** A call admitted (`admit`), without an object of its own. */
export const ADMITTED = true;
export type Admission = typeof ADMITTED | Refusal;

/** The outcome of a call admitted by `admit`, for `release`. */
export interface DeploymentCallEnd {
  /** time to first byte (an answer's or a stream's first event); absent when it failed before */
  ttfbMs?: number;
  /** the token estimate `acquire` admitted */
  tokensEstimated: number;
  /** the tokens it really used, when known (the window's count is corrected to it) */
  tokensUsed?: number;
}

/**
 * The state of every deployment: exact across nodes with Redis, in memory on one node. Ids are
 * `group/provider/model` (a deployment's id), never a caller's text.
 */
export interface DeploymentState {
  /**
   * Admits one call of up to `tokens` tokens on `id`: ADMITTED (true), counted (its rpm and tpm
   * windows and in flight), when neither limit would be exceeded in the last 60 s (exact: a sliding
   * window, not a fixed minute) and it is not cooling down; else a Refusal saying why and when it
   * could take this call, nothing counted. A state that decides at once (in memory) answers
   * without a promise. (The refusal is read in the same step or round trip as the admission: no
   * second one.)
   */
  admit(id: string, limits: DeploymentLimits, tokens: number): Admission | Promise<Admission>;
  /** A call `admit` admitted ended: in flight down, latency average and token count updated. */
  release(id: string, end: DeploymentCallEnd): void;
  /** `id` gets no call for `ms` (a 429's Retry-After, default 10 s), on every node. */
  coolDown(id: string, ms: number): Promise<void>;
  /** What is known of each id (may be a node-local view of the shared state, refreshed in the background). */
  usage(ids: readonly string[]): Promise<Map<string, DeploymentUsage>>;
  /**
   * True while the shared state cannot be reached or answers with errors (Redis): a refusal may
   * then be the outage's rather than a deployment's limit, so a call every deployment refused is
   * answered 503 service_unavailable, never a 429 that blames the client (CONTRACT section 11).
   * Absent (or false) on one node's memory.
   */
  unreachable?(): boolean;
}
