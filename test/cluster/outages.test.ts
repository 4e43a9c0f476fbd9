/**
 * What each shared dependency's outage does (docs/cluster.md), on three nodes that reach
 * PostgreSQL and Redis through TCP proxies the test takes down and brings back.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { freshDatabase, freshRedis, sharedServersUp } from "../helpers/shared-servers";
import { startUpstream, type Upstream } from "../helpers/upstream";
import { ADMIN, admin, type Cluster, chat, clusterConfig, type Node, newKey, startCluster } from "./nodes";
import { TcpProxy } from "./tcp-proxy";

const shared = await sharedServersUp("the outage tests of the cluster");

let sim: Upstream;
let db: Awaited<ReturnType<typeof freshDatabase>>;
let cluster: Cluster;
let redis: Awaited<ReturnType<typeof freshRedis>>;
const pgProxy = new TcpProxy(5432);
const redisProxy = new TcpProxy(6379);

beforeAll(async () => {
  if (!shared) return;
  sim = await startUpstream({ latencyMs: 5 });
  db = await freshDatabase();
  redis = await freshRedis();
  pgProxy.up();
  redisProxy.up();
  const dbUrl = new URL(db.url);
  dbUrl.port = String(pgProxy.port);
  cluster = await startCluster({
    n: 3,
    databaseUrl: dbUrl.toString(),
    redisUrl: `redis://127.0.0.1:${redisProxy.port}/${redis.db}`,
    redisPrefix: redis.prefix,
    configText: clusterConfig(`${sim.url}/v1`),
  });
  // every node's heartbeat has been seen: each knows there are three
  await Bun.sleep(2200);
}, 60_000);

afterAll(async () => {
  if (!shared) return;
  pgProxy.up();
  redisProxy.up();
  await cluster?.close();
  pgProxy.down();
  redisProxy.down();
  await db?.drop();
  await redis?.flush();
  await sim?.close();
}, 30_000);

async function ready(node: Node) {
  const res = await fetch(`${node.url}/ready`);
  const json = (await res.json()) as { message: string; data?: { result?: Record<string, unknown> } };
  return {
    status: res.status,
    message: json.message,
    result: json.data?.result ?? {},
    retryAfter: res.headers.get("retry-after"),
  };
}

async function call(node: Node, key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(node.url + path, {
    method,
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  // biome-ignore lint/suspicious/noExplicitAny: the test walks the envelope; assertions check its shape
  return { status: res.status, headers: res.headers, text, json: JSON.parse(text) as any };
}

async function dependencyUp(node: Node, name: string): Promise<number> {
  const text = await (await fetch(`${node.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).text();
  const m = text.match(new RegExp(`^textai_dependency_up\\{dependency="${name}"\\} (\\d)`, "m"));
  return Number(m?.[1]);
}

async function eventually(what: string, check: () => Promise<boolean>, ms = 8000): Promise<number> {
  const t0 = performance.now();
  while (performance.now() - t0 < ms) {
    if (await check()) return performance.now() - t0;
    await Bun.sleep(100);
  }
  throw new Error(`${what}: not within ${ms} ms`);
}

describe.skipIf(!shared)("outages of the shared servers", () => {
  test("Redis down: calls still answered and charged, cache misses, limits become limit/N per node, Idempotency-Key 503; back by itself", async () => {
    const [n1, n2, n3] = cluster.nodes;
    const pro = await newKey(n1, 100);
    const five = await newKey(n1, 100, "five");
    redisProxy.down();

    for (const n of cluster.nodes) {
      const r = await ready(n);
      expect(r.status).toBe(200);
      expect(r.result.redis).toBe("unavailable");
      expect(r.result.missing).toEqual(["redis"]);
      expect(r.message).toContain("without redis");
      expect(await dependencyUp(n, "redis")).toBe(0);
    }

    // the limits' shares start empty with the outage (below): the pro plan's share, 3,333 a minute,
    // refills a call every 18 ms
    await Bun.sleep(100);
    const a = await chat(n1, pro.key, "redis is down");
    const b = await chat(n1, pro.key, "redis is down");
    expect(a.status, a.text).toBe(200);
    expect(b.status).toBe(200);
    expect(b.headers.get("x-cache")).toBe("MISS");

    // each node limits with its share, 5/3 a minute, empty when the outage begins (Redis may have
    // admitted the whole limit just before): nothing at once, the next call 36 s later
    const limited = await Promise.all(Array.from({ length: 15 }, (_, i) => chat(cluster.nodes[i % 3], five.key, `five ${i}`)));
    expect(limited.filter((r) => r.status === 200).length, limited.map((r) => r.status).join(",")).toBe(0);
    expect(limited.map((r) => r.status)).toEqual(Array(15).fill(503));
    expect(limited[0]?.headers.get("ratelimit-limit")).toBe("1");
    expect(Number(limited[0]?.headers.get("retry-after"))).toBeGreaterThan(30);

    // a revocation cannot be broadcast: the other nodes refuse the key once their 1 s key cache expires
    const doomed = await newKey(n1, 10);
    // (/v1/models is rate-limited like every authenticated route, and the shares start empty: a 503
    // for the unreadable limit also says the key is known; never a 429, which would blame the client)
    for (const n of [n2, n3])
      expect([200, 503]).toContain((await fetch(`${n.url}/v1/models`, { headers: { "x-api-key": doomed.key } })).status);
    expect((await admin(n1, "DELETE", `/admin/v1/keys/${doomed.id}`)).status).toBe(200);
    const t0 = performance.now();
    const refused = await eventually("revocation without Redis", async () =>
      (await Promise.all([n2, n3].map((n) => fetch(`${n.url}/v1/models`, { headers: { "x-api-key": doomed.key } })))).every(
        (r) => r.status === 401,
      ),
    );
    console.log(`revocation while Redis is down: refused on the other nodes after ${refused.toFixed(0)} ms (key-cache TTL 1 s)`);
    expect(performance.now() - t0).toBeLessThan(1600);

    // (past the revocation's second: sentiment-analysis's share on n2, 100 a minute, has refilled a call)
    const idem = await fetch(`${n2.url}/api/v1/ai/sentiment-analysis`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": pro.key, "idempotency-key": "while-redis-is-down" },
      body: JSON.stringify({ text: "fine" }),
    });
    expect(idem.status).toBe(503);
    expect(idem.headers.get("retry-after")).toBe("1");

    redisProxy.up();
    const back = await eventually("redis back on every node", async () =>
      (await Promise.all(cluster.nodes.map(ready))).every((r) => r.result.redis === "ok"),
    );
    console.log(`redis outage: every node reconnected ${back.toFixed(0)} ms after Redis came back`);
    expect(await dependencyUp(n3, "redis")).toBe(1);
    expect((await chat(n2, pro.key, "after the outage")).headers.get("x-cache")).toBe("MISS");
    expect((await chat(n3, pro.key, "after the outage")).headers.get("x-cache")).toBe("HIT");
  }, 30_000);

  test("Redis down and back: three nodes together never admit more than one bucket of the limit (60/min)", async () => {
    const { key } = await newKey(cluster.nodes[0], 1000, "sixty");
    const statuses: number[] = [];
    // `n` calls spread over the three nodes at once; what each answered is kept
    // refused while Redis is down: 503 (the limit cannot be read; no node alone admits the whole
    // limit here), never 429; refused while it is up: 429
    let redisDown = false;
    const burst = async (n: number, tag: string) => {
      const rs = await Promise.all(Array.from({ length: n }, (_, i) => chat(cluster.nodes[i % 3], key, `${tag} ${i}`)));
      for (const r of rs) expect(redisDown ? [200, 503] : [200, 429], r.text).toContain(r.status);
      statuses.push(...rs.map((r) => r.status));
      return rs.filter((r) => r.status === 200).length;
    };
    const t0 = performance.now();
    const before = await burst(10, "before");
    redisProxy.down();
    await eventually("every node sees Redis down", async () =>
      (await Promise.all(cluster.nodes.map(ready))).every((r) => r.result.redis === "unavailable"),
    );
    redisDown = true;
    // for 4 s, 6 calls every half second: each node's share refills a call every 3 s
    let during = 0;
    for (let wave = 0; wave < 8; wave++) {
      during += await burst(6, `during ${wave}`);
      await Bun.sleep(500);
    }
    redisProxy.up();
    await eventually("redis back on every node", async () =>
      (await Promise.all(cluster.nodes.map(ready))).every((r) => r.result.redis === "ok"),
    );
    redisDown = false;
    const after = await burst(75, "after");
    const seconds = (performance.now() - t0) / 1000;
    const admitted = before + during + after;
    console.log(
      `60/min over three nodes, Redis cut and back within ${seconds.toFixed(1)} s: ${before} admitted before, ${during} during, ${after} after`,
    );
    expect(before).toBe(10);
    // the shares start empty, then refill: the nodes still answer during the outage
    expect(during).toBeGreaterThanOrEqual(1);
    // a token bucket of 60 refilled at 1 a second admits at most 60 + 1 a second since the first
    // call; before, each node's bucket of 20 started full (10 + 60 at once, and more as they
    // refilled), and Redis did not know of them after (its remaining 50 and its refill)
    expect(admitted, statuses.join(",")).toBeLessThanOrEqual(60 + Math.ceil(seconds));
    // and the limit is still served: Redis admits what is left after it
    expect(admitted).toBeGreaterThanOrEqual(55);
  }, 30_000);

  test("PostgreSQL down: charging calls 503 with Retry-After and no provider call, /ready 503; back by itself", async () => {
    const [n1, n2] = cluster.nodes;
    const { key } = await newKey(n1, 100);
    expect((await chat(n2, key, "before")).status).toBe(200);
    const kb = await call(n1, key, "POST", "/api/v1/knowledge-bases", { name: "help" });
    const kbId = kb.json.data.result.id as string;
    const added = await call(n1, key, "POST", `/api/v1/knowledge-bases/${kbId}/documents`, {
      documents: ["Refunds are issued within 30 days of purchase."],
    });
    expect(added.status, added.text).toBe(201);
    pgProxy.down();
    const calls = sim.calls.count;
    // knowledge bases live in PostgreSQL too: their routes answer 503 as well, on every node
    for (const [method, path, body] of [
      ["GET", `/api/v1/knowledge-bases/${kbId}`],
      ["POST", `/api/v1/knowledge-bases/${kbId}/search`, { query: "refund" }],
      ["POST", "/api/v1/ai/faq-collections", { name: "f", faqs: [{ question: "q?", answer: "a" }] }],
    ] as const) {
      const r = await call(n2, key, method, path, body);
      expect(r.status, `${method} ${path}: ${r.text}`).toBe(503);
      expect(r.json.error.code).toBe("service_unavailable");
      expect(r.headers.get("retry-after")).toBe("1");
    }
    for (const n of cluster.nodes) {
      const r = await chat(n, key, `while the database is down ${n.url}`);
      expect(r.status, r.text).toBe(503);
      expect(JSON.parse(r.text).error.code).toBe("service_unavailable");
      expect(r.headers.get("retry-after")).toBe("1");
    }
    expect(sim.calls.count).toBe(calls);
    const r = await ready(n1);
    expect(r.status).toBe(503);
    expect(r.message).toContain("database unavailable");
    expect(await dependencyUp(n1, "database")).toBe(0);

    // a node started while the database is down listens, answers 503, and joins once it is back
    const late = await cluster.spawn();
    try {
      const early = await chat(late, key, "a node started during the outage");
      expect(early.status, early.text).toBe(503);
      expect((await ready(late)).status).toBe(503);

      pgProxy.up();
      const back = await eventually("database back", async () => (await chat(n1, key, `after ${Math.random()}`)).status === 200);
      console.log(`database outage: calls answered again ${back.toFixed(0)} ms after PostgreSQL came back`);
      for (const n of cluster.nodes) expect((await ready(n)).status).toBe(200);
      const found = await call(n2, key, "POST", `/api/v1/knowledge-bases/${kbId}/search`, { query: "refund" });
      expect(found.status, found.text).toBe(200);
      expect(found.json.data.result.results[0].content).toContain("Refunds");
      await eventually("the late node serves", async () => (await chat(late, key, `late ${Math.random()}`)).status === 200);
    } finally {
      late.proc.kill("SIGTERM");
      await late.proc.exited;
    }
  }, 30_000);

  test("both down: charged calls 503, /ready 503 naming both; back by themselves", async () => {
    const [n1] = cluster.nodes;
    const { key } = await newKey(n1, 100);
    pgProxy.down();
    redisProxy.down();
    const r = await chat(n1, key, "nothing is up");
    expect(r.status, r.text).toBe(503);
    expect(r.headers.get("retry-after")).toBe("1");
    const rd = await ready(n1);
    expect(rd.status).toBe(503);
    expect(rd.message).toContain("database unavailable");
    expect(await dependencyUp(n1, "database")).toBe(0);
    expect(await dependencyUp(n1, "redis")).toBe(0);
    pgProxy.up();
    redisProxy.up();
    await eventually("both back", async () => (await chat(n1, key, `back ${Math.random()}`)).status === 200);
    await eventually("ready again", async () => (await ready(n1)).result.redis === "ok");
  }, 30_000);
});
