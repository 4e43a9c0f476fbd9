/**
 * The PostgreSQL schema (TEXTAI_DATABASE_URL): accounts, keys, the credit ledger and its daily
 * rollups, shared by every node. Same tables and columns as the SQLite schema; instants are
 * milliseconds since the epoch (bigint) as there.
 */
import { sql } from "drizzle-orm";
import { bigint, bigserial, boolean, check, index, integer, pgTable, primaryKey, text, uniqueIndex } from "drizzle-orm/pg-core";

const ms = (name: string) => bigint(name, { mode: "number" });
const now = sql`(extract(epoch from clock_timestamp()) * 1000)::bigint`;

export const accounts = pgTable(
  "accounts",
  {
    id: text("id").primaryKey(),
    name: text("name"),
    plan: text("plan").notNull().default("free"),
    /** spendable credits; moves only together with a ledger row, never below zero */
    balance: bigint("balance", { mode: "number" }).notNull().default(0),
    createdAt: ms("created_at").notNull().default(now),
  },
  (t) => [check("accounts_balance_not_negative", sql`${t.balance} >= 0`)],
);

export const apiKeys = pgTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    label: text("label").notNull(),
    plan: text("plan").notNull().default("free"),
    prefix: text("prefix").notNull(),
    last4: text("last4").notNull(),
    /** hex SHA-256 of the whole key; the plaintext is never stored */
    keyHash: text("key_hash").notNull(),
    status: text("status", { enum: ["active", "revoked"] })
      .notNull()
      .default("active"),
    createdAt: ms("created_at").notNull().default(now),
    lastUsedAt: ms("last_used_at"),
    revokedAt: ms("revoked_at"),
  },
  (t) => [uniqueIndex("api_keys_hash_idx").on(t.keyHash), index("api_keys_account_idx").on(t.accountId)],
);

export const ledger = pgTable(
  "ledger",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    keyId: text("key_id"),
    amount: bigint("amount", { mode: "number" }).notNull(),
    kind: text("kind", { enum: ["welcome", "grant", "charge"] }).notNull(),
    function: text("function"),
    requestId: text("request_id"),
    provider: text("provider"),
    cached: boolean("cached").notNull().default(false),
    reason: text("reason"),
    createdAt: ms("created_at").notNull().default(now),
  },
  (t) => [index("ledger_account_time_idx").on(t.accountId, t.createdAt)],
);

export const usageDaily = pgTable(
  "usage_daily",
  {
    accountId: text("account_id").notNull(),
    day: text("day").notNull(),
    kind: text("kind", { enum: ["charge", "grant"] }).notNull(),
    function: text("function").notNull().default(""),
    provider: text("provider").notNull().default(""),
    requests: integer("requests").notNull().default(0),
    credits: bigint("credits", { mode: "number" }).notNull().default(0),
    cached: integer("cached").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.day, t.kind, t.function, t.provider] })],
);

/** Dashboard sign-in for an account: one email (lower-cased) and one argon2id hash per account. */
export const logins = pgTable(
  "logins",
  {
    accountId: text("account_id")
      .primaryKey()
      .references(() => accounts.id),
    email: text("email").notNull(),
    passwordHash: text("password_hash").notNull(),
    createdAt: ms("created_at").notNull().default(now),
    passwordChangedAt: ms("password_changed_at").notNull().default(now),
  },
  (t) => [uniqueIndex("logins_email_idx").on(t.email)],
);

/** Dashboard sessions, by the SHA-256 of their token. */
export const dashboardSessions = pgTable(
  "dashboard_sessions",
  {
    tokenHash: text("token_hash").primaryKey(),
    /** null for an operator session */
    accountId: text("account_id"),
    kind: text("kind", { enum: ["account", "operator"] }).notNull(),
    createdAt: ms("created_at").notNull(),
    lastSeenAt: ms("last_seen_at").notNull(),
  },
  (t) => [index("dashboard_sessions_account_idx").on(t.accountId)],
);
