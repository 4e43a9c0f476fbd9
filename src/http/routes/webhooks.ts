/**
 * Alert endpoints (docs/alerts.md): the admin API's `/admin/v1/webhooks` routes, and the checks
 * and changes the dashboard's Alerts page shares with them.
 */
import { Type as T } from "@sinclair/typebox";
import { GATEWAY_EVENTS, type WebhookEndpoint } from "../../alerts/interface";
import { checkEvents, checkWebhookUrl, MAX_WEBHOOK_URL } from "../../alerts/sign";
import type { AuditBy } from "../../audit/interface";
import { GatewayError } from "../../errors";
import { timeOrderedId } from "../../ids";
import type { AppDeps } from "../deps";
import { ok } from "../respond";
import { adminBody, adminFamily, byToken } from "./admin";

const Threshold = (max: number) => T.Optional(T.Union([T.Integer({ minimum: 1, maximum: max }), T.Null()]));
export const CreateWebhook = T.Object({
  /** omitted or null: the operator's own endpoint */
  account_id: T.Optional(T.Union([T.String({ minLength: 1, maxLength: 100 }), T.Null()])),
  url: T.String({ minLength: 1, maxLength: MAX_WEBHOOK_URL }),
  events: T.Array(T.String({ maxLength: 50 }), { minItems: 1, maxItems: 10 }),
  balance_below: Threshold(1_000_000_000),
  spike_factor: Threshold(1000),
  expiring_days: Threshold(365),
  format: T.Optional(T.Union([T.Literal("json"), T.Literal("slack")])),
});
type CreateInput = import("@sinclair/typebox").Static<typeof CreateWebhook>;

const invalid = (message: string, param: string) => new GatewayError("invalid_request", message, { param });

/** The threshold each event needs, by the field that carries it. */
const NEEDS: [string, keyof CreateInput][] = [
  ["balance.low", "balance_below"],
  ["spend.spike", "spike_factor"],
  ["key.expiring", "expiring_days"],
];

/**
 * balance.low for a new endpoint whose threshold the balance is already under: the watch raises it
 * only when a charge crosses the threshold, which an account already under it never does again
 * until a grant lifts it. Sent to this endpoint alone (the others were told at their crossing).
 */
async function balanceLowAtCreation(deps: Pick<AppDeps, "alerts" | "ledger">, e: WebhookEndpoint): Promise<void> {
  if (e.account_id === null || e.balance_below === null || !e.events.includes("balance.low")) return;
  const balance = await deps.ledger.balance(e.account_id);
  if (balance >= e.balance_below) return;
  const now = Date.now();
  const data = { account_id: e.account_id, balance, threshold: e.balance_below };
  await deps.alerts.store.enqueue({ id: timeOrderedId("evt", now), type: "balance.low", created: now, data }, e.account_id, e.id);
}

/**
 * Checks an endpoint as asked (events, thresholds, URL, account) and creates it; the answer carries
 * its secret, once. A balance already under a new `balance_below` raises balance.low to it at once.
 */
export async function createWebhook(deps: Pick<AppDeps, "keys" | "alerts" | "ledger">, b: CreateInput, by: AuditBy) {
  const accountId = b.account_id ?? null;
  const events = checkEvents(b.events);
  for (const e of events) {
    if (accountId === null && !GATEWAY_EVENTS.has(e))
      throw invalid(`${e} is an account's event: give account_id (the operator's endpoints take provider.* events)`, "events");
    if (accountId !== null && GATEWAY_EVENTS.has(e))
      throw invalid(`${e} goes to the operator's endpoints (no account_id)`, "events");
  }
  for (const [event, field] of NEEDS) {
    const v = b[field];
    if (v !== undefined && v !== null && (!Number.isInteger(v) || (v as number) < 1))
      throw invalid(`${field} must be a whole number of at least 1`, field);
    if (events.includes(event) && (v === undefined || v === null)) throw invalid(`${event} needs ${field}`, field);
  }
  if (b.url.length > MAX_WEBHOOK_URL) throw invalid(`url is longer than ${MAX_WEBHOOK_URL} characters`, "url");
  if (accountId !== null && !(await deps.keys.accountExists(accountId)))
    throw new GatewayError("not_found", "account not found", { param: "account_id" });
  await checkWebhookUrl(b.url, deps.alerts.settings.allowPrivateUrls);
  const created = await deps.alerts.store.create(
    {
      accountId,
      url: b.url,
      events,
      balanceBelow: b.balance_below ?? null,
      spikeFactor: b.spike_factor ?? null,
      expiringDays: b.expiring_days ?? null,
      format: b.format ?? "json",
    },
    by,
  );
  deps.alerts.changed();
  await balanceLowAtCreation(deps, created.endpoint);
  // the whole URL is the caller's own, answered back this once; every listing and entry masks it
  return { ...created.endpoint, url: b.url, secret: created.secret };
}

