import type { ModelGroupConfig } from "../../../config";
import type { DeploymentUsage } from "../../../deployments/interface";
import type { AppDeps } from "../../deps";

interface Sample {
  at: number;
  requests: number;
  errors: number;
}

/**
 * The gateway's state for the operator console, from the same counters /metrics renders:
 * textai_requests_total of the API's calls (errors: status 5xx), textai_cache_hits_total and _misses_total, and the
 * router's breakers. Rates are over the last minute or so, from samples taken when it is read
 * (and at most every 10 s); before a minute of samples exists, over the time since start.
 */
export class GatewayStateSampler {
  private samples: Sample[] = [];
  private readonly startedAt: number;

  constructor(
    private deps: Pick<AppDeps, "metrics" | "router" | "config">,
    private now: () => number = Date.now,
  ) {
    this.startedAt = now();
    this.samples.push({ at: this.startedAt, requests: 0, errors: 0 });
  }

  read() {
    const { metrics, router, config } = this.deps;
    const t = this.now();
    // the API's calls (a function's or /v1's): not the dashboard's own pages, /metrics or /ready
    const cur: Sample = {
      at: t,
      requests: metrics.total("textai_requests_total", apiCall),
      errors: metrics.total("textai_requests_total", (k) => apiCall(k) && /status="5\d\d"/.test(k)),
    };
    if (t - (this.samples.at(-1)?.at ?? 0) >= 10_000) this.samples.push(cur);
    // keep what is needed to reach back a minute
    while (this.samples.length > 2 && t - this.samples[1].at >= 60_000) this.samples.shift();
    const base = this.samples.find((s) => t - s.at >= 60_000) ?? this.samples[0];
    // under a minute of history: the count so far, as a per-minute figure that does not extrapolate
    const minutes = Math.max((t - base.at) / 60_000, 1);
    const hits = metrics.total("textai_cache_hits_total");
    const misses = metrics.total("textai_cache_misses_total");
    return {
      providers: Object.entries(router.status()).map(([name, s]) => ({
        name,
        type: s.type,
        breaker: s.state,
        consecutive_failures: s.consecutiveFailures,
      })),
      breaker: { failure_threshold: config.breaker.failureThreshold, cooldown_ms: config.breaker.cooldownMs },
      cache: { hits, misses, hit_rate: hits + misses ? hits / (hits + misses) : null },
      requests_per_minute: round((cur.requests - base.requests) / minutes),
      errors_per_minute: round((cur.errors - base.errors) / minutes),
      window_seconds: Math.round((t - base.at) / 1000),
      requests_total: cur.requests,
      errors_total: cur.errors,
      uptime_s: Math.round((t - this.startedAt) / 1000),
    };
  }
}

const round = (n: number) => Math.round(n * 100) / 100;

/**
 * A series of textai_requests_total that counts calls of the API: the dashboard's pages are under
 * function="dashboard" (its playground's calls under their function), anything else outside the API under "other".
 */
const apiCall = (labels: string) => !labels.includes('function="other"') && !labels.includes('function="dashboard"');

/** One deployment as the operator console shows it. */
export interface DeploymentRow {
  /** `provider/model` (the id without its group) */
  name: string;
  in_flight: number;
  rpm_used: number;
  rpm_limit: number | null;
  tpm_used: number;
  tpm_limit: number | null;
  /** seconds left of its cool-down; 0 when it is not cooling down */
  cooling_s: number;
  /** EWMA of its time to first byte; null until it has answered */
  latency_ms: number | null;
  /** calls this node admitted to it */
  calls: number;
}

/**
 * Each model group's deployments and their state, for the operator console: the configured groups
 * and deployments (`[[models]]`) in config order, then any other id the state knows
 * (`group/provider/model`), grouped by its group.
 */
export async function deploymentGroups(
  state: AppDeps["deploymentState"],
  configured: readonly ModelGroupConfig[],
  now = Date.now(),
): Promise<{ name: string; deployments: DeploymentRow[] }[]> {
  const groups = new Map<string, { id: string; rpm?: number; tpm?: number }[]>();
  for (const g of configured) groups.set(g.name, [...g.deployments]);
  const known = new Set(configured.flatMap((g) => g.deployments.map((d) => d.id)));
  for (const id of state.ids()) {
    if (known.has(id)) continue;
    const group = id.slice(0, Math.max(0, id.indexOf("/"))) || id;
    groups.set(group, [...(groups.get(group) ?? []), { id, ...state.limitsOf(id) }]);
  }
  const ids = [...groups.values()].flatMap((ds) => ds.map((d) => d.id));
  if (ids.length === 0) return [];
  const usage = await state.usage(ids);
  return [...groups].map(([name, ds]) => ({
    name,
    deployments: ds.map((d) => row(d, usage.get(d.id), state.counts(d.id)?.calls ?? 0, name, now)),
  }));
}

function row(
  d: { id: string; rpm?: number; tpm?: number },
  u: DeploymentUsage | undefined,
  calls: number,
  group: string,
  now: number,
): DeploymentRow {
  const cooling = u?.coolingUntil ?? 0;
  return {
    name: d.id.startsWith(`${group}/`) ? d.id.slice(group.length + 1) : d.id,
    in_flight: u?.inFlight ?? 0,
    rpm_used: u?.rpmUsed ?? 0,
    rpm_limit: d.rpm ?? null,
    tpm_used: u?.tpmUsed ?? 0,
    tpm_limit: d.tpm ?? null,
    cooling_s: cooling > now ? Math.ceil((cooling - now) / 1000) : 0,
    latency_ms: u?.latencyMs == null ? null : Math.round(u.latencyMs),
    calls,
  };
}
