/**
 * The alert store's contract (src/alerts/interface.ts), run against both implementations: SQLite
 * (a claim column) and PostgreSQL (FOR UPDATE SKIP LOCKED and the claim column). Endpoints and
 * their audit entries, rotation's two secrets, events fanned out only to the endpoints that take
 * them, and the outbox's claims: two claimers at once never get the same delivery, a claim that ran
 * out is taken again, a finish under a claim taken over is ignored. The PostgreSQL half needs
 * 127.0.0.1:5432; it skips loudly without it, fails under CI.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AlertEvent, WebhookStore } from "../../src/alerts/interface";
import { PostgresWebhookStore } from "../../src/alerts/postgres";
import { SqliteWebhookStore } from "../../src/alerts/sqlite";
import { openStorage, type Storage } from "../../src/storage/db";
import { openPostgres, type PgStorage } from "../../src/storage/postgres";
import { freshDatabase, sharedServersUp } from "../helpers/shared-servers";

const shared = await sharedServersUp("the alert store's PostgreSQL contract");
const dir = mkdtempSync(join(tmpdir(), "textai-alerts-contract-"));
let sqlite: Storage;
let pgDb: Awaited<ReturnType<typeof freshDatabase>> | null = null;
let pg: PgStorage | null = null;

beforeAll(async () => {
  sqlite = openStorage(join(dir, "alerts.db"));
  if (!shared) return;
  pgDb = await freshDatabase();
  pg = openPostgres(pgDb.url, { max: 4 });
  await pg.migrated;
});
afterAll(async () => {
  sqlite?.close();
  await pg?.close();
  await pgDb?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const by = { actor: "admin-token", client: "127.0.0.1" };
let n = 0;
const event = (type: AlertEvent["type"], data: Record<string, unknown> = {}): AlertEvent => ({
  id: `evt_contract_${++n}`,
  type,
  created: Date.now(),
  data,
});
const endpoint = (store: WebhookStore, accountId: string | null, events: string[]) =>
  store.create(
    {
      accountId,
      url: "https://hooks.example.com/x",
      events,
      balanceBelow: 10,
      spikeFactor: null,
      expiringDays: null,
      format: "json",
    },
    by,
  );

function contract(name: string, make: () => WebhookStore | null) {
  describe.skipIf(name === "PostgreSQL" && !shared)(`alert store contract: ${name}`, () => {
    test("endpoints: created with a secret shown once, listed without it, rotated to two secrets, removed", async () => {
      const store = make() as WebhookStore;
      const acc = `acc_${name}_1`;
      const { endpoint: e, secret } = await endpoint(store, acc, ["balance.low"]);
      expect(secret).toMatch(/^whsec_/);
      expect(JSON.stringify(await store.list(acc))).not.toContain(secret);
      expect((await store.list(acc)).map((x) => x.id)).toEqual([e.id]);
      expect((await store.list(null)).map((x) => x.id)).not.toContain(e.id);
      const r = await store.rotate(e.id, 60_000, by);
      expect(r?.secret).not.toBe(secret);
      expect(await store.enqueue(event("balance.low"), acc)).toBe(1);
      const [d] = await store.claim(Date.now(), 10_000, 10);
      expect(d?.secrets).toEqual([r?.secret as string, secret]);
      await store.finish(d as NonNullable<typeof d>, { delivered: true, statusCode: 200, error: null, nextAt: null }, Date.now());
      expect(await store.remove(e.id, by)).toBe(true);
      expect(await store.get(e.id)).toBeNull();
      expect(await store.remove(e.id, by)).toBe(false);
    });

    test("an event goes only to the endpoints that take it: an account's to its own, a gateway event to the operator's", async () => {
      const store = make() as WebhookStore;
      const acc = `acc_${name}_2`;
      const mine = (await endpoint(store, acc, ["key.budget_80"])).endpoint;
      await endpoint(store, `acc_${name}_other`, ["key.budget_80"]);
      await endpoint(store, acc, ["balance.low"]);
      const ops = (await endpoint(store, null, ["provider.circuit_open"])).endpoint;
      expect(await store.enqueue(event("key.budget_80"), acc)).toBe(1);
      expect(await store.enqueue(event("provider.circuit_open"), null)).toBe(1);
      expect(await store.enqueue(event("provider.circuit_closed"), null)).toBe(0);
      const claimed = await store.claim(Date.now(), 10_000, 50);
      expect(claimed.map((d) => d.type).sort()).toEqual(["key.budget_80", "provider.circuit_open"]);
      expect((await store.deliveries(mine.id, 10)).map((d) => d.type)).toEqual(["key.budget_80"]);
      expect((await store.deliveries(ops.id, 10)).map((d) => d.type)).toEqual(["provider.circuit_open"]);
      for (const d of claimed) await store.finish(d, { delivered: true, statusCode: 200, error: null, nextAt: null }, Date.now());
    });

    test("claims: two at once never share a delivery; a claim run out is taken again; a late finish is ignored", async () => {
      const store = make() as WebhookStore;
      const acc = `acc_${name}_3`;
      const e = (await endpoint(store, acc, ["balance.low"])).endpoint;
      for (let i = 0; i < 30; i++) await store.enqueue(event("balance.low", { i }), acc);
      const now = Date.now();
      const [a, b] = await Promise.all([store.claim(now, 5000, 20), store.claim(now, 5000, 20)]);
      const ids = [...a, ...b].map((d) => d.id);
      expect(ids.length).toBe(30);
      expect(new Set(ids).size).toBe(30);
      expect(await store.claim(now, 5000, 20)).toEqual([]);
      // past the lease: claimed again by another node, whose finish counts; the first one's does not
      const again = await store.claim(now + 6000, 5000, 50);
      expect(again.length).toBe(30);
      const first = a[0] as (typeof a)[number];
      const second = again.find((d) => d.id === first.id) as (typeof again)[number];
      await store.finish(first, { delivered: false, statusCode: 500, error: "answered 500", nextAt: now + 100 }, now);
      await store.finish(second, { delivered: true, statusCode: 200, error: null, nextAt: null }, now);
      const row = (await store.deliveries(e.id, 50)).find((d) => d.id === first.id);
      expect(row).toMatchObject({ status: "delivered", attempts: 1, last_status_code: 200 });
      // a failed attempt with no next one left is failed; a resend makes it pending again
      // another delivery than the one finished above (the claim's order is the store's)
      const third = again.find((d) => d.id !== first.id) as (typeof again)[number];
      await store.finish(third, { delivered: false, statusCode: null, error: "no answer in time", nextAt: null }, now);
      expect((await store.deliveries(e.id, 50)).find((d) => d.id === third.id)?.status).toBe("failed");
      expect((await store.resend(e.id, third.id, by))?.status).toBe("pending");
      expect(await store.resend(e.id, "dlv_nope", by)).toBeNull();
    });
  });
}

/** Rows written straight into the store's database (`?` placeholders): an account and its ledger, for the scan. */
type Exec = (sql: string, args: (string | number)[]) => Promise<unknown>;

