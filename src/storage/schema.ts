import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

const now = sql`(cast(unixepoch('subsec') * 1000 as integer))`;

/**
 * A row's id as its tenant sees it: the prefix and 128 random bits in hex. The integer key stays
 * internal (order, joins); shown, it would count the deployment's rows across all tenants.
 * SQLite cannot add a column with such a default, so inserts name it (migration 0012 filled the
 * rows that came before).
 */
export const publicIdSql = (prefix: "led" | "faqe"): string => `('${prefix}_' || lower(hex(randomblob(16))))`;

export const accounts = sqliteTable("accounts", {
  id: text("id").primaryKey(),
  name: text("name"),
  plan: text("plan").notNull().default("free"),
  /** spendable credits; moves only together with a ledger row (or a transient reservation) */
  balance: integer("balance").notNull().default(0),
  createdAt: integer("created_at").notNull().default(now),
  /** residency and routing tags as JSON (`{"region":"eu"}`), which its keys' tags add to (docs/routing.md); null: none */
  tags: text("tags"),
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
    /** the key's policy (docs/key-policies.md) as JSON, its unset fields left out; null: none */
    policy: text("policy"),
    /** the member who made the key in the dashboard; null: the admin API or the CLI */
    ownerMemberId: text("owner_member_id"),
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
    /** a /v1 charge's tokens (provider-reported, else estimated); null on other rows */
    inputTokens: integer("input_tokens"),
    outputTokens: integer("output_tokens"),
    reason: text("reason"),
    createdAt: integer("created_at").notNull().default(now),
    /** the id the account sees (publicIdSql) */
    publicId: text("public_id"),
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
 * Running totals of the ledger per account, UTC day, kind, function and provider, updated in the
 * transaction that writes each ledger row: usage reads sum at most a few hundred of these rows
 * instead of scanning the ledger. `kind` is "charge" or "grant" (welcome and grant rows);
 * `credits` is what charges used (positive) or what grants added; function and provider are ""
 * when the ledger row has none.
 */
export const usageDaily = sqliteTable(
  "usage_daily",
  {
    accountId: text("account_id").notNull(),
    /** YYYY-MM-DD (UTC) */
    day: text("day").notNull(),
    kind: text("kind", { enum: ["charge", "grant"] }).notNull(),
    function: text("function").notNull().default(""),
    provider: text("provider").notNull().default(""),
    requests: integer("requests").notNull().default(0),
    credits: integer("credits").notNull().default(0),
    cached: integer("cached").notNull().default(0),
    inputTokens: integer("input_tokens").notNull().default(0),
    outputTokens: integer("output_tokens").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.day, t.kind, t.function, t.provider] })],
);

export type Account = typeof accounts.$inferSelect;
export type ApiKeyRow = typeof apiKeys.$inferSelect;
export type LedgerRow = typeof ledger.$inferSelect;

/**
 * Idempotency-Key records (contract section 6), kept 24 hours so a retry after a crash or restart
 * replays the stored answer instead of charging again. While a call runs its record is `in_flight`
 * and names the process running it (`owner`: host, pid, start token) with a lease: a record whose
 * process has died, or whose lease has passed, no longer blocks a retry.
 */
export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    accountId: text("account_id").notNull(),
    key: text("key").notNull(),
    bodyHash: text("body_hash").notNull(),
    status: text("status", { enum: ["in_flight", "done"] }).notNull(),
    owner: text("owner"),
    leaseUntil: integer("lease_until"),
    /**
     * JSON array of the request ids that claimed this key, oldest first: more than one only after
     * a claimer died in flight. If any of them was charged, the retry runs uncharged.
     */
    requestIds: text("request_ids"),
    responseStatus: integer("response_status"),
    /** null once done when the answer was over the size bound */
    responseBody: text("response_body"),
    responseHeaders: text("response_headers"),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.key] }), index("idempotency_expires_idx").on(t.expiresAt)],
);

/**
 * An account's members (docs/teams.md): one email (lower-cased, one member in the whole gateway),
 * one role and one argon2id password hash each. The login an account had became its first owner.
 * A member signed in by single sign-on is bound to one (issuer, subject) pair, which no other member has.
 */
export const members = sqliteTable(
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
    createdAt: integer("created_at").notNull().default(now),
    passwordChangedAt: integer("password_changed_at").notNull().default(now),
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
export const invitations = sqliteTable(
  "invitations",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    email: text("email").notNull(),
    role: text("role").notNull(),
    tokenHash: text("token_hash").notNull(),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
    usedAt: integer("used_at"),
  },
  (t) => [uniqueIndex("invitations_token_idx").on(t.tokenHash)],
);

/** Dashboard sessions, by the SHA-256 of their token (the token itself is only in the browser's cookie). */
export const dashboardSessions = sqliteTable(
  "dashboard_sessions",
  {
    tokenHash: text("token_hash").primaryKey(),
    /** null for an operator session */
    accountId: text("account_id"),
    kind: text("kind", { enum: ["account", "operator"] }).notNull(),
    createdAt: integer("created_at").notNull(),
    lastSeenAt: integer("last_seen_at").notNull(),
    /** the member an account session is of */
    memberId: text("member_id"),
    /** who an operator session is, when single sign-on said (`operator:EMAIL`, the audit trail's actor); null: the admin token */
    actor: text("actor"),
  },
  (t) => [index("dashboard_sessions_account_idx").on(t.accountId), index("dashboard_sessions_member_idx").on(t.memberId)],
);

/**
 * Secrets the gateway makes for itself on first use, one row each, so every process on this
 * database uses the same one: `pii-hash` keys hash-style PII redaction (local/pii/keyed-hash.ts).
 */
