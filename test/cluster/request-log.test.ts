/**
 * The request log on many nodes (CONTRACT section 13): two gateway processes on one PostgreSQL
 * database and one Redis db. An entry written on one node is readable on the other within 5
 * seconds; a stream is recorded once it has ended; a node's last entries are written on SIGTERM;
 * retention is pruned in PostgreSQL. Needs 127.0.0.1:5432 and :6379; skips loudly without them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import type { RequestLogEntry } from "../../src/requestlog/interface";
import { freshDatabase, freshRedis, sharedServersUp } from "../helpers/shared-servers";
import { startUpstream, type Upstream } from "../helpers/upstream";
import { ADMIN, type Cluster, chat, clusterConfig, newKey, startCluster } from "./nodes";

const shared = await sharedServersUp("the request log on PostgreSQL and Redis");
const MARKER = `MARKER-${crypto.randomUUID()}`;

let sim: Upstream;
let db: Awaited<ReturnType<typeof freshDatabase>>;
let pg: SQL;
let cluster: Cluster;

beforeAll(async () => {
  if (!shared) return;
  sim = await startUpstream();
  db = await freshDatabase();
  const redis = await freshRedis();
  cluster = await startCluster({ n: 2, databaseUrl: db.url, redisUrl: redis.url, configText: clusterConfig(`${sim.url}/v1`) });
  pg = new SQL(db.url);
}, 60_000);
afterAll(async () => {
  if (!shared) return;
  await cluster?.close();
  await pg?.close();
  await db?.drop();
  await sim?.close();
}, 30_000);

async function list(url: string, key: string, query = ""): Promise<{ data: RequestLogEntry[]; next_cursor: string | null }> {
  const res = await fetch(`${url}/api/v1/account/requests?${query}`, { headers: { "x-api-key": key } });
  const json = (await res.json()) as { data: { result: { data: RequestLogEntry[]; next_cursor: string | null } } };
  expect(res.status, JSON.stringify(json)).toBe(200);
  return json.data.result;
}

/** Polls `url`'s listing until every id is there; fails past 5 s (the contract's bound). */
async function within5s(url: string, key: string, ids: string[]): Promise<RequestLogEntry[]> {
  const until = Date.now() + 5000;
  for (;;) {
    const { data } = await list(url, key, "limit=500&function=chat-completions");
    if (ids.every((id) => data.some((e) => e.request_id === id))) return data;
    if (Date.now() > until) throw new Error(`not readable within 5 s: ${ids.join(", ")} in ${JSON.stringify(data)}`);
    await Bun.sleep(100);
  }
}

describe.skipIf(!shared)("request log: two nodes, one PostgreSQL, one Redis", () => {
  test("written on one node, readable on the other within 5 s; a stream with its charge; never a body", async () => {
    const [n1, n2] = cluster.nodes;
    const k = await newKey(n1, 1000);
    const plain = await chat(n1, k.key, `hello ${MARKER}`);
    expect(plain.status, plain.text).toBe(200);
    const streamed = await fetch(`${n2.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${k.key}` },
      body: JSON.stringify({ model: "model-a", stream: true, messages: [{ role: "user", content: `stream ${MARKER}` }] }),
    });
    expect(streamed.status).toBe(200);
    expect(await streamed.text()).toContain("[DONE]");
    const ids = [plain.headers.get("x-request-id") as string, streamed.headers.get("x-request-id") as string];
    // each node reads what the other wrote: its own pending rows do not explain it
    const on1 = await within5s(n1.url, k.key, ids);
    await within5s(n2.url, k.key, ids);
    const [p, s] = ids.map((id) => on1.find((e) => e.request_id === id) as RequestLogEntry);
    expect(p).toMatchObject({
      account_id: k.accountId,
      key_id: k.id,
      status: 200,
      provider: "sim",
      model: "model-a",
      cache: "MISS",
    });
    expect(p.credits).toBeGreaterThan(0);
    expect(p.prompt_tokens).toBeGreaterThan(0);
    expect(s).toMatchObject({ function: "chat-completions", status: 200, provider: "sim", model: "model-a" });
    expect(s.credits).toBeGreaterThan(0);
    expect(s.completion_tokens).toBeGreaterThan(0);
    const one = await fetch(`${n2.url}/api/v1/account/requests/${ids[0]}`, { headers: { "x-api-key": k.key } });
    expect(((await one.json()) as { data: { result: RequestLogEntry } }).data.result.request_id).toBe(ids[0]);
    const all = await fetch(`${n2.url}/admin/v1/requests?account_id=${k.accountId}&limit=500`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    const text = await all.text();
    expect(text).toContain(ids[0]);
    expect(text).not.toContain(MARKER);
    const rows = await pg`SELECT * FROM request_log`;
    expect(rows.length).toBeGreaterThanOrEqual(2);
    expect(JSON.stringify(rows)).not.toContain(MARKER);
  });

  test("cursor pages over entries from both nodes: every one once, newest first", async () => {
    const [n1, n2] = cluster.nodes;
    const k = await newKey(n1, 1000);
    for (let i = 0; i < 6; i++) expect((await chat(i % 2 ? n1 : n2, k.key, `call ${i}`)).status).toBe(200);
    const all = await within5s(n1.url, k.key, []);
    const until = Date.now() + 5000;
    let full = all;
    while (full.length < 6 && Date.now() < until) {
      await Bun.sleep(100);
      full = (await list(n1.url, k.key, "limit=500&function=chat-completions")).data;
    }
    expect(full.length).toBe(6);
    const seen: string[] = [];
    let cursor: string | null = "";
    for (let n = 0; cursor !== null && n < 10; n++) {
      const page = await list(
        n % 2 ? n1.url : n2.url,
        k.key,
        `function=chat-completions&limit=4${cursor ? `&cursor=${cursor}` : ""}`,
      );
      seen.push(...page.data.map((e) => e.request_id));
      cursor = page.next_cursor;
    }
    expect(seen).toEqual(full.map((e) => e.request_id));
  });

  test("SIGTERM writes a node's last entries; a starting node prunes PostgreSQL past the retention", async () => {
    const n2 = cluster.nodes[1];
    const k = await newKey(n2, 1000);
    await pg`INSERT INTO request_log (request_id, time, account_id, key_id, method, path, status, latency_ms)
      VALUES ('req_ancient', ${Date.now() - 40 * 86_400_000}, ${k.accountId}, ${k.id}, 'POST', '/x', 200, 1)`;
    const r = await chat(n2, k.key, "last words");
    expect(r.status).toBe(200);
    n2.proc.kill("SIGTERM");
    await n2.proc.exited;
    const id = r.headers.get("x-request-id");
    const [row] = await pg`SELECT function, status FROM request_log WHERE request_id = ${id}`;
    expect(row).toEqual({ function: "chat-completions", status: 200 });
    const n3 = await cluster.spawn();
    cluster.nodes.push(n3);
    const until = Date.now() + 5000;
    let left = 1;
    while (left > 0 && Date.now() < until) {
      left = (await pg`SELECT count(*)::int AS n FROM request_log WHERE request_id = 'req_ancient'`)[0].n;
      if (left > 0) await Bun.sleep(100);
    }
    expect(left).toBe(0);
    expect((await pg`SELECT count(*)::int AS n FROM request_log WHERE request_id = ${id}`)[0].n).toBe(1);
  });
});
