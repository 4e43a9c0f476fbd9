/**
 * The audit trail on three gateway processes sharing one PostgreSQL database and one Redis
 * (CONTRACT section 17, docs/audit.md#many-nodes): changes made on every node at once append to one
 * chain without a gap or a fork (the head row's lock serialises the appends in the changes' own
 * transactions), every node reads the same trail, and a row deleted or edited in the database is
 * found by `textai audit verify` run against it. Needs 127.0.0.1:5432 and :6379; skips loudly
 * without them, fails under CI.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { SQL } from "bun";
import { freshDatabase, nodesRedis, sharedServersUp, type TestRedis } from "../helpers/shared-servers";
import { admin, type Cluster, type Node, startCluster } from "./nodes";

const shared = await sharedServersUp("the audit trail's cluster tests");
const ROOT = join(import.meta.dir, "../..");

let db: Awaited<ReturnType<typeof freshDatabase>>;
let redis: TestRedis;
let cluster: Cluster;
let pg: SQL;

beforeAll(async () => {
  if (!shared) return;
  db = await freshDatabase();
  redis = await nodesRedis("the audit trail's nodes on a Redis Cluster");
  cluster = await startCluster({ n: 3, databaseUrl: db.url, redisUrl: redis.url, redisPrefix: redis.prefix, configText: "" });
  pg = new SQL(db.url, { max: 2 });
}, 60_000);

afterAll(async () => {
  if (!shared) return;
  await cluster?.close();
  await pg?.close();
  await db?.drop();
  await redis?.flush();
}, 30_000);

type Entry = { seq: number; action: string; account_id: string; prev_hash: string; hash: string };

/** Every entry, oldest first, as `node` reads it. */
async function trail(node: Node): Promise<Entry[]> {
  const out: Entry[] = [];
  let cursor = "";
  for (;;) {
    const r = await admin(node, "GET", `/admin/v1/audit?limit=500${cursor ? `&cursor=${cursor}` : ""}`);
    out.push(...(r.result.data as Entry[]));
    if (!r.result.next_cursor) return out.reverse();
    cursor = r.result.next_cursor as string;
  }
}

function verifyCli(): { code: number; out: string } {
  const r = Bun.spawnSync(["bun", "src/cli.ts", "audit", "verify", "--json"], {
    cwd: ROOT,
    env: { ...process.env, TEXTAI_DATABASE_URL: db.url, TEXTAI_DB: join(cluster.dir, "cli.db"), TEXTAI_LOG_LEVEL: "warn" },
  });
  return { code: r.exitCode ?? -1, out: r.stdout.toString() };
}

describe.skipIf(!shared)("audit trail on three nodes, one PostgreSQL", () => {
  test("changes made on three nodes at once append to one chain: no gap, no fork, every node reads it and it verifies", async () => {
    const nodes = cluster.nodes;
    const accounts = await Promise.all(
      nodes.map((n, i) => admin(n, "POST", "/admin/v1/accounts", { name: `acc ${i}`, credits: 10 })),
    );
    for (const a of accounts) expect(a.status).toBe(201);
    const ids = accounts.map((a) => a.result.id as string);
    // 90 changes, 30 per node, all in flight together: keys, grants and tags on the three accounts
    const changes = Array.from({ length: 90 }, (_, i) => {
      const node = nodes[i % 3] as Node;
      const account = ids[i % ids.length] as string;
      if (i % 3 === 0) return admin(node, "POST", "/admin/v1/keys", { label: `k${i}`, account_id: account });
      if (i % 3 === 1) return admin(node, "POST", `/admin/v1/accounts/${account}/credits`, { amount: 1 });
      return admin(node, "PATCH", `/admin/v1/accounts/${account}`, { tags: { n: String(i) } });
    });
    const done = await Promise.all(changes);
    expect(done.filter((r) => r.status >= 300).map((r) => JSON.stringify(r.json))).toEqual([]);
    const seen = await Promise.all(nodes.map(trail));
    const all = seen[0] as Entry[];
    expect(all.length).toBe(93);
    for (const other of seen) expect(other).toEqual(all);
    // one chain: seq 1..93, each linked to the one before
    expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i + 1));
    for (let i = 1; i < all.length; i++) expect((all[i] as Entry).prev_hash).toBe((all[i - 1] as Entry).hash);
    const counts = new Map<string, number>();
    for (const e of all) counts.set(e.action, (counts.get(e.action) ?? 0) + 1);
    expect(Object.fromEntries(counts)).toEqual({
      "account.create": 3,
      "key.create": 30,
      "credits.grant": 30,
      "account.tags.update": 30,
    });
    for (const n of nodes) {
      const v = await admin(n, "GET", "/admin/v1/audit/verify");
      expect(v.result).toMatchObject({ ok: true, entries: 93 });
    }
    const cli = verifyCli();
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.out)).toMatchObject({ ok: true, entries: 93 });
  }, 60_000);

  test("an entry's change is in its transaction: a refused take-back writes no entry", async () => {
    const [n1] = cluster.nodes as [Node];
    const before = (await trail(n1)).length;
    const acc = await admin(n1, "POST", "/admin/v1/accounts", { credits: 1 });
    const refused = await admin(n1, "POST", `/admin/v1/accounts/${acc.result.id}/credits`, { amount: -5 });
    expect(refused.status).toBe(400);
    expect((await trail(n1)).length).toBe(before + 1);
  });

  test("the table refuses edits; with its trigger dropped, an edited and a deleted row are found", async () => {
    await expect(pg`UPDATE audit_log SET actor = 'nobody' WHERE seq = 1`).rejects.toThrow(/append-only/);
    await expect(pg`DELETE FROM audit_log WHERE seq = 1`).rejects.toThrow(/append-only/);
    // what an owner of the database could do (the test's own database)
    await pg`DROP TRIGGER audit_log_no_change ON audit_log`;
    await pg`UPDATE audit_log SET after = '{"balance":1000000}' WHERE seq = 40`;
    const edited = verifyCli();
    expect(edited.code).toBe(1);
    expect(JSON.parse(edited.out)).toMatchObject({ ok: false, entries: 39, broken: { seq: 40 } });
    expect(JSON.parse(edited.out).broken.problem).toContain("was changed after it was written");
    await pg`DELETE FROM audit_log WHERE seq = 12`;
    const v = await admin(cluster.nodes[1] as Node, "GET", "/admin/v1/audit/verify");
    expect(v.result).toMatchObject({ ok: false, entries: 11, broken: { seq: 12, id: null } });
    expect((v.result.broken as { problem: string }).problem).toContain("entry 12 is missing");
  });
});
