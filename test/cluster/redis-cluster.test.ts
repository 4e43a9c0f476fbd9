/**
 * The Redis link in cluster mode against a real Redis Cluster of three local redis-server
 * processes (test/helpers/redis-cluster.ts; CI's comes from TEXTAI_TEST_REDIS_CLUSTER): slots as
 * the cluster computes them, each account's keys on one node and accounts spread over all, a slot
 * moved under the link (ASK while it migrates, MOVED after), pub/sub across nodes.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { RedisClient } from "bun";
import { loadConfig } from "../../src/config";
import { RedisRateLimiter } from "../../src/ratelimit/redis";
import { slotOf } from "../../src/redis/cluster";
import { RedisLink, RedisUnavailable } from "../../src/redis/link";
import { clusterMasters } from "../helpers/redis-cluster";
import { freshRedisCluster } from "../helpers/shared-servers";

const cluster = await freshRedisCluster("the Redis Cluster link tests");

const links: RedisLink[] = [];
const direct = new Map<string, RedisClient>();
async function client(url: string): Promise<RedisClient> {
  let c = direct.get(url);
  if (!c) {
    c = new RedisClient(url, { autoReconnect: false });
    await c.connect();
    direct.set(url, c);
  }
  return c;
}
async function link(): Promise<RedisLink> {
  const l = new RedisLink(cluster!.url, undefined, { cluster: true, prefix: cluster!.prefix });
  links.push(l);
  l.start();
  expect(await l.ready()).toBe(true);
  return l;
}

afterAll(async () => {
  for (const l of links) await l.close();
  for (const c of direct.values()) c.close();
  await cluster?.flush();
});

describe.skipIf(!cluster)("the Redis link on a Redis Cluster", () => {
  test("slots are the cluster's own (CLUSTER KEYSLOT), hash tags included", async () => {
    const masters = await clusterMasters(cluster!.url);
    const c = await client(masters[0].url);
    const keys = [
      "a",
      "foo",
      "textai:nodes",
      "textai:{acct:acc_123}:rl:chat-completions",
      "textai:{acct:acc_123}:cacheidx",
      "{}x",
      "x{}{y}",
      "{user1000}.following",
      "textai:{signin}:guess:c:abc",
      "ümlaut:{ß}",
      "",
    ];
    for (let i = 0; i < 50; i++) keys.push(`textai:{acct:acc_${crypto.randomUUID()}}:idem:x`);
    for (const k of keys) expect([k, slotOf(k)]).toEqual([k, Number(await c.send("CLUSTER", ["KEYSLOT", k]))]);
  });

  test("an account's keys share one slot; accounts spread over all three masters; scripts run on their node", async () => {
    const l = await link();
    const masters = await clusterMasters(cluster!.url);
    expect(masters.length).toBe(3);
    const nodeOfSlot = (slot: number) => masters.find((m) => m.slots.some(([a, b]) => slot >= a && slot <= b))!.url;
    const used = new Set<string>();
    for (let i = 0; i < 30; i++) {
      const acc = `acc_${i}`;
      const keys = ["rl", "idem", "cache", "cacheidx"].map((kind) => l.accountKey(acc, kind, "x"));
      expect(new Set(keys.map(slotOf)).size).toBe(1);
      // a two-key script of one account: refused by Redis (CROSSSLOT) unless both share the slot
      expect(
        await l.eval<number>("redis.call('SET', KEYS[1], '1'); redis.call('SET', KEYS[2], '2'); return 2", keys.slice(0, 2), []),
      ).toBe(2);
      const node = nodeOfSlot(slotOf(keys[0]));
      used.add(node);
      const onNode = await client(node);
      // both keys live on that node's slot (other tests' keys may share the slot: only ours are looked for)
      const inSlot = (await onNode.send("CLUSTER", ["GETKEYSINSLOT", String(slotOf(keys[0])), "1000"])) as string[];
      expect(inSlot).toEqual(expect.arrayContaining(keys.slice(0, 2)));
    }
    expect(used.size).toBe(3);
    // keys of two accounts in one script are refused before they leave the node
    await expect(l.eval("return 1", [l.accountKey("acc_0", "rl", "x"), l.accountKey("acc_1", "rl", "x")], [])).rejects.toThrow(
      "CROSSSLOT",
    );
  });

  test("a slot moved under the link: ASK while it migrates, MOVED once it has moved, the map read again", async () => {
    const l = await link();
    const masters = await clusterMasters(cluster!.url);
    // a slot no other test's key is in: moving it moves nothing but ours
    const ownerOf = (slot: number) => masters.find((m) => m.slots.some(([a, b]) => slot >= a && slot <= b))!.url;
    let key = "";
    for (let i = 0; i < 100; i++) {
      key = l.accountKey(`acc_move_${crypto.randomUUID()}`, "rl", "f");
      const empty = Number(await (await client(ownerOf(slotOf(key)))).send("CLUSTER", ["COUNTKEYSINSLOT", String(slotOf(key))]));
      if (empty === 0) break;
    }
    const slot = slotOf(key);
    const from = ownerOf(slot);
    const to = masters.find((m) => m.url !== from)!.url;
    const [src, dst] = [await client(from), await client(to)];
    const [srcId, dstId] = [String(await src.send("CLUSTER", ["MYID"])), String(await dst.send("CLUSTER", ["MYID"]))];
    await l.send("SET", [key, "before"]);
    expect(await l.send("GET", [key])).toBe("before");
    await dst.send("CLUSTER", ["SETSLOT", String(slot), "IMPORTING", srcId]);
    await src.send("CLUSTER", ["SETSLOT", String(slot), "MIGRATING", dstId]);
    // the key moves; the slot is still the source's: the source answers ASK, and the link asks the target
    const port = (u: string) => new URL(u).port;
    await src.send("MIGRATE", ["127.0.0.1", port(to), key, "0", "5000"]);
    const stats = l.cluster!.stats;
    const maps = stats.maps;
    expect(await l.send("GET", [key])).toBe("before");
    expect(await l.eval("return redis.call('SET', KEYS[1], ARGV[1])", [key], ["during"])).toBe("OK");
    // (the script's EVALSHA is asked, then NOSCRIPT on the target, then its EVAL is asked again)
    expect(stats.ask).toBeGreaterThanOrEqual(2);
    expect(stats.moved).toBe(0);
    for (const c of [dst, src, ...(await Promise.all(masters.map((m) => client(m.url))))])
      await c.send("CLUSTER", ["SETSLOT", String(slot), "NODE", dstId]);
    // the link's map still names the source: MOVED, followed, and the map read again
    expect(await l.send("GET", [key])).toBe("during");
    // MOVED fixes the slot at once; the whole map is read again in the background: wait for both
    for (let i = 0; i < 200 && (l.cluster!.nodeOf(key) !== `127.0.0.1:${port(to)}` || stats.maps <= maps); i++)
      await Bun.sleep(10);
    expect(l.cluster!.nodeOf(key)).toBe(`127.0.0.1:${port(to)}`);
    expect(stats.moved).toBe(1);
    expect(stats.maps).toBeGreaterThan(maps);
    expect(Number(await dst.send("CLUSTER", ["COUNTKEYSINSLOT", String(slot)]))).toBe(1);
    expect(Number(await src.send("CLUSTER", ["COUNTKEYSINSLOT", String(slot)]))).toBe(0);
  });

  test("a message published through one link reaches a subscriber on another, whichever nodes they hold", async () => {
    const [a, b] = [await link(), await link()];
    const got: string[] = [];
    b.subscribe(b.key("test"), (m) => got.push(m));
    await Bun.sleep(50);
    for (let i = 0; i < 5; i++) a.publish(a.key("test"), `m${i}`);
    for (let i = 0; i < 100 && got.length < 5; i++) await Bun.sleep(10);
    expect(got).toEqual(["m0", "m1", "m2", "m3", "m4"]);
  });

  test("a master's connections cut: the link is down (commands refused at once, downSince set), then back within a second", async () => {
    const l = await link();
    const masters = await clusterMasters(cluster!.url);
    const victim = masters[1];
    const key = (() => {
      for (let i = 0; ; i++) {
        const k = l.accountKey(`acc_cut_${i}`, "rl", "f");
        const s = slotOf(k);
        if (victim.slots.some(([a, b]) => s >= a && s <= b)) return k;
      }
    })();
    await l.send("SET", [key, "1"]);
    const c = await client(victim.url);
    await c.send("CLIENT", ["KILL", "TYPE", "normal", "SKIPME", "yes"]);
    await c.send("CLIENT", ["KILL", "TYPE", "pubsub", "SKIPME", "yes"]);
    for (let i = 0; i < 100 && l.up; i++) await Bun.sleep(5);
    expect(l.up).toBe(false);
    expect(l.downSince()).not.toBeNull();
    await expect(l.send("GET", [key])).rejects.toBeInstanceOf(RedisUnavailable);
    // reconnects within about a second (the refused command, or the link's timer, starts it)
    let back = false;
    for (let i = 0; i < 60 && !back; i++) {
      await Bun.sleep(50);
      back = l.up;
    }
    expect(back).toBe(true);
    expect(l.downSince()).toBeNull();
    expect(await l.send("GET", [key])).toBe("1");
  });

  test("heartbeats count the links alive, whichever node holds the key", async () => {
    const before = await link();
    await link();
    for (let i = 0; i < 100 && before.nodes() < 2; i++) await Bun.sleep(20);
    expect(before.nodes()).toBeGreaterThanOrEqual(2);
  });

  test("a node's first calls, while its link is still reaching the cluster, are counted in Redis, not refused as in an outage", async () => {
    // before: the limiter took the link for down and fell back to an outage share that starts
    // empty, so the first rate-limited calls of a freshly started node were refused with 429
    const l = new RedisLink(cluster!.url, undefined, { cluster: true, prefix: cluster!.prefix });
    links.push(l);
    l.start();
    expect(l.up).toBe(false);
    const limiter = new RedisRateLimiter(l, { free: { "fn-a": 60 } });
    const acc = `acc_${crypto.randomUUID()}`;
    const decisions = await Promise.all([1, 2, 3].map(() => limiter.check(acc, "free", "fn-a", "standard")));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true]);
    expect(decisions.map((d) => d.remaining).sort()).toEqual([57, 58, 59]);
    expect(limiter.stats.fallbacks).toBe(0);
    expect(l.whenStarted()).toBeNull();
  });
});

describe("TEXTAI_REDIS_CLUSTER", () => {
  const load = (env: Record<string, string>) => {
    const c = loadConfig(env, "");
    return { url: c.redisUrl, cluster: c.redisCluster };
  };
  test("true: TEXTAI_REDIS_URL names one or more seed nodes, comma-separated, database 0 only", () => {
    expect(load({ TEXTAI_REDIS_URL: "redis://a:7000,rediss://u:p@b:7001", TEXTAI_REDIS_CLUSTER: "true" })).toEqual({
      url: "redis://a:7000,rediss://u:p@b:7001",
      cluster: true,
    });
    expect(load({ TEXTAI_REDIS_URL: "redis://a:7000/0", TEXTAI_REDIS_CLUSTER: "true" }).cluster).toBe(true);
    expect(() => load({ TEXTAI_REDIS_URL: "redis://a:7000/3", TEXTAI_REDIS_CLUSTER: "true" })).toThrow("only database 0");
    expect(() => load({ TEXTAI_REDIS_URL: "redis://a:7000,http://b", TEXTAI_REDIS_CLUSTER: "true" })).toThrow("redis://");
    expect(() => load({ TEXTAI_REDIS_CLUSTER: "true" })).toThrow("needs TEXTAI_REDIS_URL");
    expect(() => load({ TEXTAI_REDIS_URL: "redis://a:1", TEXTAI_REDIS_CLUSTER: "yes" })).toThrow("TEXTAI_REDIS_CLUSTER");
  });
  test("unset or false: one Redis, as before; a list of nodes asks for the setting", () => {
    expect(load({ TEXTAI_REDIS_URL: "redis://a:6379/2" })).toEqual({ url: "redis://a:6379/2", cluster: false });
    expect(load({ TEXTAI_REDIS_URL: "redis://a:6379/2", TEXTAI_REDIS_CLUSTER: "false" }).cluster).toBe(false);
    expect(() => load({ TEXTAI_REDIS_URL: "redis://a:7000,redis://b:7001" })).toThrow("set TEXTAI_REDIS_CLUSTER=true");
  });
});
