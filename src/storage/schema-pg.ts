/**
 * The PostgreSQL schema (TEXTAI_DATABASE_URL): accounts, keys, the credit ledger and its daily
 * rollups, dashboard logins and the knowledge index, shared by every node. Same tables and
 * columns as the SQLite schema; instants are milliseconds since the epoch (bigint) as there.
 */
import { sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  boolean,
  check,
  customType,
  index,
  integer,
  json,
  jsonb,
  pgTable,
  primaryKey,
  serial,
  text,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";

const ms = (name: string) => bigint(name, { mode: "number" });
const now = sql`(extract(epoch from clock_timestamp()) * 1000)::bigint`;
/** A row's id as its tenant sees it, drawn by the database (SQLite's publicIdSql, in the same form). */
const publicId = (prefix: "led" | "faqe") =>
  text("public_id")
    .notNull()
    .default(sql.raw(`('${prefix}_' || replace(gen_random_uuid()::text, '-', ''))`));

export const accounts = pgTable(
  "accounts",
  {
    id: text("id").primaryKey(),
    name: text("name"),
    plan: text("plan").notNull().default("free"),
    /** spendable credits; moves only together with a ledger row, never below zero */
    balance: bigint("balance", { mode: "number" }).notNull().default(0),
    createdAt: ms("created_at").notNull().default(now),
    /** residency and routing tags as JSON (`{"region":"eu"}`), which its keys' tags add to (docs/routing.md); null: none */
    tags: text("tags"),
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
    /** the key's policy (docs/key-policies.md) as JSON, its unset fields left out; null: none */
    policy: text("policy"),
    /** the member who made the key in the dashboard; null: the admin API or the CLI */
    ownerMemberId: text("owner_member_id"),
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
    /** a /v1 charge's tokens (provider-reported, else estimated); null on other rows */
    inputTokens: bigint("input_tokens", { mode: "number" }),
    outputTokens: bigint("output_tokens", { mode: "number" }),
    reason: text("reason"),
    createdAt: ms("created_at").notNull().default(now),
    publicId: publicId("led"),
  },
  // request_id: a retry that takes over a crashed call's Idempotency-Key asks whether that call was charged
  (t) => [
    index("ledger_account_time_idx").on(t.accountId, t.createdAt),
    index("ledger_request_idx").on(t.requestId),
    // a key's month-to-date spend, read against its monthly_credit_limit
    index("ledger_key_time_idx").on(t.keyId, t.createdAt),
    uniqueIndex("ledger_public_id_idx").on(t.publicId),
  ],
);

/**
 * Credits held by calls in flight on any node: a call is admitted only if the balance minus every
 * live hold covers it (`credit_batch()`, migration 0012, under a per-account advisory lock).
 * The charge deletes its hold in the transaction that debits the balance. A hold stops counting at
 * `expires_at` (database clock, ms), which its node pushes forward while the call runs, so the
 * holds of a node killed mid-call free themselves. No foreign key: holds are short-lived and
 * taking one must not lock the account row that charges update.
 */
export const creditHolds = pgTable(
  "credit_holds",
  {
    id: uuid("id").primaryKey(),
    accountId: text("account_id").notNull(),
    amount: bigint("amount", { mode: "number" }).notNull(),
    expiresAt: ms("expires_at").notNull(),
    /** the key of a hold taken under its monthly_credit_limit (migration 0011; taken by credit_batch()) */
    keyId: text("key_id"),
    /** the node whose lease or allowance this row is (migration 0020: the credit journal) */
    nodeId: text("node_id"),
    /** on an allowance row (never expiring), the lease it was carved with (migration 0020) */
    leaseOf: uuid("lease_of"),
  },
  (t) => [
    index("credit_holds_account_idx").on(t.accountId, t.expiresAt),
    index("credit_holds_key_idx").on(t.keyId, t.expiresAt),
    index("credit_holds_node_idx").on(t.nodeId).where(sql`${t.nodeId} IS NOT NULL`),
  ],
);

/**
 * Per node-local credit journal file (its random id): the highest sequence number of its entries
 * applied, moved in the transaction that applies them (migration 0020), so an entry shipped twice
 * (its node killed between PostgreSQL's commit and its local delete) is applied once.
 */
export const creditJournalShipped = pgTable("credit_journal_shipped", {
  journalId: text("journal_id").primaryKey(),
  nodeId: text("node_id").notNull(),
  shippedSeq: bigint("shipped_seq", { mode: "number" }).notNull(),
  shippedAt: ms("shipped_at").notNull(),
});

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
    inputTokens: bigint("input_tokens", { mode: "number" }).notNull().default(0),
    outputTokens: bigint("output_tokens", { mode: "number" }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.day, t.kind, t.function, t.provider] })],
);

