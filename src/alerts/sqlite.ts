import type { Database } from "bun:sqlite";
import type { AuditBy, AuditDraft } from "../audit/interface";
import { appendAudit } from "../audit/sqlite";
import { newId, timeOrderedId } from "../ids";
import {
  type AlertEvent,
  type AttemptResult,
  type ClaimedDelivery,
  GATEWAY_EVENTS,
  type NewWebhook,
  type WatchedEndpoint,
  type WebhookEndpoint,
  type WebhookStore,
} from "./interface";
import { expiringEvents, periodicDeliveryId, SCANNED_SQL, scannedOf, spikeEvent, spikeWindows } from "./periodic";
import { auditedEndpoint, deliveryView, endpointView, newSecret } from "./sign";

type Row = Record<string, unknown>;

/** The audit entry of a change of an endpoint (never its secret). */
export function webhookEntry(
  by: AuditBy,
  action: string,
  e: WebhookEndpoint,
  before: Record<string, unknown> | null,
  after: Record<string, unknown> | null,
): AuditDraft {
  return { actor: by.actor ?? "operator", client: by.client, action, accountId: e.account_id, targetId: e.id, before, after };
}

/**
 * Writes `event` to the outbox for `endpointIds`, with the connection's open transaction: the
 * transaction of the change that raised it (a charge, a grant), or one of its own.
 */
export function writeOutbox(sqlite: Database, event: AlertEvent, accountId: string | null, endpointIds: string[]): void {
  const data = JSON.stringify(event.data);
  const insert = sqlite.query(
    "INSERT INTO webhook_outbox (id, event_id, endpoint_id, account_id, type, data, created_at, next_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
  );
  for (const endpoint of endpointIds)
    insert.run(
      timeOrderedId("dlv", event.created),
      event.id,
      endpoint,
      accountId,
      event.type,
      data,
      event.created,
      event.created,
    );
}

/** Alert endpoints and the outbox in the SQLite file (one node; a claim column keeps two processes on one file apart). */
export class SqliteWebhookStore implements WebhookStore {
  constructor(private readonly sqlite: Database) {}

  private row(id: string): Row | null {
    return this.sqlite.query<Row, [string]>("SELECT * FROM webhooks WHERE id = ?").get(id);
  }

