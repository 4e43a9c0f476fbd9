/**
 * One contract per service, run against every implementation: the embedded ones (SQLite, memory)
 * and the shared ones (PostgreSQL, Redis). The shared ones need 127.0.0.1:5432 and :6379 (see
 * test/helpers/shared-servers.ts): without them these suites skip loudly, except under CI=true.
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import type { KeyStore } from "../../src/auth/interface";
import { KeyLimitError, KeyStoreError } from "../../src/auth/interface";
import { hashApiKey } from "../../src/auth/keys";
import { PostgresKeyStore } from "../../src/auth/postgres";
import { SqliteKeyStore } from "../../src/auth/sqlite";
import type { CachedAnswer, ResponseCache } from "../../src/cache/interface";
import { MemoryResponseCache } from "../../src/cache/memory";
import { RedisResponseCache } from "../../src/cache/redis";
import { RedisCallStarter } from "../../src/callstart/redis";
import type { ChargeDetails, CreditLedger, Reservation } from "../../src/credits/interface";
import { PostgresCreditLedger } from "../../src/credits/postgres";
import { SqliteCreditLedger } from "../../src/credits/sqlite";
import { GatewayError } from "../../src/errors";
import type { IdempotencyStore } from "../../src/idempotency/interface";
import { MemoryIdempotencyStore } from "../../src/idempotency/memory";
import { RedisIdempotencyStore } from "../../src/idempotency/redis";
import { SqliteIdempotencyStore } from "../../src/idempotency/sqlite";
import type { RateLimiter } from "../../src/ratelimit/interface";
import { MemoryRateLimiter } from "../../src/ratelimit/limiter";
import { RedisRateLimiter } from "../../src/ratelimit/redis";
import { DEFAULT_REDIS_PREFIX, RedisLink } from "../../src/redis/link";
import type { RequestLogStore, RequestRecord } from "../../src/requestlog/interface";
import { PostgresRequestLogStore } from "../../src/requestlog/postgres";
import { decodeCursor, readPage } from "../../src/requestlog/query";
import { RequestLog } from "../../src/requestlog/recorder";
import { SqliteRequestLogStore } from "../../src/requestlog/sqlite";
import { openStorage, type Storage } from "../../src/storage/db";
import type { PgStorage } from "../../src/storage/postgres";
import { storesOn } from "../helpers/pgbouncer";
import { freshDatabase, freshRedis, freshRedisCluster, sharedServersUp } from "../helpers/shared-servers";

const shared = await sharedServersUp("service contracts on PostgreSQL and Redis");
// the Redis implementations again on a Redis Cluster of three masters (test/helpers/redis-cluster.ts)
const redisCluster = await freshRedisCluster("service contracts on a Redis Cluster");
const onCluster = redisCluster !== null;
const dir = mkdtempSync(join(tmpdir(), "textai-contracts-"));
let sqlite: Storage;
let pgDb: Awaited<ReturnType<typeof freshDatabase>> | null = null;
let pg: PgStorage | null = null;
let pg2: PgStorage | null = null;
/** the stores' pools: straight to the test database, or through a pooler (TEXTAI_TEST_VIA_PGBOUNCER=1) */
let pgPools: Awaited<ReturnType<typeof storesOn>> | null = null;
let redis: RedisLink | null = null;
let redisKeys: Awaited<ReturnType<typeof freshRedis>> | null = null;

let clustered: RedisLink | null = null;

beforeAll(async () => {
  sqlite = openStorage(join(dir, "contracts.db"));
  if (!shared) return;
  pgDb = await freshDatabase();
  pgPools = await storesOn(pgDb.url);
  pg = pgPools.open();
  pg2 = pgPools.open();
  await Promise.all([pg.migrated, pg2.migrated]);
  redisKeys = await freshRedis();
  // the contracts are about what the stores do, not about timeouts (redis-stall.test.ts is): a
  // command timeout well past a loaded machine's stalls (CI once saw one of about 1 s fail a case)
  redis = new RedisLink(redisKeys.url, undefined, { prefix: redisKeys.prefix, commandTimeoutMs: 5000 });
  redis.start();
  expect(await redis.ready()).toBe(true);
});
beforeAll(async () => {
  if (!redisCluster) return;
  clustered = new RedisLink(redisCluster.url, undefined, { cluster: true, prefix: redisCluster.prefix, commandTimeoutMs: 5000 });
  clustered.start();
  expect(await clustered.ready()).toBe(true);
});
afterAll(async () => {
  await clustered?.close();
  await redis?.close();
  await redisKeys?.flush();
  await redisCluster?.flush();
  await pg?.close();
  await pg2?.close();
  await pgPools?.stop();
  await pgDb?.drop();
  sqlite.close();
  rmSync(dir, { recursive: true, force: true });
});

const details = (requestId: string): ChargeDetails => ({
  keyId: "key_x",
  fn: "word-count",
  requestId,
  provider: "local",
  cached: false,
});

type Ledgers = { ledger: CreditLedger; keys: KeyStore; other?: { ledger: CreditLedger } };
const stores: [string, boolean, () => Ledgers][] = [
  [
    "sqlite",
    true,
    () => {
      const ledger = new SqliteCreditLedger(sqlite);
      return { ledger, keys: new SqliteKeyStore(sqlite, ledger, { welcomeCredits: 7 }) };
    },
  ],
  [
    "postgres",
    shared,
    () => {
      const ledger = new PostgresCreditLedger(pg!);
      return {
        ledger,
        keys: new PostgresKeyStore(pg!, ledger, { welcomeCredits: 7 }),
        other: { ledger: new PostgresCreditLedger(pg2!) },
      };
    },
  ],
];

