// Honest outages (CONTRACT section 11): a call refused because Redis cannot be read is answered
// 503 service_unavailable with Retry-After, never a 429 that blames the client; Redis's errors are
// told apart (a script Redis forgot is loaded again and the call goes on; an error reply is no
// outage) and counted by reason in /metrics.
import { afterAll, describe, expect, test } from "bun:test";
import { RedisClient } from "bun";
import { OutageShares } from "../../src/ratelimit/outage";
import { RedisUnavailable, redisErrorReason } from "../../src/redis/link";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { startLocalRedis } from "../helpers/redis-cluster";

const ADMIN = "admin-token-of-at-least-32-characters!!";
const servers: { stop(): void }[] = [];
const gateways: TestGateway[] = [];
afterAll(async () => {
  for (const g of gateways) await g.close();
  for (const s of servers) s.stop();
});

async function gatewayOn(redisUrl: string): Promise<TestGateway> {
  const gw = await startGateway({ env: { TEXTAI_REDIS_URL: redisUrl, TEXTAI_ADMIN_TOKEN: ADMIN } });
  gateways.push(gw);
  return gw;
}

const call = (gw: TestGateway, key: string, text = "I love it") =>
  gw.post("/api/v1/ai/sentiment-analysis", { text }, { "x-api-key": key, "cache-control": "no-cache" });

async function metric(gw: TestGateway, line: string): Promise<number> {
  const text = await (await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).text();
  const found = text.split("\n").find((l) => l.startsWith(`${line} `));
  return found ? Number(found.slice(line.length + 1)) : 0;
}

describe("a node whose Redis cannot be read", () => {
  test("started with Redis unreachable: its first charged call is 503 with Retry-After, not 429, and costs nothing", async () => {
    // a port nobody listens on: the node starts, Redis never answers
    const gone = await startLocalRedis();
    gone.stop();
    await Bun.sleep(100);
    const gw = await gatewayOn(gone.url);
    const { key, accountId } = gw.newKey({ credits: 10 });
    const r = await call(gw, key);
    expect(r.status, JSON.stringify(r.json)).toBe(503);
    expect(r.json.error.code).toBe("service_unavailable");
    expect(r.json.message).toContain("Redis");
    expect(r.json.message).not.toContain("exceeded");
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(r.json.meta.credits_deducted).toBe(0);
    expect(await gw.deps.ledger.balance(accountId)).toBe(10);
    expect(await metric(gw, 'textai_redis_errors_total{reason="connection"}')).toBeGreaterThan(0);
  });

  test("a Redis that answers with an error (out of memory) is no outage: 503, counted as oom, and the client is never told it exceeded a limit", async () => {
    const full = await startLocalRedis(["--maxmemory", "1", "--maxmemory-policy", "noeviction"]);
    servers.push(full);
    const gw = await gatewayOn(full.url);
    const { key } = gw.newKey({ credits: 10 });
    for (let i = 0; i < 3; i++) {
      const r = await call(gw, key, `refused ${i}`);
      expect(r.status, JSON.stringify(r.json)).toBe(503);
      expect(r.json.error.code).toBe("service_unavailable");
      expect(r.headers.get("retry-after")).toBe("1");
    }
    expect(await metric(gw, 'textai_redis_errors_total{reason="oom"}')).toBeGreaterThanOrEqual(3);
    // the refusals took nothing from the node's outage share: once Redis takes writes again, calls pass
    const admin = new RedisClient(full.url);
    await admin.send("CONFIG", ["SET", "maxmemory", "0"]);
    admin.close();
    const ok = await call(gw, key, "served again");
    expect(ok.status, JSON.stringify(ok.json)).toBe(200);
  });

  test("a Redis that forgot its scripts (SCRIPT FLUSH, a restart): every concurrent call is served, the reloads counted as noscript", async () => {
    const own = await startLocalRedis();
    servers.push(own);
    const gw = await gatewayOn(own.url);
    const { key } = gw.newKey({ credits: 100 });
    expect((await call(gw, key, "warm")).status).toBe(200);
    const admin = new RedisClient(own.url);
    await admin.send("SCRIPT", ["FLUSH"]);
    admin.close();
    const all = await Promise.all(Array.from({ length: 20 }, (_, i) => call(gw, key, `after the flush ${i}`)));
    expect(all.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(await metric(gw, 'textai_redis_errors_total{reason="noscript"}')).toBeGreaterThanOrEqual(1);
    expect(await metric(gw, 'textai_redis_errors_total{reason="connection"}')).toBe(0);
  });
});

describe("a node's own share of a limit while Redis is down", () => {
  test("a refusal short of the whole limit is the outage's (unavailable); past the whole limit on this node alone, the client's (429)", () => {
    let now = 1_000_000;
    const shares = new OutageShares(() => now);
    // one node, a limit of 6 a minute; Redis lost 30 s ago: the share has refilled 3
    const lostAt = now - 30_000;
    const first = Array.from({ length: 4 }, () => shares.take("b", 6, 6, lostAt));
    expect(first.map((d) => d.allowed)).toEqual([true, true, true, false]);
    expect(first[3]?.unavailable).toBe(true);
    // a minute on, refilled: 6 more admitted within the minute, then the node alone has admitted the
    // whole limit in the last minute: the client exceeded it
    now += 60_000;
    const next = Array.from({ length: 7 }, () => shares.take("b", 6, 6, lostAt));
    expect(next.filter((d) => d.allowed).length).toBe(6);
    expect(next[6]?.allowed).toBe(false);
    expect(next[6]?.unavailable).toBeUndefined();
  });

  test("Redis's errors are told apart by reason", () => {
    expect(redisErrorReason(new RedisUnavailable())).toBe("connection");
    expect(redisErrorReason(new RedisUnavailable("redis did not answer EVALSHA within 1000 ms"))).toBe("timeout");
    expect(redisErrorReason(new Error("OOM command not allowed when used memory > 'maxmemory'."))).toBe("oom");
    expect(redisErrorReason(new Error("NOSCRIPT No matching script. Please use EVAL."))).toBe("noscript");
    expect(redisErrorReason(new Error("something else"))).toBe("other");
  });
});