/**
 * An account's members (docs/teams.md): one email (lower-cased, one member in the whole gateway),
 * one role and one argon2id password hash each. The login an account had became its first owner.
 * A member signed in by single sign-on is bound to one (issuer, subject) pair, which no other member has.
 */
export const members = pgTable(
  "members",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    email: text("email").notNull(),
    name: text("name"),
    role: text("role", { enum: ["owner", "admin", "developer", "viewer"] }).notNull(),
    passwordHash: text("password_hash").notNull(),
    createdAt: ms("created_at").notNull().default(now),
    passwordChangedAt: ms("password_changed_at").notNull().default(now),
    /** the identity provider's issuer and subject (`sub`) the member is bound to at its first single sign-on (docs/sso.md) */
    ssoIssuer: text("sso_issuer"),
    ssoSubject: text("sso_subject"),
  },
  (t) => [
    uniqueIndex("members_email_idx").on(t.email),
    index("members_account_idx").on(t.accountId),
    uniqueIndex("members_sso_subject_idx").on(t.ssoIssuer, t.ssoSubject),
  ],
);

/** Invitations to become a member: only the SHA-256 of the one-time token is kept. */
export const invitations = pgTable(
  "invitations",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    email: text("email").notNull(),
    role: text("role").notNull(),
    tokenHash: text("token_hash").notNull(),
    createdAt: ms("created_at").notNull(),
    expiresAt: ms("expires_at").notNull(),
    usedAt: ms("used_at"),
  },
  (t) => [uniqueIndex("invitations_token_idx").on(t.tokenHash)],
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
    /** the member an account session is of */
    memberId: text("member_id"),
    /** who an operator session is, when single sign-on said (`operator:EMAIL`, the audit trail's actor); null: the admin token */
    actor: text("actor"),
  },
  (t) => [index("dashboard_sessions_account_idx").on(t.accountId), index("dashboard_sessions_member_idx").on(t.memberId)],
);

/** Secrets the gateway makes for itself on first use, shared by every node (same as SQLite's). */
export const gatewaySecrets = pgTable("gateway_secrets", {
  name: text("name").primaryKey(),
  value: text("value").notNull(),
  createdAt: ms("created_at").notNull().default(now),
});

/** Charges of Idempotency-Key calls by request id, 'charged' or 'void' (same as SQLite's, which says why). */
export const idempotentCharges = pgTable(
  "idempotent_charges",
  {
    requestId: text("request_id").primaryKey(),
    accountId: text("account_id").notNull(),
    state: text("state", { enum: ["charged", "void"] }).notNull(),
    createdAt: ms("created_at").notNull().default(now),
  },
  (t) => [index("idempotent_charges_created_idx").on(t.createdAt)],
);

/** PostgreSQL's full-text document type; the gateway writes its literal form (knowledge/fts-tokens.ts). */
const tsvector = customType<{ data: string }>({ dataType: () => "tsvector" });
const bytea = customType<{ data: Uint8Array }>({ dataType: () => "bytea" });

