import { createHmac, randomBytes } from "node:crypto";
import { maskUrl } from "../audit/mask";
import { GatewayError } from "../errors";
import { refusePrivateUrls } from "../providers/shared-account";
import { ALERT_EVENTS, type ClaimedDelivery, type DeliveryView, type WebhookEndpoint } from "./interface";

/** A new endpoint secret: `whsec_` and 32 random bytes in hex. */
export const newSecret = (): string => `whsec_${randomBytes(32).toString("hex")}`;

/** The `textai-signature` header: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, one v1 per valid secret. */
export function signatureHeader(body: string, secrets: string[], nowMs: number): string {
  const t = Math.floor(nowMs / 1000);
  const v1 = secrets.map((s) => `v1=${createHmac("sha256", s).update(`${t}.${body}`).digest("hex")}`);
  return [`t=${t}`, ...v1].join(",");
}

/** A delivery's body: the event as JSON, or a Slack incoming-webhook message carrying it. */
export function deliveryBody(d: ClaimedDelivery): string {
  const event = { id: d.eventId, type: d.type, created: Math.floor(d.created / 1000), data: JSON.parse(d.data) };
  if (d.format !== "slack") return JSON.stringify(event);
  const facts = Object.entries(event.data as Record<string, unknown>)
    .map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join(", ");
  return JSON.stringify({ text: `[textai] ${d.type} (${facts})`, ...event });
}

/** When the attempt after `attempts` failed ones goes: base * 2^(attempts-1), at most an hour apart. */
export function nextAttemptAt(now: number, attempts: number, baseMs: number): number {
  return now + Math.min(baseMs * 2 ** Math.max(0, attempts - 1), 3600_000);
}

/** The most characters of a webhook endpoint's URL (the admin API, the CLI and the Alerts page's form). */
export const MAX_WEBHOOK_URL = 2000;

const invalid = (message: string, param: string) => new GatewayError("invalid_request", message, { param });

/**
 * The endpoint's URL, checked as the gateway's other outbound URLs are (providers/shared-account.ts):
 * http(s) only, and no private, loopback or link-local address unless the operator allows them.
 */
export async function checkWebhookUrl(url: string, allowPrivate: boolean): Promise<void> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid("url is not a valid URL", "url");
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw invalid("url must be http(s)", "url");
  if (parsed.username || parsed.password) throw invalid("url must not carry a user or password", "url");
  if (!allowPrivate)
    await refusePrivateUrls(
      [{ url, param: "url" }],
      "are not called as webhooks ([alerts] allow_private_urls = true allows an endpoint inside your network)",
    );
}

/** The events asked for, each a known one, without repeats. */
export function checkEvents(events: unknown): string[] {
  if (!Array.isArray(events) || events.length === 0)
    throw invalid(`events must be a non-empty list of: ${ALERT_EVENTS.join(", ")}`, "events");
  for (const e of events) {
    // (a list written "a,,b" or "a," by hand: said as what it is, not as an unknown event "")
    if (typeof e === "string" && e.trim() === "")
      throw invalid(`events holds an empty item (two commas, or one at an end?): one of ${ALERT_EVENTS.join(", ")}`, "events");
    if (typeof e !== "string" || !(ALERT_EVENTS as readonly string[]).includes(e))
      throw invalid(`unknown event ${JSON.stringify(e)}: one of ${ALERT_EVENTS.join(", ")}`, "events");
  }
  return [...new Set(events as string[])];
}

const iso = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString());

/**
 * A stored endpoint row (either store) as the APIs, the Alerts page, the CLI and the audit trail
 * show it: its URL masked (a Slack or Discord URL is the credential itself; audit/mask.ts). Only
 * deliveries read the whole URL, from the row (`claimed`).
 */
export function endpointView(r: Record<string, unknown>, now = Date.now()): WebhookEndpoint {
  const until = r.prev_until === null ? null : Number(r.prev_until);
  return {
    id: r.id as string,
    account_id: (r.account_id as string | null) ?? null,
    url: maskUrl(r.url as string),
    events: JSON.parse(r.events as string),
    balance_below: r.balance_below === null ? null : Number(r.balance_below),
    spike_factor: r.spike_factor === null ? null : Number(r.spike_factor),
    expiring_days: r.expiring_days === null ? null : Number(r.expiring_days),
    format: r.format === "slack" ? "slack" : "json",
    created: iso(r.created_at as number) as string,
    previous_secret_valid_until: until !== null && until > now ? iso(until) : null,
  };
}

/** A stored outbox row (either store) as the APIs answer it. */
export function deliveryView(r: Record<string, unknown>): DeliveryView {
  return {
    id: r.id as string,
    event_id: r.event_id as string,
    endpoint_id: r.endpoint_id as string,
    type: r.type as string,
    created: iso(r.created_at as number) as string,
    attempts: Number(r.attempts),
    status: r.status as string,
    last_status_code: r.last_status_code === null ? null : Number(r.last_status_code),
    last_error: (r.last_error as string | null) ?? null,
    next_attempt_at: r.status === "pending" ? iso(r.next_at as number) : null,
    delivered_at: iso(r.delivered_at as number | null),
  };
}

/** The fields of an endpoint an audit entry carries: never its secret, its URL masked. */
export const auditedEndpoint = (e: WebhookEndpoint): Record<string, unknown> => ({
  url: maskUrl(e.url),
  events: e.events,
  balance_below: e.balance_below,
  spike_factor: e.spike_factor,
  expiring_days: e.expiring_days,
  format: e.format,
});
