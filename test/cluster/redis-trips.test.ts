/**
 * What a function call asks of Redis, counted from outside: a node on PostgreSQL and a Redis seen
 * through a counting proxy (resp-counter.ts), one call at a time. A call's limits, its
 * Idempotency-Key claim and its cache lookup go in one round trip, one script touching only its
 * account's keys (so a Redis Cluster serves it from one slot); a cache miss adds its single-flight
 * lock and the store, which frees the lock in the same trip.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { freshDatabase, freshRedis, REDIS_BASE_URL, sharedServersUp } from "../helpers/shared-servers";
import { startUpstream, type Upstream } from "../helpers/upstream";
import { admin, type Cluster, clusterConfig, newKey, startCluster } from "./nodes";
import { RespCounter } from "./resp-counter";

const shared = await sharedServersUp("the Redis round-trip tests");

let sim: Upstream;
let db: Awaited<ReturnType<typeof freshDatabase>>;
let cluster: Cluster;
let counter: RespCounter;
let redis: Awaited<ReturnType<typeof freshRedis>>;

beforeAll(async () => {
  if (!shared) return;
  sim = await startUpstream({ latencyMs: 1 });
  db = await freshDatabase();
  redis = await freshRedis();
  counter = new RespCounter(Number(new URL(REDIS_BASE_URL).port || 6379)).up();
  cluster = await startCluster({
    n: 1,
    databaseUrl: db.url,
    redisUrl: `redis://127.0.0.1:${counter.port}/${redis.db}`,
    redisPrefix: redis.prefix,
    configText: clusterConfig(`${sim.url}/v1`),
  });
}, 60_000);

afterAll(async () => {
  if (!shared) return;
  await cluster?.close();
  counter?.down();
  await db?.drop();
  await redis?.flush();
  await sim?.close();
}, 30_000);

const TEXT = "The delivery was quick and the staff were lovely.";

/** One sentiment-analysis call, and the Redis commands and round trips it made (heartbeats aside). */
async function counted(key: string, headers: Record<string, string> = {}, text = TEXT) {
  // what an earlier call left on its way (a lock freed after its answer) is not this call's
  await Bun.sleep(30);
  const mark = counter.commands.length;
  const res = await fetch(`${cluster.nodes[0].url}/api/v1/ai/sentiment-analysis`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": key, ...headers },
    body: JSON.stringify({ text }),
  });
  const body = await res.text();
  await Bun.sleep(30);
  const { commands, trips } = counter.since(mark);
  const names = commands.map((c) => c.args[0]?.toUpperCase());
  return { status: res.status, headers: res.headers, body, commands, names, trips };
}

const show = (r: Awaited<ReturnType<typeof counted>>) =>
  `${r.status} ${r.body.slice(0, 200)} | ${r.trips} trips: ${r.commands.map((c) => `${c.trip}:${c.args.slice(0, 4).join(" ")}`).join(", ")}`;

describe.skipIf(!shared)("a function call's round trips to Redis", () => {
  test("cache bypassed, no Idempotency-Key: one trip, one script (the limit)", async () => {
    const { key } = await newKey(cluster.nodes[0], 100);
    await counted(key, { "cache-control": "no-cache" }); // loads the script
    const r = await counted(key, { "cache-control": "no-cache" });
    expect(r.status, show(r)).toBe(200);
    expect(r.trips, show(r)).toBe(1);
    expect(r.names, show(r)).toEqual(["EVALSHA"]);
    expect(r.headers.get("ratelimit-limit")).toBeTruthy();
  });

  test("a cache hit with an Idempotency-Key: the limit, the claim and the lookup in one trip, then the answer kept", async () => {
    const { key, accountId } = await newKey(cluster.nodes[0], 100);
    const text = `cache me ${crypto.randomUUID()}`;
    const miss = await counted(key, {}, text);
    expect(miss.status, show(miss)).toBe(200);
    expect(miss.headers.get("x-cache")).toBe("MISS");
    // a miss: the first trip, the single-flight lock, the store (which frees the lock)
    expect(miss.trips, show(miss)).toBe(3);
    const hit = await counted(key, { "idempotency-key": `k-${crypto.randomUUID()}` }, text);
    expect(hit.status, show(hit)).toBe(200);
    expect(hit.headers.get("x-cache")).toBe("HIT");
    // the first trip, then the record's answer kept (before the answer leaves)
    expect(hit.trips, show(hit)).toBe(2);
    const first = hit.commands.filter((c) => c.trip === hit.commands[0]?.trip);
    expect(first.length, show(hit)).toBe(1);
    expect(first[0]?.args[0]?.toUpperCase()).toBe("EVALSHA");
    // every key of the first trip is the account's (one slot on a Redis Cluster)
    const keys = first[0]?.args.slice(3, 3 + Number(first[0]?.args[2])) ?? [];
    expect(keys.length).toBe(4);
    for (const k of keys) expect(k, show(hit)).toContain(accountId);
  });

  test("a key with its own limit: both buckets in the one trip; a refusal by either is 429 with nothing claimed", async () => {
    const { key, id } = await newKey(cluster.nodes[0], 100);
    expect(
      (await admin(cluster.nodes[0], "PATCH", `/admin/v1/keys/${id}`, { policy: { rate_limit_per_minute: 2 } })).status,
    ).toBe(200);
    // the key cache holds a policy for up to a second
    await Bun.sleep(1100);
    const idem = (n: number) => ({ "cache-control": "no-cache", "idempotency-key": `own-${n}` });
    const a = await counted(key, idem(1));
    expect(a.status, show(a)).toBe(200);
    expect(a.trips, show(a)).toBe(2);
    expect(a.headers.get("ratelimit-limit")).toBe("2");
    const b = await counted(key, idem(2));
    expect(b.status, show(b)).toBe(200);
    const c = await counted(key, idem(3));
    expect(c.status, show(c)).toBe(429);
    expect(c.trips, show(c)).toBe(1);
    expect(c.headers.get("retry-after")).toBeTruthy();
    expect(c.body).toContain("rate_limited");
    expect(c.names, show(c)).toEqual(["EVALSHA"]);
    // an invalid body on an empty bucket: 429, as when the edge took the limit before reading it
    const invalid = await fetch(`${cluster.nodes[0].url}/api/v1/ai/sentiment-analysis`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key },
      body: JSON.stringify({ nope: 1 }),
    });
    expect(invalid.status, await invalid.text()).toBe(429);
  });

  test("a refusal before the trip (an invalid body) still takes one request from the bucket", async () => {
    const { key } = await newKey(cluster.nodes[0], 100, "five");
    const bad = async () => {
      const res = await fetch(`${cluster.nodes[0].url}/api/v1/ai/sentiment-analysis`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key },
        body: JSON.stringify({ nope: 1 }),
      });
      return { status: res.status, limit: res.headers.get("ratelimit-remaining") };
    };
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await bad()).status);
    expect(statuses).toEqual([400, 400, 400]);
    const r = await counted(key, { "cache-control": "no-cache" });
    expect(r.status, show(r)).toBe(200);
    // 60 a minute for a standard function on plan five: three invalid calls and this one taken
    expect(Number(r.headers.get("ratelimit-remaining"))).toBe(56);
  });
});
