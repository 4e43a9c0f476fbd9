import type { AuditBy } from "../audit/interface";
import type { MaybePromise } from "../maybe";

/** The events an alert endpoint may take (docs/alerts.md). */
export const ALERT_EVENTS = [
  "balance.low",
  "key.budget_80",
  "key.budget_100",
  "key.expiring",
  "spend.spike",
  "provider.circuit_open",
  "provider.circuit_closed",
] as const;
export type AlertEventType = (typeof ALERT_EVENTS)[number];

/** Events about the gateway as a whole: the operator's endpoints (no account) take them. */
export const GATEWAY_EVENTS: ReadonlySet<string> = new Set(["provider.circuit_open", "provider.circuit_closed"]);

/** An endpoint as the APIs answer it: never its secret. */
export interface WebhookEndpoint {
  id: string;
  /** null: the operator's own */
  account_id: string | null;
  url: string;
  events: string[];
  balance_below: number | null;
  spike_factor: number | null;
  expiring_days: number | null;
  format: "json" | "slack";
  created: string;
  /** after a rotation: until when the secret before it still signs deliveries */
  previous_secret_valid_until: string | null;
}

export interface NewWebhook {
  accountId: string | null;
  url: string;
  events: string[];
  balanceBelow: number | null;
  spikeFactor: number | null;
  expiringDays: number | null;
  format: "json" | "slack";
}

/** One delivery (an event to one endpoint), as the APIs answer it. */
export interface DeliveryView {
  id: string;
  event_id: string;
  endpoint_id: string;
  type: string;
  created: string;
  attempts: number;
  /** `pending`, `delivered` or `failed` (no 2xx within the retry window) */
  status: string;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  delivered_at: string | null;
}

/** An event raised, before it is written to the outbox for each endpoint that takes it. */
export interface AlertEvent {
  id: string;
  type: AlertEventType;
  /** ms since the epoch */
  created: number;
  data: Record<string, unknown>;
}

/** A delivery this node claimed: everything needed to send it, without reading again. */
export interface ClaimedDelivery {
  id: string;
  claim: string;
  eventId: string;
  type: string;
  created: number;
  data: string;
  attempts: number;
  url: string;
  format: "json" | "slack";
  /** the endpoint's secret, then the one before while it is valid */
  secrets: string[];
}

/** What one attempt came to. `nextAt` null: no more attempts (delivered, or the window is over). */
export interface AttemptResult {
  delivered: boolean;
  statusCode: number | null;
  error: string | null;
  nextAt: number | null;
}

/** What the in-memory watch keeps of an endpoint with an account's events (watch.ts). */
export interface WatchedEndpoint {
  id: string;
  /** null: the operator's */
  accountId: string | null;
  events: string[];
  balanceBelow: number | null;
}

/**
 * Alert endpoints and their outbox: SQLite (sqlite.ts) or PostgreSQL (postgres.ts). Every change
 * of an endpoint appends its audit entry in its own transaction; events raised by another store's
 * change are written by that store in its transaction (`outboxRows`), those raised by no
 * transaction (a breaker) by `enqueue`, in one of their own.
 */
export interface WebhookStore {
  create(w: NewWebhook, by: AuditBy): MaybePromise<{ endpoint: WebhookEndpoint; secret: string }>;
  /** undefined: every endpoint; null: the operator's; else the account's */
  list(accountId: string | null | undefined): MaybePromise<WebhookEndpoint[]>;
  get(id: string): MaybePromise<WebhookEndpoint | null>;
  remove(id: string, by: AuditBy): MaybePromise<boolean>;
  /** a new secret; the one before keeps signing until `graceMs` from now */
  rotate(id: string, graceMs: number, by: AuditBy): MaybePromise<{ secret: string; previous_valid_until: string } | null>;
  deliveries(endpointId: string, limit: number): MaybePromise<DeliveryView[]>;
  /** a delivery sent again now (a new attempt, whatever its state) */
  resend(endpointId: string, deliveryId: string, by: AuditBy): MaybePromise<DeliveryView | null>;
  /**
   * writes `event` for every endpoint that takes it (gateway events: the operator's), in a transaction
   * of its own; with `only`, for that endpoint alone (if it takes it)
   */
  enqueue(event: AlertEvent, accountId: string | null, only?: string): Promise<number>;
  /** due deliveries, each claimed for `leaseMs` by this node: no other node sends them meanwhile */
  claim(now: number, leaseMs: number, limit: number): Promise<ClaimedDelivery[]>;
  /** the attempt's outcome, if this node's claim still holds */
  finish(d: ClaimedDelivery, r: AttemptResult, now: number): Promise<void>;
  /** looks for key.expiring and spend.spike (periodic.ts) and writes each found once; how many deliveries it wrote */
  scan(now: number): Promise<number>;
  /** every endpoint's events and thresholds, for the watch */
  watched(): MaybePromise<WatchedEndpoint[]>;
}

export class WebhookNotFound extends Error {}
