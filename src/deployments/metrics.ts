import type { DeploymentConfig } from "../config";
import { MAX_LABEL_SETS, type Metrics } from "../metrics";
import { type DeploymentStateService, type DeploymentUsage, remaining } from "./interface";

type Series = [Record<string, string>, number][];

/**
 * The per-deployment series of /metrics (CONTRACT section 16), labelled `deployment` with the
 * deployment's id only (config-derived: `group/provider/model`, never a caller's text; at most
 * MAX_LABEL_SETS of them). Counters (calls, refusals, cool-downs) are this node's; the gauges (in
 * flight, latency, cooling, remaining rpm/tpm) are the state's usage() (shared across nodes with
 * Redis), read by the returned function before each scrape. Every configured deployment has its
 * series from the start, called or not.
 */
export function deploymentMetrics(
  metrics: Metrics,
  state: DeploymentStateService,
  configured: readonly DeploymentConfig[] = [],
): () => Promise<void> {
  let snapshot = new Map<string, DeploymentUsage>();
  const byId = new Map(configured.map((d) => [d.id, d]));
  // every configured deployment, called or not, then any other id the state knows
  const ids = () => [...new Set([...byId.keys(), ...state.ids()])].slice(0, MAX_LABEL_SETS);
  const limitsOf = (id: string) => byId.get(id) ?? state.limitsOf(id);
  const each = (read: (id: string, u: DeploymentUsage) => number | null): (() => Series) => {
    return () => {
      const out: Series = [];
      for (const [id, u] of snapshot) {
        const v = read(id, u);
        if (v !== null) out.push([{ deployment: id }, v]);
      }
      return out;
    };
  };
  const count = (name: string, help: string, field: "calls" | "refusals" | "coolDowns") =>
    metrics.gauge(
      name,
      help,
      each((id) => state.counts(id)?.[field] ?? 0),
      "counter",
    );
  count("textai_deployment_calls_total", "Calls admitted to a model-group deployment by this node", "calls");
  count(
    "textai_deployment_refusals_total",
    "Calls this node did not send to a deployment: its rpm or tpm full in the last 60 s, cooling down, or its shared state unreachable",
    "refusals",
  );
  count("textai_deployment_cooldowns_total", "Cool-downs of a deployment started by this node (a 429 from it)", "coolDowns");
  metrics.gauge(
    "textai_deployment_in_flight",
    "Calls in flight on a deployment (across nodes with Redis)",
    each((_, u) => u.inFlight),
  );
  metrics.gauge(
    "textai_deployment_latency_seconds",
    "Moving average (EWMA, alpha 0.2) of a deployment's time to first byte; absent until it has answered",
    each((_, u) => (u.latencyMs === null ? null : u.latencyMs / 1000)),
  );
  metrics.gauge(
    "textai_deployment_cooling",
    "1 while a deployment cools down after a 429, else 0",
    each((_, u) => (u.coolingUntil > 0 ? 1 : 0)),
  );
  metrics.gauge(
    "textai_deployment_remaining_rpm",
    "Calls a deployment may still take in the current 60 s window (deployments with an rpm only)",
    each((id, u) => remaining(limitsOf(id), u).rpm),
  );
  metrics.gauge(
    "textai_deployment_remaining_tpm",
    "Tokens a deployment may still take in the current 60 s window (deployments with a tpm only)",
    each((id, u) => remaining(limitsOf(id), u).tpm),
  );
  return async () => {
    const list = ids();
    snapshot = list.length === 0 ? new Map() : await state.usage(list);
  };
}
