// Chunks indexed before migration 0011 stored their FTS5 token count (BM25's document length) have
// none; the migration fills them from FTS5's own counts, so an upgraded gateway ranks exactly as a
// fresh one, and every count equals the one the PostgreSQL index stores (fts-tokens.ts).
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tokenizeRows } from "../../src/knowledge/fts-tokens";
import { startGateway } from "../helpers/gateway";
import { HELP_CENTER } from "./corpus";
import { ROOMY_LIMITS, show } from "./helpers";

const dir = mkdtempSync(join(tmpdir(), "textai-upgrade-tokens-"));
const dbPath = join(dir, "textai.db");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const gateway = () => startGateway({ configText: ROOMY_LIMITS, env: { TEXTAI_DB: dbPath } });

/** Each chunk's stored count against the count of FTS5's tokenizer run outside the file. */
function counts(): { stored: number[]; tokenized: number[] } {
  const db = new Database(dbPath, { readonly: true });
  try {
    const rows = db
      .query<{ kb_id: string; title: string | null; content: string; tokens: number }, []>(
        "SELECT kb_id, title, content, tokens FROM kb_chunks ORDER BY id",
      )
      .all();
    return {
      stored: rows.map((r) => r.tokens),
      tokenized: tokenizeRows(rows.map((r) => ({ kbId: r.kb_id, title: r.title, content: r.content }))).map((t) => t.count),
    };
  } finally {
    db.close();
  }
}

test("a file from before migration 0011 gets its chunks' token counts, and searches as before", async () => {
  let gw = await gateway();
  const key = gw.newKey({ credits: 10_000 }).key;
  const headers = { "x-api-key": key, "cache-control": "no-cache" };
  const kb = (await gw.post("/api/v1/knowledge-bases", { name: "help" }, headers)).json.data.result.id;
  const docs = HELP_CENTER.documents.map(({ title, content, metadata }) => ({ title, content, metadata }));
  // a long title and long chunks: counts past 127 take more than one byte in FTS5's docsize blob
  docs.push({ title: "word ".repeat(99).trim(), content: "refund ".repeat(3000), metadata: {} });
  const added = await gw.post(`/api/v1/knowledge-bases/${kb}/documents`, { documents: docs }, headers);
  expect(added.status, show(added)).toBe(201);
  const search = async () => {
    const out: unknown[] = [];
    for (const q of HELP_CENTER.queries.slice(0, 20)) {
      const r = await gw.post(`/api/v1/knowledge-bases/${kb}/search`, { query: q.query, top_k: 10, min_score: 0 }, headers);
      expect(r.status, show(r)).toBe(200);
      out.push(r.json.data.result.results);
    }
    return out;
  };
  const fresh = await search();
  await gw.close();
  const before = counts();
  expect(before.stored).toEqual(before.tokenized);
  expect(Math.max(...before.stored)).toBeGreaterThan(127);

  // as a file written before 0011: no tokens column, the index on kb_id alone, no vocabulary table,
  // and none of the later migrations either (ledger tokens, public ids, document sizes, the request
  // log, key policies, the audit trail, members (logins again), webhooks, members' SSO subjects, sessions' actors), none applied: a start that finds the newest migration missing applies every
  // missing one, so a new migration must be rolled back here too
  const db = new Database(dbPath);
  const sizes = db.query("SELECT id, bytes FROM kb_documents ORDER BY id").all();
  db.exec(`DROP TABLE kb_chunks_vocab;
    DROP INDEX kb_chunks_kb_idx;
    ALTER TABLE kb_chunks DROP COLUMN tokens;
    CREATE INDEX kb_chunks_kb_idx ON kb_chunks (kb_id);
    ALTER TABLE ledger DROP COLUMN input_tokens;
    ALTER TABLE ledger DROP COLUMN output_tokens;
    ALTER TABLE usage_daily DROP COLUMN input_tokens;
    ALTER TABLE usage_daily DROP COLUMN output_tokens;
    DROP INDEX faq_entries_public_id_idx;
    ALTER TABLE faq_entries DROP COLUMN public_id;
    DROP INDEX ledger_public_id_idx;
    ALTER TABLE ledger DROP COLUMN public_id;
    DROP INDEX kb_documents_bytes_idx;
    ALTER TABLE kb_documents DROP COLUMN bytes;
    DROP TABLE request_log;
    DROP INDEX ledger_key_time_idx;
    ALTER TABLE api_keys DROP COLUMN policy;
    ALTER TABLE accounts DROP COLUMN tags;
    DROP TABLE audit_log;
    DROP TABLE audit_head;
    DROP TABLE webhook_outbox;
    DROP TABLE webhooks;
    ALTER TABLE api_keys DROP COLUMN owner_member_id;
    ALTER TABLE dashboard_sessions DROP COLUMN actor;
    DROP INDEX dashboard_sessions_member_idx;
    ALTER TABLE dashboard_sessions DROP COLUMN member_id;
    DROP TABLE invitations;
    CREATE TABLE logins (account_id text PRIMARY KEY NOT NULL, email text NOT NULL, password_hash text NOT NULL,
      created_at integer NOT NULL, password_changed_at integer NOT NULL);
    CREATE UNIQUE INDEX logins_email_idx ON logins (email);
    DROP TABLE members;
    DELETE FROM _migrations WHERE tag >= '0011';`);
  db.close();

  gw = await gateway();
  try {
    const after = counts();
    expect(after.stored).toEqual(before.stored);
    // 0012 measures the documents as an upload does (their UTF-8 bytes: content, title, metadata)
    const measured = new Database(dbPath, { readonly: true });
    expect(measured.query("SELECT id, bytes FROM kb_documents ORDER BY id").all()).toEqual(sizes);
    measured.close();
    expect(await search()).toEqual(fresh);
  } finally {
    await gw.close();
  }
}, 60_000);