for (const [name, enabled, make] of stores) {
  describe.skipIf(!enabled)(`KeyStore contract: ${name}`, () => {
    test("accounts and keys: create, authenticate, list, revoke (at once on this store, and told to onRevoke)", async () => {
      const { keys, ledger } = make();
      const acc = await keys.createAccount({ name: "Ada", plan: "pro" });
      expect(acc.balance).toBe(7);
      expect(await keys.accountExists(acc.id)).toBe(true);
      expect(await keys.accountExists("acc_nobody")).toBe(false);
      expect((await keys.getAccount(acc.id))?.name).toBe("Ada");
      expect((await keys.listAccounts(500, 0)).some((a) => a.id === acc.id)).toBe(true);
      expect(await ledger.balance(acc.id)).toBe(7);

      const k = await keys.createKey({ label: "one", accountId: acc.id, credits: 3 });
      expect(k.plan).toBe("pro");
      expect(await ledger.balance(acc.id)).toBe(10);
      expect(await keys.authenticate(k.key)).toEqual({ keyId: k.id, accountId: acc.id, plan: "pro", label: "one" });
      expect(await keys.authenticate(`${k.key}x`)).toBeNull();
      expect((await keys.list(acc.id)).map((v) => v.id)).toEqual([k.id]);
      expect((await keys.get(k.id))?.masked_key.endsWith(k.key.slice(-4))).toBe(true);
      expect(JSON.stringify(await keys.list(acc.id))).not.toContain(k.key);

      const revoked: string[] = [];
      keys.onRevoke = (h) => revoked.push(h);
      expect(await keys.revoke(k.id, "acc_other")).toBe(false);
      expect(await keys.revoke(k.id)).toBe(true);
      expect(revoked).toEqual([hashApiKey(k.key)]);
      expect(await keys.authenticate(k.key)).toBeNull();
      expect((await keys.get(k.id))?.status).toBe("revoked");
      expect(await keys.revoke("key_nobody")).toBe(false);

      const fresh = await keys.createKey({ label: "new account" });
      expect(await ledger.balance(fresh.account_id)).toBe(7);
      await expect(Promise.resolve().then(() => keys.createKey({ label: "x", accountId: "acc_nobody" }))).rejects.toBeInstanceOf(
        KeyStoreError,
      );
      await keys.stop();
    });

    test("a new key's or account's bad attribute is refused (400 naming it) before anything is written", async () => {
      const { keys } = make();
      const acc = await keys.createAccount({ name: "  Grace  " });
      expect((await keys.getAccount(acc.id))?.name).toBe("Grace");
      const before = (await keys.list(acc.id)).length;
      const past = { expires_at: "2001-01-01T00:00:00.000Z" };
      for (const [opts, param] of [
        [{ label: "   ", accountId: acc.id }, "label"],
        [{ label: "x", accountId: "" }, "account_id"],
        [{ label: "x", accountId: acc.id, credits: -1 }, "credits"],
        [{ label: "x", accountId: acc.id, policy: past }, "policy.expires_at"],
      ] as const) {
        const refused = await Promise.resolve()
          .then(() => keys.createKey(opts))
          .catch((e: GatewayError) => e);
        expect(refused, param).toBeInstanceOf(GatewayError);
        expect((refused as GatewayError).param, param).toBe(param);
      }
      for (const [opts, param] of [
        [{ name: " " }, "name"],
        [{ credits: Number.NaN }, "credits"],
      ] as const) {
        const refused = await Promise.resolve()
          .then(() => keys.createAccount(opts))
          .catch((e: GatewayError) => e);
        expect((refused as GatewayError).param, param).toBe(param);
      }
      expect((await keys.list(acc.id)).length).toBe(before);
      expect((await keys.createKey({ label: "  padded  ", accountId: acc.id })).label).toBe("padded");
      await keys.stop();
    });

    test("a key's policy: set at creation, carried by authenticate, patched (null clears), told to onRevoke, scoped by account", async () => {
      const { keys } = make();
      const acc = await keys.createAccount({ plan: "free" });
      const k = await keys.createKey({
        label: "narrow",
        accountId: acc.id,
        policy: { allowed_functions: ["sentiment-analysis"], monthly_credit_limit: 5 },
      });
      expect((await keys.authenticate(k.key))?.policy).toEqual({
        allowed_functions: ["sentiment-analysis"],
        monthly_credit_limit: 5,
      });
      expect((await keys.get(k.id))?.policy).toEqual({
        allowed_functions: ["sentiment-analysis"],
        allowed_models: null,
        rate_limit_per_minute: null,
        monthly_credit_limit: 5,
        expires_at: null,
        guardrails: null,
        tags: null,
      });
      const told: string[] = [];
      keys.onRevoke = (h) => told.push(h);
      const view = await keys.setPolicy(k.id, { allowed_functions: null, rate_limit_per_minute: 3 });
      expect(view?.policy.allowed_functions).toBeNull();
      expect(view?.policy.rate_limit_per_minute).toBe(3);
      expect(view?.policy.monthly_credit_limit).toBe(5);
      expect(told).toEqual([hashApiKey(k.key)]);
      // the cache was dropped: the very next lookup reads the new policy
      expect((await keys.authenticate(k.key))?.policy).toEqual({ rate_limit_per_minute: 3, monthly_credit_limit: 5 });
      expect(await keys.setPolicy(k.id, { rate_limit_per_minute: 1 }, { accountId: "acc_other" })).toBeNull();
      expect(await keys.setPolicy("key_nobody", { rate_limit_per_minute: 1 })).toBeNull();
      // a check that throws leaves the policy as it was
      await expect(
        Promise.resolve().then(() =>
          keys.setPolicy(
            k.id,
            { monthly_credit_limit: null },
            {
              check: () => {
                throw new Error("no widening");
              },
            },
          ),
        ),
      ).rejects.toThrow("no widening");
      expect((await keys.get(k.id))?.policy.monthly_credit_limit).toBe(5);
      // clearing every field leaves no policy at all
      await keys.setPolicy(k.id, { rate_limit_per_minute: null, monthly_credit_limit: null });
      expect((await keys.authenticate(k.key))?.policy).toBeUndefined();
      await keys.stop();
    });

    test("an account's active keys stop at maxKeys(plan), also when made concurrently; list pages newest first", async () => {
      const { keys: plain, ledger } = make();
      const keys =
        name === "sqlite"
          ? new SqliteKeyStore(sqlite, ledger as SqliteCreditLedger, { welcomeCredits: 0, maxKeys: (p) => (p === "pro" ? 3 : 2) })
          : new PostgresKeyStore(pg!, ledger as PostgresCreditLedger, {
              welcomeCredits: 0,
              maxKeys: (p) => (p === "pro" ? 3 : 2),
            });
      const acc = await plain.createAccount({ plan: "pro" });
      const made = await Promise.allSettled(
        Array.from({ length: 8 }, (_, i) => Promise.resolve().then(() => keys.createKey({ label: `k${i}`, accountId: acc.id }))),
      );
      const ok = made.filter((r) => r.status === "fulfilled");
      expect(ok).toHaveLength(3);
      for (const r of made) if (r.status === "rejected") expect(r.reason).toBeInstanceOf(KeyLimitError);
      const all = await keys.list(acc.id);
      expect(all).toHaveLength(3);
      const pages = [
        ...(await keys.list(acc.id, { limit: 2, offset: 0 })),
        ...(await keys.list(acc.id, { limit: 2, offset: 2 })),
      ];
      expect(pages.map((k) => k.id)).toEqual(all.map((k) => k.id));
      expect(await keys.revoke(all[0].id)).toBe(true);
      expect((await keys.createKey({ label: "again", accountId: acc.id })).account_id).toBe(acc.id);
      // a key made with a new account is its first: no cap to check
      expect((await keys.createKey({ label: "fresh" })).plan).toBe("free");
      await keys.stop();
    });
  });

  describe.skipIf(!enabled)(`CreditLedger contract: ${name}`, () => {
    test("holds, settle, release, conditional charges, take-backs never below zero, usage from rollups", async () => {
      const { keys, ledger } = make();
      const { id } = await keys.createAccount({ credits: 3 });
      const r1 = await ledger.reserve(id, 2);
      expect(r1?.remaining).toBe(1);
      expect(await ledger.reserve(id, 2)).toBeNull();
      ledger.release(r1!);
      const r2 = (await ledger.reserve(id, 2))!;
      await ledger.settle(r2, details("req_1"));
      expect(r2.remaining).toBe(1);
      expect(await ledger.balance(id)).toBe(1);
      // five charges in one turn on one credit: one passes, each checked on its own
      const out = await Promise.all(Array.from({ length: 5 }, (_, i) => ledger.charge(id, 1, details(`req_c${i}`))));
      expect(out.filter((r) => r !== null).length).toBe(1);
      expect(await ledger.balance(id)).toBe(0);
      await expect(Promise.resolve().then(() => ledger.grant(id, -1, "grant", "take back"))).rejects.toMatchObject({
        code: "invalid_request",
      });
      expect(await ledger.grant(id, 4, "grant", "more")).toBe(4);
      const usage = await ledger.monthToDate(id);
      expect(usage.requests).toBe(2);
      expect(usage.credits_used).toBe(3);
      expect(usage.credits_granted).toBe(7);
      expect(usage.by_function).toEqual([
        { function: "word-count", requests: 2, credits: 3, cached: 0, input_tokens: 0, output_tokens: 0 },
      ]);
      const months = await ledger.monthly(id);
      expect(months[0].credits_used).toBe(3);
    });

    test("a key's monthly_credit_limit: 30 concurrent holds and cache-hit charges on two keys admit exactly each key's limit", async () => {
      const { keys, ledger, other } = make();
      const { id } = await keys.createAccount({ credits: 1000 });
      const budget = (keyId: string) => ({ keyId, limit: 7 });
      const keyA = `key_a_${crypto.randomUUID()}`;
      const keyB = `key_b_${crypto.randomUUID()}`;
      const second = other?.ledger ?? ledger;
      // key A: holds of 1 from two nodes (two ledgers on one database where there are two)
      const nodeOf = (i: number) => (i % 2 ? second : ledger);
      const tries = await Promise.allSettled(
        Array.from({ length: 30 }, (_, i) => Promise.resolve().then(() => nodeOf(i).reserve(id, 1, budget(keyA)))),
      );
      const held = tries.flatMap((t, i) => (t.status === "fulfilled" && t.value ? [{ r: t.value, node: nodeOf(i) }] : []));
      expect(held).toHaveLength(7);
      for (const t of tries)
        if (t.status === "rejected") expect(t.reason).toMatchObject({ code: "key_budget_exceeded", status: 402 });
      // charged 4 of them, released 3: 3 more fit this month
      await Promise.all(held.slice(0, 4).map(({ r, node }, i) => node.settle(r, { ...details(`req_k${i}`), keyId: keyA })));
      for (const { r, node } of held.slice(4)) node.release(r);
      expect(await ledger.keySpent(keyA)).toBe(4);
      const again = await Promise.allSettled(
        Array.from({ length: 10 }, () => Promise.resolve().then(() => second.reserve(id, 1, budget(keyA)))),
      );
      expect(again.filter((t) => t.status === "fulfilled" && t.value !== null)).toHaveLength(3);
      for (const t of again) if (t.status === "fulfilled" && t.value) second.release(t.value);
      // key B: cache-hit charges (no hold) from both nodes at once: exactly 7 charged
      const hits = await Promise.allSettled(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 ? second : ledger).charge(id, 1, { ...details(`req_h${i}`), keyId: keyB, keyLimit: 7 }),
        ),
      );
      expect(hits.filter((t) => t.status === "fulfilled" && t.value !== null)).toHaveLength(7);
      for (const t of hits) if (t.status === "rejected") expect(t.reason).toMatchObject({ code: "key_budget_exceeded" });
      expect(await ledger.keySpent(keyB)).toBe(7);
      // the account's balance paid for each charge once
      expect(await ledger.balance(id)).toBe(1000 - 4 - 7);
      // a third key of the same account, with no limit, is not held to A's and B's: 12 holds and
      // 12 cache-hit charges from both nodes, past their 7, all go through
      const keyC = `key_c_${crypto.randomUUID()}`;
      const free = await Promise.allSettled([
        ...Array.from({ length: 12 }, (_, i) => Promise.resolve().then(() => nodeOf(i).reserve(id, 1))),
        ...Array.from({ length: 12 }, (_, i) =>
          Promise.resolve().then(() => nodeOf(i).charge(id, 1, { ...details(`req_c${i}`), keyId: keyC })),
        ),
      ]);
      expect(free.map((t) => (t.status === "fulfilled" && t.value !== null ? "ok" : "refused"))).toEqual(Array(24).fill("ok"));
      const freeHolds = free
        .slice(0, 12)
        .flatMap((t, i) => (t.status === "fulfilled" && t.value ? [{ r: t.value, node: nodeOf(i) }] : []));
      await Promise.all(freeHolds.map(({ r, node }, i) => node.settle(r, { ...details(`req_cs${i}`), keyId: keyC })));
      expect(await ledger.keySpent(keyC)).toBe(24);
      expect(await ledger.balance(id)).toBe(1000 - 4 - 7 - 24);
    });

    test("a call priced on its usage: charged what it used, never more than it held, its tokens in the rollups", async () => {
      const { keys, ledger } = make();
      const { id } = await keys.createAccount({ credits: 10 });
      const tokens = { input: 120, output: 30 };
      const r = (await ledger.reserve(id, 6))!;
      expect(ledger.held(id)).toBe(6);
      await ledger.settle(r, { ...details("req_used"), fn: "chat-completions", tokens }, 2);
      expect(r.amount).toBe(2);
      expect(r.remaining).toBe(8);
      expect(ledger.held(id)).toBe(0);
      // more than held: the hold is the cap
      const capped = (await ledger.reserve(id, 3))!;
      await ledger.settle(capped, { ...details("req_capped"), fn: "chat-completions", tokens }, 50);
      expect(capped.amount).toBe(3);
      expect(await ledger.balance(id)).toBe(5);
      // nothing used: no charge, the hold back
      const none = (await ledger.reserve(id, 4))!;
      await ledger.settle(none, { ...details("req_none"), fn: "chat-completions", tokens: { input: 0, output: 0 } }, 0);
      expect(none.amount).toBe(0);
      expect(await ledger.balance(id)).toBe(5);
      expect(await ledger.reserve(id, 5)).not.toBeNull();
      const usage = await ledger.monthToDate(id);
      expect(usage.credits_used).toBe(5);
      expect(usage.input_tokens).toBe(240);
      expect(usage.output_tokens).toBe(60);
      expect(usage.by_function).toEqual([
        { function: "chat-completions", requests: 2, credits: 5, cached: 0, input_tokens: 240, output_tokens: 60 },
      ]);
      const months = await ledger.monthly(id);
      expect(months[0]).toMatchObject({ credits_used: 5, input_tokens: 240, output_tokens: 60 });
    });

    test("chargedRequest names a charged request of the account, never a released one nor another account's", async () => {
      const { keys, ledger } = make();
      const { id } = await keys.createAccount({ credits: 5 });
      const { id: other } = await keys.createAccount({ credits: 5 });
      const tag = crypto.randomUUID();
      const released = (await ledger.reserve(id, 1))!;
      ledger.release(released);
      const paid = (await ledger.reserve(id, 1))!;
      await ledger.settle(paid, details(`req_paid_${tag}`));
      await ledger.charge(other, 1, details(`req_other_${tag}`));
      expect(await ledger.chargedRequest(id, [`req_released_${tag}`])).toBeNull();
      expect(await ledger.chargedRequest(id, [`req_released_${tag}`, `req_paid_${tag}`])).toBe(`req_paid_${tag}`);
      expect(await ledger.chargedRequest(id, [`req_other_${tag}`])).toBeNull();
      expect(await ledger.chargedRequest(other, [`req_other_${tag}`])).toBe(`req_other_${tag}`);
      expect(await ledger.chargedRequest(id, [])).toBeNull();
    });

    test("an Idempotency-Key call's charge is not applied once a retry's takeover voided its id; one applied first is found", async () => {
      const { keys, ledger } = make();
      const { id } = await keys.createAccount({ credits: 5 });
      const tag = crypto.randomUUID();
      const idem = (rid: string): ChargeDetails => ({ ...details(rid), idempotent: true });
      // overran its lease: the retry found it uncharged (and voided it) before its charge landed
      const late = (await ledger.reserve(id, 1))!;
      expect(await ledger.chargedRequest(id, [`req_late_${tag}`])).toBeNull();
      await ledger.settle(late, idem(`req_late_${tag}`));
      expect(late.amount).toBe(0);
      expect(late.remaining).toBe(5);
      expect(await ledger.balance(id)).toBe(5);
      expect(ledger.held(id)).toBe(0);
      expect(await ledger.chargedRequest(id, [`req_late_${tag}`])).toBeNull();
      // the same for an answer in hand (a cache hit)
      expect(await ledger.chargedRequest(id, [`req_hit_${tag}`])).toBeNull();
      expect(await ledger.charge(id, 1, idem(`req_hit_${tag}`))).toMatchObject({ amount: 0, remaining: 5 });
      // charged first: the retry's takeover finds it, and the void changes nothing
      const first = (await ledger.reserve(id, 2))!;
      await ledger.settle(first, idem(`req_first_${tag}`));
      expect(first).toMatchObject({ amount: 2, remaining: 3 });
      expect(await ledger.chargedRequest(id, [`req_first_${tag}`])).toBe(`req_first_${tag}`);
      expect(await ledger.balance(id)).toBe(3);
      // refused for want of credits: never charged, so a takeover finds nothing
      const { id: poor } = await keys.createAccount({ credits: 0 });
      expect(await ledger.charge(poor, 1, idem(`req_poor_${tag}`))).toBeNull();
      expect(await ledger.chargedRequest(poor, [`req_poor_${tag}`])).toBeNull();
      expect((await ledger.monthToDate(id)).requests).toBe(1);
    });

    test.skipIf(name !== "postgres")(
      "the void and the charge of one request id wait for each other: whichever commits first wins",
      async () => {
        const { keys, ledger } = make();
        const { id } = await keys.createAccount({ credits: 5 });
        const tag = crypto.randomUUID();
        const raw = new SQL(pgDb!.url);
        const conn = await raw.reserve();
        try {
          const pending = <T>(p: Promise<T>) => {
            let settled = false;
            p.then(
              () => (settled = true),
              () => (settled = true),
            );
            return () => settled;
          };
          // a retry's void in flight: the charge waits for it, then is not applied
          await conn`BEGIN`;
          await conn`INSERT INTO idempotent_charges (request_id, account_id, state, created_at) VALUES (${`req_a_${tag}`}, ${id}, 'void', 0)`;
          const late = (await ledger.reserve(id, 1))!;
          const settling = ledger.settle(late, { ...details(`req_a_${tag}`), idempotent: true });
          const done = pending(settling);
          await Bun.sleep(300);
          expect(done()).toBe(false);
          await conn`COMMIT`;
          await settling;
          expect(late.amount).toBe(0);
          expect(await ledger.balance(id)).toBe(5);
          // a charge committing: the takeover's void waits for it, then finds it
          await conn`BEGIN`;
          await conn`INSERT INTO idempotent_charges (request_id, account_id, state, created_at) VALUES (${`req_b_${tag}`}, ${id}, 'charged', 0)`;
          await conn`INSERT INTO ledger (account_id, amount, kind, function, request_id, created_at) VALUES (${id}, -1, 'charge', 'word-count', ${`req_b_${tag}`}, 0)`;
          const asking = Promise.resolve(ledger.chargedRequest(id, [`req_b_${tag}`]));
          const answered = pending(asking);
          await Bun.sleep(300);
          expect(answered()).toBe(false);
          await conn`COMMIT`;
          expect(await asking).toBe(`req_b_${tag}`);
        } finally {
          conn.release();
          await raw.close();
        }
      },
    );

    test.skipIf(name !== "postgres")(
      "holds are shared by every node: a call held on one node keeps its credits from the other's reserves, cache-hit charges and take-backs",
      async () => {
        const { keys, ledger, other } = make();
        const { id } = await keys.createAccount({ credits: 3 });
        const held = (await other!.ledger.reserve(id, 2))!;
        expect(held.remaining).toBe(1);
        expect(held.holdId).toBeString();
        const [row] = await pg!
          .sql`SELECT count(*)::int AS n, sum(amount)::int AS amount FROM credit_holds WHERE account_id = ${id}`;
        expect(row).toEqual({ n: 1, amount: 2 });
        expect(await ledger.reserve(id, 2)).toBeNull();
        expect(await ledger.charge(id, 2, details("req_h1"))).toBeNull();
        await expect(Promise.resolve().then(() => ledger.grant(id, -2, "grant", "take back"))).rejects.toMatchObject({
          code: "invalid_request",
          message: expect.stringContaining("calls in flight hold 2"),
        });
        expect((await ledger.charge(id, 1, details("req_h2")))?.remaining).toBe(2);
        expect(await ledger.reserve(id, 1)).toBeNull();
        // the charge removes the hold in the statement that debits the balance
        await other!.ledger.settle(held, details("req_h3"));
        expect(held.remaining).toBe(0);
        const [after] = await pg!.sql`SELECT count(*)::int AS n FROM credit_holds WHERE account_id = ${id}`;
        expect(after.n).toBe(0);
        expect(await ledger.balance(id)).toBe(0);
        // a failed call's release removes its hold (not awaited by the caller)
        await ledger.grant(id, 2, "grant", "more");
        const failed = (await ledger.reserve(id, 2))!;
        expect(await other!.ledger.reserve(id, 1)).toBeNull();
        ledger.release(failed);
        let gone = -1;
        for (let i = 0; i < 100 && gone !== 0; i++) {
          await Bun.sleep(10);
          [{ n: gone }] = await pg!.sql`SELECT count(*)::int AS n FROM credit_holds WHERE account_id = ${id}`;
        }
        expect(gone).toBe(0);
        expect((await other!.ledger.reserve(id, 2))?.remaining).toBe(0);
      },
    );

    test.skipIf(name !== "postgres")(
      "two nodes reserving and charging cache hits on one account at once admit exactly its balance, and every admitted call is charged",
      async () => {
        const { keys, ledger, other } = make();
        const nodeOf = (i: number) => (i % 2 ? other!.ledger : ledger);
        // rounds of 40 reserves and 20 cache-hit charges of 1 credit on 30, alternating nodes,
        // spread over a few ms so that charges' batches and reserves interleave
        for (let round = 0; round < 8; round++) {
          const { id } = await keys.createAccount({ credits: 30 });
          const out = await Promise.all(
            Array.from({ length: 60 }, async (_, i) => {
              await Bun.sleep(Math.random() * 4);
              if (i % 3 === 2) return { i, charged: (await nodeOf(i).charge(id, 1, details(`req_x${round}_${i}`))) !== null };
              return { i, r: await nodeOf(i).reserve(id, 1) };
            }),
          );
          const reserved = out.flatMap((o) => ("r" in o && o.r ? [{ i: o.i, r: o.r }] : []));
          const charged = out.filter((o) => "charged" in o && o.charged).length;
          expect(reserved.length + charged).toBe(30);
          // no admitted call is refused at its charge: nothing was promised twice
          await Promise.all(reserved.map(({ i, r }) => nodeOf(i).settle(r, details(`req_s${round}_${i}`))));
          expect(await ledger.balance(id)).toBe(0);
          const [rows] = await pg!.sql`SELECT count(*)::int AS n FROM ledger WHERE account_id = ${id} AND kind = 'charge'`;
          expect(rows.n).toBe(30);
          const [holds] = await pg!.sql`SELECT count(*)::int AS n FROM credit_holds WHERE account_id = ${id}`;
          expect(holds.n).toBe(0);
        }
      },
    );

    test.skipIf(name !== "postgres")(
      "a node's holds live while it runs (renewed) and stop counting one lease after it can no longer renew them",
      async () => {
        const { keys, ledger } = make();
        const { id } = await keys.createAccount({ credits: 3 });
        const pg3 = (pgPools as NonNullable<typeof pgPools>).open({ max: 2 });
        await pg3.migrated;
        const dying = new PostgresCreditLedger(pg3, { requestTimeoutMs: 300 });
        expect(dying.leaseMs).toBe(300);
        expect(await dying.reserve(id, 3)).not.toBeNull();
        // three leases later the hold still counts: its node renewed it
        await Bun.sleep(900);
        expect(await ledger.reserve(id, 1)).toBeNull();
        // the node goes away (its connections with it): nobody renews, nobody releases
        await pg3.close();
        const gone = performance.now();
        let r: Reservation | null = null;
        while (!r && performance.now() - gone < 3000) {
          await Bun.sleep(20);
          r = await ledger.reserve(id, 3);
        }
        const waited = performance.now() - gone;
        console.log(`a dead node's hold (lease 300 ms) stopped counting ${waited.toFixed(0)} ms after its node went away`);
        expect(r?.remaining).toBe(0);
        expect(waited).toBeLessThan(300 + 700);
        ledger.release(r!);
      },
    );

    test.skipIf(name !== "postgres")("two nodes charging one account at once never overspend it", async () => {
      const { keys, ledger, other } = make();
      const { id } = await keys.createAccount({ credits: 30 });
      const calls = Array.from({ length: 60 }, (_, i) => (i % 2 ? other!.ledger : ledger).charge(id, 1, details(`req_n${i}`)));
      const out = await Promise.all(calls);
      expect(out.filter((r) => r !== null).length).toBe(30);
      expect(await ledger.balance(id)).toBe(0);
      expect(await other!.ledger.balance(id)).toBe(0);
    });
  });
}

