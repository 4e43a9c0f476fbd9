// The docs UI bundle ships in the npm package and is embedded (as a file, read when /docs asks for
// it, not a 4 MB string held from start-up), so /docs works with no network.

import { Elysia } from "elysia";
import scalarBundle from "../../../node_modules/@scalar/api-reference/dist/browser/standalone.js" with { type: "file" };
import type { Peer } from "../../dashboard/security";
import { deploymentMetrics } from "../../deployments/metrics";
import { GatewayError } from "../../errors";
import { loadedEngines } from "../../offline-engine/engines";
import { VERSION } from "../../version";
import { adminTokenOf } from "../admin-token";
import type { AppDeps } from "../deps";
import { edgePlugin } from "../edge-plugin";
import { errorResponse, ok } from "../respond";
import { type RequestState, stateOf } from "../state";
import { SECURITY_HEADERS } from "./dashboard/common";
import { escapeHtml } from "./dashboard/html";

const startedAt = Date.now();

/** A dependency as /ready reports it: "migrating" is a database that answers while its schema is migrated. */
type DependencyState = "ok" | "unavailable" | "migrating";

export interface Operations {
  /** asks each shared dependency whether it answers (and keeps the answer for textai_dependency_up) */
  probe(): Promise<Record<string, DependencyState>>;
  /** the Prometheus text of every metric, dependencies probed first */
  scrape(): Promise<string>;
}

const operationsOf = new WeakMap<AppDeps, Operations>();

/**
 * The gauges read at scrape time and the dependency probe, made once per gateway: the app's
 * /metrics and /ready and the separate `metrics_listen` listener share them.
 */
export function operations(deps: AppDeps): Operations {
  const made = operationsOf.get(deps);
  if (made) return made;
  const { metrics, cache, limiter, router, dependencies } = deps;
  metrics.gauge("textai_cache_entries", "Answers held in the cache", () => [[{}, cache.snapshot().entries]]);
  metrics.gauge("textai_cache_bytes", "Approximate bytes held by the answer cache", () => [[{}, cache.snapshot().bytes]]);
  metrics.gauge("textai_ratelimit_buckets", "Token buckets held in memory", () => [[{}, limiter.size()]]);
  metrics.gauge("textai_request_log_pending", "Request-log entries recorded and not yet written", () => [
    [{}, deps.requestLog.backlog],
  ]);
  metrics.gauge("textai_request_log_dropped", "Request-log entries dropped because the database could not take them", () => [
    [{}, deps.requestLog.dropped],
  ]);
  leaseGauges(metrics, deps.ledger);
  metrics.gauge("textai_idempotency_records", "Idempotency-Key records held (in flight and done, until they expire)", () => [
    [{}, deps.idempotency.size()],
  ]);
  // what the last /ready or probe saw, per shared dependency (1 up, 0 down)
  const seen = new Map<string, boolean>(dependencies.map((d) => [d.name, true]));
  metrics.gauge("textai_dependency_up", "1 while a shared dependency (database, redis) answers, 0 while it does not", () =>
    [...seen].map(([dependency, up]) => [{ dependency }, up ? 1 : 0]),
  );
  for (const d of dependencies) {
    const errors = d.errors;
    if (errors)
      metrics.gauge(
        `textai_${d.name}_errors_total`,
        `Failed ${d.name} commands by reason: connection and timeout (an outage: the node falls back), noscript (a script loaded again, the call goes on), or the error word ${d.name} answered (the call is refused 503)`,
        () => [...errors()].map(([reason, n]) => [{ reason }, n]),
        "counter",
      );
  }
  const probe = async (): Promise<Record<string, DependencyState>> => {
    const out: Record<string, DependencyState> = {};
    for (const d of dependencies) {
      let up = false;
      try {
        up = await d.up();
      } catch {
        up = false;
      }
      seen.set(d.name, up);
      out[d.name] = up ? "ok" : d.migrating?.() ? "migrating" : "unavailable";
    }
    return out;
  };
  metrics.gauge(
    "textai_provider_circuit_open",
    "1 while the provider is unhealthy: a breaker of a model it is configured with or that has answered is open or half-open (or, before any such model was tried, every model tried is)",
    () => Object.entries(router.status()).map(([provider, s]) => [{ provider }, s.state === "closed" ? 0 : 1]),
  );
  metrics.gauge(
    "textai_provider_models_circuit_open",
    "How many of the provider's per-model breakers are open or half-open, client-named models included (the models are listed in /ready's details)",
    () => Object.entries(router.status()).map(([provider, s]) => [{ provider }, s.modelsOpen]),
  );
  metrics.gauge("textai_process_resident_memory_bytes", "Resident memory of the gateway process", () => [
    [{}, process.memoryUsage.rss()],
  ]);
  // Bun's process.memoryUsage(): heapUsed is the collector's count of live bytes after its last
  // collection, large objects included; heapTotal is only the bytes of its small-object blocks.
  // The first can exceed the second, so neither is called "used" or "total" here.
  metrics.gauge(
    "textai_heap_bytes",
    "JavaScript heap of the server thread: live_after_gc (bytes alive at the last collection, large objects included), block_capacity (bytes of the collector's small-object blocks, large objects not included, so it may be below live_after_gc), external (memory outside the heap held by JS objects, such as buffers)",
    () => {
      const m = process.memoryUsage();
      return [
        [{ kind: "live_after_gc" }, m.heapUsed],
        [{ kind: "block_capacity" }, m.heapTotal],
        [{ kind: "external" }, m.external],
      ];
    },
  );
  metrics.gauge(
    "textai_engine_memory_bytes",
    "Growth of resident memory when an offline-engine part loaded (present once it has loaded)",
    () => loadedEngines().map((e) => [{ engine: e.engine }, e.rss_bytes]),
  );
  metrics.gauge("textai_engine_load_seconds", "How long an offline-engine part took to load", () =>
    loadedEngines().map((e) => [{ engine: e.engine }, e.load_ms / 1000]),
  );
  const readDeployments = deploymentMetrics(
    metrics,
    deps.deploymentState,
    deps.config.models.flatMap((g) => g.deployments),
  );
  const ops: Operations = {
    probe,
    async scrape() {
      await Promise.all([probe(), readDeployments()]);
      return metrics.render();
    },
  };
  operationsOf.set(deps, ops);
  return ops;
}

