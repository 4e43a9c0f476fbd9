// The request log's backlog (src/requestlog/backlog.ts): oldest first, at most its capacity, the
// oldest dropped past it; and the recorder over a real SQLite file whose write lock another
// process's transaction holds: what waits is bounded, the oldest go, the rest are written in order.
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Backlog } from "../../src/requestlog/backlog";
import type { RequestRecord } from "../../src/requestlog/interface";
import { RequestLog } from "../../src/requestlog/recorder";
import { SqliteRequestLogStore } from "../../src/requestlog/sqlite";
import { openStorage } from "../../src/storage/db";

describe("Backlog", () => {
  test("oldest first; past its capacity each append drops the oldest, across wrap-arounds", () => {
    const b = new Backlog<number>(4);
    let dropped = 0;
    for (let i = 0; i < 11; i++) dropped += b.push(i);
    expect({ length: b.length, dropped }).toEqual({ length: 4, dropped: 7 });
    expect(b.take(3)).toEqual([7, 8, 9]);
    for (const i of [11, 12]) dropped += b.push(i);
    expect(b.take(10)).toEqual([10, 11, 12]);
    expect(b.take(1)).toEqual([]);
    expect(b.length).toBe(0);
  });

  test("rows put back go in front; when they do not all fit, the oldest of them are dropped", () => {
    const b = new Backlog<number>(5);
    for (let i = 0; i < 5; i++) b.push(i);
    const taken = b.take(3);
    b.push(5);
    b.push(6); // while the write was out: 3 4 5 6 wait
    expect(b.putBack(taken)).toBe(2); // room for one: 2 is kept, 0 and 1 dropped
    expect(b.take(10)).toEqual([2, 3, 4, 5, 6]);
    for (let i = 0; i < 3; i++) b.push(i);
    expect(b.putBack([7, 8])).toBe(0);
    expect(b.take(10)).toEqual([7, 8, 0, 1, 2]);
  });
});

const dir = mkdtempSync(join(tmpdir(), "textai-backlog-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const row = (i: number): RequestRecord => ({
  requestId: `req_backlog_${String(i).padStart(3, "0")}`,
  time: 1_700_000_000_000 + i,
  accountId: "acc",
  keyId: "key",
  method: "GET",
  path: "/api/v1/account/usage",
  function: "account",
  status: 200,
  errorCode: null,
  provider: null,
  model: null,
  latencyMs: 1,
  credits: 0,
  cache: null,
  promptTokens: null,
  completionTokens: null,
  idempotentReplay: false,
  guardrails: null,
});

test("on a real SQLite file: while it cannot be written, at most maxPending rows wait and the oldest go; then the rest are written in order", async () => {
  const path = join(dir, "log.db");
  const storage = openStorage(path, { busyTimeoutMs: 10 });
  const log = new RequestLog(new SqliteRequestLogStore(storage.sqlite), { retentionDays: 30, maxPending: 10, batch: 4 });
  const other = new Database(path);
  other.run("BEGIN IMMEDIATE");
  for (let i = 0; i < 8; i++) log.record(row(i));
  await log.flush(); // fails: the rows are put back
  for (let i = 8; i < 15; i++) log.record(row(i));
  await log.flush();
  expect({ backlog: log.backlog, dropped: log.dropped }).toEqual({ backlog: 10, dropped: 5 });
  other.run("COMMIT");
  other.close();
  await log.flush();
  expect(log.backlog).toBe(0);
  const written = storage.sqlite
    .query<{ request_id: string }, []>("SELECT request_id FROM request_log ORDER BY rowid")
    .all()
    .map((r) => r.request_id);
  expect(written).toEqual(Array.from({ length: 10 }, (_, k) => row(k + 5).requestId));
  storage.close();
});

test("a flush writes SQLite's rows 5,000 to an insert (one transaction each), or `batch` when the recorder is given one", async () => {
  /** the real store, counting the rows each insert was handed */
  class CountingStore extends SqliteRequestLogStore {
    inserts: number[] = [];
    override insert(rows: RequestRecord[]): void {
      this.inserts.push(rows.length);
      super.insert(rows);
    }
  }
  const storage = openStorage(join(dir, "batches.db"));
  const store = new CountingStore(storage.sqlite);
  const log = new RequestLog(store, { retentionDays: 30 });
  for (let i = 0; i < 6001; i++) log.record({ ...row(i), requestId: `req_batch_${i}` });
  await log.flush();
  expect(store.inserts).toEqual([5000, 1001]);
  const given = new RequestLog(store, { retentionDays: 30, batch: 400 });
  for (let i = 0; i < 1000; i++) given.record({ ...row(i), requestId: `req_given_${i}` });
  await given.flush();
  expect(store.inserts.slice(2)).toEqual([400, 400, 200]);
  expect(storage.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM request_log").get()?.n).toBe(7001);
  storage.close();
});
