import type { AppDeps } from "../../deps";

interface Sample {
  at: number;
  requests: number;
  errors: number;
}

/**
 * The gateway's state for the operator console, from the same counters /metrics renders:
 * textai_requests_total (errors: status 5xx), textai_cache_hits_total and _misses_total, and the
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
    const cur: Sample = {
      at: t,
      requests: metrics.total("textai_requests_total"),
      errors: metrics.total("textai_requests_total", (k) => /status="5\d\d"/.test(k)),
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