function scanContract(name: string, make: () => WebhookStore | null, exec: Exec) {
  describe.skipIf(name === "PostgreSQL" && !shared)(`alert store contract, the scan: ${name}`, () => {
    test("spend.spike only once the account has a whole day of history; the event carries the mean it compared with", async () => {
      const store = make() as WebhookStore;
      const acc = `acc_${name}_spike`;
      const now = Date.now();
      await exec("INSERT INTO accounts (id, balance) VALUES (?, 100)", [acc]);
      const { endpoint: e } = await store.create(
        {
          accountId: acc,
          url: "https://hooks.example.com/s",
          events: ["spend.spike"],
          balanceBelow: null,
          spikeFactor: 2,
          expiringDays: null,
          format: "json",
        },
        by,
      );
      const charge = (amount: number, at: number) =>
        exec("INSERT INTO ledger (account_id, amount, kind, created_at) VALUES (?, ?, 'charge', ?)", [acc, -amount, at]);
      await charge(5, now - 60_000);
      expect(await store.scan(now)).toBe(0);
      expect(await store.deliveries(e.id, 10)).toEqual([]);
      await charge(1, now - 26 * 3600_000);
      expect(await store.scan(now)).toBe(1);
      expect(await store.scan(now)).toBe(0);
      const mine = (await store.claim(now, 10_000, 100)).filter((d) => d.eventId.startsWith(`evt_spike_${e.id}`));
      expect(mine.map((d) => JSON.parse(d.data))).toEqual([{ account_id: acc, last_hour: 5, hourly_mean: 1, spike_factor: 2 }]);
    });
  });
}

contract("SQLite", () => new SqliteWebhookStore(sqlite.sqlite));
contract("PostgreSQL", () => (pg ? new PostgresWebhookStore(pg) : null));
scanContract(
  "SQLite",
  () => new SqliteWebhookStore(sqlite.sqlite),
  async (sql, args) => sqlite.sqlite.query(sql).run(...args),
);
scanContract(
  "PostgreSQL",
  () => (pg ? new PostgresWebhookStore(pg) : null),
  async (sql, args) => {
    let i = 0;
    return pg?.sql.unsafe(
      sql.replace(/\?/g, () => `$${++i}`),
      args,
    );
  },
);
