import type { DeploymentLimits, DeploymentState, DeploymentUsage } from "../providers/groups/state";
import type { DeploymentCounts } from "./counts";

export type {
  Admission,
  DeploymentCallEnd,
  DeploymentLimits,
  DeploymentState,
  DeploymentUsage,
  Refusal,
} from "../providers/groups/state";
export { ADMITTED } from "../providers/groups/state";
export type { DeploymentCounts } from "./counts";

/** The window every deployment limit counts over: the last 60 s, sliding (CONTRACT section 16). */
export const WINDOW_MS = 60_000;

/** How a deployment's moving average of time to first byte moves: EWMA, each answer weighs this much. */
export const LATENCY_ALPHA = 0.2;

/** One more time to first byte into a moving average (the first sample is the average). */
export function ewma(avg: number | null, sample: number): number {
  return avg === null ? sample : avg + LATENCY_ALPHA * (sample - avg);
}

/**
 * The deployment state as a service (services.ts builds it: in memory on one node, in Redis when
 * TEXTAI_REDIS_URL is set): what the group router asks (DeploymentState), plus what /metrics and the
 * operator console read, and its lifetime. Ids are config-derived (`group/provider/model`), so the
 * set of them is bounded by the config.
 */
export interface DeploymentStateService extends DeploymentState {
  /** `admit`, told as whether it admitted (tests, tools) */
  acquire(id: string, limits: DeploymentLimits, tokens: number): boolean | Promise<boolean>;
  /** every id this state has seen (acquired, cooled down or asked about), in first-seen order */
  ids(): string[];
  /** the limits `acquire` was last given for `id` (undefined: never acquired) */
  limitsOf(id: string): DeploymentLimits | undefined;
  /** what this node did with `id` since it started (calls, refusals, cool-downs), for /metrics */
  counts(id: string): DeploymentCounts | undefined;
  /** background work (the shared state's refresh of its node-local view and its in-flight leases) */
  start(): void;
  close(): Promise<void>;
}

/** What one deployment has left in the current window: limit minus used, never below 0; null when it has no such limit. */
export function remaining(limits: DeploymentLimits | undefined, u: DeploymentUsage): { rpm: number | null; tpm: number | null } {
  return {
    rpm: limits?.rpm === undefined ? null : Math.max(0, limits.rpm - u.rpmUsed),
    tpm: limits?.tpm === undefined ? null : Math.max(0, limits.tpm - u.tpmUsed),
  };
}
