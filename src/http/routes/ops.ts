// The docs UI bundle ships in the npm package and is embedded, so /docs works with no network.

import { Elysia } from "elysia";
import scalarBundle from "../../../node_modules/@scalar/api-reference/dist/browser/standalone.js" with { type: "text" };
import type { AppDeps } from "../../app";
import { GatewayError } from "../../errors";
import { errorResponse, ok } from "../respond";
import { stateOf } from "../state";

const startedAt = Date.now();

export function opsRoutes(deps: AppDeps) {
  const { metrics, cache, limiter, storage, router, lifecycle } = deps;
  metrics.gauge("textai_cache_entries", "Answers held in the cache", () => [[{}, cache.snapshot().entries]]);
  metrics.gauge("textai_cache_bytes", "Approximate bytes held by the answer cache", () => [[{}, cache.snapshot().bytes]]);
  metrics.gauge("textai_ratelimit_buckets", "Token buckets held in memory", () => [[{}, limiter.size()]]);
  metrics.gauge("textai_idempotency_records", "Idempotency-Key records held in memory", () => [[{}, deps.idempotency.size()]]);
  metrics.gauge("textai_provider_circuit_open", "1 while a provider's circuit breaker is open or half-open", () =>
    Object.entries(router.status()).map(([provider, s]) => [{ provider }, s.state === "closed" ? 0 : 1]),
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
      ({ request }) => {
        const state = stateOf(request);
        let database = "ok";
        try {
          storage.sqlite.query("SELECT 1").get();
        } catch {
          database = "unavailable";
        }
        const details = {
          status: "ready",
          database,
          draining: lifecycle.draining,
          warming: lifecycle.warming,
          providers: router.status(),
        };
        if (lifecycle.draining || lifecycle.warming || database !== "ok") {
          const why = lifecycle.draining
            ? "shutting down"
            : database !== "ok"
              ? "database unavailable"
              : "warming up: the offline engine is loading its models";
          return errorResponse(state, new GatewayError("service_unavailable", why, { headers: { "Retry-After": "1" } }));
        }
        return ok(state, "ready", details);
      },
      {
        detail: {
          tags: ["Operations"],
          summary: "Readiness: database reachable, offline engine loaded, not draining; provider breaker states",
        },
      },
    )
    .get(
      "/metrics",
      ({ request }) => {
        stateOf(request).status = 200;
        return new Response(metrics.render(), { headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8" } });
      },
      { detail: { tags: ["Operations"], summary: "Prometheus metrics" } },
    )
    .get(
      "/docs/assets/scalar.js",
      () =>
        new Response(scalarBundle, {
          headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=86400" },
        }),
    );
}
