import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrate, openStorage } from "../../src/storage/db";
import { MIGRATIONS } from "../../src/storage/migrations";

const dir = mkdtempSync(join(tmpdir(), "textai-storage-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("a new database gets every migration; when the latest is applied, start-up runs none", () => {
  const path = join(dir, "start.db");
  openStorage(path).close();
  const rw = new Database(path);
  const tags = rw.query<{ tag: string }, []>("SELECT tag FROM _migrations ORDER BY tag").all();
  expect(tags.map((t) => t.tag)).toEqual(MIGRATIONS.map((m) => m.tag));
  // forget an earlier migration: a start that looked at more than the latest would re-run it and
  // fail on its CREATE TABLE of a table that exists
  rw.query("DELETE FROM _migrations WHERE tag = ?").run(MIGRATIONS[0].tag);
  expect(() => migrate(rw)).not.toThrow();
  rw.close();
  openStorage(path).close();
});
