/**
 * The events no change raises, found by looking (docs/alerts.md#events): `key.expiring` (an active
 * key whose `expires_at` is within the endpoint's `expiring_days`) and `spend.spike` (the last
 * hour's charges over `spike_factor` times the trailing day's hourly mean, counted as at least one
 * credit, once the account was charged a whole day before the last hour). Each node looks every `[alerts] scan_ms`; an event's delivery id is made of what it is
 * about (the key and its expiry; the endpoint and the hour), so nodes looking at once write it once.
 */
import type { AlertEvent } from "./interface";

/** An endpoint that takes a looked-for event, as the stores read it. */
export interface ScannedEndpoint {
  id: string;
  accountId: string;
  events: string[];
  spikeFactor: number | null;
  expiringDays: number | null;
}

const HOUR = 3600_000;
const DAY = 24 * HOUR;

/** key.expiring for each key expiring within the endpoint's days (the same event id for every endpoint). */
export function expiringEvents(e: ScannedEndpoint, keys: { id: string; expires: string | null }[], now: number): AlertEvent[] {
  if (!e.events.includes("key.expiring") || e.expiringDays === null) return [];
  const out: AlertEvent[] = [];
  for (const k of keys) {
    const at = k.expires ? Date.parse(k.expires) : Number.NaN;
    if (!(at > now && at - now <= e.expiringDays * DAY)) continue;
    const data = {
      account_id: e.accountId,
      key_id: k.id,
      expires_at: new Date(at).toISOString(),
      days_left: Math.ceil((at - now) / DAY),
    };
    out.push({ id: `evt_expiring_${k.id}_${at}`, type: "key.expiring", created: now, data });
  }
  return out;
}

/**
 * spend.spike when the last hour's charges are over the factor times the trailing day's hourly mean
 * (at least 1), and the account has a whole day of history: a charge at or before the trailing day's
 * start (`hasHistory`). A new account's first hour has no day to compare with, and its first calls
 * are no spike. The event reports the mean it compared with.
 */
export function spikeEvent(
  e: ScannedEndpoint,
  spend: { lastHour: number; dayBefore: number; hasHistory: boolean },
  now: number,
): AlertEvent | null {
  if (!e.events.includes("spend.spike") || e.spikeFactor === null || !spend.hasHistory) return null;
  const mean = Math.max(spend.dayBefore / 24, 1);
  if (!(spend.lastHour > e.spikeFactor * mean)) return null;
  const data = { account_id: e.accountId, last_hour: spend.lastHour, hourly_mean: mean, spike_factor: e.spikeFactor };
  return { id: `evt_spike_${e.id}_${Math.floor(now / HOUR)}`, type: "spend.spike", created: now, data };
}

/** The windows of spikeEvent: charges since `hourFrom` (the last hour), and from `dayFrom` to it (the day before). */
export const spikeWindows = (now: number) => ({ hourFrom: now - HOUR, dayFrom: now - HOUR - DAY });

/** The delivery id of a looked-for event to an endpoint: the same whichever node finds it. */
export const periodicDeliveryId = (endpointId: string, eventId: string) => `dlv_${endpointId}_${eventId.slice(4)}`;

export const scannedOf = (r: Record<string, unknown>): ScannedEndpoint => ({
  id: r.id as string,
  accountId: r.account_id as string,
  events: JSON.parse(r.events as string),
  spikeFactor: r.spike_factor === null ? null : Number(r.spike_factor),
  expiringDays: r.expiring_days === null ? null : Number(r.expiring_days),
});

/** Endpoints that take a looked-for event (the SQL both stores run, `LIKE` over the events' JSON). */
export const SCANNED_SQL = `SELECT id, account_id, events, spike_factor, expiring_days FROM webhooks
  WHERE account_id IS NOT NULL AND (events LIKE '%"key.expiring"%' OR events LIKE '%"spend.spike"%')`;
