import { readFileSync, unlinkSync, writeFileSync } from "node:fs";
import type { Server } from "bun";
import { createApp } from "./app";
import { type Config, ConfigError, storeForLog, urlForLog } from "./config";
import type { Role } from "./dashboard/members";
import { ssoAccountsRefusal } from "./dashboard/sso-map";
import { GatewayError } from "./errors";
import type { AnyFunctionDef } from "./functions/define";
import { FUNCTIONS } from "./functions/registry";
import { BodyReads } from "./http/body";
import type { AppDeps } from "./http/deps";
import { type EdgeKind, edgeOf, roleOf } from "./http/edge-plugin";
import { newRequestId } from "./http/envelope";
import { pathOf } from "./http/path";
import { errorResponse } from "./http/respond";
import { METRICS_CONTENT_TYPE, operations } from "./http/routes/ops";
import { checkFunctionTables } from "./http/routes/usage-names";
import { newRequestState } from "./http/state";
import { createLogger, type Logger } from "./log";
import { fixedLabels, Metrics } from "./metrics";
import { buildProviders } from "./providers";
import { ProviderRouter } from "./providers/router";
import { buildServices, type Services, serviceDeps } from "./services";
import type * as Otel from "./tracing/otel";

export interface BuildOptions {
  functions?: AnyFunctionDef[];
  logger?: Logger;
  now?: () => number;
}

/** Wires every part from one Config. Tests and `textai serve` both start here. */
export function buildDeps(config: Config, opts: BuildOptions = {}): AppDeps & { services: Services } {
  const functions = opts.functions ?? FUNCTIONS;
  checkFunctionTables(config, functions);
  const logger = opts.logger ?? createLogger(config.logLevel);
  const services = buildServices(config, { logger, now: opts.now });
  const metrics = new Metrics();
  const providers = buildProviders(config);
  const router = new ProviderRouter(config, providers, { deploymentState: services.deploymentState });
  router.onBreaker = (provider, model, state) => services.alerts.breaker(provider, model, state);
  // the label sets of every provider call, built and keyed once (metrics.ts fixedLabels)
  const outcomeLabels = new Map<string, { byOutcome: Record<string, string>; byProvider: Record<string, string> }>();
  router.onOutcome = (provider, fn, outcome, ms) => {
    const labels = fixedLabels(outcomeLabels, `${provider}\u0000${fn}\u0000${outcome}`, () => ({
      byOutcome: Object.freeze({ provider, function: fn, outcome }),
      byProvider: Object.freeze({ provider }),
    }));
    metrics.inc("textai_provider_calls_total", "Provider calls by outcome", labels.byOutcome);
    metrics.observe("textai_provider_duration_seconds", "Provider call latency", labels.byProvider, ms / 1000);
  };
  // required here, not imported: without the variable the OpenTelemetry packages are never loaded
  const tracing = config.tracing
    ? (require("./tracing/otel") as typeof Otel).startTracing(config.tracing, logger, providers)
    : null;
  return {
    config,
    ...serviceDeps(services),
    services,
    // the spans still queued are exported before the storage closes
    close: async () => {
      await tracing?.shutdown().catch(() => {});
      await services.close();
    },
    tracing,
    providers,
    router,
    metrics,
    logger,
    functions,
    lifecycle: { draining: false, bodyReads: new BodyReads() },
  };
}

export class PortInUse extends Error {
  constructor(host: string, port: number) {
    super(
      `port ${port} on ${host} is already in use (another gateway or program listens there): stop it, or choose another port with --port or PORT`,
    );
    this.name = "PortInUse";
  }
}

/**
 * Notes this process as serving `dbPath` in `<dbPath>.serve.pid` (its pid, then the URL it answers
 * at, which `members add` prints invitation links under: servingUrl), and warns when a live process
 * is already noted there: two servers on one file are safe (the ledger's conditional updates hold),
 * but usually a mistake (an old instance left running). Returns the release for shutdown.
 */
