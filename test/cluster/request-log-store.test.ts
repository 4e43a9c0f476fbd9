/**
 * The request log's PostgreSQL store on its own: batches of every size go in as one statement
 * (the rows as one JSON parameter), so a connection prepares one insert, not one per batch size,
 * and every field comes back as written. Needs 127.0.0.1:5432; skips loudly without it.
 */
import { describe, expect, test } from "bun:test";
import type { RequestRecord } from "../../src/requestlog/interface";
import { PostgresRequestLogStore } from "../../src/requestlog/postgres";
import { openPostgres } from "../../src/storage/postgres";
import { entryWritten } from "../helpers/request-log";
import { freshDatabase, sharedServersUp } from "../helpers/shared-servers";

const shared = await sharedServersUp("the request log store on PostgreSQL");

/** Row `i` of batch `b`: every column, nulls and awkward text in turn. */
function record(b: number, i: number): RequestRecord {
  const odd = i % 2 === 1;
  return {
    requestId: `req_${b}_${i}`,
    time: 1_764_000_000_000 + b * 1000 + i,
    accountId: "acct_store",
    keyId: odd ? "key_a" : "key_b",
    method: "POST",
    path: odd ? '/api/v1/ai/odd,{"path"}\\ NULL' : "/v1/chat/completions",
    function: odd ? null : "chat-completions",
    status: odd ? 502 : 200,
    errorCode: odd ? "upstream_error" : null,
    provider: odd ? null : "sim",
    model: odd ? "NULL" : "model ü 🎉",
    latencyMs: i,
    credits: odd ? 0 : 2 ** 53 - 1,
    cache: odd ? null : i % 4 === 0 ? "HIT" : "MISS",
    promptTokens: odd ? null : 12,
    completionTokens: odd ? null : 0,
    idempotentReplay: i % 3 === 0,
    guardrails: odd ? { pii_redacted: 2, 'quote"d': 1 } : null,
  };
}

describe.skipIf(!shared)("request log store on PostgreSQL", () => {
  test("batches of 1 to 40 rows: one prepared insert on the connection, every field read back as written", async () => {
    const db = await freshDatabase();
    // one connection, so pg_prepared_statements (per session) sees everything the store prepared
    const pg = openPostgres(db.url, { max: 1 });
    try {
      await pg.migrated;
      const store = new PostgresRequestLogStore(pg);
      const written: RequestRecord[] = [];
      for (let b = 1; b <= 40; b++) {
        const rows = Array.from({ length: b }, (_, i) => record(b, i));
        await store.insert(rows);
        written.push(...rows);
      }
      // a row already there is left as it was
      await store.insert([{ ...record(1, 0), status: 418 }]);
      const [{ n }] =
        await pg.sql`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement LIKE 'INSERT INTO request_log%'`;
      expect(n).toBe(1);
      const entries = await store.page({ accountId: "acct_store", limit: 1000 });
      expect(entries.length).toBe(written.length);
      const byId = new Map(entries.map((e) => [e.request_id, e]));
      for (const r of written) {
        const e = byId.get(r.requestId);
        expect(e).toEqual(entryWritten(r));
      }
    } finally {
      await pg.sql.close();
      await db.drop();
    }
  }, 30_000);
});
