import type { Database } from "bun:sqlite";
import type { SQL } from "bun";
import type { ChargeWatch, WatchedCharge } from "../credits/interface";
import { timeOrderedId } from "../ids";
import type { AlertEvent, AlertEventType, WatchedEndpoint } from "./interface";
import { writeOutbox } from "./sqlite";

/** An event raised and the endpoints it goes to. */
export interface Raised {
  event: AlertEvent;
  accountId: string;
  endpointIds: string[];
}

const event = (type: AlertEventType, data: Record<string, unknown>, now: number): AlertEvent => ({
  id: timeOrderedId("evt", now),
  type,
  created: now,
  data,
});

/** balance.low for each endpoint whose threshold this charge took the balance under (from at or above it). */
export function balanceEvents(eps: WatchedEndpoint[], c: WatchedCharge, now: number): Raised[] {
  const out: Raised[] = [];
  const before = c.balance + c.amount;
  for (const e of eps) {
    if (e.balanceBelow === null || !e.events.includes("balance.low")) continue;
    if (!(before >= e.balanceBelow && c.balance < e.balanceBelow)) continue;
    const data = { account_id: c.accountId, balance: c.balance, threshold: e.balanceBelow };
    out.push({ event: event("balance.low", data, now), accountId: c.accountId, endpointIds: [e.id] });
  }
  return out;
}

/** key.budget_80 / key.budget_100 when this charge took the key's month-to-date use over 80 % / 100 % of its limit. */
export function budgetEvents(eps: WatchedEndpoint[], c: WatchedCharge, usedAfter: number, limit: number, now: number): Raised[] {
  const out: Raised[] = [];
  const before = usedAfter - c.amount;
  for (const [type, share] of [
    ["key.budget_80", 0.8],
    ["key.budget_100", 1],
  ] as const) {
    const line = limit * share;
    if (!(before < line && usedAfter >= line)) continue;
    const ids = eps.filter((e) => e.events.includes(type)).map((e) => e.id);
    if (ids.length === 0) continue;
    const data = { account_id: c.accountId, key_id: c.keyId, monthly_credit_limit: limit, used: usedAfter };
    out.push({ event: event(type, data, now), accountId: c.accountId, endpointIds: ids });
  }
  return out;
}

const wantsBudget = (eps: WatchedEndpoint[]) =>
  eps.some((e) => e.events.includes("key.budget_80") || e.events.includes("key.budget_100"));
const monthStart = (now: number) => {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
};

/**
 * The accounts with alert endpoints, in memory: a charge of any other account costs one Map
 * lookup. Refreshed from the store on each change made through this node and every few seconds
 * (changes made through other nodes).
 */
export class AlertWatch implements ChargeWatch {
  private byAccount = new Map<string, WatchedEndpoint[]>();
  /** endpoints of any kind (the operator's too): none, and a node has nothing to deliver */
  endpoints = 0;

  constructor(private readonly read: () => WatchedEndpoint[] | Promise<WatchedEndpoint[]>) {}

  async refresh(): Promise<void> {
    const next = new Map<string, WatchedEndpoint[]>();
    const all = await this.read();
    for (const e of all) {
      if (e.accountId === null) continue;
      const list = next.get(e.accountId) ?? [];
      list.push(e);
      next.set(e.accountId, list);
    }
    this.byAccount = next;
    this.endpoints = all.length;
  }

  watches(accountId: string): boolean {
    return this.byAccount.size > 0 && this.byAccount.has(accountId);
  }

  chargedSqlite(sqlite: Database, c: WatchedCharge): void {
    const eps = this.byAccount.get(c.accountId);
    if (!eps) return;
    const now = Date.now();
    const raised = balanceEvents(eps, c, now);
    if (c.keyId && c.amount > 0 && wantsBudget(eps)) {
      const k = sqlite
        .query<{ lim: number | null; used: number }, [string, number]>(
          `SELECT json_extract(policy, '$.monthly_credit_limit') AS lim,
             (SELECT coalesce(-sum(amount), 0) FROM ledger WHERE key_id = ?1 AND created_at >= ?2 AND kind = 'charge') AS used
           FROM api_keys WHERE id = ?1`,
        )
        .get(c.keyId, monthStart(now));
      if (k?.lim != null) raised.push(...budgetEvents(eps, c, Number(k.used), Number(k.lim), now));
    }
    for (const r of raised) writeOutbox(sqlite, r.event, r.accountId, r.endpointIds);
  }

  async chargedPg(tx: SQL, charges: WatchedCharge[]): Promise<void> {
    const now = Date.now();
    for (const c of charges) {
      const eps = this.byAccount.get(c.accountId);
      if (!eps) continue;
      const raised = balanceEvents(eps, c, now);
      if (c.keyId && c.amount > 0 && wantsBudget(eps)) {
        const [k] = await tx.unsafe(
          `SELECT (policy::jsonb->>'monthly_credit_limit')::float8 AS lim,
             (SELECT coalesce(-sum(amount), 0)::float8 FROM ledger WHERE key_id = $1 AND created_at >= $2 AND kind = 'charge') AS used
           FROM api_keys WHERE id = $1`,
          [c.keyId, monthStart(now)],
        );
        // the batch's later charges of the key are in `used` already: count only up to this one
        const later = charges.slice(charges.indexOf(c) + 1).reduce((s, x) => s + (x.keyId === c.keyId ? x.amount : 0), 0);
        if (k?.lim != null) raised.push(...budgetEvents(eps, c, Number(k.used) - later, Number(k.lim), now));
      }
      for (const r of raised) await writeOutboxPg(tx, r.event, r.accountId, r.endpointIds);
    }
  }
}

/** writeOutbox on PostgreSQL, in the caller's transaction. */
export async function writeOutboxPg(tx: SQL, ev: AlertEvent, accountId: string | null, endpointIds: string[]): Promise<void> {
  const data = JSON.stringify(ev.data);
  for (const endpoint of endpointIds)
    await tx.unsafe(
      `INSERT INTO webhook_outbox (id, event_id, endpoint_id, account_id, type, data, created_at, next_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`,
      [timeOrderedId("dlv", ev.created), ev.id, endpoint, accountId, ev.type, data, ev.created],
    );
}