export const gatewaySecrets = sqliteTable("gateway_secrets", {
  name: text("name").primaryKey(),
  /** base64url of random bytes */
  value: text("value").notNull(),
  createdAt: integer("created_at").notNull().default(now),
});

/**
 * Charges of calls that carry an Idempotency-Key, by request id: 'charged' is written in the
 * transaction of the call's charge, 'void' by a retry that takes the key over from a claim whose
 * lease ran out. Whichever lands first wins (the primary key), so a call that outlives its lease
 * can never be charged after a retry has found it uncharged and run charged itself. Kept for the
 * Idempotency-Key TTL (24 h), then swept.
 */
export const idempotentCharges = sqliteTable(
  "idempotent_charges",
  {
    requestId: text("request_id").primaryKey(),
    accountId: text("account_id").notNull(),
    state: text("state", { enum: ["charged", "void"] }).notNull(),
    createdAt: integer("created_at").notNull().default(now),
  },
  (t) => [index("idempotent_charges_created_idx").on(t.createdAt)],
);

/**
 * The request log (CONTRACT section 13): one row per authenticated API request, metadata only,
 * never a body. Written in batches off the request path (requestlog/recorder.ts), kept for
 * `[log] retention_days`. The indexes serve the filters of the routes, newest first.
 */
export const requestLog = sqliteTable(
  "request_log",
  {
    requestId: text("request_id").primaryKey(),
    /** when the request arrived, ms since the epoch */
    time: integer("time").notNull(),
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
    credits: integer("credits").notNull().default(0),
    /** HIT, MISS, or null when the cache was not consulted */
    cache: text("cache"),
    promptTokens: integer("prompt_tokens"),
    completionTokens: integer("completion_tokens"),
    idempotentReplay: integer("idempotent_replay", { mode: "boolean" }).notNull().default(false),
    /** counts per kind (JSON), null when no guardrail ran */
    guardrails: text("guardrails"),
  },
  (t) => [
    // newest first, with the filters read from the index: a row costs two indexes beside its key
    // (there were four: bench/README.md, 2026-11-26 "the request log's indexes")
    index("request_log_time_filters_idx").on(t.time, t.keyId, t.function, t.status),
    index("request_log_account_time_filters_idx").on(t.accountId, t.time, t.keyId, t.function, t.status),
  ],
);

/**
 * The audit trail (docs/audit.md): one entry per change of state made through the admin API, the
 * CLI, the dashboard or the operator console, written in the transaction of the change. Entries
 * form one hash chain in `seq` order (each holds the SHA-256 of the one before, `prev_hash`);
 * triggers of the migration refuse UPDATE and DELETE. Never a secret: keys as ids and prefixes.
 */
export const auditLog = sqliteTable(
  "audit_log",
  {
    /** the entry's place in the chain, from 1, without gaps */
    seq: integer("seq").primaryKey(),
    id: text("id").notNull(),
    /** ms since the epoch */
    at: integer("at").notNull(),
    /** `operator`, `cli`, `admin-token`, or the account (`acc_…`) whose dashboard user made the change */
    actor: text("actor").notNull(),
    accountId: text("account_id"),
    action: text("action").notNull(),
    targetId: text("target_id"),
    /** the changed fields before and after, as canonical JSON (audit/chain.ts); null: none */
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

/** The head of each audit chain (one: `gateway`): the last entry's seq and hash, updated with each append. */
export const auditHead = sqliteTable("audit_head", {
  chain: text("chain").primaryKey(),
  seq: integer("seq").notNull(),
  hash: text("hash").notNull(),
});

/**
 * Alert endpoints (docs/alerts.md): an account's (or, with no account, the operator's) webhook,
 * the events it takes and its thresholds. The secret signs deliveries; after a rotation the one
 * before (`prev_secret`) signs them too until `prev_until`.
 */
export const webhooks = sqliteTable(
  "webhooks",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id"),
    url: text("url").notNull(),
    /** the event types as a JSON array */
    events: text("events").notNull(),
    balanceBelow: integer("balance_below"),
    spikeFactor: integer("spike_factor"),
    expiringDays: integer("expiring_days"),
    /** `json` or `slack` */
    format: text("format").notNull().default("json"),
    secret: text("secret").notNull(),
    prevSecret: text("prev_secret"),
    prevUntil: integer("prev_until"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("webhooks_account_idx").on(t.accountId)],
);

/**
 * The alert outbox: one row per event and endpoint, written in the transaction that raised the
 * event, delivered (and retried) from here by whichever node claims it (`claim` until `claimed_until`).
 */
export const webhookOutbox = sqliteTable(
  "webhook_outbox",
  {
    id: text("id").primaryKey(),
    eventId: text("event_id").notNull(),
    endpointId: text("endpoint_id").notNull(),
    accountId: text("account_id"),
    type: text("type").notNull(),
    /** the event's JSON `data` */
    data: text("data").notNull(),
    createdAt: integer("created_at").notNull(),
    /** `pending`, `delivered` or `failed` (past the retry window) */
    status: text("status").notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAt: integer("next_at").notNull(),
    claim: text("claim"),
    claimedUntil: integer("claimed_until"),
    lastStatusCode: integer("last_status_code"),
    lastError: text("last_error"),
    deliveredAt: integer("delivered_at"),
  },
  (t) => [
    index("webhook_outbox_due_idx").on(t.status, t.nextAt),
    index("webhook_outbox_endpoint_idx").on(t.endpointId, t.createdAt),
  ],
);
