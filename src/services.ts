import { Alerts } from "./alerts/deliver";
import { SqliteWebhookStore } from "./alerts/sqlite";
import { SqliteAuditTrail } from "./audit/sqlite";
import type { KeyStore } from "./auth/interface";
import { SqliteKeyStore } from "./auth/sqlite";
import { MemoryResponseCache } from "./cache/memory";
import type { CallStarter } from "./callstart/interface";
import { type Config, maxKeysFor } from "./config";
import type { CreditLedger } from "./credits/interface";
import { SqliteCreditLedger } from "./credits/sqlite";
import { SIGN_IN_LIMITS, SignInLimiter } from "./dashboard/guessing";
import { SESSION_LIMITS, SESSION_SWEEP_EVERY_MS } from "./dashboard/security";
import { SqliteDashboardStore } from "./dashboard/sqlite";
import type { DeploymentStateService } from "./deployments/interface";
import { MemoryDeploymentState } from "./deployments/memory";
import type { DependencyProbe, ServiceDeps } from "./http/deps";
import { SqliteIdempotencyStore } from "./idempotency/sqlite";
import { SqliteKnowledgeIndex } from "./knowledge/sqlite";
import type { Logger } from "./log";
import { MemoryRateLimiter, planNames } from "./ratelimit/limiter";
import type { RedisLink } from "./redis/link";
import { RequestLog } from "./requestlog/recorder";
import { SqliteRequestLogStore } from "./requestlog/sqlite";
import { openStorage, type Storage } from "./storage/db";
import type { PgStorage } from "./storage/postgres";
import { SqliteSecretStore } from "./storage/secrets";

// The PostgreSQL and Redis implementations load only when configured: a single node on SQLite
// never pays the memory of their modules (about 5 MB).
const postgresParts = () => ({
  ...(require("./storage/postgres") as typeof import("./storage/postgres")),
  ...(require("./credits/postgres") as typeof import("./credits/postgres")),
  ...(require("./credits/journal") as typeof import("./credits/journal")),
  ...(require("./auth/postgres") as typeof import("./auth/postgres")),
  ...(require("./dashboard/postgres") as typeof import("./dashboard/postgres")),
  ...(require("./knowledge/postgres") as typeof import("./knowledge/postgres")),
  ...(require("./storage/secrets-pg") as typeof import("./storage/secrets-pg")),
  ...(require("./requestlog/postgres") as typeof import("./requestlog/postgres")),
  ...(require("./audit/postgres") as typeof import("./audit/postgres")),
  ...(require("./alerts/postgres") as typeof import("./alerts/postgres")),
});
const redisParts = () => ({
  ...(require("./redis/link") as typeof import("./redis/link")),
  ...(require("./ratelimit/redis") as typeof import("./ratelimit/redis")),
  ...(require("./cache/redis") as typeof import("./cache/redis")),
  ...(require("./idempotency/redis") as typeof import("./idempotency/redis")),
  ...(require("./callstart/redis") as typeof import("./callstart/redis")),
  ...(require("./dashboard/signin-redis") as typeof import("./dashboard/signin-redis")),
  ...(require("./deployments/redis") as typeof import("./deployments/redis")),
});

/** The Redis channel (after the prefix) on which revoked key hashes are broadcast. */
const REVOKED = "revoked";

/** Every stateful service of the gateway, as configuration picks them. */
export interface Services extends ServiceDeps {
  /** the same services, interfaces only: what the app is given (serviceDeps) */
  interfaces: ServiceDeps;
  /** the PostgreSQL pool, when TEXTAI_DATABASE_URL is set */
  postgres: PgStorage | null;
  /** the Redis connection, when TEXTAI_REDIS_URL is set */
  redis: RedisLink | null;
  /** resolves once the shared servers have been tried (a CLI verb waits for it; a server does not) */
  ready(): Promise<void>;
  /** background work of a serving process (last-used flush, bucket sweep, ended-session sweep, request-log writes and pruning) */
  start(): void;
  /** shutdown past its deadline: nothing more is charged */
  refuseCharges(): void;
  /** flushes what is pending and closes every connection */
  close(): Promise<void>;
}

/** The services as the app sees them: interfaces only. */
export function serviceDeps(s: Services): ServiceDeps {
  return s.interfaces;
}

export interface ServiceOptions {
  logger?: Logger;
  now?: () => number;
}

type Postgres = { pg: ReturnType<typeof postgresParts>; postgres: PgStorage } | null;