export const knowledgeBases = pgTable(
  "knowledge_bases",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    name: text("name").notNull(),
    description: text("description"),
    status: text("status", { enum: ["active", "inactive"] })
      .notNull()
      .default("active"),
    /** bumped on every document change: search requests carry it, so cached answers never go stale */
    revision: integer("revision").notNull().default(0),
    createdAt: ms("created_at").notNull().default(now),
    updatedAt: ms("updated_at").notNull().default(now),
  },
  (t) => [index("knowledge_bases_account_idx").on(t.accountId, t.createdAt)],
);

export const kbDocuments = pgTable(
  "kb_documents",
  {
    id: text("id").primaryKey(),
    kbId: text("kb_id")
      .notNull()
      .references(() => knowledgeBases.id, { onDelete: "cascade" }),
    title: text("title"),
    content: text("content").notNull(),
    /** object of scalar values, as sent (json keeps its key order); search filters on it */
    metadata: json("metadata").notNull().default({}),
    chunkCount: integer("chunk_count").notNull().default(0),
    createdAt: ms("created_at").notNull().default(now),
    /** UTF-8 bytes of content, title and metadata: what the account's knowledge_bytes quota counts */
    bytes: integer("bytes").notNull().default(0),
  },
  (t) => [
    index("kb_documents_kb_idx").on(t.kbId, t.createdAt),
    // covers an account's usage (count and bytes per base) without reading the documents
    index("kb_documents_bytes_idx").on(t.kbId, t.bytes),
  ],
);

/**
 * Overlapping pieces of a document. `tsv` holds the tokens SQLite's FTS5 would index (porter
 * stems; the title at weight A, the content at weight B, with positions), so both back-ends match
 * and rank the same words; `tokens` is the chunk's length as BM25 counts it.
 */
export const kbChunks = pgTable(
  "kb_chunks",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    kbId: text("kb_id").notNull(),
    documentId: text("document_id")
      .notNull()
      .references(() => kbDocuments.id, { onDelete: "cascade" }),
    ord: integer("ord").notNull(),
    title: text("title"),
    content: text("content").notNull(),
    /** the chunk's canonical search keys (stems, synonyms folded), space-separated */
    terms: text("terms").notNull().default(""),
    tokens: integer("tokens").notNull().default(0),
    tsv: tsvector("tsv").notNull(),
    /** float32 vector from a provider's embeddings, when one is configured */
    embedding: bytea("embedding"),
  },
  (t) => [
    index("kb_chunks_doc_idx").on(t.documentId),
    index("kb_chunks_kb_idx").on(t.kbId),
    index("kb_chunks_tsv_idx").using("gin", t.tsv),
  ],
);

export const faqCollections = pgTable(
  "faq_collections",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    name: text("name").notNull(),
    createdAt: ms("created_at").notNull().default(now),
  },
  (t) => [index("faq_collections_account_idx").on(t.accountId, t.createdAt)],
);

export const faqEntries = pgTable(
  "faq_entries",
  {
    id: serial("id").primaryKey(),
    collectionId: text("collection_id")
      .notNull()
      .references(() => faqCollections.id, { onDelete: "cascade" }),
    ord: integer("ord").notNull(),
    question: text("question").notNull(),
    answer: text("answer").notNull(),
    publicId: publicId("faqe"),
  },
  (t) => [index("faq_entries_collection_idx").on(t.collectionId, t.ord), uniqueIndex("faq_entries_public_id_idx").on(t.publicId)],
);

export const chatbots = pgTable(
  "chatbots",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    name: text("name").notNull(),
    mode: text("mode", { enum: ["support", "assistant"] }).notNull(),
    /** knowledge base ids (checked against the account on create) */
    knowledgeBaseIds: jsonb("knowledge_base_ids").notNull().default([]),
    createdAt: ms("created_at").notNull().default(now),
  },
  (t) => [index("chatbots_account_idx").on(t.accountId, t.createdAt)],
);

