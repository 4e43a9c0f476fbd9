// The docs UI bundle ships in the npm package and is embedded (as a file, read when /docs asks for
// it, not a 4 MB string held from start-up), so /docs works with no network.

import { Elysia } from "elysia";
import scalarBundle from "../../../node_modules/@scalar/api-reference/dist/browser/standalone.js" with { type: "file" };
import type { AppDeps } from "../../deps";
import { GatewayError } from "../../errors";
import { loadedEngines } from "../../local/engines";
import { errorResponse, ok } from "../respond";
import { stateOf } from "../state";

const startedAt = Date.now();

export function opsRoutes(deps: AppDeps) {
  const { metrics, cache, limiter, router, lifecycle, dependencies } = deps;
  metrics.gauge("textai_cache_entries", "Answers held in the cache", () => [[{}, cache.snapshot().entries]]);
  metrics.gauge("textai_cache_bytes", "Approximate bytes held by the answer cache", () => [[{}, cache.snapshot().bytes]]);
  metrics.gauge("textai_ratelimit_buckets", "Token buckets held in memory", () => [[{}, limiter.size()]]);
  metrics.gauge("textai_request_log_pending", "Request-log entries recorded and not yet written", () => [
    [{}, deps.requestLog.backlog],
  ]);
  metrics.gauge("textai_request_log_dropped", "Request-log entries dropped because the database could not take them", () => [
    [{}, deps.requestLog.dropped],
  ]);
  metrics.gauge("textai_idempotency_records", "Idempotency-Key records held (in flight and done, until they expire)", () => [
    [{}, deps.idempotency.size()],
  ]);
  // what the last /ready or probe saw, per shared dependency (1 up, 0 down)
  const seen = new Map<string, boolean>(dependencies.map((d) => [d.name, true]));
  metrics.gauge("textai_dependency_up", "1 while a shared dependency (database, redis) answers, 0 while it does not", () =>
    [...seen].map(([dependency, up]) => [{ dependency }, up ? 1 : 0]),
  );
  const probe = async (): Promise<Record<string, "ok" | "unavailable">> => {
    const out: Record<string, "ok" | "unavailable"> = {};
    for (const d of dependencies) {
      let up = false;
      try {
        up = await d.up();
      } catch {
        up = false;
      }
      seen.set(d.name, up);
      out[d.name] = up ? "ok" : "unavailable";
    }
    return out;
  };
  metrics.gauge("textai_provider_circuit_open", "1 while a provider's circuit breaker is open or half-open", () =>
    Object.entries(router.status()).map(([provider, s]) => [{ provider }, s.state === "closed" ? 0 : 1]),
  );
  metrics.gauge("textai_process_resident_memory_bytes", "Resident memory of the gateway process", () => [
    [{}, process.memoryUsage.rss()],
  ]);
  metrics.gauge("textai_heap_bytes", "JavaScript heap of the server thread: used, total, and external (buffers)", () => {
    const m = process.memoryUsage();
    return [
      [{ kind: "used" }, m.heapUsed],
      [{ kind: "total" }, m.heapTotal],
      [{ kind: "external" }, m.external],
    ];
  });
  metrics.gauge(
    "textai_engine_memory_bytes",
    "Growth of resident memory when an offline-engine part loaded (present once it has loaded)",
    () => loadedEngines().map((e) => [{ engine: e.engine }, e.rss_bytes]),
  );
  metrics.gauge("textai_engine_load_seconds", "How long an offline-engine part took to load", () =>
    loadedEngines().map((e) => [{ engine: e.engine }, e.load_ms / 1000]),
  );

  return new Elysia({ name: "ops" })
    .get(
      "/health",
      ({ request }) => ok(stateOf(request), "ok", { status: "ok", uptime_s: Math.round((Date.now() - startedAt) / 1000) }),
      {
        detail: { tags: ["Operations"], summary: "Liveness: the process answers" },
      },
    )
    .get(
      "/ready",
      async ({ request }) => {
        const state = stateOf(request);
        const status = await probe();
        const missing = dependencies.filter((d) => status[d.name] !== "ok");
        const blocking = missing.filter((d) => d.required);
        const details = {
          status: missing.length ? "degraded" : "ready",
          ...status,
          missing: missing.map((d) => d.name),
          draining: lifecycle.draining,
          providers: router.status(),
          // loaded on first use; a part not loaded yet makes its first call wait, not /ready fail
          engines_loaded: loadedEngines().map((e) => e.engine),
        };
        if (lifecycle.draining || blocking.length) {
          const why = lifecycle.draining ? "shutting down" : `${blocking.map((d) => d.name).join(" and ")} unavailable`;
          return errorResponse(state, new GatewayError("service_unavailable", why, { headers: { "Retry-After": "1" } }));
        }
        return ok(state, missing.length ? `ready, without ${details.missing.join(" and ")}` : "ready", details);
      },
      {
        detail: {
          tags: ["Operations"],
          summary:
            "Readiness: database reachable, not draining; provider breaker states and the offline-engine parts loaded so far",
        },
      },
    )
    .get(
      "/metrics",
      async ({ request }) => {
        stateOf(request).status = 200;
        await probe();
        return new Response(metrics.render(), { headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8" } });
      },
      { detail: { tags: ["Operations"], summary: "Prometheus metrics" } },
    )
    .get(
      "/docs/assets/scalar.js",
      () =>
        new Response(Bun.file(scalarBundle), {
          headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=86400" },
        }),
    );
}
