import type { Alerts } from "../alerts/deliver";
// Types only: what the app, its routes and the pipeline are given. Nothing here runs.
import type { AuditTrail } from "../audit/interface";
import type { KeyStore } from "../auth/interface";
import type { ResponseCache } from "../cache/interface";
import type { CallStarter } from "../callstart/interface";
import type { Config } from "../config";
import type { CreditLedger } from "../credits/interface";
import type { DashboardStore, SignInAttempts } from "../dashboard/interface";
import type { DeploymentStateService } from "../deployments/interface";
import type { AnyFunctionDef } from "../functions/define";
import type { IdempotencyStore } from "../idempotency/interface";
import type { KnowledgeIndex } from "../knowledge/interface";
import type { Logger } from "../log";
import type { MaybePromise } from "../maybe";
import type { Metrics } from "../metrics";
import type { ProviderRouter } from "../providers/router";
import type { Provider } from "../providers/types";
import type { RateLimiter } from "../ratelimit/interface";
import type { RequestLog } from "../requestlog/recorder";
import type { Storage } from "../storage/db";
import type { SecretStore } from "../storage/secrets";
import type { Tracing } from "../trace";
import type { BodyReads } from "./body";

/** A shared server the gateway depends on (database, Redis), as /ready and /metrics report it. */
export interface DependencyProbe {
  name: string;
  /** false: calls that need it are refused (503) or degrade, as the README says */
  up(): MaybePromise<boolean>;
  /** true: /ready answers 503 while it is down (the database); false: the node degrades (Redis) */
  required: boolean;
  /** its failed commands so far, by reason (Redis: see redis/link.ts RedisErrorReason) */
  errors?(): ReadonlyMap<string, number>;
  /** true while it answers but is not ready yet (PostgreSQL: its schema being migrated) */
  migrating?(): boolean;
}

/** The stateful services (see services.ts), by interface only. */
export interface ServiceDeps {
  /** the embedded SQLite file: everything when no database URL is set (idempotency records without Redis) */
  storage: Storage;
  keys: KeyStore;
  ledger: CreditLedger;
  limiter: RateLimiter;
  cache: ResponseCache;
  idempotency: IdempotencyStore;
  /** a function call's first trip (limits, Idempotency-Key, cache) as one, when they are in Redis; null on a single node */
  callStarter?: CallStarter | null;
  /** logins and sessions of the dashboard, beside the accounts */
  dashboard: DashboardStore;
  /** failed dashboard sign-ins, counted for the whole cluster when Redis is configured */
  signIns: SignInAttempts;
  /** knowledge bases, FAQ collections and chatbots, beside the accounts */
  knowledge: KnowledgeIndex;
  /** secrets the gateway makes for itself in the database (the key of hash-style PII redaction) */
  secrets: SecretStore;
  /** the request log: metadata of every authenticated request, written in batches */
  requestLog: RequestLog;
  /** the audit trail's reads (the stores append its entries with each change, docs/audit.md) */
  audit: AuditTrail;
  /** model-group deployments' windows, in-flight counts, cool-downs and latency: in Redis when configured (exact across nodes), else in memory */
  deploymentState: DeploymentStateService;
  /** alert endpoints, the watch of charges and the outbox's delivery (docs/alerts.md) */
  alerts: Alerts;
  dependencies: DependencyProbe[];
}

export interface AppDeps extends ServiceDeps {
  config: Config;
  /** every configured provider by name, built once; the router and the knowledge plugin share them */
  providers: ReadonlyMap<string, Provider>;
  router: ProviderRouter;
  metrics: Metrics;
  logger: Logger;
  functions: AnyFunctionDef[];
  /** OpenTelemetry tracing when OTEL_EXPORTER_OTLP_ENDPOINT is set; absent: no span is made anywhere */
  tracing?: Tracing | null;
  /**
   * draining: flipped by graceful shutdown; /ready answers 503 from then on. bodyReads: the request
   * bodies being read, cut when the drain's grace ends (server.ts)
   */
  lifecycle: { draining: boolean; bodyReads: BodyReads };
  /** closes every service (connections, timers); the last step of shutdown */
  close(): Promise<void>;
}