/** The account stores (keys, ledger) and the database probe: PostgreSQL when configured, else the SQLite file. */
function accountStores(
  config: Config,
  storage: Storage,
  db: Postgres,
): { keys: KeyStore; ledger: CreditLedger; database: DependencyProbe } {
  const keyStoreOptions = {
    welcomeCredits: config.welcomeCredits,
    maxKeys: (plan: string) => maxKeysFor(config, plan),
    plans: planNames(config.plans),
  };
  if (db) {
    const { pg, postgres } = db;
    const ledger = new pg.PostgresCreditLedger(postgres, {
      requestTimeoutMs: config.limits.requestTimeoutMs,
      leaseMax: config.limits.creditLeaseMax,
    });
    const keys = new pg.PostgresKeyStore(postgres, ledger, keyStoreOptions);
    return {
      keys,
      ledger,
      database: { name: "database", required: true, up: () => postgres.up(), migrating: () => postgres.state() === "migrating" },
    };
  }
  const ledger = new SqliteCreditLedger(storage);
  // Balances are kept with each charge; only a file that this open has just migrated (written by
  // an older version) is reconciled with its ledger, whichever process opens it first (a server
  // or a CLI verb). It scans the whole ledger (seconds for a million rows), so it is not done on
  // every start: `textai credits reconcile` does it on demand.
  if (storage.migrated > 0) ledger.reconcile();
  const keys = new SqliteKeyStore(storage, ledger, keyStoreOptions);
  const database = {
    name: "database",
    required: true,
    up: () => {
      storage.sqlite.query("SELECT 1").get();
      return true;
    },
  };
  return { keys, ledger, database };
}

type CallServices = Pick<ServiceDeps, "limiter" | "cache" | "idempotency" | "signIns" | "deploymentState"> & {
  callStarter: CallStarter | null;
};

/** Limits, the answer cache, Idempotency-Key records and sign-in counts: in Redis when configured, else in memory and SQLite. */
function callServices(
  config: Config,
  storage: Storage,
  keys: KeyStore,
  redis: RedisLink | null,
  opts: ServiceOptions,
): CallServices {
  const idempotencyOptions = {
    ttlMs: 24 * 3600_000,
    maxAnswerBytes: 1 << 20,
    // a call cannot run past its deadline: after that its record no longer blocks a retry
    leaseMs: config.limits.requestTimeoutMs + 5000,
  };
  if (!redis) {
    return {
      limiter: new MemoryRateLimiter(config.plans, opts.now),
      cache: new MemoryResponseCache(
        { ttlMs: config.cache.ttlSeconds * 1000, maxEntries: config.cache.maxEntries, maxBytes: config.cache.maxBytes },
        opts.now,
      ),
      idempotency: new SqliteIdempotencyStore(storage.sqlite, idempotencyOptions),
      callStarter: null,
      signIns: new SignInLimiter(SIGN_IN_LIMITS, opts.now),
      deploymentState: new MemoryDeploymentState(opts.now),
    };
  }
  const rd = redisParts();
  const limiter = new rd.RedisRateLimiter(redis, config.plans, opts.now);
  const cache = new rd.RedisResponseCache(redis, {
    ttlMs: config.cache.ttlSeconds * 1000,
    maxEntries: config.cache.maxEntries,
    maxEntryBytes: 1 << 20,
    // a producer that died holds its lock this long at most; the waiting nodes then call the provider
    lockMs: Math.min(config.limits.requestTimeoutMs, 15_000),
  });
  const idempotency = new rd.RedisIdempotencyStore(redis, idempotencyOptions);
  const callStarter = new rd.RedisCallStarter(redis, limiter, idempotency, cache);
  const signIns = new rd.RedisSignInLimiter(redis, SIGN_IN_LIMITS, opts.now);
  const deploymentState: DeploymentStateService = new rd.RedisDeploymentState(redis, { logger: opts.logger });
  // a revocation anywhere drops the key from every node's key cache at once
  keys.onRevoke = (hash) => redis.publish(redis.key(REVOKED), hash);
  redis.subscribe(redis.key(REVOKED), (hash) => keys.forget(hash));
  redis.start();
  return { limiter, cache, idempotency, callStarter, signIns, deploymentState };
}

/** The channel (after the prefix) on which a change of alert endpoints is broadcast: every node's watch reads them again. */
const ALERTS_CHANGED = "alerts-changed";

/** Alerts (docs/alerts.md): endpoints and outbox beside the accounts, the ledger's charges watched, changes told across nodes. */
function alertsOf(
  config: Config,
  storage: Storage,
  db: Postgres,
  ledger: CreditLedger,
  redis: RedisLink | null,
  logger: Logger | undefined,
): Alerts {
  const store = db ? new db.pg.PostgresWebhookStore(db.postgres) : new SqliteWebhookStore(storage.sqlite);
  const alerts = new Alerts(store, config.alerts, logger);
  ledger.watch = alerts.watch;
  if (redis) {
    alerts.onChange = () => void redis.publish(redis.key(ALERTS_CHANGED), "1");
    redis.subscribe(redis.key(ALERTS_CHANGED), () => void alerts.refresh());
  }
  return alerts;
}