function claimDatabase(config: Pick<Config, "dbPath" | "databaseUrl" | "configFile">, logger: Logger, url: string): () => void {
  // with PostgreSQL the ledger is shared by design, and nodes on one machine may share the SQLite
  // file too (it then holds only per-node leftovers): no warning
  const { dbPath } = config;
  if (config.databaseUrl || dbPath === ":memory:") return () => {};
  const file = `${dbPath}.serve.pid`;
  try {
    const other = Number.parseInt(readFileSync(file, "utf8"), 10);
    if (other > 0 && other !== process.pid && isAlive(other)) {
      const message = `another live process (pid ${other}) is serving the same database file ${dbPath}`;
      logger.log("warn", message, { db: dbPath, other_pid: other });
      console.error(`warning: ${message}; both will answer from one ledger`);
    }
  } catch {
    // no pid file: nobody else noted
  }
  try {
    // the config file too: a CLI verb on this database reads the same one (servingConfig)
    writeFileSync(file, `${process.pid}\n${url}\n${config.configFile ?? ""}\n`);
  } catch {
    return () => {};
  }
  return () => {
    try {
      if (Number.parseInt(readFileSync(file, "utf8"), 10) === process.pid) unlinkSync(file);
    } catch {
      // already gone
    }
  };
}

/**
 * A provider's key variable named but not set: every call of that provider goes without its key (a
 * CLI verb reading the same file in another shell may lack it by design: a warning, not a refusal).
 */
function warnUnsetKeys(config: Pick<Config, "providers">, logger: Logger): void {
  for (const p of config.providers)
    if (p.api_key_env && !p.api_key)
      logger.log(
        "warn",
        `provider "${p.name}": api_key_env names ${p.api_key_env}, which is not set: its calls go without a key`,
        {
          provider: p.name,
          api_key_env: p.api_key_env,
        },
      );
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === "EPERM";
  }
}

const urlOf = (host: string, port: number) => `http://${host.includes(":") ? `[${host}]` : host}:${port}`;

/** Where a browser on this machine reaches a listener: an unspecified address (0.0.0.0, ::) is the loopback one. */
export const reachableUrl = (host: string, port: number) =>
  urlOf(host === "0.0.0.0" || host === "" ? "127.0.0.1" : host === "::" ? "::1" : host, port);

/** What a live server serving `dbPath` noted (claimDatabase), or null: none, or it is gone. */
function servingNote(dbPath: string): { url: string; configFile: string | null } | null {
  try {
    const [pid, url, configFile] = readFileSync(`${dbPath}.serve.pid`, "utf8").split("\n");
    const n = Number.parseInt(pid ?? "", 10);
    return url && n > 0 && isAlive(n) ? { url, configFile: configFile || null } : null;
  } catch {
    return null;
  }
}

/** The URL a live server serving `dbPath` noted (claimDatabase), or null: none, or it is gone. */
export function servingUrl(dbPath: string): string | null {
  return servingNote(dbPath)?.url ?? null;
}

/**
 * The config file a live server serving `dbPath` runs with (an absolute path; null: it runs with
 * none), or undefined when no live server noted it.
 */
export function servingConfig(dbPath: string): string | null | undefined {
  const note = servingNote(dbPath);
  return note === null ? undefined : note.configFile;
}

/**
 * The `metrics_listen` listener: GET /metrics to whoever reaches the address, without the admin
 * token (so it belongs on a private interface); every other request is a 404 or 405 envelope.
 */
function serveMetrics(deps: AppDeps & { services: Services }, at: { host: string; port: number }) {
  const { scrape } = operations(deps);
  return Bun.serve({
    hostname: at.host,
    port: at.port,
    reusePort: false,
    development: false,
    async fetch(request) {
      const state = newRequestState(newRequestId());
      if (pathOf(request.url) !== "/metrics")
        return errorResponse(state, new GatewayError("not_found", "this listener serves only GET /metrics"));
      if (request.method !== "GET" && request.method !== "HEAD")
        return errorResponse(
          state,
          new GatewayError("method_not_allowed", `${request.method} is not allowed here; use GET`, { headers: { Allow: "GET" } }),
        );
      return new Response(await scrape(), { headers: { "content-type": METRICS_CONTENT_TYPE, ...state.headers } });
    },
    error() {
      const state = newRequestState(newRequestId());
      return errorResponse(state, new GatewayError("internal_error", "internal error"));
    },
  });
}

/** how often the drain looks whether anything is still in flight */
const POLL_MS = 10;
/** after the drain's grace, the listener closes once no request has arrived for this long ... */
const QUIET_MS = 50;
/** ... or this long after the grace at the latest (and at the drain deadline) */
const QUIET_MAX_MS = 500;

