import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { hostname } from "node:os";
import type { IdempotencyStore as IdempotencyStoreInterface } from "../../src/idempotency/interface";
import { MemoryIdempotencyStore as IdempotencyStore } from "../../src/idempotency/memory";
import { SqliteIdempotencyStore } from "../../src/idempotency/sqlite";
import { migrate } from "../../src/storage/db";

const answer = (body: string) => ({ status: 200, body, headers: { "idempotent-replayed": "true" } });

describe("Idempotency-Key store bounds", () => {
  test("records expire after the TTL and are dropped as new ones arrive", () => {
    let now = 0;
    const store = new IdempotencyStore({ ttlMs: 1000, maxEntries: 100, maxBytes: 1 << 20 }, () => now);
    expect(store.begin("acc", "k1", "h1", "req-1").state).toBe("new");
    store.complete("acc", "k1", answer("one"));
    expect(store.begin("acc", "k1", "h1", "req-1").state).toBe("replay");
    expect(store.begin("acc", "k1", "other", "req-1").state).toBe("mismatch");
    now = 1500;
    expect(store.begin("acc", "k2", "h2", "req-1").state).toBe("new");
    // k1 expired and was swept by the newer record, bytes included
    expect(store.size()).toBe(1);
    store.complete("acc", "k2", answer("two"));
    expect(store.storedBytes()).toBeGreaterThan(0);
    now = 3000;
    expect(store.begin("acc", "k2", "h2", "req-1").state).toBe("new");
    expect(store.storedBytes()).toBe(0);
  });

  test("stored bodies are bounded by bytes, oldest first", () => {
    const store = new IdempotencyStore({ ttlMs: 60_000, maxEntries: 1000, maxBytes: 10_000 }, () => 0);
    for (let i = 0; i < 20; i++) {
      store.begin("acc", `k${i}`, "h", "req-1");
      store.complete("acc", `k${i}`, answer("x".repeat(1000)));
      expect(store.storedBytes()).toBeLessThanOrEqual(10_000);
    }
    expect(store.size()).toBeLessThan(11);
    // the newest answers are the ones kept
    expect(store.begin("acc", "k19", "h", "req-1").state).toBe("replay");
    expect(store.begin("acc", "k0", "h", "req-1").state).toBe("new");
  });

  test("bounded by count; an abandoned (failed) call may be retried", () => {
    const store = new IdempotencyStore({ ttlMs: 60_000, maxEntries: 3, maxBytes: 1 << 20 }, () => 0);
    for (const k of ["a", "b", "c", "d"]) store.begin("acc", k, "h", "req-1");
    expect(store.size()).toBe(3);
    expect(store.begin("acc", "d", "h", "req-1").state).toBe("in_flight");
    store.abandon("acc", "d");
    expect(store.begin("acc", "d", "h", "req-1").state).toBe("new");
  });
});

// One contract, every implementation (the Redis one of the many-nodes issue joins this list).
function sqliteStore(now: () => number) {
  const db = new Database(":memory:", { strict: true });
  migrate(db);
  return { db, store: new SqliteIdempotencyStore(db, { ttlMs: 1000, maxAnswerBytes: 100, leaseMs: 500 }, now) };
}
const implementations: [string, (now: () => number) => IdempotencyStoreInterface][] = [
  ["memory", (now) => new IdempotencyStore({ ttlMs: 1000, maxEntries: 100, maxBytes: 1 << 20 }, now)],
  ["sqlite", (now) => sqliteStore(now).store],
];

for (const [name, make] of implementations) {
  describe(`IdempotencyStore contract: ${name}`, () => {
    test("new, in flight, replay, mismatch, abandon, expiry", async () => {
      let now = 0;
      const s = make(() => now);
      expect((await s.begin("acc", "k", "h", "req-1")).state).toBe("new");
      expect((await s.begin("acc", "k", "h", "req-1")).state).toBe("in_flight");
      expect((await s.begin("other-account", "k", "h", "req-1")).state).toBe("new");
      await s.complete("acc", "k", answer("one"));
      const replay = await s.begin("acc", "k", "h", "req-1");
      expect(replay).toEqual({ state: "replay", response: answer("one") });
      expect((await s.begin("acc", "k", "h2", "req-1")).state).toBe("mismatch");
      expect((await s.begin("acc", "failed", "h", "req-1")).state).toBe("new");
      await s.abandon("acc", "failed");
      expect((await s.begin("acc", "failed", "h", "req-1")).state).toBe("new");
      now = 1001;
      expect((await s.begin("acc", "k", "h2", "req-1")).state).toBe("new");
    });
  });
}

describe("SQLite idempotency records outlive their process", () => {
  test("a record in flight in a process that died stops blocking at once; one past its lease too", () => {
    let now = 0;
    const { db, store } = sqliteStore(() => now);
    const insert = db.prepare(
      "INSERT INTO idempotency_keys (account_id, key, body_hash, status, owner, lease_until, created_at, expires_at) VALUES ('acc', ?, 'h', 'in_flight', ?, 500, 0, 1000)",
    );
    // a pid that does not exist on this host (above the kernel's pid_max)
    insert.run("dead", `${hostname()}|99999999|token`);
    // this process's pid, but no store of ours made it: the process before a restart
    insert.run("restarted", `${hostname()}|${process.pid}|old-token`);
    // another host: only its lease tells
    insert.run("remote", "elsewhere|1|token");
    expect(store.begin("acc", "dead", "h", "req-1").state).toBe("new");
    expect(store.begin("acc", "restarted", "h", "req-1").state).toBe("new");
    expect(store.begin("acc", "remote", "h", "req-1").state).toBe("in_flight");
    now = 600;
    expect(store.begin("acc", "remote", "h", "req-1").state).toBe("new");
  });

  test("an answer over the bound is not kept: a repeat is told so, never charged again", () => {
    const { store } = sqliteStore(() => 0);
    store.begin("acc", "big", "h", "req-1");
    store.complete("acc", "big", answer("x".repeat(101)));
    expect(store.begin("acc", "big", "h", "req-1").state).toBe("gone");
    expect(store.size()).toBe(1);
  });
});
