import { SQL } from "bun";
import { type BunSQLDatabase, drizzle } from "drizzle-orm/bun-sql";
import { DEFAULT_DATABASE_POOL } from "../config";
import { GatewayError } from "../errors";
import { PG_MIGRATIONS } from "./migrations-pg";
import * as schema from "./schema-pg";

export type PgDb = BunSQLDatabase<typeof schema>;

export interface PgStorage {
  sql: SQL;
  db: PgDb;
  /** resolves once the schema is migrated (rejects only on a broken migration, never for an outage) */
  migrated: Promise<void>;
  isMigrated(): boolean;
  /** "migrating": the server answers and the schema is being migrated (by this node, or another holding the lock) */
  state(): "ready" | "migrating" | "unreachable";
  /** true once the schema is migrated, while a query reaches the server */
  up(): Promise<boolean>;
  close(): Promise<void>;
}

/** Any number for this lock: every node starting at once takes it, and the first migrates. */
const MIGRATION_LOCK = 7_263_011;

/**
 * Opens the PostgreSQL pool (Bun's built-in client: no dependency, in the compiled binary, and it
 * pipelines queries on a connection) and migrates in the background, retrying every second while
 * the server is unreachable. Every store awaits `migrated` before its first query. `max`: the
 * connections it opens at most (TEXTAI_DATABASE_POOL; a few: credits go in one batch at a time).
 * `prepare: false` (TEXTAI_DATABASE_PREPARE=false): every query goes unnamed, for a pooler in
 * transaction mode, which hands each transaction whichever server connection is free, so a named
 * statement prepared on one is missing (or already there) on the next. Nothing else here needs a
 * session: every lock is transaction-level (`pg_advisory_xact_lock`), nothing is SET, LISTENed to
 * or kept in a temp table, and migrations run in one transaction, so they run through the pooler
 * too (docs/many-nodes.md#behind-pgbouncer).
 */
export function openPostgres(
  url: string,
  opts: { max?: number; prepare?: boolean; onError?: (err: Error) => void } = {},
): PgStorage {
  const sql = new SQL(url, {
    max: opts.max ?? DEFAULT_DATABASE_POOL,
    prepare: opts.prepare ?? true,
    connectionTimeout: 2,
    idleTimeout: 30,
    onclose: () => {},
  });
  const db = drizzle({ client: sql, schema });
  // the server answered this attempt's first query: what is left is migrating
  let reached = false;
  const migrated = (async () => {
    for (;;) {
      try {
        await sql`SELECT 1`;
        reached = true;
        await migrate(sql);
        return;
      } catch (err) {
        if (!isPgUnavailable(err)) throw err;
        reached = false;
        opts.onError?.(err as Error);
        await Bun.sleep(1000);
      }
    }
  })();
  let done = false;
  migrated.then(
    () => {
      done = true;
    },
    () => {},
  );
  return {
    sql,
    db,
    migrated,
    isMigrated: () => done,
    state: () => (done ? "ready" : reached ? "migrating" : "unreachable"),
    async up() {
      // not before the schema is migrated: a node answers /ready 200 only once it can serve
      if (!done) return false;
      try {
        await sql`SELECT 1`;
        return true;
      } catch {
        return false;
      }
    },
    async close() {
      await sql.close({ timeout: 2 });
    },
  };
}

/** Applies the migrations not yet applied, in one transaction under an advisory lock. */
export async function migrate(sql: SQL, migrations = PG_MIGRATIONS): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`CREATE TABLE IF NOT EXISTS _migrations (tag text PRIMARY KEY, applied_at bigint NOT NULL)`;
    const applied = new Set((await tx`SELECT tag FROM _migrations`).map((r: { tag: string }) => r.tag));
    for (const m of migrations) {
      if (applied.has(m.tag)) continue;
      for (const stmt of m.sql.split("--> statement-breakpoint")) if (stmt.trim()) await tx.unsafe(stmt);
      await tx`INSERT INTO _migrations (tag, applied_at) VALUES (${m.tag}, ${Date.now()})`;
    }
  });
}

/**
 * True for errors that mean "the database cannot be reached now" (refused, closed, timed out,
 * shutting down), as opposed to an error in a query.
 */
export function isPgUnavailable(err: unknown, depth = 0): boolean {
  const e = err as { code?: string; errno?: string; message?: string; cause?: unknown } | null;
  // drizzle wraps the driver's error ("Failed query: ..."), the outage is its cause
  if (e?.cause && depth < 3 && isPgUnavailable(e.cause, depth + 1)) return true;
  const code = String(e?.code ?? "");
  const errno = String(e?.errno ?? "");
  if (/CONNECTION|TIMEOUT|ECONN|EPIPE|ENOTFOUND|EHOSTUNREACH|ETIMEDOUT/i.test(code)) return true;
  // SQLSTATE classes 08 (connection exception), 57 (operator intervention: shutdown), 53 (resources)
  if (/^(08|57|53)/.test(errno)) return true;
  return /connection (closed|refused|terminated)|ECONNREFUSED|socket/i.test(String(e?.message ?? ""));
}

export const databaseUnavailable = () =>
  new GatewayError("service_unavailable", "the database is unreachable; nothing was charged, retry shortly", {
    headers: { "Retry-After": "1" },
  });

/** The schema is still being migrated (a node starting, or another starting with it and holding the lock). */
export const databaseMigrating = () =>
  new GatewayError(
    "service_unavailable",
    "the database's tables are being made or updated (by this node or another starting with it); nothing was charged, retry shortly",
    { headers: { "Retry-After": "1" } },
  );

/**
 * Waits for the schema, at most `waitMs`: a node started while the database is down answers 503
 * until it has migrated, instead of holding requests.
 */
export async function schemaReady(storage: PgStorage, waitMs = 2000): Promise<void> {
  if (storage.isMigrated()) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      storage.migrated,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(storage.state() === "migrating" ? databaseMigrating() : databaseUnavailable()), waitMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs a query, turning an outage into 503 service_unavailable with Retry-After. */
export async function pgCall<T>(storage: PgStorage, run: () => Promise<T>): Promise<T> {
  try {
    await schemaReady(storage);
    return await run();
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    if (isPgUnavailable(err)) throw databaseUnavailable();
    throw err;
  }
}
