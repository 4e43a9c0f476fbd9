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

test("a file migrated by a newer version is refused by this one (serve and a CLI verb), naming the migrations it does not know", () => {
  const path = join(dir, "newer.db");
  openStorage(path).close();
  const rw = new Database(path);
  rw.query("INSERT INTO _migrations (tag, applied_at) VALUES (?, ?)").run("9999_from_a_newer_version", Date.now());
  rw.close();
  const cli = join(import.meta.dir, "../../src/cli.ts");
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("TEXTAI_") && k !== "PORT") base[k] = v;
  for (const args of [["serve"], ["keys", "list"]]) {
    const r = Bun.spawnSync([process.execPath, cli, ...args], {
      env: { ...base, PORT: "0", TEXTAI_DB: path },
      stdin: "ignore",
      timeout: 20_000,
    });
    const err = r.stderr.toString();
    expect(r.exitCode, `${args.join(" ")}: ${err}`).toBe(1);
    expect(err).toContain(
      "this database was migrated by a newer version of the gateway (9999_from_a_newer_version unknown to this one)",
    );
  }
});
