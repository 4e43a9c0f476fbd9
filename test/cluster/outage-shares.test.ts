/**
 * The shares a node limits with while Redis is down (src/ratelimit/outage.ts), on a clock the test
 * moves: never more than one bucket of the limit over N nodes, and what was admitted meanwhile is
 * handed to Redis when it is back. test/cluster/outages.test.ts measures the same on three nodes.
 */
import { expect, test } from "bun:test";
import { OutageShares } from "../../src/ratelimit/outage";

function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, move: (ms: number) => (t += ms) };
}

/** How many of `n` calls the share admits at once. */
const burst = (s: OutageShares, n: number, limit: number, share: number, lostAt: number | null = null) =>
  Array.from({ length: n }, () => s.take("k", limit, share, lostAt)).filter((d) => d.allowed).length;

test("a share starts empty when Redis was lost and refills at limit/N a minute, never above limit/N", () => {
  const c = clock();
  const s = new OutageShares(c.now);
  expect(burst(s, 10, 60, 20, c.now())).toBe(0);
  c.move(3_000); // one call of 20 a minute
  expect(burst(s, 10, 60, 20)).toBe(1);
  c.move(600_000); // long idle: full, 20
  expect(burst(s, 50, 60, 20)).toBe(20);
});

test("a share made later in the outage holds what it refilled since Redis was lost", () => {
  const c = clock();
  const s = new OutageShares(c.now);
  const lost = c.now();
  s.take("other", 60, 20, lost);
  c.move(30_000);
  expect(burst(s, 50, 60, 20, lost)).toBe(10);
});

test("a share below one call (limit 2 over 3 nodes) admits nothing, so the nodes never pass the limit", () => {
  const c = clock();
  const s = new OutageShares(c.now);
  s.take("k", 2, 2 / 3, c.now());
  c.move(3_600_000);
  const d = s.take("k", 2, 2 / 3);
  expect({ allowed: d.allowed, limit: d.limit, retry: d.retryAfterSeconds }).toEqual({ allowed: false, limit: 0, retry: 60 });
});

test("settle pays the calls of the last minute, then the outage is over", async () => {
  const c = clock();
  const s = new OutageShares(c.now);
  const lost = c.now();
  c.move(120_000); // full: 20
  expect(burst(s, 20, 60, 20, lost)).toBe(20);
  c.move(70_000); // those are more than a minute old; 20 refilled since, 5 taken now
  expect(burst(s, 5, 60, 20)).toBe(5);
  const paid: [string, number, number][] = [];
  await s.settle(async (id, calls, limit) => {
    paid.push([id, calls, limit]);
  });
  expect(paid).toEqual([["k", 5, 60]]);
  expect(s.active).toBe(false);
  expect(s.size()).toBe(0);
});

test("a payment that fails keeps its share for the next settle", async () => {
  const c = clock();
  const s = new OutageShares(c.now);
  c.move(1);
  s.take("k", 60, 20, c.now() - 60_000);
  await expect(s.settle(async () => Promise.reject(new Error("redis gone again")))).rejects.toThrow("redis gone again");
  expect(s.active).toBe(true);
  const paid: number[] = [];
  await s.settle(async (_id, calls) => {
    paid.push(calls);
  });
  expect(paid).toEqual([1]);
});
