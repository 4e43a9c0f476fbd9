/**
 * The request log on many nodes (CONTRACT section 13): two gateway processes on one PostgreSQL
 * database and one Redis db. An entry written on one node is readable on the other within 5
 * seconds; a stream is recorded once it has ended; every field, filter and route (API, admin, CLI,
 * dashboard page and CSV) answers from PostgreSQL; a node's last entries are written on SIGTERM;
 * retention is pruned in PostgreSQL; a traced node exports to an OTLP receiver. A body's marker
 * appears nowhere. Needs 127.0.0.1:5432 and :6379; skips loudly without them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { SQL } from "bun";
import type { RequestLogEntry } from "../../src/requestlog/interface";
import { KIND, startOtlpReceiver } from "../helpers/otlp";
import { sharedServersUp } from "../helpers/shared-servers";
import type { Upstream } from "../helpers/upstream";
import { ADMIN, admin, type Cluster, chat, type Node, newKey, startSimCluster } from "./nodes";

const shared = await sharedServersUp("the request log on PostgreSQL and Redis");
const MARKER = `MARKER-${crypto.randomUUID()}`;
const code = (r: { text: string }) => (JSON.parse(r.text) as { error?: { code: string } }).error?.code;

let sim: Upstream;
let pg: SQL;
let cluster: Cluster;
let close: (() => Promise<void>) | undefined;

beforeAll(async () => {
  if (!shared) return;
  ({ sim, pg, cluster, close } = await startSimCluster({ n: 2 }));
}, 60_000);
afterAll(async () => {
  await close?.();
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

  test("on PostgreSQL through the servers: the contract's fields, every filter, admin and CLI, the dashboard page and CSV; never a body", async () => {
    const [n1, n2] = cluster.nodes;
    const email = `log-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const acc = await admin(n1, "POST", "/admin/v1/accounts", {
      plan: "pro",
      credits: 1000,
      email,
      password: "a long enough password",
    });
    expect(acc.status, JSON.stringify(acc.json)).toBe(201);
    const accountId = acc.result.id as string;
    const mk = async (label: string) => {
      const k = await admin(n1, "POST", "/admin/v1/keys", { label, account_id: accountId });
      return { key: k.result.key as string, id: k.result.id as string };
    };
    const a = await mk("first");
    const a2 = await mk("second");
    const b = await newKey(n2, 1000);
    const post = (url: string, path: string, key: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(url + path, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key, ...headers },
        body: JSON.stringify(body),
      });
    const miss = await chat(n1, a.key, `cache me ${MARKER}`);
    const hit = await chat(n2, a.key, `cache me ${MARKER}`);
    expect(hit.headers.get("x-cache")).toBe("HIT");
    await Bun.sleep(5); // the next entry's time is later than these two (the "to" check below)
    const bad = await post(n2.url, "/api/v1/ai/sentiment-analysis", a.key, { txt: MARKER });
    expect(bad.status).toBe(400);
    const idem = { "idempotency-key": `idem-${MARKER}`, "cache-control": "no-cache" };
    const body = { text: `The staff were lovely. ${MARKER}` };
    const first = await post(n1.url, "/api/v1/ai/sentiment-analysis", a.key, body, idem);
    expect(first.status).toBe(200);
    const replay = await post(n2.url, "/api/v1/ai/sentiment-analysis", a.key, body, idem);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    for (let i = 0; i < 3; i++)
      expect((await post(n1.url, "/api/v1/ai/sentiment-analysis", a2.key, { txt: `x${i}` })).status).toBe(400);
    for (let i = 0; i < 2; i++) expect((await chat(n2, b.key, `other ${i}`)).status).toBe(200);
    const id = (r: { headers: Headers }) => r.headers.get("x-request-id") as string;
    const ids = { miss: id(miss), hit: id(hit), bad: id(bad), first: id(first), replay: id(replay) };

    // readable on both nodes within 5 s
    let entries: RequestLogEntry[] = [];
    for (const n of [n1, n2]) {
      const until = Date.now() + 5000;
      for (;;) {
        entries = (await list(n.url, a.key, "limit=500")).data;
        if (Object.values(ids).every((x) => entries.some((e) => e.request_id === x)) && entries.length >= 8) break;
        if (Date.now() > until) throw new Error(`not readable on ${n.url} within 5 s: ${JSON.stringify(entries)}`);
        await Bun.sleep(100);
      }
    }
    const by = new Map(entries.map((e) => [e.request_id, e]));
    expect(Object.keys(by.get(ids.miss) as RequestLogEntry).sort()).toEqual(
      "request_id time account_id key_id method path function status error_code provider model latency_ms credits cache prompt_tokens completion_tokens idempotent_replay guardrails"
        .split(" ")
        .sort(),
    );
    expect(by.get(ids.miss)).toMatchObject({
      account_id: accountId,
      key_id: a.id,
      method: "POST",
      path: "/v1/chat/completions",
      cache: "MISS",
      idempotent_replay: false,
    });
    expect(by.get(ids.hit)).toMatchObject({ cache: "HIT", status: 200, function: "chat-completions" });
    expect((by.get(ids.hit) as RequestLogEntry).credits).toBeGreaterThan(0);
    expect(by.get(ids.bad)).toMatchObject({ status: 400, error_code: "invalid_request", credits: 0, cache: null });
    expect(by.get(ids.first)).toMatchObject({ status: 200, idempotent_replay: false, function: "sentiment-analysis" });
    expect(by.get(ids.replay)).toMatchObject({ status: 200, idempotent_replay: true, credits: 0 });

    // filters, on either node
    const q = async (n: { url: string }, query: string) => (await list(n.url, a.key, query)).data;
    const second = await q(n2, `key_id=${a2.id}`);
    expect(second.map((e) => [e.key_id, e.status, e.error_code])).toEqual(Array(3).fill([a2.id, 400, "invalid_request"]));
    expect((await q(n1, "function=chat-completions")).map((e) => e.request_id).sort()).toEqual([ids.miss, ids.hit].sort());
    const s400 = await q(n2, "status=400");
    expect(s400.map((e) => e.request_id).sort()).toEqual([ids.bad, ...second.map((e) => e.request_id)].sort());
    const s2xx = await q(n1, "status=2xx&function=sentiment-analysis");
    expect(s2xx.map((e) => e.request_id).sort()).toEqual([ids.first, ids.replay].sort());
    expect(await q(n1, `key_id=${b.id}`)).toEqual([]);
    expect(await q(n2, `from=${new Date(Date.now() + 3600_000).toISOString()}`)).toEqual([]);
    expect(await q(n1, "to=2020-01-01")).toEqual([]);
    const t = (by.get(ids.bad) as RequestLogEntry).time;
    const from = await q(n1, `limit=500&function=sentiment-analysis&from=${encodeURIComponent(t)}`);
    expect(from.every((e) => Date.parse(e.time) >= Date.parse(t))).toBe(true);
    expect(from.map((e) => e.request_id)).toContain(ids.bad);
    const to = await q(n2, `limit=500&to=${encodeURIComponent(t)}`);
    expect(to.every((e) => Date.parse(e.time) < Date.parse(t))).toBe(true);
    expect(to.map((e) => e.request_id).sort()).toEqual([ids.miss, ids.hit].sort());
    // limit and the next page
    const page1 = await list(n1.url, a.key, "function=sentiment-analysis&limit=2");
    expect(page1.data.length).toBe(2);
    expect(page1.next_cursor).not.toBeNull();

    // admin: every account, account_id as a filter; the CLI prints the same
    const adminList = async (query: string) => {
      const r = await fetch(`${n2.url}/admin/v1/requests?${query}`, { headers: { authorization: `Bearer ${ADMIN}` } });
      return ((await r.json()) as { data: { result: { data: RequestLogEntry[] } } }).data.result.data;
    };
    const everyone = new Set((await adminList("limit=500")).map((e) => e.account_id));
    expect(everyone.has(accountId) && everyone.has(b.accountId)).toBe(true);
    const onlyB = await adminList(`account_id=${b.accountId}&function=chat-completions`);
    expect(onlyB.length).toBe(2);
    expect(onlyB.every((e) => e.account_id === b.accountId)).toBe(true);
    const cli = Bun.spawnSync(
      [
        process.execPath,
        "src/cli.ts",
        "requests",
        "--account",
        b.accountId,
        "--function",
        "chat-completions",
        "--since",
        onlyB[1]?.time as string,
        "--json",
      ],
      { cwd: `${import.meta.dir}/../..`, env: cluster.env },
    );
    expect(cli.exitCode, cli.stderr.toString()).toBe(0);
    expect((JSON.parse(cli.stdout.toString()) as RequestLogEntry[]).map((e) => e.request_id)).toEqual(
      onlyB.map((e) => e.request_id),
    );
    const table = Bun.spawnSync([process.execPath, "src/cli.ts", "requests", "--account", accountId], {
      cwd: `${import.meta.dir}/../..`,
      env: cluster.env,
    });
    expect(table.stdout.toString()).toContain(ids.replay);
    expect(table.stdout.toString()).not.toContain(MARKER);

    // the dashboard of node 2: the page and the CSV of what is filtered, no body
    const origin = new URL(n2.url).origin;
    const login = await fetch(`${n2.url}/dashboard/login`, {
      method: "POST",
      redirect: "manual",
      headers: { origin, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ email, password: "a long enough password" }),
    });
    expect(login.status).toBe(303);
    const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] as string;
    const html = await (await fetch(`${n2.url}/dashboard/requests?function=sentiment-analysis`, { headers: { cookie } })).text();
    for (const x of [ids.bad, ids.first, ids.replay]) expect(html).toContain(x);
    expect(html).not.toContain(ids.miss);
    expect(html).not.toContain(MARKER);
    const detail = await fetch(`${n2.url}/dashboard/requests/${ids.first}`, { headers: { cookie } });
    expect(detail.status).toBe(200);
    expect(await detail.text()).not.toContain(MARKER);
    const csv = await fetch(`${n2.url}/dashboard/requests.csv?status=400`, { headers: { cookie } });
    expect(csv.status).toBe(200);
    const lines = (await csv.text()).trim().split("\r\n");
    expect(lines[0]).toBe(
      "request_id,time,account_id,key_id,method,path,function,status,error_code,provider,model,latency_ms,credits,cache,prompt_tokens,completion_tokens,idempotent_replay,guardrails,key_label",
    );
    expect(
      lines
        .slice(1)
        .map((l) => l.split(",")[0])
        .sort(),
    ).toEqual(s400.map((e) => e.request_id).sort());
    expect(lines.join("\n")).not.toContain(MARKER);
    const csvOf = async (query: string) =>
      (await (await fetch(`${n1.url}/dashboard/requests.csv?${query}`, { headers: { cookie } })).text()).trim().split("\r\n");
    expect(
      (await csvOf(`key_id=${a2.id}`))
        .slice(1)
        .map((l) => l.split(",")[0])
        .sort(),
    ).toEqual(second.map((e) => e.request_id).sort());
    expect(await csvOf("to=2020-01-01")).toEqual([lines[0]]);
    const badPage = await fetch(`${n1.url}/dashboard/requests?status=teapot`, { headers: { cookie } });
    expect(badPage.status).toBe(400);

    // one entry: the account's own only; bad filters name the parameter
    const one = await fetch(`${n1.url}/api/v1/account/requests/${ids.bad}`, { headers: { "x-api-key": a2.key } });
    expect(one.status).toBe(200);
    const notMine = await fetch(`${n1.url}/api/v1/account/requests/${ids.bad}`, { headers: { "x-api-key": b.key } });
    expect(notMine.status).toBe(404);
    expect(code({ text: await notMine.text() })).toBe("not_found");
    for (const [query, param] of [
      ["limit=501", "limit"],
      ["cursor=bm90IGEgY3Vyc29y", "cursor"],
      ["status=teapot", "status"],
      ["from=yesterday", "from"],
      ["from=2026-02-01&to=2026-01-01", "to"],
    ]) {
      const r = await fetch(`${n2.url}/api/v1/account/requests?${query}`, { headers: { "x-api-key": a.key } });
      expect(r.status, query).toBe(400);
      expect(((await r.json()) as { error: { param: string } }).error.param, query).toBe(param);
    }
    const rows = await pg`SELECT * FROM request_log`;
    expect(JSON.stringify(rows)).not.toContain(MARKER);
  });

  test("an account's listing holds 50 entries unless limit says otherwise; a key's guardrails are counted in its entries", async () => {
    const [n1, n2] = cluster.nodes;
    const k = await newKey(n1, 1000);
    for (let i = 0; i < 55; i++) {
      const r = await fetch(`${(i % 2 ? n1 : n2).url}/api/v1/account/usage`, { headers: { "x-api-key": k.key } });
      expect(r.status).toBe(200);
    }
    const until = Date.now() + 5000;
    let all = (await list(n2.url, k.key, "limit=500")).data;
    while (all.length < 56 && Date.now() < until) {
      await Bun.sleep(100);
      all = (await list(n2.url, k.key, "limit=500")).data;
    }
    expect(all.length).toBeGreaterThanOrEqual(56);
    const page = await list(n1.url, k.key);
    expect(page.data.length).toBe(50);
    expect(page.next_cursor).not.toBeNull();

    expect(
      (await admin(n1, "PATCH", `/admin/v1/keys/${k.id}`, { policy: { guardrails: { redact_pii: ["email"] } } })).status,
    ).toBe(200);
    const guarded = await chat(n2, k.key, `Write to ${MARKER}@example.com please`, { "cache-control": "no-cache" });
    expect(guarded.status, guarded.text).toBe(200);
    const id = guarded.headers.get("x-request-id") as string;
    const entry = (await within5s(n1.url, k.key, [id])).find((e) => e.request_id === id) as RequestLogEntry;
    expect(entry.guardrails).toEqual({ "redacted.email": 1 });
    expect(JSON.stringify(entry)).not.toContain(MARKER);
  });

  test("a node on PostgreSQL with OTEL_EXPORTER_OTLP_ENDPOINT exports each request's trace, continuing the caller's; no span holds a body", async () => {
    const otlp = await startOtlpReceiver();
    try {
      const traced = await cluster.spawn({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: "20" });
      cluster.nodes.push(traced);
      const k = await newKey(cluster.nodes[0] as Node, 1000);
      const traceId = crypto.randomUUID().replaceAll("-", "");
      sim.reset();
      const r = await chat(traced, k.key, `traced ${MARKER}`, {
        traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
        "cache-control": "no-cache",
      });
      expect(r.status, r.text).toBe(200);
      const [root] = await otlp.waitFor((all) => all.filter((s) => s.traceId === traceId && s.kind === KIND.SERVER), 1);
      expect(root?.parentSpanId).toBe("00f067aa0ba902b7");
      expect(root?.attributes).toMatchObject({
        "textai.request_id": r.headers.get("x-request-id"),
        "textai.function": "chat-completions",
        "gen_ai.request.model": "model-a",
      });
      expect(root?.attributes["textai.credits"]).toBeGreaterThan(0);
      const spans = otlp.spans.filter((s) => s.traceId === traceId);
      for (const name of ["authenticate", "cache lookup", "charge"]) expect(spans.map((s) => s.name)).toContain(name);
      const attempt = spans.find((s) => s.kind === KIND.CLIENT);
      expect(sim.calls.requests[0]?.headers.traceparent).toBe(`00-${traceId}-${attempt?.spanId}-01`);
      for (const body of otlp.bodies) expect(body).not.toContain(MARKER);
    } finally {
      await otlp.close();
    }
  });

  test("SIGTERM writes a node's last entries; a starting node prunes PostgreSQL past the retention (default 30 days)", async () => {
    const n2 = cluster.nodes[1];
    const k = await newKey(n2, 1000);
    await pg`INSERT INTO request_log (request_id, time, account_id, key_id, method, path, status, latency_ms)
      VALUES ('req_ancient', ${Date.now() - 40 * 86_400_000}, ${k.accountId}, ${k.id}, 'POST', '/x', 200, 1),
             ('req_29_days', ${Date.now() - 29 * 86_400_000}, ${k.accountId}, ${k.id}, 'POST', '/x', 200, 1)`;
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
    // the default retention is 30 days: a 29-day-old entry stays
    expect((await pg`SELECT count(*)::int AS n FROM request_log WHERE request_id = 'req_29_days'`)[0].n).toBe(1);
    expect((await pg`SELECT count(*)::int AS n FROM request_log WHERE request_id = ${id}`)[0].n).toBe(1);
  });
});
