import { type AppDeps, createApp } from "./app";
import { KeyStore } from "./auth/key-store";
import { ResponseCache } from "./cache/response-cache";
import type { Config } from "./config";
import { CreditLedger } from "./credits/ledger";
import type { AnyFunctionDef } from "./functions/define";
import { FUNCTIONS } from "./functions/registry";
import { IdempotencyStore } from "./http/idempotency";
import { createLogger, type Logger } from "./log";
import { Metrics } from "./metrics";
import { buildProviders } from "./providers";
import { ProviderRouter } from "./providers/router";
import { MemoryRateLimiter } from "./ratelimit/limiter";
import { resourcePlugins } from "./resources";
import { openStorage } from "./storage/db";

export interface BuildOptions {
  functions?: AnyFunctionDef[];
  logger?: Logger;
  now?: () => number;
}

/** Wires every part from one Config. Tests and `textai serve` both start here. */
export function buildDeps(config: Config, opts: BuildOptions = {}): AppDeps {
  const storage = openStorage(config.dbPath, { busyTimeoutMs: config.dbBusyTimeoutMs });
  const ledger = new CreditLedger(storage);
  ledger.reconcile();
  const keys = new KeyStore(storage, ledger, { welcomeCredits: config.welcomeCredits });
  const metrics = new Metrics();
  const providers = buildProviders(config);
  const router = new ProviderRouter(config, providers);
  router.onOutcome = (provider, fn, outcome, ms) => {
    metrics.inc("textai_provider_calls_total", "Provider calls by outcome", { provider, function: fn, outcome });
    metrics.observe("textai_provider_duration_seconds", "Provider call latency", { provider }, ms / 1000);
  };
  return {
    config,
    storage,
    keys,
    ledger,
    limiter: new MemoryRateLimiter(config.plans, opts.now),
    cache: new ResponseCache(
      { ttlMs: config.cache.ttlSeconds * 1000, maxEntries: config.cache.maxEntries, maxBytes: config.cache.maxBytes },
      opts.now,
    ),
    idempotency: new IdempotencyStore(),
    providers,
    router,
    metrics,
    logger: opts.logger ?? createLogger(config.logLevel),
    functions: opts.functions ?? FUNCTIONS,
    plugins: resourcePlugins,
    lifecycle: { draining: false, warming: false },
  };
}

export interface RunningServer {
  url: string;
  port: number;
  deps: AppDeps;
  /** graceful: readiness goes 503, in-flight requests finish, storage closes */
  stop(): Promise<void>;
}

export function startServer(config: Config, opts: BuildOptions = {}): RunningServer {
  const deps = buildDeps(config, opts);
  const app = createApp(deps);
  app.listen({
    port: config.port,
    hostname: config.host,
    maxRequestBodySize: config.limits.maxBodyBytes * 4 + 65536,
    idleTimeout: 120,
  });
  const server = app.server!;
  deps.keys.startBackgroundFlush();
  deps.limiter.startSweeping();
  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      deps.lifecycle.draining = true;
      await server.stop(false);
      deps.limiter.stop();
      deps.keys.stop();
      deps.ledger.flush();
      deps.storage.close();
    })();
    return stopping;
  };
  const url = `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${server.port}`;
  deps.logger.log("info", "listening", { url, db: config.dbPath, providers: config.providers.map((p) => p.name).join(",") });
  return { url, port: server.port!, deps, stop };
}
