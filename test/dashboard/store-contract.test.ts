/**
 * The DashboardStore contract, run against SQLite and PostgreSQL (the latter needs the shared
 * servers of test/helpers/shared-servers.ts: it skips loudly without them, except under CI=true;
 * through a pgbouncer in transaction mode with TEXTAI_TEST_VIA_PGBOUNCER=1).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { KeyStore } from "../../src/auth/interface";
import { PostgresKeyStore } from "../../src/auth/postgres";
import { SqliteKeyStore } from "../../src/auth/sqlite";
import { PostgresCreditLedger } from "../../src/credits/postgres";
import { SqliteCreditLedger } from "../../src/credits/sqlite";
import type { DashboardStore, SessionLimits } from "../../src/dashboard/interface";
import { PostgresDashboardStore } from "../../src/dashboard/postgres";
import { SqliteDashboardStore } from "../../src/dashboard/sqlite";
import { openStorage, type Storage } from "../../src/storage/db";
import type { PgStorage } from "../../src/storage/postgres";
import { storesOn } from "../helpers/pgbouncer";
import { freshDatabase, sharedServersUp } from "../helpers/shared-servers";

/** `ms` of idle time for both kinds, a lifetime long enough not to matter */
const idle = (ms: number): SessionLimits => ({
  account: { idleMs: ms, lifetimeMs: 1e12 },
  operator: { idleMs: ms, lifetimeMs: 1e12 },
});

const shared = await sharedServersUp("the dashboard store contract on PostgreSQL");
let sqlite: Storage;
let pgDb: Awaited<ReturnType<typeof freshDatabase>> | null = null;
let pg: PgStorage | null = null;
let pgPools: Awaited<ReturnType<typeof storesOn>> | null = null;

beforeAll(async () => {
  sqlite = openStorage(":memory:");
  if (!shared) return;
  pgDb = await freshDatabase();
  pgPools = await storesOn(pgDb.url);
  pg = pgPools.open();
  await pg.migrated;
});
afterAll(async () => {
  await pg?.close();
  await pgPools?.stop();
  await pgDb?.drop();
  sqlite.close();
});

const implementations: {
  name: string;
  skip: boolean;
  make(): {
    store: DashboardStore;
    keys: KeyStore;
    grant: (a: string, n: number) => unknown;
    /** a /v1-style charge with its tokens */
    charge: (a: string, n: number, tokens: { input: number; output: number }) => Promise<unknown>;
  };
}[] = [
  {
    name: "SQLite",
    skip: false,
    make() {
      const ledger = new SqliteCreditLedger(sqlite);
      return {
        store: new SqliteDashboardStore(sqlite.sqlite),
        keys: new SqliteKeyStore(sqlite, ledger, { welcomeCredits: 5 }),
        grant: (a, n) => ledger.grant(a, n, "grant", "contract"),
        charge: (a, n, tokens) =>
          ledger.charge(a, n, {
            keyId: "key_x",
            fn: "chat-completions",
            requestId: `req_${crypto.randomUUID()}`,
            provider: "p",
            cached: false,
            tokens,
          }),
      };
    },
  },
  {
    name: "PostgreSQL",
    skip: !shared,
    make() {
      const ledger = new PostgresCreditLedger(pg!);
      return {
        store: new PostgresDashboardStore(pg!),
        keys: new PostgresKeyStore(pg!, ledger, { welcomeCredits: 5 }),
        grant: (a, n) => ledger.grant(a, n, "grant", "contract"),
        charge: (a, n, tokens) =>
          ledger.charge(a, n, {
            keyId: "key_x",
            fn: "chat-completions",
            requestId: `req_${crypto.randomUUID()}`,
            provider: "p",
            cached: false,
            tokens,
          }),
      };
    },
  },
];