const limiters: [string, boolean, () => RateLimiter][] = [
  ["memory", true, () => new MemoryRateLimiter({ free: { "fn-a": 5 } })],
  ["redis", shared, () => new RedisRateLimiter(redis!, { free: { "fn-a": 5 } })],
  ["redis cluster", onCluster, () => new RedisRateLimiter(clustered!, { free: { "fn-a": 5 } })],
];
for (const [name, enabled, make] of limiters) {
  describe.skipIf(!enabled)(`RateLimiter contract: ${name}`, () => {
    test("a bucket of 5 admits exactly 5 of 15 concurrent calls; keys and functions are separate", async () => {
      const l = make();
      const key = `key_${crypto.randomUUID()}`;
      const ds = await Promise.all(Array.from({ length: 15 }, () => l.check(key, "free", "fn-a", "standard")));
      expect(ds.filter((d) => d.allowed).length).toBe(5);
      const refused = ds.find((d) => !d.allowed)!;
      expect(refused.limit).toBe(5);
      expect(refused.remaining).toBe(0);
      expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
      expect(refused.retryAfterSeconds).toBeLessThanOrEqual(12);
      expect((await l.check(`${key}-other`, "free", "fn-a", "standard")).allowed).toBe(true);
      const b = await l.check(key, "free", "fn-b", "standard");
      expect(b.allowed).toBe(true);
      expect(b.limit).toBe(60);
      expect(b.remaining).toBe(59);
    });
  });
}

