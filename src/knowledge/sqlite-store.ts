/**
 * What the knowledge stores on SQLite (bases-sqlite.ts, faqs-sqlite.ts, chatbots-sqlite.ts) share:
 * the storage, a row of the account's by id (a row of another account reported exactly like a
 * missing one, 404 not_found), and a page of rows with the count of all that match.
 */
import { and, count, eq, type SQL } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { notFound } from "../errors";
import type { Storage } from "../storage/db";
import { type Page, type Paged, paged } from "./interface";

export abstract class SqliteKnowledgeStore {
  constructor(protected readonly storage: Storage) {}

  protected get db() {
    return this.storage.db;
  }

  /** The account's row of `table` with this id; 404 naming `noun` when there is none. */
  protected ownedRow<T extends SQLiteTable & { id: SQLiteColumn; accountId: SQLiteColumn }>(
    table: T,
    accountId: string,
    id: string,
    noun: string,
  ): T["$inferSelect"] {
    const row = this.db
      .select()
      .from(table as SQLiteTable)
      .where(and(eq(table.id, id), eq(table.accountId, accountId)))
      .get();
    if (!row) throw notFound(noun);
    return row as T["$inferSelect"];
  }

  /** A page of `table`'s rows matching `where`, in `order`, as views, with how many match in all. */
  protected pageOf<T extends SQLiteTable, V>(
    table: T,
    where: SQL | undefined,
    order: (SQLiteColumn | SQL)[],
    page: Page,
    view: (row: T["$inferSelect"]) => V,
  ): Paged<V> {
    const total =
      this.db
        .select({ n: count() })
        .from(table as SQLiteTable)
        .where(where)
        .get()?.n ?? 0;
    const rows = this.db
      .select()
      .from(table as SQLiteTable)
      .where(where)
      .orderBy(...order)
      .limit(page.limit)
      .offset(page.offset)
      .all() as T["$inferSelect"][];
    return paged(rows.map(view), total, page);
  }
}