for (const impl of implementations) {
  describe.skipIf(impl.skip)(`DashboardStore contract: ${impl.name}`, () => {
    test("logins: one email per member, lower-cased, the account's first owner; replacing a login or a password ends the sessions", async () => {
      const { store, keys } = impl.make();
      const a = await keys.createAccount({ name: "Alpha" });
      const b = await keys.createAccount({ name: "Beta" });
      expect(await store.setLogin(a.id, "Alpha@Example.com", "hash-a")).toBe(true);
      const first = await store.loginByEmail("alpha@example.COM".toLowerCase());
      expect(first).toEqual({
        accountId: a.id,
        memberId: expect.stringMatching(/^mem_/),
        role: "owner",
        email: "alpha@example.com",
        passwordHash: "hash-a",
      });
      const memberId = first?.memberId;
      expect(await store.setLogin(b.id, "alpha@example.com", "hash-b")).toBe(false);
      expect(await store.loginOf(b.id)).toBeNull();
      const t = Date.now();
      await store.createSession({
        tokenHash: `s1-${a.id}`,
        accountId: a.id,
        memberId,
        kind: "account",
        createdAt: t,
        lastSeenAt: t,
      });
      await store.createSession({
        tokenHash: `s2-${a.id}`,
        accountId: a.id,
        memberId,
        kind: "account",
        createdAt: t,
        lastSeenAt: t,
      });
      expect(await store.touchSession(`s1-${a.id}`, t + 1000, idle(60_000))).toMatchObject({ accountId: a.id, memberId });
      await store.setPassword(a.id, "hash-a2");
      expect((await store.loginOf(a.id))?.passwordHash).toBe("hash-a2");
      expect(await store.touchSession(`s1-${a.id}`, t + 1000, idle(60_000))).toBeNull();
      expect(await store.touchSession(`s2-${a.id}`, t + 1000, idle(60_000))).toBeNull();
      await store.createSession({ tokenHash: `s3-${a.id}`, accountId: a.id, kind: "account", createdAt: t, lastSeenAt: t });
      expect(await store.setLogin(a.id, "alpha2@example.com", "hash-a3")).toBe(true);
      expect(await store.touchSession(`s3-${a.id}`, t, idle(60_000))).toBeNull();
      expect(await store.loginByEmail("alpha@example.com")).toBeNull();
    });

    test("members: invitations used once, before they expire, in their own account; the last owner stays; a removed member's sessions end", async () => {
      const { store, keys } = impl.make();
      const by = { actor: "cli", client: null };
      const a = await keys.createAccount({ name: "Members A" });
      const b = await keys.createAccount({ name: "Members B" });
      const tag = Math.random().toString(36).slice(2);
      expect(await store.setLogin(a.id, `owner-${tag}@a.example`, "hash-owner")).toBe(true);
      const [owner] = await store.listMembers(a.id);
      expect(owner).toMatchObject({ accountId: a.id, email: `owner-${tag}@a.example`, role: "owner", name: null });
      const now = Date.now();
      const invited = await store.invite(a.id, `Dev-${tag}@a.example`, "developer", `h1-${tag}`, now + 60_000, by);
      expect(invited).toMatchObject({ ok: true, expiresAt: now + 60_000 });
      expect(await store.invite("acc_none", `x-${tag}@a.example`, "viewer", `h0-${tag}`, now + 60_000, by)).toEqual({
        ok: false,
        reason: "unknown_account",
      });
      expect(await store.invite(b.id, `owner-${tag}@a.example`, "viewer", `h0-${tag}`, now + 60_000, by)).toEqual({
        ok: false,
        reason: "taken",
      });
      expect(await store.invitationOf(`h1-${tag}`)).toMatchObject({
        accountId: a.id,
        email: `dev-${tag}@a.example`,
        role: "developer",
        usedAt: null,
      });
      expect(await store.acceptInvitation(b.id, `h1-${tag}`, "hash-dev", null, now, null)).toEqual({
        ok: false,
        reason: "wrong_account",
      });
      expect(await store.acceptInvitation(a.id, "no-such-hash", "hash-dev", null, now, null)).toEqual({
        ok: false,
        reason: "unknown",
      });
      expect(await store.acceptInvitation(a.id, `h1-${tag}`, "hash-dev", null, now + 60_000, null)).toEqual({
        ok: false,
        reason: "expired",
      });
      const joined = await store.acceptInvitation(a.id, `h1-${tag}`, "hash-dev", "Dee", now, "10.0.0.1");
      if (!joined.ok) throw new Error(`not joined: ${joined.reason}`);
      expect(joined.member).toMatchObject({ accountId: a.id, email: `dev-${tag}@a.example`, role: "developer", name: "Dee" });
      expect(await store.acceptInvitation(a.id, `h1-${tag}`, "hash-dev", null, now, null)).toEqual({ ok: false, reason: "used" });
      expect(await store.loginByEmail(`dev-${tag}@a.example`)).toMatchObject({
        memberId: joined.member.id,
        role: "developer",
        passwordHash: "hash-dev",
      });
      const dev = joined.member.id;
      // the last owner: never demoted, never removed; another account's member is not found here
      expect(await store.setRole(a.id, owner?.id as string, "admin", by)).toEqual({ ok: false, reason: "last_owner" });
      expect(await store.removeMember(a.id, owner?.id as string, by)).toEqual({ ok: false, reason: "last_owner" });
      expect(await store.setRole(b.id, dev, "viewer", by)).toEqual({ ok: false, reason: "not_found" });
      expect(await store.setRole(a.id, dev, "owner", by)).toMatchObject({ ok: true, member: { role: "owner" } });
      expect(await store.setRole(a.id, owner?.id as string, "viewer", by)).toMatchObject({
        ok: true,
        member: { role: "viewer" },
      });
      expect(await store.removeMember(a.id, dev, by)).toEqual({ ok: false, reason: "last_owner" });
      // key owners: the keys a member made
      const k = await keys.createKey({ label: "dev's", accountId: a.id });
      await store.setKeyOwner(k.id, dev);
      expect(await store.keysOwnedBy(dev)).toEqual([k.id]);
      expect(await store.keysOwnedBy(owner?.id as string)).toEqual([]);
      // a removed member's sessions end with it
      const t = Date.now();
      const viewer = owner?.id as string;
      await store.createSession({
        tokenHash: `m1-${tag}`,
        accountId: a.id,
        memberId: viewer,
        kind: "account",
        createdAt: t,
        lastSeenAt: t,
      });
      expect(await store.touchSession(`m1-${tag}`, t, idle(60_000))).toMatchObject({ memberId: viewer });
      expect(await store.removeMember(a.id, viewer, by)).toMatchObject({ ok: true, member: { id: viewer } });
      expect(await store.touchSession(`m1-${tag}`, t, idle(60_000))).toBeNull();
      expect(await store.memberById(viewer)).toBeNull();
      expect((await store.listMembers(a.id)).map((m) => [m.id, m.role])).toEqual([[dev, "owner"]]);
    });

    test("members: a member's change commits only while it is an owner (checked in the change's transaction); ssoMember finds or makes", async () => {
      const { store, keys } = impl.make();
      const cli = { actor: "cli", client: null };
      const a = await keys.createAccount({ name: "Owners A" });
      const b = await keys.createAccount({ name: "Owners B" });
      const tag = Math.random().toString(36).slice(2);
      expect(await store.setLogin(a.id, `first-${tag}@o.example`, "hash-1")).toBe(true);
      const [first] = await store.listMembers(a.id);
      const login = (sub: string, email: string, name: string | null = null) => ({
        issuer: "https://idp.example",
        subject: `${sub}-${tag}`,
        email,
        name,
      });
      // three owners: first, second, third (made by single sign-on, as owners)
      const made = async (name: string) => {
        const r = await store.ssoMember(a.id, login(name, `${name}-${tag}@O.example`, name), "owner", Date.now(), null);
        if (!r.ok || !r.created) throw new Error(`not made: ${JSON.stringify(r)}`);
        expect(r.member).toMatchObject({ email: `${name}-${tag}@o.example`, role: "owner" });
        return r.member.id;
      };
      const second = await made("second");
      const third = await made("third");
      // found again, not made twice; never across accounts; never into an account that does not exist
      expect(await store.ssoMember(a.id, login("second", `second-${tag}@o.example`), "viewer", Date.now(), null)).toMatchObject({
        ok: true,
        created: false,
        member: { id: second, role: "owner" },
      });
      expect(await store.ssoMember(b.id, login("second", `second-${tag}@o.example`), "viewer", Date.now(), null)).toEqual({
        ok: false,
        reason: "other_account",
      });
      expect(await store.ssoMember("acc_none", login("nobody", `nobody-${tag}@o.example`), "viewer", Date.now(), null)).toEqual({
        ok: false,
        reason: "unknown_account",
      });
      // matched by subject: another subject with a bound member's email is refused, not signed in as it
      expect(await store.ssoMember(a.id, login("mallory", `SECOND-${tag}@o.example`), "viewer", Date.now(), null)).toEqual({
        ok: false,
        reason: "bound_elsewhere",
      });
      // a member never bound (the password login) is bound by its email once; then only its subject is it
      const firstEmail = `first-${tag}@o.example`;
      expect(await store.ssoMember(a.id, login("first", firstEmail), "viewer", Date.now(), null)).toMatchObject({
        ok: true,
        created: false,
        member: { id: first?.id, email: firstEmail },
      });
      expect(await store.ssoMember(a.id, login("imposter", firstEmail), "viewer", Date.now(), null)).toEqual({
        ok: false,
        reason: "bound_elsewhere",
      });
      // the subject's email changed at the provider: the same member, its email moved (kept when another member has it)
      const moved = await store.ssoMember(a.id, login("second", `second.new-${tag}@o.example`), "viewer", Date.now(), null);
      expect(moved).toMatchObject({ ok: true, created: false, member: { id: second, email: `second.new-${tag}@o.example` } });
      expect((await store.memberById(second))?.email).toBe(`second.new-${tag}@o.example`);
      const kept = await store.ssoMember(a.id, login("second", firstEmail), "viewer", Date.now(), null);
      expect(kept).toMatchObject({
        ok: true,
        member: { id: second, email: `second.new-${tag}@o.example` },
        emailKept: firstEmail,
      });
      // first demotes second; second's change, checked as an owner's a moment before, now commits nothing
      const asFirst = { actor: first?.id as string, client: null };
      const asSecond = { actor: second, client: null };
      expect(await store.setRole(a.id, second, "admin", asFirst)).toMatchObject({ ok: true, member: { role: "admin" } });
      expect(await store.setRole(a.id, third, "viewer", asSecond)).toEqual({ ok: false, reason: "forbidden" });
      expect(await store.removeMember(a.id, third, asSecond)).toEqual({ ok: false, reason: "forbidden" });
      expect(await store.invite(a.id, `late-${tag}@o.example`, "owner", `inv-${tag}`, Date.now() + 60_000, asSecond)).toEqual({
        ok: false,
        reason: "forbidden",
      });
      // an owner of another account is no owner here; the CLI and the admin token have no member behind them
      expect(await store.setRole(a.id, third, "viewer", { actor: "mem_of_another_account", client: null })).toEqual({
        ok: false,
        reason: "forbidden",
      });
      expect(await store.setRole(a.id, third, "developer", asFirst)).toMatchObject({ ok: true, member: { role: "developer" } });
      expect(await store.setRole(a.id, second, "owner", cli)).toMatchObject({ ok: true, member: { role: "owner" } });
      expect(await store.removeMember(a.id, third, asSecond)).toMatchObject({ ok: true, member: { id: third } });
      expect((await store.listMembers(a.id)).map((m) => m.role).sort()).toEqual(["owner", "owner"]);
    });

    test("keyMaker: a key's maker and its role now, read by the key's id (no member for the admin API's keys; null role once removed)", async () => {
      const { store, keys } = impl.make();
      const by = { actor: "cli", client: null };
      const a = await keys.createAccount({ name: "Makers A" });
      const b = await keys.createAccount({ name: "Makers B" });
      const tag = Math.random().toString(36).slice(2);
      expect(await store.setLogin(a.id, `maker-${tag}@a.example`, "hash-owner")).toBe(true);
      expect(await store.setLogin(b.id, `maker-${tag}@b.example`, "hash-owner")).toBe(true);
      const [owner] = await store.listMembers(a.id);
      const [otherOwner] = await store.listMembers(b.id);
      await store.invite(a.id, `adm-${tag}@a.example`, "admin", `mk-${tag}`, Date.now() + 60_000, by);
      const joined = await store.acceptInvitation(a.id, `mk-${tag}`, "hash-adm", null, Date.now(), null);
      if (!joined.ok) throw new Error(`not joined: ${joined.reason}`);
      const adm = joined.member.id;
      expect(await keys.keyMaker("key_none")).toBeNull();
      const byAdminApi = await keys.createKey({ label: "admin API's", accountId: a.id });
      expect(await keys.keyMaker(byAdminApi.id)).toEqual({ memberId: null, role: null });
      const byOwner = await keys.createKey({ label: "owner's", accountId: a.id });
      await store.setKeyOwner(byOwner.id, owner?.id as string);
      expect(await keys.keyMaker(byOwner.id)).toEqual({ memberId: owner?.id as string, role: "owner" });
      const byAdm = await keys.createKey({ label: "admin's", accountId: a.id });
      await store.setKeyOwner(byAdm.id, adm);
      expect(await keys.keyMaker(byAdm.id)).toEqual({ memberId: adm, role: "admin" });
      // the role now: a demotion is read at once
      await store.setRole(a.id, adm, "developer", by);
      expect(await keys.keyMaker(byAdm.id)).toEqual({ memberId: adm, role: "developer" });
      // a maker of another account (never made by the dashboard, which sets its own member) is no member of this key's account
      const crossed = await keys.createKey({ label: "crossed", accountId: a.id });
      await store.setKeyOwner(crossed.id, otherOwner?.id as string);
      expect(await keys.keyMaker(crossed.id)).toEqual({ memberId: otherOwner?.id as string, role: null });
      // removed: the key stays its maker's, with no role
      await store.removeMember(a.id, adm, by);
      expect(await keys.keyMaker(byAdm.id)).toEqual({ memberId: adm, role: null });
      // a revoked key is still known (the route sees only active keys)
      await keys.revoke(byOwner.id, a.id);
      expect(await keys.keyMaker(byOwner.id)).toEqual({ memberId: owner?.id as string, role: "owner" });
    });

    test("sessions: idle ones end, sign-out deletes, last-seen moves at most once a minute", async () => {
      const { store } = impl.make();
      const t = 1_800_000_000_000;
      const h = `op-${Math.random()}`;
      await store.createSession({ tokenHash: h, accountId: null, kind: "operator", createdAt: t, lastSeenAt: t });
      expect((await store.touchSession(h, t + 30_000, idle(3600_000)))?.lastSeenAt).toBe(t);
      expect((await store.touchSession(h, t + 3000_000, idle(3600_000)))?.lastSeenAt).toBe(t + 3000_000);
      expect(await store.touchSession(h, t + 3000_000 + 3600_001, idle(3600_000))).toBeNull();
      const h2 = `op2-${Math.random()}`;
      await store.createSession({ tokenHash: h2, accountId: null, kind: "operator", createdAt: t, lastSeenAt: t });
      await store.deleteSession(h2);
      expect(await store.touchSession(h2, t, idle(3600_000))).toBeNull();
    });

    test("sessions: each kind ends at its lifetime whatever the activity; the sweep deletes ended ones unseen", async () => {
      const { store } = impl.make();
      const t = 1_900_000_000_000 + Math.floor(Math.random() * 1e9);
      const limits: SessionLimits = {
        account: { idleMs: 3600_000, lifetimeMs: 10 * 3600_000 },
        operator: { idleMs: 3600_000, lifetimeMs: 2 * 3600_000 },
      };
      const tag = Math.random().toString(36).slice(2);
      const [acc, op, idleOne, fresh] = ["acc", "op", "idle", "fresh"].map((n) => `${n}-${tag}`);
      await store.createSession({ tokenHash: acc, accountId: null, kind: "account", createdAt: t, lastSeenAt: t });
      await store.createSession({ tokenHash: op, accountId: null, kind: "operator", createdAt: t, lastSeenAt: t });
      // active every 50 minutes: the idle time never runs out
      for (let m = 50; m < 120; m += 50) {
        expect((await store.touchSession(acc, t + m * 60_000, limits))?.kind).toBe("account");
        expect((await store.touchSession(op, t + m * 60_000, limits))?.kind).toBe("operator");
      }
      // the operator's ends two hours after it began, the holder's goes on
      expect(await store.touchSession(op, t + 150 * 60_000, limits)).toBeNull();
      expect((await store.touchSession(acc, t + 150 * 60_000, limits))?.kind).toBe("account");
      // the sweep: ended sessions go without being presented, live ones stay
      const later = t + 11 * 3600_000;
      await store.createSession({
        tokenHash: idleOne,
        accountId: null,
        kind: "account",
        createdAt: later - 2 * 3600_000,
        lastSeenAt: later - 2 * 3600_000,
      });
      await store.createSession({ tokenHash: fresh, accountId: null, kind: "account", createdAt: later, lastSeenAt: later });
      expect(await store.sweepSessions(later, limits)).toBeGreaterThanOrEqual(2);
      expect(await store.touchSession(fresh, later, limits)).not.toBeNull();
      // nothing left to present: touching would have deleted them anyway, so look at the count
      expect(await store.sweepSessions(later, limits)).toBe(0);
    });

    test("search by email, name or id; plan change reaches the keys; ledger pages newest first", async () => {
      const { store, keys, grant } = impl.make();
      const tag = Math.random().toString(36).slice(2, 8);
      const acc = await keys.createAccount({ name: `Gamma_${tag}`, plan: "free" });
      await store.setLogin(acc.id, `gamma.${tag}@example.com`, "h");
      const found = await store.searchAccounts(`GAMMA.${tag}`, 10);
      expect(found.map((a) => [a.id, a.email, a.balance])).toEqual([[acc.id, `gamma.${tag}@example.com`, 5]]);
      expect((await store.searchAccounts(`gamma_${tag}`, 10)).map((a) => a.id)).toEqual([acc.id]);
      // % and _ are literal characters, not patterns
      expect((await store.searchAccounts(`gamma%${tag}`, 10)).length).toBe(0);
      expect((await store.searchAccounts("", 1000)).some((a) => a.id === acc.id)).toBe(true);

      const key = await keys.createKey({ label: "k", accountId: acc.id });
      expect(await store.setPlan(acc.id, "pro")).toBe(true);
      expect(await store.setPlan("acc_nope", "pro")).toBe(false);
      expect((await keys.getAccount(acc.id))?.plan).toBe("pro");
      expect((await keys.get(key.id))?.plan).toBe("pro");

      for (let i = 1; i <= 4; i++) await grant(acc.id, i);
      const first = await store.ledgerPage(acc.id, 2, 0);
      expect(first.total).toBe(5);
      expect(first.rows.map((r) => r.amount)).toEqual([4, 3]);
      const last = await store.ledgerPage(acc.id, 2, 4);
      expect(last.rows.map((r) => [r.kind, r.amount])).toEqual([["welcome", 5]]);
      expect(last.rows[0]).toMatchObject({ input_tokens: null, output_tokens: null });
      // a /v1 charge's row carries its tokens (the dashboard's ledger table shows them)
      await impl.make().charge(acc.id, 3, { input: 1200, output: 345 });
      const [row] = (await store.ledgerPage(acc.id, 1, 0)).rows;
      expect(row).toMatchObject({
        kind: "charge",
        amount: -3,
        function: "chat-completions",
        input_tokens: 1200,
        output_tokens: 345,
      });
    });
  });
}