const starters: [string, boolean, () => RedisLink][] = [
  ["redis", shared, () => redis!],
  ["redis cluster", onCluster, () => clustered!],
];
for (const [name, enabled, linkOf] of starters) {
  describe.skipIf(!enabled)(`CallStarter (a function call's first trip): ${name}`, () => {
    test("limits, then the Idempotency-Key claim, then the cache lookup, in one script; nothing after a refusal", async () => {
      const link = linkOf();
      const limiter = new RedisRateLimiter(link, {});
      const idem = new RedisIdempotencyStore(link, { ttlMs: 60_000, maxAnswerBytes: 1 << 16, leaseMs: 5000 });
      const cache = new RedisResponseCache(link, { ttlMs: 60_000, maxEntries: 10, maxEntryBytes: 1 << 16, lockMs: 5000 });
      const starter = new RedisCallStarter(link, limiter, idem, cache);
      const acct = `acc_${crypto.randomUUID()}`;
      const base = { accountId: acct, keyId: "key_1", fn: "fn-a", limit: 3, cacheKey: null };
      // a cache hit, looked up with the limit
      await cache.produceOnce(acct, "ck", async () => answer('{"x":1}'), adopt);
      const hit = await starter.start({ ...base, cacheKey: "ck" });
      expect(hit.account?.allowed).toBe(true);
      expect(hit.account?.remaining).toBe(2);
      expect(hit.own).toBeNull();
      expect(hit.hit?.json).toBe('{"x":1}');
      // an Idempotency-Key: claimed, then in flight for the next call, then replayed once kept
      const claim = { key: "order-1", bodyHash: "h1", requestId: "req_1" };
      expect((await starter.start({ ...base, idempotency: claim, cacheKey: "none" })).idempotency).toEqual({ state: "new" });
      const again = await starter.start({ ...base, idempotency: { ...claim, requestId: "req_2" }, cacheKey: "ck" });
      expect(again.idempotency).toEqual({ state: "in_flight" });
      // the cache is not looked up for a call its key refuses
      expect(again.hit).toBeUndefined();
      // the account's 3 are spent: refused, nothing claimed or looked up
      const refused = await starter.start({
        ...base,
        idempotency: { key: "order-2", bodyHash: "h", requestId: "req_3" },
        cacheKey: "ck",
      });
      expect(refused.account?.allowed).toBe(false);
      expect(refused.idempotency).toBeUndefined();
      expect(refused.hit).toBeUndefined();
      expect((await idem.begin(acct, "order-2", "h", "req_4")).state).toBe("new");
      // a key's own bucket first: its refusal leaves the account's untouched
      const other = `acc_${crypto.randomUUID()}`;
      const own = { ...base, accountId: other, keyLimit: 1 };
      const first = await starter.start(own);
      expect([first.own?.allowed, first.own?.limit, first.account?.remaining]).toEqual([true, 1, 2]);
      const second = await starter.start(own);
      expect(second.own?.allowed).toBe(false);
      expect(second.account).toBeNull();
      expect((await starter.start({ ...base, accountId: other })).account?.remaining).toBe(1);
      // the same buckets the limiter alone uses
      expect((await limiter.checkKey(other, "key_1", "fn-a", 1)).allowed).toBe(false);
    });
  });
}