/** Deletes ended dashboard sessions; a failure (the database down) is logged and the next sweep tries again. */
function sessionSweeper(dashboard: ServiceDeps["dashboard"], logger: Logger | undefined): () => Promise<void> {
  return async () => {
    try {
      const n = await dashboard.sweepSessions(Date.now(), SESSION_LIMITS);
      if (n > 0) logger?.log("debug", "ended dashboard sessions deleted", { sessions: n });
    } catch (err) {
      // the database is down: the next sweep tries again
      logger?.log("warn", "session sweep failed", { error_message: (err as Error).message });
    }
  };
}

/**
 * The one factory of stateful services, shared by `textai serve` and every CLI verb. With neither
 * TEXTAI_DATABASE_URL nor TEXTAI_REDIS_URL set: SQLite and memory, all synchronous.
 */
export function buildServices(config: Config, opts: ServiceOptions = {}): Services {
  const storage = openStorage(config.dbPath, { busyTimeoutMs: config.dbBusyTimeoutMs });
  const pg = config.databaseUrl ? postgresParts() : null;
  const postgres =
    pg && config.databaseUrl
      ? pg.openPostgres(config.databaseUrl, {
          max: config.databasePool,
          prepare: config.databasePrepare,
          onError: (err) => opts.logger?.log("warn", "database unreachable: migrations wait", { error_message: err.message }),
        })
      : null;
  const db: Postgres = pg && postgres ? { pg, postgres } : null;
  const { keys, ledger, database } = accountStores(config, storage, db);
  const redis: RedisLink | null = config.redisUrl
    ? new (redisParts().RedisLink)(config.redisUrl, opts.logger, { cluster: config.redisCluster, prefix: config.redisPrefix })
    : null;
  const calls = callServices(config, storage, keys, redis, opts);
  const dashboard = db ? new db.pg.PostgresDashboardStore(db.postgres) : new SqliteDashboardStore(storage.sqlite);
  const interfaces: ServiceDeps = {
    storage,
    keys,
    ledger,
    ...calls,
    dashboard,
    knowledge: db ? new db.pg.PostgresKnowledgeIndex(db.postgres) : new SqliteKnowledgeIndex(storage),
    requestLog: new RequestLog(db ? new db.pg.PostgresRequestLogStore(db.postgres) : new SqliteRequestLogStore(storage.sqlite), {
      retentionDays: config.log.retentionDays,
      logger: opts.logger,
      now: opts.now,
    }),
    secrets: db ? new db.pg.PostgresSecretStore(db.postgres) : new SqliteSecretStore(storage.sqlite),
    audit: db ? new db.pg.PostgresAuditTrail(db.postgres) : new SqliteAuditTrail(storage.sqlite),
    alerts: alertsOf(config, storage, db, ledger, redis, opts.logger),
    dependencies: redis
      ? [database, { name: "redis", required: false, up: () => redis.ready(), errors: () => redis.errors }]
      : [database],
  };
  const { limiter, requestLog, deploymentState, alerts } = interfaces;
  const sweepSessions = sessionSweeper(dashboard, opts.logger);
  let sessionSweep: ReturnType<typeof setInterval> | null = null;
  return {
    ...interfaces,
    interfaces,
    redis,
    postgres,
    async ready() {
      await Promise.all([redis?.ready(), db && pg?.schemaReady(db.postgres, 10_000)]);
      await alerts.refresh();
    },
    start() {
      // a serving node on PostgreSQL: its lease-admitted calls' charges go to its journal
      // (docs/many-nodes.md#credit-journal); a second process on the same file is refused here
      if (db && config.limits.creditJournal && ledger instanceof db.pg.PostgresCreditLedger) {
        const journal = new db.pg.CreditJournal(config.limits.creditJournalPath, config.nodeId);
        void ledger.useJournal(journal, {
          shipMs: config.limits.creditJournalShipMs,
          crashAfterShip: process.env.TEXTAI_TEST_JOURNAL_CRASH_AFTER_SHIP === "1",
        });
      }
      keys.startBackgroundFlush();
      requestLog.start();
      limiter.startSweeping();
      // its background refresh and lease renewal serve model groups only: none configured, no timers
      if ((config.models ?? []).length > 0) deploymentState.start();
      alerts.start();
      void sweepSessions();
      sessionSweep ??= setInterval(() => void sweepSessions(), SESSION_SWEEP_EVERY_MS);
      sessionSweep.unref?.();
    },
    refuseCharges: () => ledger.refuseCharges(),
    async close() {
      limiter.stop();
      await alerts.stop();
      await deploymentState.close();
      if (sessionSweep) clearInterval(sessionSweep);
      await keys.stop();
      await (ledger.close ? ledger.close() : ledger.flush());
      await requestLog.stop();
      await redis?.close();
      await postgres?.close();
      storage.close();
    },
  };
}
