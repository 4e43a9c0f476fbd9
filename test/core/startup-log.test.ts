// The start-up log names the store the gateway really uses: the SQLite file, or on PostgreSQL
// (TEXTAI_DATABASE_URL) its URL without the password, never ./data/textai.db; Redis likewise.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { urlForLog } from "../../src/config";
import { freshDatabase, freshRedis, sharedServersUp } from "../helpers/shared-servers";
import { spawnGateway } from "../helpers/spawned";

const dir = mkdtempSync(join(tmpdir(), "textai-startlog-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** the "listening" line of the process's log, once written */
async function listeningLine(stderr: () => string): Promise<Record<string, string>> {
  for (let i = 0; i < 100; i++) {
    const line = stderr()
      .split("\n")
      .find((l) => l.includes('"msg":"listening"'));
    if (line) return JSON.parse(line);
    await Bun.sleep(50);
  }
  throw new Error(`no listening line in: ${stderr()}`);
}

const up = await sharedServersUp("the start-up log on PostgreSQL and Redis");

describe("the start-up log", () => {
  test("on SQLite: the database file it opened", async () => {
    const db = join(dir, "own.db");
    const gw = await spawnGateway({ TEXTAI_DB: db, TEXTAI_LOG_LEVEL: "info" });
    try {
      const line = await listeningLine(gw.stderr);
      expect(line.db).toBe(db);
      expect(line.redis).toBeUndefined();
    } finally {
      gw.proc.kill();
      await gw.exited;
    }
  });

  test.skipIf(!up)(
    "on PostgreSQL and Redis: their URLs without the password, and no SQLite file",
    async () => {
      const pg = await freshDatabase();
      const redis = await freshRedis();
      const withPassword = new URL(pg.url);
      withPassword.password = "pg-secret-pw";
      withPassword.search = "?sslmode=disable&password=pg-query-pw";
      const gw = await spawnGateway({
        TEXTAI_DB: join(dir, "unused.db"),
        TEXTAI_DATABASE_URL: withPassword.toString(),
        ...redis.env,
        TEXTAI_LOG_LEVEL: "info",
      });
      try {
        const line = await listeningLine(gw.stderr);
        expect(line.db).toBe(`postgres://postgres@${withPassword.host}/${pg.name}`);
        expect(line.redis).toBe(redis.url);
        const all = gw.stderr();
        expect(all).not.toContain("pg-secret-pw");
        expect(all).not.toContain("pg-query-pw");
        expect(all).not.toContain("textai.db");
        expect(all).not.toContain("unused.db");
      } finally {
        gw.proc.kill();
        await gw.exited;
        await pg.drop();
        await redis.flush();
      }
    },
    30_000,
  ); // a process of its own that migrates a fresh PostgreSQL database: seconds on a loaded machine
});

test("a URL for the log drops the password wherever it is written; Redis Cluster seeds each", () => {
  expect(urlForLog("redis://default:redis-pw@10.0.0.1:6379/2?password=x")).toBe("redis://default@10.0.0.1:6379/2");
  expect(urlForLog("redis://:pw1@a:7000,redis://:pw2@b:7001")).toBe("redis://a:7000,redis://b:7001");
  expect(urlForLog("postgresql://app:s3cret@db.internal/textai?sslmode=require")).toBe("postgresql://app@db.internal/textai");
});