const answer = (json: string): CachedAnswer & { attempts: string[] } => ({ json, provider: "p", model: "m", attempts: ["x"] });
const adopt = (hit: CachedAnswer) => ({ ...hit, attempts: [] as string[] });
const caches: [string, boolean, (ttlMs: number, maxEntries: number) => ResponseCache][] = [
  ["memory", true, (ttlMs, maxEntries) => new MemoryResponseCache({ ttlMs, maxEntries, maxBytes: 1 << 20 })],
  [
    "redis",
    shared,
    (ttlMs, maxEntries) => new RedisResponseCache(redis!, { ttlMs, maxEntries, maxEntryBytes: 1 << 16, lockMs: 5000 }),
  ],
  [
    "redis cluster",
    onCluster,
    (ttlMs, maxEntries) => new RedisResponseCache(clustered!, { ttlMs, maxEntries, maxEntryBytes: 1 << 16, lockMs: 5000 }),
  ],
];
for (const [name, enabled, make] of caches) {
  describe.skipIf(!enabled)(`ResponseCache contract: ${name}`, () => {
    test("single-flight, scoped by account, failures not kept, TTL and entry bound", async () => {
      const c = make(400, 3);
      const k = crypto.randomUUID();
      expect(await c.get("acc1", k)).toBeNull();
      let calls = 0;
      const produce = async () => {
        calls++;
        await Bun.sleep(50);
        return answer(`{"n":${calls}}`);
      };
      const all = await Promise.all(Array.from({ length: 5 }, () => c.produceOnce("acc1", k, produce, adopt)));
      expect(calls).toBe(1);
      expect(all.filter((r) => !r.shared).length).toBe(1);
      expect((await c.get("acc1", k))?.json).toBe('{"n":1}');
      expect(await c.get("acc2", k)).toBeNull();
      const failing = c.produceOnce("acc1", `${k}-f`, async () => Promise.reject(new Error("upstream down")), adopt);
      await expect(failing).rejects.toThrow("upstream down");
      expect(await c.get("acc1", `${k}-f`)).toBeNull();
      // bounded: the oldest of four goes
      for (const i of [1, 2, 3, 4]) await c.produceOnce("acc3", `${k}-${i}`, async () => answer(String(i)), adopt);
      expect(await c.get("acc3", `${k}-1`)).toBeNull();
      expect((await c.get("acc3", `${k}-4`))?.json).toBe("4");
      await Bun.sleep(500);
      expect(await c.get("acc3", `${k}-4`)).toBeNull();
    });
  });
}