export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** What `/` points at, in the order shown (the start-up banner names the first ones too). */
export const LANDING_LINKS = [
  { path: "/docs", what: "API reference (OpenAPI, try the endpoints)" },
  { path: "/dashboard", what: "dashboard: keys, usage, requests, playground" },
  { path: "/health", what: "liveness" },
  { path: "/ready", what: "readiness" },
  { path: "/openapi.json", what: "the OpenAPI document" },
] as const;

/**
 * The q-value of a media type in an Accept header: its own entry, else its type's wildcard
 * (`text/` then a star), else the any-type wildcard (RFC 9110 12.5.1, most specific first); 0 when none matches.
 */
function acceptQ(accept: string, type: string): number {
  const [major] = type.split("/");
  let best: { rank: number; q: number } | null = null;
  for (const part of accept.split(",")) {
    const [range = "", ...params] = part.trim().toLowerCase().split(";");
    const rank = range === type ? 3 : range === `${major}/*` ? 2 : range === "*/*" ? 1 : 0;
    if (rank === 0 || (best && best.rank >= rank)) continue;
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    best = { rank, q: Number.isFinite(q) ? q : 0 };
  }
  return best?.q ?? 0;
}

/** `/`: HTML when the client prefers text/html over application/json (a browser), else the JSON envelope. */
function landing(state: RequestState, request: Request): Response {
  const accept = request.headers.get("accept") ?? "";
  const links = Object.fromEntries(LANDING_LINKS.map((l) => [l.path.replace(/^\/|\.json$/g, ""), l.path]));
  if (acceptQ(accept, "text/html") <= acceptQ(accept, "application/json")) {
    const res = ok(state, `Text-AI Gateway ${VERSION}`, { name: "Text-AI Gateway", version: VERSION, links });
    res.headers.set("vary", "Accept");
    return res;
  }
  state.status = 200;
  const items = LANDING_LINKS.map((l) => `<li><a href="${l.path}">${l.path}</a>: ${escapeHtml(l.what)}</li>`).join("\n");
  const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Text-AI Gateway</title><link rel="stylesheet" href="/dashboard/assets/app.css"></head>
<body><main>
<h1>Text-AI Gateway</h1>
<p>Version ${escapeHtml(VERSION)}. An HTTP + JSON gateway for AI text functions (<code>/api/v1/ai/&lt;function&gt;</code>) and the OpenAI-compatible <code>/v1</code> API.</p>
<ul>
${items}
</ul>
</main></body></html>
`;
  return new Response(page, {
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      vary: "Accept",
      ...SECURITY_HEADERS,
      ...state.headers,
    },
  });
}

export function opsRoutes(deps: AppDeps) {
  const { router, lifecycle, dependencies } = deps;
  const { probe, scrape } = operations(deps);
  /**
   * /metrics and the details of /ready tell the providers, their states and every tenant's
   * traffic: on this listener, for the admin token only (the `metrics_listen` address serves
   * /metrics to whoever reaches it)
   */
  const operator = async (request: Request, server: Peer): Promise<boolean> =>
    (await adminTokenOf(deps, request, server)) === "right";

  return new Elysia({ name: "ops" })
    .use(edgePlugin(deps))
    .get("/", (context) => landing(stateOf(context), context.request), {
      detail: {
        tags: ["Operations"],
        summary:
          "Landing: the version and links to /docs, /dashboard and /health; HTML for a browser (Accept prefers text/html), else JSON",
      },
    })
    .get(
      "/health",
      (context) => ok(stateOf(context), "ok", { status: "ok", uptime_s: Math.round((Date.now() - startedAt) / 1000) }),
      {
        detail: { tags: ["Operations"], summary: "Liveness: the process answers" },
      },
    )
    .get(
      "/ready",
      async (context) => {
        const { request, server } = context;
        const state = stateOf(context);
        const status = await probe();
        const missing = dependencies.filter((d) => status[d.name] !== "ok");
        const blocking = missing.filter((d) => d.required);
        const details: Record<string, unknown> = {
          status: missing.length ? "degraded" : "ready",
          ...status,
          missing: missing.map((d) => d.name),
          draining: lifecycle.draining,
        };
        // readiness itself is for anyone (load balancers): a throttled token only loses the details
        if (await operator(request, server).catch(() => false)) {
          details.providers = router.status();
          // loaded on first use; a part not loaded yet makes its first call wait, not /ready fail
          details.engines_loaded = loadedEngines().map((e) => e.engine);
        }
        if (lifecycle.draining || blocking.length) {
          const why = lifecycle.draining
            ? "shutting down"
            : blocking
                .map(
                  (d) =>
                    `${d.name} ${status[d.name] === "migrating" ? "migrating (its tables made or updated by this node or another starting with it)" : "unavailable"}`,
                )
                .join(" and ");
          return errorResponse(state, new GatewayError("service_unavailable", why, { headers: { "Retry-After": "1" } }));
        }
        return ok(state, missing.length ? `ready, without ${missing.map((d) => d.name).join(" and ")}` : "ready", details);
      },
      {
        detail: {
          tags: ["Operations"],
          summary:
            "Readiness: database reachable, not draining; with the admin token also the provider breaker states and the offline-engine parts loaded so far",
        },
      },
    )
    .get(
      "/metrics",
      async ({ state }) => {
        state.status = 200;
        return new Response(await scrape(), { headers: { "content-type": METRICS_CONTENT_TYPE } });
      },
      {
        admin: {
          unset: "/metrics is served to the admin token (set TEXTAI_ADMIN_TOKEN) or on the metrics_listen address",
          // a scrape is no function call: not logged per request
          fn: false,
        },
        detail: {
          tags: ["Operations"],
          summary: "Prometheus metrics, for the admin token (Authorization: Bearer); or open on the metrics_listen address",
          security: [{ bearer: [] }],
        },
      },
    )
    .get(
      "/docs/assets/scalar.js",
      () =>
        new Response(Bun.file(scalarBundle), {
          headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=86400" },
        }),
    );
}

/** A node's credit leases (PostgreSQL; docs/many-nodes.md#credit-leases): held now, and granted and used so far. */
function leaseGauges(metrics: AppDeps["metrics"], ledger: AppDeps["ledger"]): void {
  const leases = ledger.leaseStats?.bind(ledger);
  if (leases) {
    metrics.gauge(
      "textai_credit_leases",
      "Accounts' credit this node holds as leases, by what: count (leases) and credits (left to admit)",
      () => {
        const now = leases();
        return [
          [{ what: "count" }, now.held],
          [{ what: "credits" }, now.free],
        ];
      },
    );
    const journal = ledger.journalFigures?.bind(ledger);
    if (journal) {
      metrics.gauge(
        "textai_credit_journal",
        "This node's credit journal: entries pending (committed here, not yet shipped to PostgreSQL), their credits, and credits in doubt (pending charges of leases that lapsed, or of an earlier run)",
        () => {
          const now = journal();
          return now
            ? [
                [{ what: "pending" }, now.pending],
                [{ what: "pending_credits" }, now.pendingCredits],
                [{ what: "in_doubt_credits" }, now.inDoubt],
              ]
            : [];
        },
      );
      metrics.gauge(
        "textai_credit_journal_ships_total",
        "Batches that shipped this node's credit journal to PostgreSQL",
        () => {
          const now = journal();
          return now ? [[{}, now.ships]] : [];
        },
        "counter",
      );
      metrics.gauge(
        "textai_credit_journal_lost_total",
        "Journal charges PostgreSQL could not apply (their lease gone and its allowance forfeited, the balance short)",
        () => {
          const now = journal();
          return now ? [[{}, now.lost]] : [];
        },
        "counter",
      );
    }
    metrics.gauge(
      "textai_credit_leases_total",
      "Leases granted to this node, and calls admitted against a lease instead of a hold of their own",
      () => {
        const now = leases();
        return [
          [{ what: "granted" }, now.granted],
          [{ what: "calls" }, now.calls],
        ];
      },
      "counter",
    );
  }
}
