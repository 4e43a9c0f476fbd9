/**
 * Gateway secrets in PostgreSQL: nodes asking at once for a secret that does not exist yet all
 * get the same one, so hash-style PII tokens agree across nodes. Needs 127.0.0.1:5432.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { PgStorage } from "../../src/storage/postgres";
import { PostgresSecretStore } from "../../src/storage/secrets-pg";
import { storesOn } from "../helpers/pgbouncer";
import { freshDatabase, sharedServersUp } from "../helpers/shared-servers";

const shared = await sharedServersUp("the PostgreSQL secret store tests");

let db: Awaited<ReturnType<typeof freshDatabase>>;
const pools: PgStorage[] = [];
/** straight to the test database, or through a pooler (TEXTAI_TEST_VIA_PGBOUNCER=1) */
let pgPools: Awaited<ReturnType<typeof storesOn>> | null = null;

beforeAll(async () => {
  if (!shared) return;
  db = await freshDatabase();
  pgPools = await storesOn(db.url);
  for (let i = 0; i < 3; i++) pools.push(pgPools.open({ max: 2 }));
}, 30_000);

afterAll(async () => {
  for (const p of pools) await p.close();
  await pgPools?.stop();
  await db?.drop();
});

describe.skipIf(!shared)("PostgresSecretStore", () => {
  test("three nodes asking at once for a new secret all get one and the same, and keep it", async () => {
    const stores = pools.map((p) => new PostgresSecretStore(p));
    const values = await Promise.all(stores.map((s) => s.get("pii-hash")));
    expect(new Set(values).size).toBe(1);
    expect(values[0]).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // a node started later reads the stored one; another name is another secret
    const later = new PostgresSecretStore(pools[0] as PgStorage);
    expect(await later.get("pii-hash")).toBe(values[0] as string);
    expect(await later.get("other")).not.toBe(values[0] as string);
  });
});