const idempotency: [string, boolean, (ttlMs: number) => IdempotencyStore][] = [
  ["memory", true, (ttlMs) => new MemoryIdempotencyStore({ ttlMs, maxEntries: 100, maxBytes: 1 << 20 })],
  ["sqlite", true, (ttlMs) => new SqliteIdempotencyStore(sqlite.sqlite, { ttlMs, maxAnswerBytes: 100, leaseMs: 5000 })],
  ["redis", shared, (ttlMs) => new RedisIdempotencyStore(redis!, { ttlMs, maxAnswerBytes: 100, leaseMs: 5000 })],
  ["redis cluster", onCluster, (ttlMs) => new RedisIdempotencyStore(clustered!, { ttlMs, maxAnswerBytes: 100, leaseMs: 5000 })],
];
// The record of a claim whose process died: memory records die with their process, so only the
// stores a retry can outlive are held to this
const takeovers: [string, boolean, (leaseMs: number) => IdempotencyStore][] = [
  ["sqlite", true, (leaseMs) => new SqliteIdempotencyStore(sqlite.sqlite, { ttlMs: 60_000, maxAnswerBytes: 100, leaseMs })],
  ["redis", shared, (leaseMs) => new RedisIdempotencyStore(redis!, { ttlMs: 60_000, maxAnswerBytes: 100, leaseMs })],
  [
    "redis cluster",
    onCluster,
    (leaseMs) => new RedisIdempotencyStore(clustered!, { ttlMs: 60_000, maxAnswerBytes: 100, leaseMs }),
  ],
];
for (const [name, enabled, make] of takeovers) {
  describe.skipIf(!enabled)(`IdempotencyStore takeover: ${name}`, () => {
    test("a claim past its lease is taken over, and the new claim learns every earlier claim's request id", async () => {
      const s = make(150);
      const k = crypto.randomUUID();
      expect(await s.begin("acc", k, "h", "req_a")).toEqual({ state: "new" });
      expect((await s.begin("acc", k, "h", "req_b")).state).toBe("in_flight");
      await Bun.sleep(200);
      expect(await s.begin("acc", k, "h", "req_b")).toEqual({ state: "new", earlier: ["req_a"] });
      // a failed run of a taken-over key keeps the ids: the next retry still asks about req_a
      await s.abandon("acc", k);
      expect(await s.begin("acc", k, "h", "req_c")).toEqual({ state: "new", earlier: ["req_a", "req_b"] });
      await s.complete("acc", k, { status: 200, body: "{}", headers: {} });
      expect((await s.begin("acc", k, "h", "req_d")).state).toBe("replay");
      // a key that was never taken over is freed whole by a failure, as before
      const f = `${k}-f`;
      expect(await s.begin("acc", f, "h", "req_e")).toEqual({ state: "new" });
      await s.abandon("acc", f);
      expect(await s.begin("acc", f, "h2", "req_f")).toEqual({ state: "new" });
    });
  });
}

