import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

const now = sql`(cast(unixepoch('subsec') * 1000 as integer))`;

export const accounts = sqliteTable("accounts", {
  id: text("id").primaryKey(),
  name: text("name"),
  plan: text("plan").notNull().default("free"),
  /** spendable credits; moves only together with a ledger row (or a transient reservation) */
  balance: integer("balance").notNull().default(0),
  createdAt: integer("created_at").notNull().default(now),
});

export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    label: text("label").notNull(),
    plan: text("plan").notNull().default("free"),
    /** "tai_live_" */
    prefix: text("prefix").notNull(),
    last4: text("last4").notNull(),
    /** hex SHA-256 of the whole key; the plaintext is never stored */
    keyHash: text("key_hash").notNull(),
    status: text("status", { enum: ["active", "revoked"] })
      .notNull()
      .default("active"),
    createdAt: integer("created_at").notNull().default(now),
    lastUsedAt: integer("last_used_at"),
    revokedAt: integer("revoked_at"),
  },
  (t) => [uniqueIndex("api_keys_hash_idx").on(t.keyHash), index("api_keys_account_idx").on(t.accountId)],
);

/** Every credit movement. Balances and usage are computed from these rows. */
export const ledger = sqliteTable(
  "ledger",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    keyId: text("key_id"),
    /** positive for grants, negative for charges */
    amount: integer("amount").notNull(),
    kind: text("kind", { enum: ["welcome", "grant", "charge"] }).notNull(),
    function: text("function"),
    requestId: text("request_id"),
    provider: text("provider"),
    cached: integer("cached", { mode: "boolean" }).notNull().default(false),
    reason: text("reason"),
    createdAt: integer("created_at").notNull().default(now),
  },
  (t) => [index("ledger_account_time_idx").on(t.accountId, t.createdAt)],
);

export type Account = typeof accounts.$inferSelect;
export type ApiKeyRow = typeof apiKeys.$inferSelect;
export type LedgerRow = typeof ledger.$inferSelect;
