import { openapi } from "@elysiajs/openapi";
import { Elysia } from "elysia";

type OpenApiOptions = NonNullable<Parameters<typeof openapi>[0]>;

import type { KeyStore } from "./auth/key-store";
import type { ResponseCache } from "./cache/response-cache";
import type { Config } from "./config";
import type { CreditLedger } from "./credits/ledger";
import { GatewayError } from "./errors";
import type { AnyFunctionDef } from "./functions/define";
import { FunctionPipeline } from "./functions/run";
import { newRequestId } from "./http/envelope";
import type { IdempotencyStore } from "./http/idempotency";
import { openApiDocumentation } from "./http/openapi";
import { errorResponse } from "./http/respond";
import { accountRoutes } from "./http/routes/account";
import { adminRoutes } from "./http/routes/admin";
import { functionRoutes } from "./http/routes/functions";
import { openAiCompatRoutes } from "./http/routes/openai-compat";
import { opsRoutes } from "./http/routes/ops";
import { beginRequest, stateOf } from "./http/state";
import { type Logger, logsAt } from "./log";
import type { Metrics } from "./metrics";
import type { ProviderRouter } from "./providers/router";
import type { Provider } from "./providers/types";
import type { RateLimiter } from "./ratelimit/limiter";
import { isStorageUnavailable, type Storage } from "./storage/db";

// /docs must work offline: the bundle from the binary, and no web fonts, favicon request, telemetry,
// AI agent, MCP or deploy toolbar that would reach Scalar's servers
// (`agent` is known to the embedded bundle, not yet to the plugin's types)
const scalarConfig: Partial<NonNullable<OpenApiOptions["scalar"]>> & { agent: { disabled: boolean } } = {
  cdn: "/docs/assets/scalar.js",
  favicon: "data:,",
  withDefaultFonts: false,
  telemetry: false,
  showDeveloperTools: "never",
  agent: { disabled: true },
  mcp: { disabled: true },
};

export interface AppDeps {
  config: Config;
  storage: Storage;
  keys: KeyStore;
  ledger: CreditLedger;
  limiter: RateLimiter;
  cache: ResponseCache;
  idempotency: IdempotencyStore;
  /** every configured provider by name, built once; the router and the knowledge plugin share them */
  providers: ReadonlyMap<string, Provider>;
  router: ProviderRouter;
  metrics: Metrics;
  logger: Logger;
  functions: AnyFunctionDef[];
  /** extra route plugins (resources) mounted after the core ones */
  plugins?: ((deps: AppDeps & { pipeline: FunctionPipeline }) => Elysia)[];
  /**
   * draining: flipped by graceful shutdown; warming: set while the offline engine loads its models
   * in the background after start-up. /ready answers 503 in both cases.
   */
  lifecycle: { draining: boolean; warming: boolean };
}

/** Maps anything thrown to the closed set of gateway errors. */
export function toGatewayError(code: string | number, error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  if (code === "NOT_FOUND") return new GatewayError("not_found", "no such route");
  if (code === "PARSE") return new GatewayError("invalid_json", "request body is not valid JSON");
  if (code === "VALIDATION") return new GatewayError("invalid_request", "request does not match the schema");
  if (isStorageUnavailable(error)) {
    return new GatewayError("service_unavailable", "storage is temporarily unavailable; retry shortly", {
      headers: { "Retry-After": "1" },
    });
  }
  return new GatewayError("internal_error", "internal error");
}

export function createApp(deps: AppDeps) {
  const pipeline = new FunctionPipeline(deps);
  const { logger, metrics } = deps;
  let app = new Elysia({ name: "text-ai-gateway" })
    .onRequest(({ request }) => {
      beginRequest(request, newRequestId());
    })
    .onError(({ request, code, error }) => {
      const state = stateOf(request);
      const err = toGatewayError(code, error);
      if (err.code === "internal_error") {
        logger.log("error", "unhandled error", {
          request_id: state.requestId,
          error_name: (error as Error)?.name,
          error_message: (error as Error)?.message,
          stack: (error as Error)?.stack,
        });
      }
      return errorResponse(state, err);
    })
    .onAfterResponse(({ request }) => {
      const s = stateOf(request);
      const ms = performance.now() - s.startedPerf;
      const status = s.status ?? 200;
      const fn = s.fn ?? "other";
      metrics.inc("textai_requests_total", "HTTP requests by function and status", { function: fn, status: String(status) });
      metrics.observe("textai_request_duration_seconds", "Request latency", { function: fn }, ms / 1000);
      const level = status >= 500 ? "warn" : "info";
      if ((s.fn || status >= 400) && logsAt(logger, level)) {
        logger.log(level, "request", {
          request_id: s.requestId,
          method: request.method,
          path: new URL(request.url).pathname,
          status,
          ms: Math.round(ms * 100) / 100,
          key_id: s.auth?.keyId,
          fn: s.fn,
          provider: s.provider,
          credits: s.credits,
          cached: s.cached,
          error_code: s.errorCode,
        });
      }
    })
    .use(
      openapi({
        path: "/docs",
        specPath: "/openapi.json",
        documentation: openApiDocumentation() as unknown as OpenApiOptions["documentation"],
        scalar: scalarConfig as OpenApiOptions["scalar"],
        exclude: { paths: ["/docs/assets/scalar.js"] },
      }),
    )
    .use(opsRoutes(deps))
    .use(functionRoutes(deps, pipeline))
    .use(accountRoutes(deps))
    .use(adminRoutes(deps))
    .use(openAiCompatRoutes(deps));
  for (const plugin of deps.plugins ?? []) app = app.use(plugin({ ...deps, pipeline }));
  return app;
}

export type App = ReturnType<typeof createApp>;