for (const [name, enabled, make] of idempotency) {
  describe.skipIf(!enabled)(`IdempotencyStore contract (real clock): ${name}`, () => {
    test("new, in flight, replay, mismatch, abandon, expiry", async () => {
      const s = make(400);
      const k = crypto.randomUUID();
      const res = { status: 200, body: '{"ok":1}', headers: { "x-a": "b" } };
      expect((await s.begin("acc", k, "h", "req-1")).state).toBe("new");
      expect((await s.begin("acc", k, "h", "req-1")).state).toBe("in_flight");
      expect((await s.begin("other", k, "h", "req-1")).state).toBe("new");
      await s.complete("acc", k, res);
      expect(await s.begin("acc", k, "h", "req-1")).toEqual({ state: "replay", response: res });
      expect((await s.begin("acc", k, "h2", "req-1")).state).toBe("mismatch");
      expect((await s.begin("acc", `${k}-f`, "h", "req-1")).state).toBe("new");
      await s.abandon("acc", `${k}-f`);
      expect((await s.begin("acc", `${k}-f`, "h", "req-1")).state).toBe("new");
      await Bun.sleep(500);
      expect((await s.begin("acc", k, "h2", "req-1")).state).toBe("new");
    });
  });
}

const logRecord = (accountId: string, i: number, o: Partial<RequestRecord> = {}): RequestRecord => ({
  requestId: `req_${accountId}_${String(i).padStart(3, "0")}`,
  time: 1_790_000_000_000 + Math.floor(i / 3) * 1000, // three entries per instant: ties broken by request id
  accountId,
  keyId: i % 2 ? "key_odd" : "key_even",
  method: "POST",
  path: "/api/v1/ai/sentiment-analysis",
  function: i % 4 === 0 ? "text-summarize" : "sentiment-analysis",
  status: i % 5 === 0 ? 429 : 200,
  errorCode: i % 5 === 0 ? "rate_limited" : null,
  provider: "local",
  model: "local",
  latencyMs: 12,
  credits: 1,
  cache: i % 3 === 0 ? "HIT" : "MISS",
  promptTokens: null,
  completionTokens: null,
  idempotentReplay: false,
  guardrails: null,
  ...o,
});
const logStores: [string, boolean, () => RequestLogStore][] = [
  ["sqlite", true, () => new SqliteRequestLogStore(sqlite.sqlite)],
  ["postgres", shared, () => new PostgresRequestLogStore(pg!)],
];
for (const [name, enabled, make] of logStores) {
  describe.skipIf(!enabled)(`RequestLogStore contract: ${name}`, () => {
    test("insert, every field back, duplicates kept once, get scoped by account", async () => {
      const s = make();
      const acc = `acc_${crypto.randomUUID().slice(0, 8)}`;
      const full = logRecord(acc, 1, {
        promptTokens: 12,
        completionTokens: 34,
        idempotentReplay: true,
        guardrails: { pii: 2, injection: 1 },
        cache: null,
        function: null,
      });
      await s.insert([full, logRecord(acc, 2)]);
      await s.insert([{ ...full, status: 500 }]);
      const got = await s.get(full.requestId);
      expect(got).toEqual({
        request_id: full.requestId,
        time: new Date(full.time).toISOString(),
        account_id: acc,
        key_id: "key_odd",
        method: "POST",
        path: "/api/v1/ai/sentiment-analysis",
        function: null,
        status: 200,
        error_code: null,
        provider: "local",
        model: "local",
        latency_ms: 12,
        credits: 1,
        cache: null,
        prompt_tokens: 12,
        completion_tokens: 34,
        idempotent_replay: true,
        guardrails: { pii: 2, injection: 1 },
      });
      expect(await s.get(full.requestId, acc)).not.toBeNull();
      expect(await s.get(full.requestId, "acc_other")).toBeNull();
      expect(await s.get("req_none")).toBeNull();
    });

    test("filters, newest first, and cursor pages that miss and repeat nothing", async () => {
      const s = make();
      const acc = `acc_${crypto.randomUUID().slice(0, 8)}`;
      const rows = Array.from({ length: 40 }, (_, i) => logRecord(acc, i));
      await s.insert(rows.slice(0, 25));
      await s.insert(rows.slice(25));
      await s.insert([logRecord(`${acc}x`, 7)]);
      const ids = (xs: { request_id: string }[]) => xs.map((x) => x.request_id);
      const newestFirst = [...rows]
        .sort((a, b) => b.time - a.time || (a.requestId < b.requestId ? 1 : -1))
        .map((r) => r.requestId);
      expect(ids(await s.page({ accountId: acc, limit: 100 }))).toEqual(newestFirst);
      const want = (pred: (r: RequestRecord) => boolean) =>
        newestFirst.filter((id) => pred(rows.find((r) => r.requestId === id)!));
      expect(ids(await s.page({ accountId: acc, function: "text-summarize", limit: 100 }))).toEqual(
        want((r) => r.function === "text-summarize"),
      );
      expect(ids(await s.page({ accountId: acc, keyId: "key_odd", limit: 100 }))).toEqual(want((r) => r.keyId === "key_odd"));
      expect(ids(await s.page({ accountId: acc, statusMin: 429, statusMax: 429, limit: 100 }))).toEqual(
        want((r) => r.status === 429),
      );
      expect(ids(await s.page({ accountId: acc, statusMin: 200, statusMax: 299, limit: 100 }))).toEqual(
        want((r) => r.status < 300),
      );
      const from = rows[9].time;
      const to = rows[30].time;
      expect(ids(await s.page({ accountId: acc, from, to, limit: 100 }))).toEqual(want((r) => r.time >= from && r.time < to));
      // all accounts (the admin's view) holds the other account's entry too
      expect((await s.page({ limit: 1000 })).some((e) => e.account_id === `${acc}x`)).toBe(true);
      // pages of 7 through ties of time: every entry once, in order
      const seen: string[] = [];
      let q = { accountId: acc, limit: 7 } as Parameters<RequestLogStore["page"]>[0];
      for (let n = 0; n < 20; n++) {
        const page = await readPage(async (x) => s.page(x), q);
        seen.push(...ids(page.data));
        if (!page.next_cursor) break;
        q = { ...q, cursor: decodeCursor(page.next_cursor) };
      }
      expect(seen).toEqual(newestFirst);
    });

    test("prune deletes only what is older, at most max at a time; the recorder writes in batches and on stop", async () => {
      const s = make();
      const acc = `acc_${crypto.randomUUID().slice(0, 8)}`;
      await s.insert(Array.from({ length: 12 }, (_, i) => logRecord(acc, i, { time: 1000 + i })));
      await s.insert([logRecord(acc, 99, { time: Date.now() })]);
      expect(await s.prune(1005, 3)).toBe(3);
      expect(await s.prune(1005, 100)).toBe(2);
      expect(await s.prune(1005, 100)).toBe(0);
      const left = await s.page({ accountId: acc, limit: 100 });
      expect(left.length).toBe(8);
      expect(left.every((e) => Date.parse(e.time) >= 1005)).toBe(true);
      // the recorder: nothing is written until a flush; stop writes what is left; old entries pruned
      const log = new RequestLog(s, { retentionDays: 1, batch: 4, flushEveryMs: 60_000 });
      const acc2 = `${acc}r`;
      for (let i = 0; i < 10; i++) log.record(logRecord(acc2, i, { time: Date.now() }));
      expect(log.backlog).toBe(10);
      expect((await s.page({ accountId: acc2, limit: 100 })).length).toBe(0);
      await log.stop();
      expect(log.backlog).toBe(0);
      expect((await s.page({ accountId: acc2, limit: 100 })).length).toBe(10);
      // past the retention (1 day): the 7 left above, and the earlier tests' entries, 4 at a time
      expect(await new RequestLog(s, { retentionDays: 1, batch: 4 }).prune()).toBeGreaterThanOrEqual(7);
      expect((await s.page({ accountId: acc, limit: 100 })).map((e) => e.request_id)).toEqual([logRecord(acc, 99).requestId]);
    });
  });
}