/**
 * Holds every request that arrives from now on (it is neither run nor answered) until `release()`,
 * and resolves once none has arrived for QUIET_MS, or at `until` (a Date.now() time).
 *
 * Why: Linux resets the connections a closing listener has not taken yet (its accept queue), and a
 * client told `Connection: close` reconnects at once, so while answers go out there are nearly
 * always some (bench/README.md, "the `drain` chaos experiment no longer flaky"). Held, no client is sent an answer, none reconnects, and
 * what is already on its way arrives and is held too; after the listener has closed, the held
 * requests run as usual (answered with `Connection: close`). While holding, every request goes
 * through `fetch` (the app's own router) instead of Bun's route table: the request itself, so that
 * `server.requestIP` still tells its client (the guessing limits count by it), and the app's router
 * finds its route behind any Host header (createApp's `standardHostname`).
 */
async function quiesce(
  server: Server<unknown>,
  fetch: (request: Request) => Response | Promise<Response>,
  until: number,
): Promise<{ count: number; release(): void }> {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let count = 0;
  let last = performance.now();
  server.reload({
    routes: {},
    fetch: async (request) => {
      count++;
      last = performance.now();
      await gate;
      return fetch(request);
    },
  });
  for (;;) {
    const wait = Math.min(last + QUIET_MS - performance.now(), until - Date.now());
    if (wait > 0) {
      await Bun.sleep(wait);
      continue;
    }
    if (Date.now() >= until) break;
    // quiet, unless this process was too busy to read what came meanwhile: two turns of the event
    // loop (the connection accepted, then its request read) before the listener closes
    const seen = count;
    await Bun.sleep(0);
    await Bun.sleep(0);
    if (count === seen) break;
  }
  return { count, release };
}

export interface RunningServer {
  url: string;
  port: number;
  /** the `metrics_listen` listener's base URL, when one is configured */
  metricsUrl?: string;
  deps: AppDeps & { services: Services };
  /** every route the app registered (method and path pattern): the security matrix walks them */
  /** the registered routes: the credential each one's edge checks, and a session route's least member role */
  routes: { method: string; path: string; edge: EdgeKind | null; role: Role | null }[];
  /** graceful drain: readiness goes 503, the listener stays open for the grace period (or until nothing is in flight), in-flight requests finish until the deadline, storage closes */
  stop(): Promise<void>;
  /**
   * The start's checks that need the database once it is migrated (PostgreSQL: later than the
   * port opens): rejects with a ConfigError naming what `[sso]` gets wrong. On SQLite they ran
   * before the port opened (startServer threw instead).
   */
  checked: Promise<void>;
}

/**
 * The start's checks that read the database: an account `[sso]` names that does not exist. On
 * SQLite they throw here, before the port opens; on PostgreSQL the promise rejects once the schema
 * is migrated (RunningServer.checked).
 */
function startChecks(config: Config, deps: AppDeps & { services: Services }): Promise<void> {
  const refusal = ssoAccountsRefusal(config.sso, deps.keys);
  if (typeof refusal === "string") {
    void deps.close();
    throw new ConfigError(refusal);
  }
  const checked = Promise.resolve(refusal).then((r) => {
    if (r) throw new ConfigError(r);
  });
  // handled here so an in-process server nobody asks is no unhandled rejection; `serve` acts on it
  checked.catch(() => {});
  return checked;
}

