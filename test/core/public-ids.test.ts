import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { migrate as migrateSqlite } from "../../src/storage/db";
import { MIGRATIONS } from "../../src/storage/migrations";
import { PG_MIGRATIONS } from "../../src/storage/migrations-pg";
import { migrate as migratePg } from "../../src/storage/postgres";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { freshDatabase, sharedServersUp } from "../helpers/shared-servers";

/**
 * Issue 24.24: the ids a tenant sees of its ledger entries (/dashboard/api/ledger) and FAQ entries
 * (GET /api/v1/ai/faq-collections/:id, faq-match) are random, not integer keys counting every
 * tenant's rows; rows written before the upgrade get theirs when a start migrates the database.
 * Both storage back-ends: SQLite and PostgreSQL.
 */
const LEDGER_ID = /^led_[0-9a-f]{32}$/;
const FAQ_ID = /^faqe_[0-9a-f]{32}$/;
const PASSWORD = "a long enough password";
const TOKEN = "public-ids-admin-token-0123456789abcdef";
const show = (r: { status: number; json: unknown }) => `${r.status} ${JSON.stringify(r.json).slice(0, 600)}`;

const dir = mkdtempSync(join(tmpdir(), "textai-public-ids-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What an old database holds: an account with ledger rows and an FAQ collection of two entries. */
const OLD = {
  account: "acc_oldtenant",
  collection: "faq_oldcollection",
  ledger: [
    ["acc_oldtenant", 50, "welcome", null, "welcome credits", 1],
    ["acc_oldtenant", -1, "charge", "sentiment-analysis", null, 2],
    ["acc_oldtenant", -1, "charge", "sentiment-analysis", null, 3],
  ] as const,
  faqs: [
    ["What is your refund policy?", "Refunds within 30 days."],
    ["How long does shipping take?", "Three to five days."],
  ] as const,
};

/** A key through the admin API (the test's gateway may be on PostgreSQL, whose stores answer asynchronously). */
async function newKey(gw: TestGateway, body: { account_id?: string; credits?: number }) {
  const r = await gw.post("/admin/v1/keys", { label: "public ids", ...body }, { authorization: `Bearer ${TOKEN}` });
  expect(r.status, show(r)).toBe(201);
  return { key: r.json.data.result.key as string, accountId: r.json.data.result.account_id as string };
}

async function signedIn(gw: TestGateway, accountId: string, email: string): Promise<string> {
  await gw.deps.dashboard.setLogin(accountId, email, await Bun.password.hash(PASSWORD, "argon2id"));
  const res = await fetch(`${gw.url}/dashboard/login`, {
    method: "POST",
    redirect: "manual",
    headers: { origin: new URL(gw.url).origin, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ email, password: PASSWORD }),
  });
  expect(res.status).toBe(303);
  return (res.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
}

async function ledgerIds(gw: TestGateway, cookie: string): Promise<string[]> {
  const r = await gw.get("/dashboard/api/ledger?limit=100", { cookie });
  expect(r.status, show(r)).toBe(200);
  return (r.json.data.result.rows as { id: unknown }[]).map((row) => String(row.id));
}

async function faqIds(gw: TestGateway, key: string, collection: string): Promise<string[]> {
  const r = await gw.get(`/api/v1/ai/faq-collections/${collection}`, { "x-api-key": key });
  expect(r.status, show(r)).toBe(200);
  return (r.json.data.result.faqs as { id: unknown }[]).map((f) => String(f.id));
}

/** The checks on one running gateway, whichever storage it has. */
function opaqueIdChecks(start: () => Promise<TestGateway>) {
  test("rows written before the upgrade got random ids; the tenant sees them", async () => {
    const gw = await start();
    try {
      const { key } = await newKey(gw, { account_id: OLD.account });
      const ids = await ledgerIds(gw, await signedIn(gw, OLD.account, "old@example.com"));
      // the three old rows, plus nothing else (a key for an existing account grants nothing)
      expect(ids).toHaveLength(OLD.ledger.length);
      for (const id of ids) expect(id).toMatch(LEDGER_ID);
      expect(new Set(ids).size).toBe(ids.length);
      const faqs = await faqIds(gw, key, OLD.collection);
      expect(faqs).toHaveLength(OLD.faqs.length);
      for (const id of faqs) expect(id).toMatch(FAQ_ID);
      // faq-match answers with the same ids
      const m = await gw.post(
        "/api/v1/ai/faq-match",
        { collection_id: OLD.collection, query: "what is the refund policy?" },
        { "x-api-key": key },
      );
      expect(m.status, show(m)).toBe(200);
      expect(m.json.data.result.best_match?.id, show(m)).toBe(faqs[0]);
    } finally {
      await gw.close();
    }
  }, 30_000);

  test("new ledger and FAQ entries get random ids that do not count up across tenants", async () => {
    const gw = await start();
    try {
      const seen: string[] = [];
      for (const [n, email] of [
        [0, "first@example.com"],
        [1, "second@example.com"],
      ] as const) {
        const { key, accountId } = await newKey(gw, { credits: 20 });
        for (let i = 0; i < 2; i++) {
          const r = await gw.post(
            "/api/v1/ai/sentiment-analysis",
            { text: `Great service, visit ${n}.${i}` },
            { "x-api-key": key },
          );
          expect(r.status, show(r)).toBe(200);
        }
        const ids = await ledgerIds(gw, await signedIn(gw, accountId, email));
        expect(ids).toHaveLength(3); // the grant and two charges
        for (const id of ids) expect(id).toMatch(LEDGER_ID);
        const created = await gw.post(
          "/api/v1/ai/faq-collections",
          { name: `FAQ ${n}`, faqs: OLD.faqs.map(([question, answer]) => ({ question, answer })) },
          { "x-api-key": key },
        );
        expect(created.status, show(created)).toBe(201);
        const faqs = (created.json.data.result.faqs as { id: unknown }[]).map((f) => String(f.id));
        for (const id of faqs) expect(id).toMatch(FAQ_ID);
        expect(await faqIds(gw, key, created.json.data.result.id)).toEqual(faqs);
        seen.push(...ids, ...faqs);
      }
      expect(new Set(seen).size).toBe(seen.length);
      // nothing numeric in them to count with
      for (const id of seen) expect(id).not.toMatch(/^\d+$/);
    } finally {
      await gw.close();
    }
  }, 30_000);
}

describe("SQLite", () => {
  const path = join(dir, "old.db");
  const db = new Database(path, { create: true, strict: true });
  // the database as the version before 0013_public_ids left it
  migrateSqlite(
    db,
    MIGRATIONS.filter((m) => m.tag < "0013"),
  );
  db.query("INSERT INTO accounts (id, plan, balance) VALUES (?, 'free', 48)").run(OLD.account);
  for (const row of OLD.ledger)
    db.query("INSERT INTO ledger (account_id, amount, kind, function, reason, created_at) VALUES (?, ?, ?, ?, ?, ?)").run(...row);
  db.query("INSERT INTO faq_collections (id, account_id, name) VALUES (?, ?, 'old')").run(OLD.collection, OLD.account);
  for (const [ord, [q, a]] of OLD.faqs.entries())
    db.query("INSERT INTO faq_entries (collection_id, ord, question, answer) VALUES (?, ?, ?, ?)").run(OLD.collection, ord, q, a);
  db.close();

  opaqueIdChecks(() => startGateway({ env: { TEXTAI_DB: path, TEXTAI_ADMIN_TOKEN: TOKEN } }));

  test("the upgraded file: every old row has a distinct id, and the integer keys are still there", () => {
    const check = new Database(path, { readonly: true, strict: true });
    try {
      const ledger = check.query<{ id: number; public_id: string | null }, []>("SELECT id, public_id FROM ledger").all();
      const faqs = check.query<{ id: number; public_id: string | null }, []>("SELECT id, public_id FROM faq_entries").all();
      expect(ledger.every((r) => LEDGER_ID.test(r.public_id ?? "") && Number.isInteger(r.id))).toBe(true);
      expect(faqs.every((r) => FAQ_ID.test(r.public_id ?? "") && Number.isInteger(r.id))).toBe(true);
      expect(new Set(ledger.map((r) => r.public_id)).size).toBe(ledger.length);
    } finally {
      check.close();
    }
  });
});

const shared = await sharedServersUp("public ids on PostgreSQL");
describe.skipIf(!shared)("PostgreSQL", () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  beforeAll(async () => {
    db = await freshDatabase();
    const sql = new SQL(db.url);
    try {
      // the database as the version before 0008_public_ids left it
      await migratePg(
        sql,
        PG_MIGRATIONS.filter((m) => m.tag < "0008"),
      );
      await sql`INSERT INTO accounts (id, plan, balance) VALUES (${OLD.account}, 'free', 48)`;
      for (const [account, amount, kind, fn, reason, at] of OLD.ledger)
        await sql`INSERT INTO ledger (account_id, amount, kind, function, reason, created_at) VALUES (${account}, ${amount}, ${kind}, ${fn}, ${reason}, ${at})`;
      await sql`INSERT INTO faq_collections (id, account_id, name) VALUES (${OLD.collection}, ${OLD.account}, 'old')`;
      for (const [ord, [q, a]] of OLD.faqs.entries())
        await sql`INSERT INTO faq_entries (collection_id, ord, question, answer) VALUES (${OLD.collection}, ${ord}, ${q}, ${a})`;
    } finally {
      await sql.close();
    }
  });
  afterAll(() => db?.drop());

  opaqueIdChecks(() => startGateway({ env: { TEXTAI_DATABASE_URL: db.url, TEXTAI_ADMIN_TOKEN: TOKEN } }));
});
