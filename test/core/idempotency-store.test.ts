import { describe, expect, test } from "bun:test";
import { IdempotencyStore } from "../../src/http/idempotency";

const answer = (body: string) => ({ status: 200, body, headers: { "idempotent-replayed": "true" } });

describe("Idempotency-Key store bounds", () => {
  test("records expire after the TTL and are dropped as new ones arrive", () => {
    let now = 0;
    const store = new IdempotencyStore({ ttlMs: 1000, maxEntries: 100, maxBytes: 1 << 20 }, () => now);
    expect(store.begin("acc", "k1", "h1").state).toBe("new");
    store.complete("acc", "k1", answer("one"));
    expect(store.begin("acc", "k1", "h1").state).toBe("replay");
    expect(store.begin("acc", "k1", "other").state).toBe("mismatch");
    now = 1500;
    expect(store.begin("acc", "k2", "h2").state).toBe("new");
    // k1 expired and was swept by the newer record, bytes included
    expect(store.size()).toBe(1);
    store.complete("acc", "k2", answer("two"));
    expect(store.storedBytes()).toBeGreaterThan(0);
    now = 3000;
    expect(store.begin("acc", "k2", "h2").state).toBe("new");
    expect(store.storedBytes()).toBe(0);
  });

  test("stored bodies are bounded by bytes, oldest first", () => {
    const store = new IdempotencyStore({ ttlMs: 60_000, maxEntries: 1000, maxBytes: 10_000 }, () => 0);
    for (let i = 0; i < 20; i++) {
      store.begin("acc", `k${i}`, "h");
      store.complete("acc", `k${i}`, answer("x".repeat(1000)));
      expect(store.storedBytes()).toBeLessThanOrEqual(10_000);
    }
    expect(store.size()).toBeLessThan(11);
    // the newest answers are the ones kept
    expect(store.begin("acc", "k19", "h").state).toBe("replay");
    expect(store.begin("acc", "k0", "h").state).toBe("new");
  });

  test("bounded by count; an abandoned (failed) call may be retried", () => {
    const store = new IdempotencyStore({ ttlMs: 60_000, maxEntries: 3, maxBytes: 1 << 20 }, () => 0);
    for (const k of ["a", "b", "c", "d"]) store.begin("acc", k, "h");
    expect(store.size()).toBe(3);
    expect(store.begin("acc", "d", "h").state).toBe("in_flight");
    store.abandon("acc", "d");
    expect(store.begin("acc", "d", "h").state).toBe("new");
  });
});
