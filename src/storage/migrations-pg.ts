// PostgreSQL migrations, embedded in the binary as text like the SQLite ones. A test compares
// this list with drizzle/pg/meta/_journal.json, so a generated migration not listed here fails.
import p0000 from "../../drizzle/pg/0000_init.sql" with { type: "text" };
import p0001 from "../../drizzle/pg/0001_dashboard.sql" with { type: "text" };
import p0002 from "../../drizzle/pg/0002_knowledge.sql" with { type: "text" };
import p0003 from "../../drizzle/pg/0003_holds.sql" with { type: "text" };
import p0004 from "../../drizzle/pg/0004_ledger_request_idx.sql" with { type: "text" };
import p0005 from "../../drizzle/pg/0005_gateway_secrets.sql" with { type: "text" };
import p0006 from "../../drizzle/pg/0006_idempotent_charges.sql" with { type: "text" };
import p0007 from "../../drizzle/pg/0007_ledger_tokens.sql" with { type: "text" };
import p0008 from "../../drizzle/pg/0008_public_ids.sql" with { type: "text" };
import p0009 from "../../drizzle/pg/0009_knowledge_bytes.sql" with { type: "text" };
import p0010 from "../../drizzle/pg/0010_request_log.sql" with { type: "text" };
import p0011 from "../../drizzle/pg/0011_key_policies.sql" with { type: "text" };
import p0012 from "../../drizzle/pg/0012_credit_batch.sql" with { type: "text" };
import p0013 from "../../drizzle/pg/0013_request_log_indexes.sql" with { type: "text" };
import p0014 from "../../drizzle/pg/0014_credit_holds_index_scans.sql" with { type: "text" };
import p0015 from "../../drizzle/pg/0015_account_tags.sql" with { type: "text" };
import p0016 from "../../drizzle/pg/0016_credit_leases.sql" with { type: "text" };
import p0017 from "../../drizzle/pg/0017_audit_log.sql" with { type: "text" };
import p0018 from "../../drizzle/pg/0018_members.sql" with { type: "text" };
import p0019 from "../../drizzle/pg/0019_webhooks.sql" with { type: "text" };
import p0020 from "../../drizzle/pg/0020_credit_journal.sql" with { type: "text" };
import p0021 from "../../drizzle/pg/0021_sso_subject.sql" with { type: "text" };
import p0022 from "../../drizzle/pg/0022_session_actor.sql" with { type: "text" };

export const PG_MIGRATIONS: { tag: string; sql: string }[] = [
  { tag: "0000_init", sql: p0000 },
  { tag: "0001_dashboard", sql: p0001 },
  { tag: "0002_knowledge", sql: p0002 },
  { tag: "0003_holds", sql: p0003 },
  { tag: "0004_ledger_request_idx", sql: p0004 },
  { tag: "0005_gateway_secrets", sql: p0005 },
  { tag: "0006_idempotent_charges", sql: p0006 },
  { tag: "0007_ledger_tokens", sql: p0007 },
  { tag: "0008_public_ids", sql: p0008 },
  { tag: "0009_knowledge_bytes", sql: p0009 },
  { tag: "0010_request_log", sql: p0010 },
  { tag: "0011_key_policies", sql: p0011 },
  { tag: "0012_credit_batch", sql: p0012 },
  { tag: "0013_request_log_indexes", sql: p0013 },
  { tag: "0014_credit_holds_index_scans", sql: p0014 },
  { tag: "0015_account_tags", sql: p0015 },
  { tag: "0016_credit_leases", sql: p0016 },
  { tag: "0017_audit_log", sql: p0017 },
  { tag: "0018_members", sql: p0018 },
  { tag: "0019_webhooks", sql: p0019 },
  { tag: "0020_credit_journal", sql: p0020 },
  { tag: "0021_sso_subject", sql: p0021 },
  { tag: "0022_session_actor", sql: p0022 },
];
