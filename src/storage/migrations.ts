// Migrations are embedded in the binary as text: `bun build --compile` bundles these imports.
// A test compares this list with drizzle/meta/_journal.json, so a generated migration that is
// not listed here fails the suite.
import type { Database } from "bun:sqlite";
import m0000 from "../../drizzle/0000_init.sql" with { type: "text" };
import m0001 from "../../drizzle/0001_knowledge.sql" with { type: "text" };
import m0002 from "../../drizzle/0002_knowledge_fts.sql" with { type: "text" };
import m0003 from "../../drizzle/0003_knowledge_terms.sql" with { type: "text" };
import m0004 from "../../drizzle/0004_knowledge_fts_by_base.sql" with { type: "text" };
import m0005 from "../../drizzle/0005_usage_daily.sql" with { type: "text" };
import m0006 from "../../drizzle/0006_idempotency.sql" with { type: "text" };
import m0007 from "../../drizzle/0007_dashboard.sql" with { type: "text" };
import m0008 from "../../drizzle/0008_idempotency_request_ids.sql" with { type: "text" };
import m0009 from "../../drizzle/0009_gateway_secrets.sql" with { type: "text" };
import m0010 from "../../drizzle/0010_idempotent_charges.sql" with { type: "text" };
import m0011 from "../../drizzle/0011_knowledge_chunk_tokens.sql" with { type: "text" };
import m0012 from "../../drizzle/0012_ledger_tokens.sql" with { type: "text" };
import m0013 from "../../drizzle/0013_public_ids.sql" with { type: "text" };
import m0014 from "../../drizzle/0014_knowledge_bytes.sql" with { type: "text" };
import m0015 from "../../drizzle/0015_request_log.sql" with { type: "text" };
import m0016 from "../../drizzle/0016_key_policies.sql" with { type: "text" };
import m0017 from "../../drizzle/0017_request_log_indexes.sql" with { type: "text" };
import m0018 from "../../drizzle/0018_account_tags.sql" with { type: "text" };
import m0019 from "../../drizzle/0019_audit_log.sql" with { type: "text" };
import m0020 from "../../drizzle/0020_members.sql" with { type: "text" };
import m0021 from "../../drizzle/0021_webhooks.sql" with { type: "text" };
import m0022 from "../../drizzle/0022_sso_subject.sql" with { type: "text" };
import m0023 from "../../drizzle/0023_session_actor.sql" with { type: "text" };
import { fillChunkTokens } from "./fts5";

export interface Migration {
  tag: string;
  sql: string;
  /** a step SQL cannot do, run after the SQL in the same transaction */
  after?: (sqlite: Database) => void;
}

export const MIGRATIONS: Migration[] = [
  { tag: "0000_init", sql: m0000 },
  { tag: "0001_knowledge", sql: m0001 },
  { tag: "0002_knowledge_fts", sql: m0002 },
  { tag: "0003_knowledge_terms", sql: m0003 },
  { tag: "0004_knowledge_fts_by_base", sql: m0004 },
  { tag: "0005_usage_daily", sql: m0005 },
  { tag: "0006_idempotency", sql: m0006 },
  { tag: "0007_dashboard", sql: m0007 },
  { tag: "0008_idempotency_request_ids", sql: m0008 },
  { tag: "0009_gateway_secrets", sql: m0009 },
  { tag: "0010_idempotent_charges", sql: m0010 },
  // chunks indexed before: their token counts, from FTS5's
  { tag: "0011_knowledge_chunk_tokens", sql: m0011, after: (sqlite) => void fillChunkTokens(sqlite) },
  { tag: "0012_ledger_tokens", sql: m0012 },
  { tag: "0013_public_ids", sql: m0013 },
  { tag: "0014_knowledge_bytes", sql: m0014 },
  { tag: "0015_request_log", sql: m0015 },
  { tag: "0016_key_policies", sql: m0016 },
  { tag: "0017_request_log_indexes", sql: m0017 },
  { tag: "0018_account_tags", sql: m0018 },
  { tag: "0019_audit_log", sql: m0019 },
  { tag: "0020_members", sql: m0020 },
  { tag: "0021_webhooks", sql: m0021 },
  { tag: "0022_sso_subject", sql: m0022 },
  { tag: "0023_session_actor", sql: m0023 },
];