export function startServer(config: Config, opts: BuildOptions = {}): RunningServer {
  const deps = buildDeps(config, opts);
  const checked = startChecks(config, deps);
  const app = createApp(deps);
  try {
    app.listen({
      port: config.port,
      hostname: config.host,
      // the gateway's own limits answer oversized bodies (413 in the envelope, while reading): Bun's
      // limit would answer a bare 413 before any of them, so it is set out of reach
      maxRequestBodySize: Number.MAX_SAFE_INTEGER,
      idleTimeout: 120,
      // never Bun's development error page (source lines, working directory) ...
      development: false,
      // ... and should the app's own error handling ever throw, still the envelope, without internals
      error: (error: Error) => {
        const state = newRequestState(newRequestId());
        deps.logger.log("error", "unhandled error outside the app", {
          request_id: state.requestId,
          error_name: error?.name,
          error_message: error?.message,
          stack: error?.stack,
        });
        return errorResponse(state, new GatewayError("internal_error", "internal error"));
      },
      // Elysia turns SO_REUSEPORT on by default: a second gateway on a taken port would start
      // silently and the two would answer in turn. A taken port must be an error.
      reusePort: false,
    });
  } catch (err) {
    void deps.close();
    if ((err as { code?: string }).code === "EADDRINUSE") throw new PortInUse(config.host, config.port);
    throw err;
  }
  const server = app.server!;
  let metricsServer: ReturnType<typeof Bun.serve> | null = null;
  if (config.metricsListen) {
    try {
      metricsServer = serveMetrics(deps, config.metricsListen);
    } catch (err) {
      void server.stop(true);
      void deps.close();
      if ((err as { code?: string }).code === "EADDRINUSE")
        throw new PortInUse(config.metricsListen.host, config.metricsListen.port);
      throw err;
    }
  }
  const releaseDb = claimDatabase(config, deps.logger, reachableUrl(config.host, server.port!));
  deps.services.start();
  let stopping: Promise<void> | null = null;
  const { drainGraceMs, drainDeadlineMs } = config.shutdown;
  /** requests in flight: being read, run or answered, streamed answers included (held ones too) */
  const inFlight = () => server.pendingRequests + server.pendingWebSockets;
  const stop = () => {
    stopping ??= (async () => {
      // 1. /ready answers 503 and every answer says Connection: close, while the listener stays
      //    open for the grace period, so load balancers notice before connections are refused; the
      //    grace ends early once nothing is in flight (an idle stop is instant)
      const t0 = Date.now();
      deps.lifecycle.draining = true;
      deps.logger.log("info", "draining", { grace_ms: drainGraceMs, deadline_ms: drainDeadlineMs });
      while (inFlight() > 0 && Date.now() < t0 + drainGraceMs) await Bun.sleep(POLL_MS);
      const graceEnded = Date.now();
      // 2. a body still arriving now is not waited for: its request is answered 503 (Connection: close)
      const cut = deps.lifecycle.bodyReads.cutAll();
      if (cut > 0) deps.logger.log("info", "unfinished request bodies cut at the end of the grace", { requests: cut });
      // 3. the listener closes, idle connections with it; calls in flight run on. First the requests
      //    still coming are held until none has come for a moment (see quiesce), so that no client
      //    is reconnecting, its connection left in the kernel's queue and reset, as the listener closes
      const held =
        drainGraceMs > 0 ? await quiesce(server, app.fetch, Math.min(t0 + drainDeadlineMs, Date.now() + QUIET_MAX_MS)) : null;
      let closed = false;
      void server.stop(false).then(() => {
        closed = true;
      });
      held?.release();
      if (held)
        deps.logger.log("info", "listener closed", {
          held: held.count,
          grace_ms: graceEnded - t0,
          after_grace_ms: Date.now() - graceEnded,
        });
      // 4. the calls in flight finish (until the deadline). Then the connections left hold no request
      //    (a request's headers half sent, a kept-alive one): closed at once, not at their idle timeout
      while (!closed && inFlight() > 0 && Date.now() < t0 + drainDeadlineMs) await Bun.sleep(POLL_MS);
      if (!closed && inFlight() > 0) {
        // the deadline: whatever is left (slow calls, answers still streaming) is cut off, and a
        // call whose answer can no longer be sent is not charged
        deps.logger.log("warn", "drain deadline passed: closing the connections left", { requests: server.pendingRequests });
        deps.services.refuseCharges();
      }
      if (!closed) await server.stop(true);
      // an answer just sent has its after-response work (the request log's record, metrics) still
      // to run: Elysia runs it a turn after the response; one poll's wait lets it in before storage
      // closes, so a call answered just before the stop is in the log it flushes
      await Bun.sleep(POLL_MS);
      await metricsServer?.stop(true);
      await deps.close();
      releaseDb();
    })();
    return stopping;
  };
  const url = urlOf(config.host, server.port!);
  deps.logger.log("info", "listening", {
    url,
    db: storeForLog(config),
    ...(config.redisUrl ? { redis: urlForLog(config.redisUrl) } : {}),
    providers: config.providers.map((p) => p.name).join(","),
  });
  warnUnsetKeys(config, deps.logger);
  const metricsUrl = metricsServer ? urlOf(config.metricsListen!.host, metricsServer.port!) : undefined;
  if (metricsUrl) deps.logger.log("info", "metrics listening", { url: `${metricsUrl}/metrics` });
  const routes = app.routes.map((r) => ({
    method: r.method.toUpperCase(),
    path: r.path,
    edge: edgeOf(r.hooks),
    role: roleOf(r.hooks),
  }));
  return { url, port: server.port!, metricsUrl, deps, routes, stop, checked };
}
