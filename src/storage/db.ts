import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { type BunSQLiteDatabase, drizzle } from "drizzle-orm/bun-sqlite";
import { MIGRATIONS, type Migration } from "./migrations";
import * as schema from "./schema";

export type Db = BunSQLiteDatabase<typeof schema>;

export interface Storage {
  sqlite: Database;
  db: Db;
  /** migrations applied by this open (0 on the usual start of an up-to-date file) */
  migrated: number;
  close(): void;
}

/**
 * Opens the database and applies embedded migrations.
 * WAL lets the CLI and the server work on one file at once; synchronous=NORMAL in WAL mode keeps
 * every committed transaction across a process crash (only an OS crash or power loss can roll back
 * the last few commits, never corrupt the file), which costs no fsync per charge.
 */
export function openStorage(path: string, opts: { busyTimeoutMs?: number } = {}): Storage {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const sqlite = new Database(path, { create: true, strict: true });
  sqlite.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(opts.busyTimeoutMs ?? 5000))}`);
  sqlite.exec("PRAGMA journal_mode = WAL");
  sqlite.exec("PRAGMA synchronous = NORMAL");
  sqlite.exec("PRAGMA foreign_keys = ON");
  const migrated = migrate(sqlite);
  return {
    sqlite,
    db: drizzle(sqlite, { schema }),
    migrated,
    close() {
      try {
        sqlite.exec("PRAGMA optimize");
      } catch {
        // a read-only or locked database still closes
      }
      // close(true) closes the connection now (sqlite3_close), so that the last connection to
      // close folds the WAL into the file and removes it: a stopped gateway leaves one file, whole
      // to copy. Plain close() (sqlite3_close_v2) left the connection open until the statements it
      // had cached were collected, so the WAL stayed beside the file after every stop.
      try {
        sqlite.close(true);
      } catch {
        // a statement still in use: closed once it is collected, as before
        sqlite.close();
      }
    },
  };
}

/**
 * Applies the migrations not yet applied (`migrations`: a prefix of the list, for tests that build
 * an older database), all in one `BEGIN IMMEDIATE` transaction: it takes the file's write lock
 * before the journal (`_migrations`) is read, so processes opening one file at once (nodes started
 * together, a CLI verb beside a server) migrate once. The others wait for the lock (busy_timeout,
 * then again until MIGRATION_WAIT_MS), then read a journal that already lists every migration and
 * run none. A failing migration rolls every one of the run back, leaving the file as it was.
 */
export function migrate(sqlite: Database, migrations = MIGRATIONS): number {
  if (latestApplied(sqlite, migrations)) {
    refuseNewerSchema(sqlite, migrations);
    return 0;
  }
  const deadline = Date.now() + MIGRATION_WAIT_MS;
  for (;;) {
    try {
      sqlite.exec("BEGIN IMMEDIATE");
      break;
    } catch (err) {
      // another process holds the write lock past busy_timeout (a long migration, say): wait on
      if (!/^SQLITE_BUSY/.test((err as { code?: string }).code ?? "") || Date.now() >= deadline) throw err;
      Bun.sleepSync(10);
    }
  }
  try {
    sqlite.exec("CREATE TABLE IF NOT EXISTS _migrations (tag TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)");
    const applied = new Set(
      sqlite
        .query<{ tag: string }, []>("SELECT tag FROM _migrations")
        .all()
        .map((r) => r.tag),
    );
    let count = 0;
    for (const m of migrations) {
      if (applied.has(m.tag)) continue;
      count++;
      for (const stmt of m.sql.split("--> statement-breakpoint")) {
        if (stmt.trim()) sqlite.exec(stmt);
      }
      m.after?.(sqlite);
      sqlite.query("INSERT INTO _migrations (tag, applied_at) VALUES (?, ?)").run(m.tag, Date.now());
    }
    sqlite.exec("COMMIT");
    return count;
  } catch (err) {
    if (sqlite.inTransaction) sqlite.exec("ROLLBACK");
    throw err;
  }
}

/** How long a process waits for another one's migrations before it gives up. */
const MIGRATION_WAIT_MS = 120_000;

/**
 * The usual start: the last migration of the journal is already applied, and so are the ones
 * before it (they are applied in order). One read, no write transaction.
 */
function latestApplied(sqlite: Database, migrations = MIGRATIONS): boolean {
  const latest = migrations.at(-1)?.tag;
  if (!latest) return true;
  try {
    return sqlite.query<{ one: number }, [string]>("SELECT 1 AS one FROM _migrations WHERE tag = ?").get(latest) !== null;
  } catch {
    return false; // no _migrations table yet: a new database
  }
}

/**
 * A file migrated by a newer version (its journal lists migrations this one does not have) is not
 * served by this one: its code does not know what those migrations changed (a table it writes may
 * have gained a constraint or a trigger). The way back is the newer version, or the backup taken
 * before the upgrade (docs/operations.md#upgrades).
 */
function refuseNewerSchema(sqlite: Database, migrations: readonly Migration[]): void {
  const known = new Set(migrations.map((m) => m.tag));
  const rows = sqlite.query<{ tag: string }, []>("SELECT tag FROM _migrations ORDER BY tag").all();
  if (rows.length <= known.size) return;
  const unknown = rows.map((r) => r.tag).filter((t) => !known.has(t));
  if (unknown.length === 0) return;
  throw new Error(
    `this database was migrated by a newer version of the gateway (${unknown.join(", ")} unknown to this one): run that version, or restore the backup taken before the upgrade (docs/operations.md#upgrades)`,
  );
}

/** True for SQLite errors that mean "try again later" (locked, busy, read-only, disk full). */
export function isStorageUnavailable(err: unknown): boolean {
  const code = (err as { code?: string })?.code ?? "";
  return /^SQLITE_(BUSY|LOCKED|READONLY|FULL|IOERR|CANTOPEN)/.test(code);
}
