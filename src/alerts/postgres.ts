import type { AuditBy } from "../audit/interface";
import { appendAuditIn } from "../audit/postgres";
import { newId } from "../ids";
import { type PgStorage, pgCall } from "../storage/postgres";
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
import { claimed, statusOf, watchedOf, webhookEntry } from "./sqlite";
import { writeOutboxPg } from "./watch";

type Row = Record<string, unknown>;

/**
 * Alert endpoints and the outbox in PostgreSQL, shared by every node. A node claims due rows with
 * `FOR UPDATE SKIP LOCKED` and marks them claimed until its lease ends: no other node sends them
 * meanwhile, and a row whose node died is claimed again once its lease has passed.
 */
export class PostgresWebhookStore implements WebhookStore {
  constructor(private readonly pg: PgStorage) {}

  create(w: NewWebhook, by: AuditBy): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    const secret = newSecret();
    const id = newId("wh");
    return pgCall(this.pg, () =>
      this.pg.sql.begin(async (tx) => {
        const [r] =
          await tx`INSERT INTO webhooks (id, account_id, url, events, balance_below, spike_factor, expiring_days, format, secret, created_at)
          VALUES (${id}, ${w.accountId}, ${w.url}, ${JSON.stringify(w.events)}, ${w.balanceBelow}, ${w.spikeFactor}, ${w.expiringDays},
            ${w.format}, ${secret}, ${Date.now()}) RETURNING *`;
        const endpoint = endpointView(r);
        await appendAuditIn(tx, webhookEntry(by, "webhook.create", endpoint, null, auditedEndpoint(endpoint)));
        return { endpoint, secret };
      }),
    );
  }

  list(accountId: string | null | undefined): Promise<WebhookEndpoint[]> {
    const sql = this.pg.sql;
    return pgCall(this.pg, async () => {
      const rows =
        accountId === undefined
          ? await sql`SELECT * FROM webhooks ORDER BY created_at, id`
          : accountId === null
            ? await sql`SELECT * FROM webhooks WHERE account_id IS NULL ORDER BY created_at, id`
            : await sql`SELECT * FROM webhooks WHERE account_id = ${accountId} ORDER BY created_at, id`;
      return (rows as Row[]).map((r) => endpointView(r));
    });
  }

  get(id: string): Promise<WebhookEndpoint | null> {
    return pgCall(this.pg, async () => {
      const [r] = await this.pg.sql`SELECT * FROM webhooks WHERE id = ${id}`;
      return r ? endpointView(r) : null;
    });
  }

  remove(id: string, by: AuditBy): Promise<boolean> {
    return pgCall(this.pg, () =>
      this.pg.sql.begin(async (tx) => {
        const [r] = await tx`DELETE FROM webhooks WHERE id = ${id} RETURNING *`;
        if (!r) return false;
        await tx`DELETE FROM webhook_outbox WHERE endpoint_id = ${id} AND status = 'pending'`;
        const endpoint = endpointView(r);
        await appendAuditIn(
          tx,
          webhookEntry(by, "webhook.remove", endpoint, { status: "active", ...auditedEndpoint(endpoint) }, { status: "removed" }),
        );
        return true;
      }),
    );
  }

  rotate(id: string, graceMs: number, by: AuditBy): Promise<{ secret: string; previous_valid_until: string } | null> {
    const secret = newSecret();
    const until = Date.now() + graceMs;
    return pgCall(this.pg, () =>
      this.pg.sql.begin(async (tx) => {
        const [r] =
          await tx`UPDATE webhooks SET prev_secret = secret, prev_until = ${until}, secret = ${secret} WHERE id = ${id} RETURNING *`;
        if (!r) return null;
        const at = new Date(until).toISOString();
        const draft = webhookEntry(
          by,
          "webhook.rotate_secret",
          endpointView(r),
          { secret_rotated: false },
          { secret_rotated: true, previous_valid_until: at },
        );
        await appendAuditIn(tx, draft);
        return { secret, previous_valid_until: at };
      }),
    );
  }

  deliveries(endpointId: string, limit: number) {
    return pgCall(this.pg, async () => {
      const rows = await this.pg.sql`SELECT * FROM webhook_outbox WHERE endpoint_id = ${endpointId}
        ORDER BY created_at DESC, id DESC LIMIT ${limit}`;
      return (rows as Row[]).map(deliveryView);
    });
  }

  resend(endpointId: string, deliveryId: string, by: AuditBy) {
    return pgCall(this.pg, () =>
      this.pg.sql.begin(async (tx) => {
        const [before] =
          await tx`SELECT status FROM webhook_outbox WHERE id = ${deliveryId} AND endpoint_id = ${endpointId} FOR UPDATE`;
        const [e] = await tx`SELECT * FROM webhooks WHERE id = ${endpointId}`;
        if (!before || !e) return null;
        const [r] =
          await tx`UPDATE webhook_outbox SET status = 'pending', next_at = ${Date.now()}, claim = NULL, claimed_until = NULL
          WHERE id = ${deliveryId} RETURNING *`;
        const draft = webhookEntry(
          by,
          "webhook.resend",
          endpointView(e),
          { delivery: deliveryId, status: before.status },
          { delivery: deliveryId, status: "pending" },
        );
        await appendAuditIn(tx, draft);
        return deliveryView(r);
      }),
    );
  }

  enqueue(event: AlertEvent, accountId: string | null, only?: string): Promise<number> {
    const like = `%${JSON.stringify(event.type)}%`;
    return pgCall(this.pg, () =>
      this.pg.sql.begin(async (tx) => {
        const rows = GATEWAY_EVENTS.has(event.type)
          ? await tx`SELECT id FROM webhooks WHERE account_id IS NULL AND events LIKE ${like}`
          : await tx`SELECT id FROM webhooks WHERE account_id = ${accountId} AND events LIKE ${like}`;
        const ids = (rows as Row[]).map((r) => r.id as string).filter((id) => only === undefined || id === only);
        await writeOutboxPg(tx, event, accountId, ids);
        return ids.length;
      }),
    );
  }

  claim(now: number, leaseMs: number, limit: number): Promise<ClaimedDelivery[]> {
    const claim = newId("clm");
    return pgCall(this.pg, async () => {
      const rows = await this.pg.sql`UPDATE webhook_outbox o SET claim = ${claim}, claimed_until = ${now + leaseMs}
        FROM (SELECT id FROM webhook_outbox WHERE status = 'pending' AND next_at <= ${now}
                AND (claimed_until IS NULL OR claimed_until < ${now})
              ORDER BY next_at LIMIT ${limit} FOR UPDATE SKIP LOCKED) due, webhooks w
        WHERE o.id = due.id AND w.id = o.endpoint_id
        RETURNING o.*, w.url, w.format, w.secret, w.prev_secret, w.prev_until`;
      return (rows as Row[]).map((r) => claimed(r, r, claim, now));
    });
  }

  finish(d: ClaimedDelivery, r: AttemptResult, now: number): Promise<void> {
    return pgCall(this.pg, async () => {
      await this.pg.sql`UPDATE webhook_outbox SET attempts = attempts + 1, status = ${statusOf(r)}, next_at = ${r.nextAt ?? now},
        last_status_code = ${r.statusCode}, last_error = ${r.error}, delivered_at = ${r.delivered ? now : null},
        claim = NULL, claimed_until = NULL WHERE id = ${d.id} AND claim = ${d.claim}`;
    });
  }

  scan(now: number): Promise<number> {
    const { hourFrom, dayFrom } = spikeWindows(now);
    return pgCall(this.pg, async () => {
      let written = 0;
      for (const e of ((await this.pg.sql.unsafe(SCANNED_SQL)) as Row[]).map(scannedOf)) {
        const keys = (await this.pg.sql`SELECT id, policy::jsonb->>'expires_at' AS expires FROM api_keys
          WHERE account_id = ${e.accountId} AND status = 'active' AND policy LIKE '%expires_at%'`) as {
          id: string;
          expires: string | null;
        }[];
        const [spend] = await this.pg.sql`SELECT
            coalesce(-sum(CASE WHEN created_at >= ${hourFrom} THEN amount END), 0)::float8 AS hour,
            coalesce(-sum(CASE WHEN created_at < ${hourFrom} THEN amount END), 0)::float8 AS day,
            EXISTS (SELECT 1 FROM ledger WHERE account_id = ${e.accountId} AND kind = 'charge' AND created_at <= ${dayFrom}) AS history
          FROM ledger WHERE account_id = ${e.accountId} AND kind = 'charge' AND created_at >= ${dayFrom}`;
        const spike = spikeEvent(
          e,
          { lastHour: Number(spend?.hour ?? 0), dayBefore: Number(spend?.day ?? 0), hasHistory: spend?.history === true },
          now,
        );
        for (const ev of [...expiringEvents(e, keys, now), ...(spike ? [spike] : [])]) {
          const done = await this.pg
            .sql`INSERT INTO webhook_outbox (id, event_id, endpoint_id, account_id, type, data, created_at, next_at)
            VALUES (${periodicDeliveryId(e.id, ev.id)}, ${ev.id}, ${e.id}, ${e.accountId}, ${ev.type}, ${JSON.stringify(ev.data)}, ${now}, ${now})
            ON CONFLICT (id) DO NOTHING RETURNING id`;
          written += done.length;
        }
      }
      return written;
    });
  }

  watched(): Promise<WatchedEndpoint[]> {
    return pgCall(this.pg, async () => {
      const rows = await this.pg.sql`SELECT id, account_id, events, balance_below FROM webhooks`;
      return (rows as Row[]).map(watchedOf);
    });
  }
}
