// A test touches only the Redis data it made: its gateway's keys live under a prefix of its own
// (TEXTAI_REDIS_PREFIX), its clean-up deletes those and nothing else, and no test or bench empties a
// db (another user's data, or another run's, may be in it).
import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { RedisClient } from "bun";
import { startGateway } from "../helpers/gateway";
import { freshRedis, REDIS_BASE_URL, sharedServersUp } from "../helpers/shared-servers";

const ROOT = join(import.meta.dir, "../..");

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === "node_modules" || name.startsWith(".git")) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...filesUnder(p));
    else if (/\.(ts|js|sh)$/.test(name) || name === "run") out.push(p);
  }
  return out;
}

test("no test, bench or CI script empties a Redis db (FLUSHDB, FLUSHALL)", () => {
  const offenders: string[] = [];
  for (const f of [...filesUnder(join(ROOT, "test")), ...filesUnder(join(ROOT, "bench")), ...filesUnder(join(ROOT, ".ci"))]) {
    if (f === import.meta.path) continue;
    readFileSync(f, "utf8")
      .split("\n")
      .forEach((line, i) => {
        if (/["'`]FLUSH(DB|ALL)["'`]|\bflush(db|all)\s*\(/i.test(line))
          offenders.push(`${f.slice(ROOT.length + 1)}:${i + 1}: ${line.trim()}`);
      });
  }
  expect(offenders).toEqual([]);
});

test("no test, bench or CI script drops a database but through own-database.ts (a drop of one this process created)", () => {
  const offenders: string[] = [];
  const allowed = join(ROOT, "test", "helpers", "own-database.ts");
  for (const f of [...filesUnder(join(ROOT, "test")), ...filesUnder(join(ROOT, "bench")), ...filesUnder(join(ROOT, ".ci"))]) {
    if (f === import.meta.path || f === allowed) continue;
    readFileSync(f, "utf8")
      .split("\n")
      .forEach((line, i) => {
        if (/\bDROP\s+DATABASE\b/i.test(line)) offenders.push(`${f.slice(ROOT.length + 1)}:${i + 1}: ${line.trim()}`);
      });
  }
  expect(offenders).toEqual([]);
});

const shared = await sharedServersUp("the Redis isolation of the tests");

describe.skipIf(!shared)("a test's gateway on the shared Redis", () => {
  const other = `someone-else-${crypto.randomUUID()}`;
  const r = new RedisClient(REDIS_BASE_URL, { autoReconnect: false });
  afterAll(async () => {
    await r.send("DEL", [`${other}:data`]).catch(() => {});
    r.close();
  });

  test("keeps its keys under its prefix, and its clean-up leaves everyone else's data as it was", async () => {
    await r.connect();
    // data of someone else's in the same db
    await r.send("SET", [`${other}:data`, "keep me"]);
    const redis = await freshRedis();
    expect(redis.prefix).toMatch(/^textai-test-[0-9a-f]{12}$/);
    const gw = await startGateway({ env: redis.env });
    try {
      const { key } = gw.newKey({ credits: 10 });
      const res = await gw.post("/api/v1/ai/sentiment-analysis", { text: "I love it" }, { "x-api-key": key });
      expect(res.status).toBe(200);
      const scan = async (pattern: string) => {
        const found: string[] = [];
        let cursor = "0";
        do {
          const [next, keys] = (await r.send("SCAN", [cursor, "MATCH", pattern, "COUNT", "1000"])) as [string, string[]];
          cursor = next;
          found.push(...keys);
        } while (cursor !== "0");
        return found;
      };
      // the node's heartbeat and the call's bucket, under the test's prefix
      const ours = await scan(`${redis.prefix}:*`);
      expect(ours).toContain(`${redis.prefix}:nodes`);
      expect(ours.some((k) => k.startsWith(`${redis.prefix}:rl:`))).toBe(true);
      await gw.close();
      await redis.flush();
      expect(await scan(`${redis.prefix}:*`)).toEqual([]);
      expect(await r.send("GET", [`${other}:data`])).toBe("keep me");
    } finally {
      await gw.close().catch(() => {});
    }
  });
});