/** The request log (SQLite's request_log, the same columns), shared by every node. */
export const requestLog = pgTable(
  "request_log",
  {
    requestId: text("request_id").primaryKey(),
    time: ms("time").notNull(),
    accountId: text("account_id").notNull(),
    keyId: text("key_id").notNull(),
    method: text("method").notNull(),
    path: text("path").notNull(),
    function: text("function"),
    status: integer("status").notNull(),
    errorCode: text("error_code"),
    provider: text("provider"),
    model: text("model"),
    latencyMs: integer("latency_ms").notNull(),
    credits: bigint("credits", { mode: "number" }).notNull().default(0),
    cache: text("cache"),
    promptTokens: bigint("prompt_tokens", { mode: "number" }),
    completionTokens: bigint("completion_tokens", { mode: "number" }),
    idempotentReplay: boolean("idempotent_replay").notNull().default(false),
    guardrails: jsonb("guardrails"),
  },
  (t) => [
    // newest first, with the filters read from the index: a row costs two indexes beside its key
    // (there were four: bench/README.md, 2026-11-26 "the request log's indexes")
    index("request_log_time_filters_idx").on(t.time, t.keyId, t.function, t.status),
    index("request_log_account_time_filters_idx").on(t.accountId, t.time, t.keyId, t.function, t.status),
  ],
);

/** The audit trail, as in the SQLite schema (schema.ts `auditLog`): one hash chain, appends serialised by its head row's lock. */
export const auditLog = pgTable(
  "audit_log",
  {
    seq: bigint("seq", { mode: "number" }).primaryKey(),
    id: text("id").notNull(),
    at: ms("at").notNull(),
    actor: text("actor").notNull(),
    accountId: text("account_id"),
    action: text("action").notNull(),
    targetId: text("target_id"),
    before: text("before"),
    after: text("after"),
    client: text("client"),
    prevHash: text("prev_hash").notNull(),
    hash: text("hash").notNull(),
  },
  (t) => [
    uniqueIndex("audit_log_id_idx").on(t.id),
    index("audit_log_account_seq_idx").on(t.accountId, t.seq),
    index("audit_log_at_idx").on(t.at),
  ],
);

export const auditHead = pgTable("audit_head", {
  chain: text("chain").primaryKey(),
  seq: bigint("seq", { mode: "number" }).notNull(),
  hash: text("hash").notNull(),
});

/** Alert endpoints, as in the SQLite schema (schema.ts `webhooks`). */
export const webhooks = pgTable(
  "webhooks",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id"),
    url: text("url").notNull(),
    events: text("events").notNull(),
    balanceBelow: bigint("balance_below", { mode: "number" }),
    spikeFactor: bigint("spike_factor", { mode: "number" }),
    expiringDays: bigint("expiring_days", { mode: "number" }),
    format: text("format").notNull().default("json"),
    secret: text("secret").notNull(),
    prevSecret: text("prev_secret"),
    prevUntil: ms("prev_until"),
    createdAt: ms("created_at").notNull(),
  },
  (t) => [index("webhooks_account_idx").on(t.accountId)],
);

/** The alert outbox, as in the SQLite schema (schema.ts `webhookOutbox`); claimed with FOR UPDATE SKIP LOCKED. */
export const webhookOutbox = pgTable(
  "webhook_outbox",
  {
    id: text("id").primaryKey(),
    eventId: text("event_id").notNull(),
    endpointId: text("endpoint_id").notNull(),
    accountId: text("account_id"),
    type: text("type").notNull(),
    data: text("data").notNull(),
    createdAt: ms("created_at").notNull(),
    status: text("status").notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAt: ms("next_at").notNull(),
    claim: text("claim"),
    claimedUntil: ms("claimed_until"),
    lastStatusCode: integer("last_status_code"),
    lastError: text("last_error"),
    deliveredAt: ms("delivered_at"),
  },
  (t) => [
    index("webhook_outbox_due_idx").on(t.status, t.nextAt),
    index("webhook_outbox_endpoint_idx").on(t.endpointId, t.createdAt),
  ],
);