/** The endpoint, if it is `accountId`'s (undefined: any, the operator's view); else 404. */
export async function endpointOf(deps: Pick<AppDeps, "alerts">, id: string, accountId?: string): Promise<WebhookEndpoint> {
  const e = await deps.alerts.store.get(id);
  if (!e || (accountId !== undefined && e.account_id !== accountId)) throw new GatewayError("not_found", "webhook not found");
  return e;
}

export async function rotateWebhook(deps: Pick<AppDeps, "alerts">, e: WebhookEndpoint, by: AuditBy) {
  const r = await deps.alerts.store.rotate(e.id, deps.alerts.settings.rotationGraceMs, by);
  if (!r) throw new GatewayError("not_found", "webhook not found");
  return { id: e.id, ...r };
}

export async function removeWebhook(deps: Pick<AppDeps, "alerts">, e: WebhookEndpoint, by: AuditBy): Promise<void> {
  if (!(await deps.alerts.store.remove(e.id, by))) throw new GatewayError("not_found", "webhook not found");
  deps.alerts.changed();
}

const detail = (summary: string) => ({ tags: ["Admin"], summary, security: [{ bearer: [] }] });

/** The admin API's alert endpoints (CONTRACT section 17). */
export function adminWebhooks(deps: AppDeps) {
  const body = adminBody(deps.config);
  const store = deps.alerts.store;
  return adminFamily(deps, "admin-webhooks")
    .post(
      "/admin/v1/webhooks",
      async (context) => {
        const b = await body(context.request, CreateWebhook);
        const created = await createWebhook(deps, b, byToken(deps, context));
        return ok(context.state, "webhook created; its secret is shown only in this response", created, 201);
      },
      {
        parse: "none",
        detail: detail("Create an alert endpoint (an account's, or without account_id the operator's); answers its secret once"),
      },
    )
    .get(
      "/admin/v1/webhooks",
      async ({ state, query }) => {
        const accountId = query.account_id === undefined ? undefined : query.account_id === "" ? null : query.account_id;
        return ok(state, "webhooks", { data: await store.list(accountId) });
      },
      { detail: detail("List alert endpoints (never their secrets), optionally for one account_id") },
    )
    .get(
      "/admin/v1/webhooks/:id/deliveries",
      async ({ state, params, query }) => {
        const e = await endpointOf(deps, params.id);
        const limit = Math.min(Math.max(Number(query.limit ?? 50) || 50, 1), 500);
        return ok(state, "deliveries", { data: await store.deliveries(e.id, limit) });
      },
      { detail: detail("An endpoint's deliveries, newest first (event_id, type, attempts, status, last_status_code)") },
    )
    .post(
      "/admin/v1/webhooks/:id/rotate-secret",
      async (context) => {
        const e = await endpointOf(deps, context.params.id);
        const r = await rotateWebhook(deps, e, byToken(deps, context));
        return ok(context.state, "secret rotated; the new one is shown only in this response", r);
      },
      { detail: detail("A new secret; the one before still signs (a second v1) until previous_valid_until") },
    )
    .post(
      "/admin/v1/webhooks/:id/deliveries/:delivery_id/resend",
      async (context) => {
        const e = await endpointOf(deps, context.params.id);
        const d = await store.resend(e.id, context.params.delivery_id, byToken(deps, context));
        if (!d) throw new GatewayError("not_found", "delivery not found");
        return ok(context.state, "delivery queued again", d);
      },
      { detail: detail("Send a delivery again now (a new attempt, whatever its state)") },
    )
    .delete(
      "/admin/v1/webhooks/:id",
      async (context) => {
        const e = await endpointOf(deps, context.params.id);
        await removeWebhook(deps, e, byToken(deps, context));
        return ok(context.state, "webhook removed", { id: e.id, removed: true });
      },
      { detail: detail("Remove an alert endpoint; its pending deliveries go with it") },
    );
}
