/**
 * A node whose own thread stalls past the Redis command timeout (a first call loading an engine,
 * a long synchronous step) has answers waiting in its sockets when the timer fires: they count,
 * and the stall is not taken for a Redis outage. Before, the event loop ran the due timers first:
 * three nodes started together and sent guarded calls at once refused 1 to 3 calls in 120 with 429
 * at the outage share of the limit, Redis up all along.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { RedisRateLimiter } from "../../src/ratelimit/redis";
import { RedisLink } from "../../src/redis/link";
import { freshRedis, freshRedisCluster, sharedServersUp, type TestRedis } from "../helpers/shared-servers";

const shared = await sharedServersUp("a node's own stall is not a Redis outage");
const cluster = await freshRedisCluster("a node's own stall is not a Redis outage, on a Redis Cluster");

const links: RedisLink[] = [];
const used: TestRedis[] = [];
afterAll(async () => {
  for (const l of links) await l.close();
  for (const r of used) await r.flush();
});

/** Keeps this thread busy for `ms`, as a synchronous step of a request would. */
function stall(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

const setups: [string, boolean, () => Promise<TestRedis>][] = [
  ["one Redis", shared, () => freshRedis()],
  ["a Redis Cluster", cluster !== null, async () => cluster!],
];

for (const [name, available, url] of setups) {
  describe.skipIf(!available)(`on ${name}`, () => {
    async function link(): Promise<RedisLink> {
      const r = await url();
      used.push(r);
      const l = new RedisLink(r.url, undefined, { commandTimeoutMs: 100, cluster: name !== "one Redis", prefix: r.prefix });
      links.push(l);
      l.start();
      expect(await l.ready()).toBe(true);
      return l;
    }

    test("answers that arrived while the thread was stalled past the timeout are taken", async () => {
      const l = await link();
      const sent = Array.from({ length: 10 }, (_, i) => l.send<number>("INCR", [l.key(`{acct:stall}:n${i}`)]));
      stall(250);
      expect(await Promise.all(sent)).toEqual(Array(10).fill(1));
      expect(l.up).toBe(true);
    });

    test("the rate limiter reads Redis's buckets, not this node's outage share, after a stall", async () => {
      const l = await link();
      const limiter = new RedisRateLimiter(l, { free: { "fn-a": 60 } });
      const decisions = Array.from({ length: 10 }, () => limiter.check("acc_stall", "free", "fn-a", "standard"));
      stall(250);
      const all = await Promise.all(decisions);
      expect(all.every((d) => d.allowed)).toBe(true);
      expect(limiter.stats.fallbacks).toBe(0);
      // ten taken from the one bucket that every node shares
      expect(Math.min(...all.map((d) => d.remaining))).toBeLessThanOrEqual(50);
    });

    test("a Redis that does not answer still times out", async () => {
      const l = await link();
      const key = l.key("{acct:stall}:busy");
      // a script that keeps the key's Redis busy for 1.5 s: the INCR behind it waits that long (the
      // timeout, 100 ms, and its grace after a late timer, at most 100 more, end long before)
      const busy = l
        .send("EVAL", [
          "local t = redis.call('TIME'); local s = t[1] * 1000000 + t[2]; repeat t = redis.call('TIME') until t[1] * 1000000 + t[2] - s > 1500000; return 1",
          "1",
          key,
        ])
        .catch(() => {});
      await Bun.sleep(20);
      const t = performance.now();
      const err = await l.send("INCR", [key]).catch((e) => e as Error);
      expect(String((err as Error).message)).toContain("did not answer INCR within 100 ms");
      expect(performance.now() - t).toBeLessThan(1400);
      await busy;
      await Bun.sleep(1600);
    });
  });
}