  create(w: NewWebhook, by: AuditBy): { endpoint: WebhookEndpoint; secret: string } {
    const secret = newSecret();
    const id = newId("wh");
    const q = this.sqlite;
    return q.transaction(() => {
      q.query(
        `INSERT INTO webhooks (id, account_id, url, events, balance_below, spike_factor, expiring_days, format, secret, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        id,
        w.accountId,
        w.url,
        JSON.stringify(w.events),
        w.balanceBelow,
        w.spikeFactor,
        w.expiringDays,
        w.format,
        secret,
        Date.now(),
      );
      const endpoint = endpointView(this.row(id) as Row);
      appendAudit(q, webhookEntry(by, "webhook.create", endpoint, null, auditedEndpoint(endpoint)));
      return { endpoint, secret };
    })();
  }

  list(accountId: string | null | undefined): WebhookEndpoint[] {
    const rows =
      accountId === undefined
        ? this.sqlite.query<Row, []>("SELECT * FROM webhooks ORDER BY created_at, id").all()
        : accountId === null
          ? this.sqlite.query<Row, []>("SELECT * FROM webhooks WHERE account_id IS NULL ORDER BY created_at, id").all()
          : this.sqlite
              .query<Row, [string]>("SELECT * FROM webhooks WHERE account_id = ? ORDER BY created_at, id")
              .all(accountId);
    return rows.map((r) => endpointView(r));
  }

  get(id: string): WebhookEndpoint | null {
    const r = this.row(id);
    return r ? endpointView(r) : null;
  }

  remove(id: string, by: AuditBy): boolean {
    const q = this.sqlite;
    return q.transaction(() => {
      const r = this.row(id);
      if (!r) return false;
      const endpoint = endpointView(r);
      q.query("DELETE FROM webhooks WHERE id = ?").run(id);
      q.query("DELETE FROM webhook_outbox WHERE endpoint_id = ? AND status = 'pending'").run(id);
      appendAudit(
        q,
        webhookEntry(by, "webhook.remove", endpoint, { status: "active", ...auditedEndpoint(endpoint) }, { status: "removed" }),
      );
      return true;
    })();
  }

  rotate(id: string, graceMs: number, by: AuditBy): { secret: string; previous_valid_until: string } | null {
    const q = this.sqlite;
    const secret = newSecret();
    const until = Date.now() + graceMs;
    return q.transaction(() => {
      const r = this.row(id);
      if (!r) return null;
      q.query("UPDATE webhooks SET prev_secret = secret, prev_until = ?, secret = ? WHERE id = ?").run(until, secret, id);
      const endpoint = endpointView(r);
      const at = new Date(until).toISOString();
      appendAudit(
        q,
        webhookEntry(
          by,
          "webhook.rotate_secret",
          endpoint,
          { secret_rotated: false },
          { secret_rotated: true, previous_valid_until: at },
        ),
      );
      return { secret, previous_valid_until: at };
    })();
  }

  deliveries(endpointId: string, limit: number) {
    return this.sqlite
      .query<Row, [string, number]>(
        "SELECT * FROM webhook_outbox WHERE endpoint_id = ? ORDER BY created_at DESC, id DESC LIMIT ?",
      )
      .all(endpointId, limit)
      .map(deliveryView);
  }

  resend(endpointId: string, deliveryId: string, by: AuditBy) {
    const q = this.sqlite;
    return q.transaction(() => {
      const r = q
        .query<Row, [string, string]>("SELECT * FROM webhook_outbox WHERE id = ? AND endpoint_id = ?")
        .get(deliveryId, endpointId);
      const e = this.row(endpointId);
      if (!r || !e) return null;
      q.query("UPDATE webhook_outbox SET status = 'pending', next_at = ?, claim = NULL, claimed_until = NULL WHERE id = ?").run(
        Date.now(),
        deliveryId,
      );
      const draft = webhookEntry(
        by,
        "webhook.resend",
        endpointView(e),
        { delivery: deliveryId, status: r.status },
        { delivery: deliveryId, status: "pending" },
      );
      appendAudit(q, draft);
      return deliveryView(q.query<Row, [string]>("SELECT * FROM webhook_outbox WHERE id = ?").get(deliveryId) as Row);
    })();
  }

  async enqueue(event: AlertEvent, accountId: string | null, only?: string): Promise<number> {
    const q = this.sqlite;
    return q.transaction(() => {
      const ids = this.takers(event.type, accountId).filter((id) => only === undefined || id === only);
      writeOutbox(q, event, accountId, ids);
      return ids.length;
    })();
  }

  /** The endpoints that take an event of `type` about `accountId` (a gateway event: the operator's). */
  private takers(type: string, accountId: string | null): string[] {
    const like = `%${JSON.stringify(type)}%`;
    const rows = GATEWAY_EVENTS.has(type)
      ? this.sqlite
          .query<{ id: string }, [string]>("SELECT id FROM webhooks WHERE account_id IS NULL AND events LIKE ?")
          .all(like)
      : this.sqlite
          .query<{ id: string }, [string, string]>("SELECT id FROM webhooks WHERE account_id = ? AND events LIKE ?")
          .all(accountId ?? "", like);
    return rows.map((r) => r.id);
  }

  async claim(now: number, leaseMs: number, limit: number): Promise<ClaimedDelivery[]> {
    const claim = newId("clm");
    const rows = this.sqlite
      .query<Row, [string, number, number, number]>(
        `UPDATE webhook_outbox SET claim = ?1, claimed_until = ?2 WHERE id IN (
           SELECT id FROM webhook_outbox WHERE status = 'pending' AND next_at <= ?3 AND (claimed_until IS NULL OR claimed_until < ?3)
           ORDER BY next_at LIMIT ?4)
         RETURNING *`,
      )
      .all(claim, now + leaseMs, now, limit);
    return rows.flatMap((r) => {
      const e = this.row(r.endpoint_id as string);
      return e ? [claimed(r, e, claim, now)] : [];
    });
  }

  async finish(d: ClaimedDelivery, r: AttemptResult, now: number): Promise<void> {
    this.sqlite
      .query(
        `UPDATE webhook_outbox SET attempts = attempts + 1, status = ?, next_at = ?, last_status_code = ?, last_error = ?,
           delivered_at = ?, claim = NULL, claimed_until = NULL WHERE id = ? AND claim = ?`,
      )
      .run(statusOf(r), r.nextAt ?? now, r.statusCode, r.error, r.delivered ? now : null, d.id, d.claim);
  }

  async scan(now: number): Promise<number> {
    const q = this.sqlite;
    const { hourFrom, dayFrom } = spikeWindows(now);
    const insert = q.query(
      `INSERT INTO webhook_outbox (id, event_id, endpoint_id, account_id, type, data, created_at, next_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
    );
    return q.transaction(() => {
      let written = 0;
      for (const e of q.query<Row, []>(SCANNED_SQL).all().map(scannedOf)) {
        const keys = q
          .query<{ id: string; expires: string | null }, [string]>(
            "SELECT id, json_extract(policy, '$.expires_at') AS expires FROM api_keys WHERE account_id = ? AND status = 'active' AND policy LIKE '%expires_at%'",
          )
          .all(e.accountId);
        const spend = q
          .query<{ hour: number; day: number; history: number }, [string, number, number]>(
            `SELECT coalesce(-sum(CASE WHEN created_at >= ?2 THEN amount END), 0) AS hour,
               coalesce(-sum(CASE WHEN created_at < ?2 THEN amount END), 0) AS day,
               EXISTS (SELECT 1 FROM ledger WHERE account_id = ?1 AND kind = 'charge' AND created_at <= ?3) AS history
             FROM ledger WHERE account_id = ?1 AND kind = 'charge' AND created_at >= ?3`,
          )
          .get(e.accountId, hourFrom, dayFrom);
        const spike = spikeEvent(
          e,
          { lastHour: Number(spend?.hour ?? 0), dayBefore: Number(spend?.day ?? 0), hasHistory: Boolean(spend?.history) },
          now,
        );
        for (const ev of [...expiringEvents(e, keys, now), ...(spike ? [spike] : [])])
          written += insert.run(
            periodicDeliveryId(e.id, ev.id),
            ev.id,
            e.id,
            e.accountId,
            ev.type,
            JSON.stringify(ev.data),
            now,
            now,
          ).changes;
      }
      return written;
    })();
  }

  watched(): WatchedEndpoint[] {
    return this.sqlite.query<Row, []>("SELECT id, account_id, events, balance_below FROM webhooks").all().map(watchedOf);
  }
}

export const statusOf = (r: AttemptResult): string => (r.delivered ? "delivered" : r.nextAt === null ? "failed" : "pending");

/** A claimed outbox row with its endpoint's URL, format and valid secrets. */
export function claimed(r: Row, e: Row, claim: string, now: number): ClaimedDelivery {
  const secrets = [e.secret as string];
  if (e.prev_secret && e.prev_until !== null && Number(e.prev_until) > now) secrets.push(e.prev_secret as string);
  return {
    id: r.id as string,
    claim,
    eventId: r.event_id as string,
    type: r.type as string,
    created: Number(r.created_at),
    data: r.data as string,
    attempts: Number(r.attempts),
    url: e.url as string,
    format: e.format === "slack" ? "slack" : "json",
    secrets,
  };
}

export const watchedOf = (r: Row): WatchedEndpoint => ({
  id: r.id as string,
  accountId: (r.account_id as string | null) ?? null,
  events: JSON.parse(r.events as string),
  balanceBelow: r.balance_below === null ? null : Number(r.balance_below),
});