// The cache's STORE of the versions before the per-account index: one index of every answer.
const OLD_STORE = `
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], KEYS[1])
return 1
`;
test("Redis names under the default prefix are those of every version before TEXTAI_REDIS_PREFIX", () => {
  const one = new RedisLink("redis://127.0.0.1:1");
  expect(one.prefix).toBe(DEFAULT_REDIS_PREFIX);
  expect(DEFAULT_REDIS_PREFIX).toBe("textai");
  expect(one.accountKey("acc_1", "rl", "fn-a")).toBe("textai:rl:acc_1:fn-a");
  expect(one.key("nodes")).toBe("textai:nodes");
  expect(new RedisLink("redis://127.0.0.1:1", undefined, { prefix: "p-1" }).accountKey("acc_1", "cache", "d")).toBe(
    "p-1:cache:acc_1:d",
  );
});

// (the test's link has a prefix of its own, `p` below; under the default prefix, `textai`, the
// names are those of every version, as the test above shows)
describe.skipIf(!shared)("one Redis: the names of earlier versions (a rolling upgrade shares them)", () => {
  test("buckets, Idempotency-Key records and answers keep their names; an answer stored by an old node is a HIT on a new one", async () => {
    const acc = `acc_${crypto.randomUUID()}`;
    const p = redis!.prefix;
    const limiter = new RedisRateLimiter(redis!, { free: { "fn-a": 5 } });
    await limiter.check(acc, "free", "fn-a", "standard");
    expect(await redis!.send("HGET", [`${p}:rl:${acc}:fn-a`, "tokens"])).toBe("4");
    const idem = new RedisIdempotencyStore(redis!, { ttlMs: 60_000, maxAnswerBytes: 100, leaseMs: 5000 });
    await idem.begin(acc, "k-1", "h", "req_1");
    const sha = new Bun.CryptoHasher("sha256").update("k-1").digest("hex");
    expect(await redis!.send("HGET", [`${p}:idem:${acc}:${sha}`, "status"])).toBe("in_flight");
    // an old node's answer, indexed in the old global index
    const cache = new RedisResponseCache(redis!, { ttlMs: 60_000, maxEntries: 10, maxEntryBytes: 1 << 16, lockMs: 5000 });
    const value = JSON.stringify({ json: '{"old":1}', provider: "p", model: "m" });
    await redis!.eval(OLD_STORE, [`${p}:cache:${acc}:d1`, `${p}:cache:index`], [value, "60000", String(Date.now())]);
    expect((await cache.get(acc, "d1"))?.json).toBe('{"old":1}');
    // a new node's answer, under the same name, readable by an old node's GET
    await cache.produceOnce(acc, "d2", async () => answer('{"new":1}'), adopt);
    expect(JSON.parse((await redis!.send<string>("GET", [`${p}:cache:${acc}:d2`])) ?? "{}").json).toBe('{"new":1}');
    expect(Number(await redis!.send("ZCARD", [`${p}:cacheidx:${acc}`]))).toBe(1);
    expect(Number(await redis!.send("PTTL", [`${p}:cacheidx:${acc}`]))).toBeGreaterThan(0);
    await redis!.send("DEL", [`${p}:cache:index`]);
  });
});

describe("PostgreSQL migrations", () => {
  test("every generated PostgreSQL migration is embedded", async () => {
    const { PG_MIGRATIONS } = await import("../../src/storage/migrations-pg");
    const journal = JSON.parse(await Bun.file(new URL("../../drizzle/pg/meta/_journal.json", import.meta.url)).text()) as {
      entries: { tag: string }[];
    };
    expect(PG_MIGRATIONS.map((m) => m.tag)).toEqual(journal.entries.map((e) => e.tag));
    for (const m of PG_MIGRATIONS)
      expect(m.sql).toBe(await Bun.file(new URL(`../../drizzle/pg/${m.tag}.sql`, import.meta.url)).text());
  });

  test.skipIf(!shared)("five nodes starting at once on an empty database migrate it once", async () => {
    const db = await freshDatabase();
    const via = await storesOn(db.url);
    const pools = Array.from({ length: 5 }, () => via.open({ max: 2 }));
    try {
      await Promise.all(pools.map((p) => p.migrated));
      const rows = await pools[0].sql`SELECT tag FROM _migrations`;
      const { PG_MIGRATIONS } = await import("../../src/storage/migrations-pg");
      expect(rows.map((r: { tag: string }) => r.tag)).toEqual(PG_MIGRATIONS.map((m) => m.tag));
    } finally {
      await Promise.all(pools.map((p) => p.close()));
      await via.stop();
      await db.drop();
    }
  });
});
