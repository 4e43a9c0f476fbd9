/**
 * The upgrade to members (migrations 0020_members on SQLite, 0018_members on PostgreSQL): an
 * account's login becomes its first member, an owner, with the same email and password hash, and
 * its open sessions stay open as that member's. PostgreSQL needs the shared servers of
 * test/helpers/shared-servers.ts (it skips loudly without them, except under CI=true).
 */
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { migrate } from "../../src/storage/db";
import { MIGRATIONS } from "../../src/storage/migrations";
import { PG_MIGRATIONS } from "../../src/storage/migrations-pg";
import { migrate as migratePg } from "../../src/storage/postgres";
import { freshDatabase, sharedServersUp } from "../helpers/shared-servers";

const shared = await sharedServersUp("the members migration on PostgreSQL");
const dir = mkdtempSync(join(tmpdir(), "textai-members-migration-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const before = <T extends { tag: string }>(list: T[], tag: string) =>
  list.slice(
    0,
    list.findIndex((m) => m.tag === tag),
  );

test("SQLite: a login becomes its account's owner member; its session stays, as that member's", () => {
  const db = new Database(join(dir, "upgrade.db"));
  migrate(db, before(MIGRATIONS, "0020_members"));
  db.exec(
    "INSERT INTO accounts (id, name, plan, balance) VALUES ('acc_old', 'Old', 'free', 5), ('acc_nologin', 'None', 'free', 0)",
  );
  db.exec(
    "INSERT INTO logins (account_id, email, password_hash, created_at, password_changed_at) VALUES ('acc_old', 'old@example.com', 'hash-old', 1000, 2000)",
  );
  db.exec(
    "INSERT INTO dashboard_sessions (token_hash, account_id, kind, created_at, last_seen_at) VALUES ('s-old', 'acc_old', 'account', 1, 1), ('s-op', NULL, 'operator', 1, 1)",
  );
  migrate(db);
  const members = db
    .query("SELECT id, account_id, email, name, role, password_hash, created_at, password_changed_at FROM members")
    .all();
  expect(members).toEqual([
    {
      id: expect.stringMatching(/^mem_[0-9a-f]{24}$/),
      account_id: "acc_old",
      email: "old@example.com",
      name: null,
      role: "owner",
      password_hash: "hash-old",
      created_at: 1000,
      password_changed_at: 2000,
    },
  ]);
  const sessions = db.query("SELECT token_hash, member_id FROM dashboard_sessions ORDER BY token_hash").all();
  expect(sessions).toEqual([
    { token_hash: "s-old", member_id: (members[0] as { id: string }).id },
    { token_hash: "s-op", member_id: null },
  ]);
  expect(db.query("SELECT name FROM sqlite_master WHERE name = 'logins'").get()).toBeNull();
  db.close();
});

describe.skipIf(!shared)("PostgreSQL", () => {
  test("a login becomes its account's owner member; its session stays, as that member's", async () => {
    const pg = await freshDatabase();
    const sql = new SQL(pg.url);
    try {
      await migratePg(sql, before(PG_MIGRATIONS, "0018_members"));
      await sql`INSERT INTO accounts (id, name, plan, balance) VALUES ('acc_old', 'Old', 'free', 5), ('acc_nologin', 'None', 'free', 0)`;
      await sql`INSERT INTO logins (account_id, email, password_hash, created_at, password_changed_at) VALUES ('acc_old', 'old@example.com', 'hash-old', 1000, 2000)`;
      await sql`INSERT INTO dashboard_sessions (token_hash, account_id, kind, created_at, last_seen_at) VALUES ('s-old', 'acc_old', 'account', 1, 1), ('s-op', NULL, 'operator', 1, 1)`;
      await migratePg(sql);
      const members =
        await sql`SELECT id, account_id, email, name, role, password_hash, created_at::int AS created_at, password_changed_at::int AS password_changed_at FROM members`;
      expect([...members]).toEqual([
        {
          id: expect.stringMatching(/^mem_[0-9a-f]{24}$/),
          account_id: "acc_old",
          email: "old@example.com",
          name: null,
          role: "owner",
          password_hash: "hash-old",
          created_at: 1000,
          password_changed_at: 2000,
        },
      ]);
      const sessions = await sql`SELECT token_hash, member_id FROM dashboard_sessions ORDER BY token_hash`;
      expect([...sessions]).toEqual([
        { token_hash: "s-old", member_id: members[0].id },
        { token_hash: "s-op", member_id: null },
      ]);
      expect((await sql`SELECT to_regclass('logins') AS t`)[0].t).toBeNull();
    } finally {
      await sql.close();
      await pg.drop();
    }
  });
});
