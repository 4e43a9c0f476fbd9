/**
 * The request log through a real server on a real SQLite file (CONTRACT section 13): one row per
 * authenticated request with its metadata, never a body; the account and admin routes with their
 * filters and cursor paging; retention; the rows written on shutdown.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import type { RequestLogEntry as Entry } from "../../src/requestlog/interface";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";

const ADMIN = "admin-token-request-log-0123456789";
const MARKER = `MARKER-${crypto.randomUUID()}`;

let gw: TestGateway;
let sim: Upstream;
let a: { key: string; id: string; accountId: string };
let a2: { key: string; id: string; accountId: string };
let b: { key: string; id: string; accountId: string };

const H = (key: string, extra: Record<string, string> = {}) => ({ "x-api-key": key, ...extra });
const admin = { authorization: `Bearer ${ADMIN}` };

/** Polls until `pred` holds of the account's listing (at most 5 s: the contract's bound). */
async function listUntil(path: string, key: string, pred: (data: Entry[]) => boolean): Promise<Entry[]> {
  const until = Date.now() + 5000;
  for (;;) {
    const r = await gw.get(path, H(key));
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    if (pred(r.json.data.result.data) || Date.now() > until) return r.json.data.result.data;
    await Bun.sleep(100);
  }
}

beforeAll(async () => {
  sim = await startUpstream();
  gw = await startGateway({
    env: { TEXTAI_ADMIN_TOKEN: ADMIN },
    configText: `${simProvider({ url: `${sim.url}/v1`, name: "sim", model: "model-a" })}
[routes]
"sentiment-analysis" = ["local"]
"text-summarize" = ["local"]
`,
  });
  a = gw.newKey({ credits: 1000, label: "first" });
  a2 = gw.newKey({ credits: 0, accountId: a.accountId, label: "second" });
  b = gw.newKey({ credits: 1000 });
});
afterAll(async () => {
  await gw?.close();
  await sim?.close();
});

describe("what is recorded", () => {
  let calls: { sentiment: string; cached: string; bad: string; chat: string; replay: string };

  beforeAll(async () => {
    const body = { text: `I love this product, it is great. ${MARKER}` };
    const s1 = await gw.post(`/api/v1/ai/sentiment-analysis?note=${MARKER}`, body, H(a.key));
    expect(s1.status, JSON.stringify(s1.json)).toBe(200);
    const s2 = await gw.post("/api/v1/ai/sentiment-analysis", body, H(a.key));
    expect(s2.json.meta.cached).toBe(true);
    const bad = await gw.post("/api/v1/ai/sentiment-analysis", { txt: MARKER }, H(a.key));
    expect(bad.status).toBe(400);
    const chat = await gw.post(
      "/v1/chat/completions",
      { model: "model-a", messages: [{ role: "user", content: `hello ${MARKER}` }] },
      { authorization: `Bearer ${a.key}` },
    );
    expect(chat.status, JSON.stringify(chat.json)).toBe(200);
    const idem = H(a.key, { "idempotency-key": `idem-${MARKER}` });
    await gw.post("/api/v1/ai/text-summarize", { text: `One sentence here. Another one there. ${MARKER}` }, idem);
    const replay = await gw.post("/api/v1/ai/text-summarize", { text: `One sentence here. Another one there. ${MARKER}` }, idem);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    // not authenticated: not in the log
    expect((await gw.post("/api/v1/ai/sentiment-analysis", body, H("tk_wrong"))).status).toBe(401);
    calls = {
      sentiment: s1.json.request_id,
      cached: s2.json.request_id,
      bad: bad.json.request_id,
      chat: chat.headers.get("x-request-id") as string,
      replay: replay.json.request_id,
    };
  });

  test("one entry per authenticated request, with the contract's fields", async () => {
    const ids = Object.values(calls);
    const data = await listUntil("/api/v1/account/requests?limit=500", a.key, (d) =>
      ids.every((id) => d.some((e) => e.request_id === id)),
    );
    const by = new Map(data.map((e) => [e.request_id, e]));
    const s = by.get(calls.sentiment) as Entry;
    expect(s).toMatchObject({
      account_id: a.accountId,
      key_id: a.id,
      method: "POST",
      path: "/api/v1/ai/sentiment-analysis",
      function: "sentiment-analysis",
      status: 200,
      error_code: null,
      provider: "local",
      cache: "MISS",
      idempotent_replay: false,
      guardrails: null,
    });
    expect(s.credits).toBeGreaterThan(0);
    expect(typeof s.model).toBe("string");
    expect(s.latency_ms).toBeGreaterThanOrEqual(0);
    expect(Math.abs(Date.parse(s.time) - Date.now())).toBeLessThan(60_000);
    expect(Object.keys(s).sort()).toEqual(
      [
        "request_id",
        "time",
        "account_id",
        "key_id",
        "method",
        "path",
        "function",
        "status",
        "error_code",
        "provider",
        "model",
        "latency_ms",
        "credits",
        "cache",
        "prompt_tokens",
        "completion_tokens",
        "idempotent_replay",
        "guardrails",
      ].sort(),
    );
    expect(by.get(calls.cached)).toMatchObject({ cache: "HIT", status: 200 });
    expect(by.get(calls.bad)).toMatchObject({ status: 400, error_code: "invalid_request", credits: 0 });
    const chat = by.get(calls.chat) as Entry;
    expect(chat).toMatchObject({ function: "chat-completions", status: 200, provider: "sim", model: "model-a", cache: "MISS" });
    expect(chat.prompt_tokens).toBeGreaterThan(0);
    expect(chat.completion_tokens).toBeGreaterThan(0);
    expect(by.get(calls.replay)).toMatchObject({ idempotent_replay: true, credits: 0, function: "text-summarize" });
    // newest first
    const times = data.map((e) => Date.parse(e.time));
    expect(times).toEqual([...times].sort((x, y) => y - x));
    // the 401 left no entry anywhere
    const all = await gw.get("/admin/v1/requests?limit=500", admin);
    expect(all.json.data.result.data.every((e: Entry) => e.status !== 401)).toBe(true);
  });

  test("a body's marker appears in no entry, route or the table itself", async () => {
    await listUntil("/api/v1/account/requests", a.key, (d) => d.some((e) => e.request_id === calls.replay));
    for (const path of ["/api/v1/account/requests?limit=500", `/api/v1/account/requests/${calls.sentiment}`]) {
      const res = await fetch(gw.url + path, { headers: H(a.key) });
      expect(await res.text()).not.toContain(MARKER);
    }
    const res = await fetch(`${gw.url}/admin/v1/requests?limit=500`, { headers: admin });
    expect(await res.text()).not.toContain(MARKER);
    const db = new Database(gw.dbPath, { readonly: true });
    const rows = db.query("SELECT * FROM request_log").all();
    db.close();
    expect(rows.length).toBeGreaterThanOrEqual(6);
    expect(JSON.stringify(rows)).not.toContain(MARKER);
  });

  test("GET /api/v1/account/requests/:request_id: the account's own entry only", async () => {
    const own = await gw.get(`/api/v1/account/requests/${calls.sentiment}`, H(a.key));
    expect(own.status).toBe(200);
    expect(own.json.data.result).toMatchObject({ request_id: calls.sentiment, function: "sentiment-analysis" });
    const other = await gw.get(`/api/v1/account/requests/${calls.sentiment}`, H(b.key));
    expect(other.status).toBe(404);
    expect(other.json.error.code).toBe("not_found");
    expect((await gw.get("/api/v1/account/requests/req_nothing", H(a.key))).status).toBe(404);
    const viaAdmin = await gw.get(`/admin/v1/requests/${calls.sentiment}`, admin);
    expect(viaAdmin.json.data.result.account_id).toBe(a.accountId);
  });
});

describe("streams", () => {
  const stream = (key: string) =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: "model-a", stream: true, messages: [{ role: "user", content: `stream ${MARKER}` }] }),
    });

  test("recorded once ended: a whole stream with its charge and tokens, a cut one as 502 with nothing charged", async () => {
    const k = gw.newKey({ credits: 1000 });
    const whole = await stream(k.key);
    const wholeText = await whole.text();
    expect(wholeText).toContain("[DONE]");
    sim.program([{ streamCut: true }]);
    const cut = await stream(k.key);
    expect(cut.status).toBe(200);
    expect(await cut.text()).not.toContain("[DONE]");
    const ids = [whole.headers.get("x-request-id"), cut.headers.get("x-request-id")];
    const data = await listUntil("/api/v1/account/requests?function=chat-completions", k.key, (d) => d.length >= 2);
    const [w, c] = ids.map((id) => data.find((e) => e.request_id === id) as Entry);
    expect(w).toMatchObject({ status: 200, error_code: null, provider: "sim", model: "model-a" });
    expect(w.credits).toBeGreaterThan(0);
    expect(w.prompt_tokens).toBeGreaterThan(0);
    expect(w.completion_tokens).toBeGreaterThan(0);
    expect(c).toMatchObject({ status: 502, credits: 0, provider: "sim" });
    expect(c.error_code).not.toBeNull();
    expect(JSON.stringify(data)).not.toContain(MARKER);
  });
});

describe("filters and paging", () => {
  beforeAll(async () => {
    // a second key of the account, sending bad requests (400), and another account
    for (let i = 0; i < 3; i++) await gw.post("/api/v1/ai/sentiment-analysis", { txt: `fine ${i}` }, H(a2.key));
    for (let i = 0; i < 4; i++) await gw.post("/api/v1/ai/sentiment-analysis", { text: `other ${i}` }, H(b.key));
  });

  test("key_id, function and status (one code or a class)", async () => {
    const mine = await listUntil(`/api/v1/account/requests?key_id=${a2.id}`, a.key, (d) => d.length >= 3);
    expect(mine.length, JSON.stringify(mine)).toBe(3);
    expect(mine.map((e) => [e.key_id, e.status, e.error_code])).toEqual(Array(3).fill([a2.id, 400, "invalid_request"]));
    const fn = (await gw.get("/api/v1/account/requests?function=chat-completions", H(a.key))).json.data.result.data;
    expect(fn.length).toBe(1);
    const s400 = (await gw.get("/api/v1/account/requests?status=400", H(a.key))).json.data.result.data;
    expect(s400.length).toBe(4); // the second key's three and the first key's one
    expect(s400.every((e: Entry) => e.status === 400)).toBe(true);
    const s4xx = (await gw.get("/api/v1/account/requests?status=4xx", H(a.key))).json.data.result.data;
    // and the 404 of an unknown request id
    expect(s4xx.some((e: Entry) => e.status === 404)).toBe(true);
    expect(s4xx.every((e: Entry) => e.status >= 400 && e.status < 500)).toBe(true);
    expect(s4xx.length).toBeGreaterThan(s400.length);
    // another account's key filters to nothing: an account sees only its own
    expect((await gw.get(`/api/v1/account/requests?key_id=${b.id}`, H(a.key))).json.data.result.data).toEqual([]);
  });

  test("from and to", async () => {
    const all = (await gw.get("/api/v1/account/requests?limit=500", H(a.key))).json.data.result.data;
    const future = new Date(Date.now() + 3600_000).toISOString();
    expect((await gw.get(`/api/v1/account/requests?from=${future}`, H(a.key))).json.data.result.data).toEqual([]);
    const past = "2020-01-01";
    expect((await gw.get(`/api/v1/account/requests?to=${past}`, H(a.key))).json.data.result.data).toEqual([]);
    const oldest = all[all.length - 1];
    const from = (await gw.get(`/api/v1/account/requests?limit=500&from=${encodeURIComponent(oldest.time)}`, H(a.key))).json.data
      .result.data;
    // the listings are requests too: the later ones are there as well
    expect(from.length).toBeGreaterThanOrEqual(all.length);
    const to = (await gw.get(`/api/v1/account/requests?limit=500&to=${encodeURIComponent(oldest.time)}`, H(a.key))).json.data
      .result.data;
    expect(to.every((e: Entry) => Date.parse(e.time) < Date.parse(oldest.time))).toBe(true);
  });

  test("cursor paging walks every entry once, newest first", async () => {
    // the function's entries: the listings themselves, recorded as the walk goes, stay out of it
    const q = "function=sentiment-analysis";
    const all = (await gw.get(`/api/v1/account/requests?limit=500&${q}`, H(a.key))).json.data.result.data;
    expect(all.length).toBeGreaterThanOrEqual(6);
    const seen: string[] = [];
    let cursor: string | null = "";
    for (let n = 0; cursor !== null && n < 50; n++) {
      const r = await gw.get(`/api/v1/account/requests?${q}&limit=2${cursor ? `&cursor=${cursor}` : ""}`, H(a.key));
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      expect(r.json.data.result.data.length).toBeLessThanOrEqual(2);
      seen.push(...r.json.data.result.data.map((e: Entry) => e.request_id));
      cursor = r.json.data.result.next_cursor;
    }
    expect(seen).toEqual(all.map((e: Entry) => e.request_id));
  });

  test("limit: 50 entries a page unless it says otherwise, at most 500", async () => {
    const k = gw.newKey({ credits: 0 });
    for (let i = 0; i < 55; i++) expect((await gw.get("/api/v1/account/usage", H(k.key))).status).toBe(200);
    const all = await listUntil("/api/v1/account/requests?limit=500", k.key, (d) => d.length >= 56);
    expect(all.length).toBeGreaterThanOrEqual(56);
    const page = await gw.get("/api/v1/account/requests", H(k.key));
    expect(page.json.data.result.data.length).toBe(50);
    expect(page.json.data.result.limit).toBe(50);
    expect(page.json.data.result.next_cursor).not.toBeNull();
    const admin500 = await gw.get(`/admin/v1/requests?account_id=${k.accountId}&limit=500`, admin);
    expect(admin500.json.data.result.data.length).toBeGreaterThanOrEqual(57);
    expect((await gw.get("/admin/v1/requests?limit=501", admin)).json.error.param).toBe("limit");
  });

  test("admin: every account, account_id as a filter, the other filters and the cursor too", async () => {
    const both = (await gw.get("/admin/v1/requests?limit=500", admin)).json.data.result.data;
    const accounts = new Set(both.map((e: Entry) => e.account_id));
    expect(accounts.has(a.accountId) && accounts.has(b.accountId)).toBe(true);
    const onlyB = await gw.get(`/admin/v1/requests?account_id=${b.accountId}&function=sentiment-analysis`, admin);
    expect(onlyB.json.data.result.data.length).toBe(4);
    expect(onlyB.json.data.result.data.every((e: Entry) => e.account_id === b.accountId)).toBe(true);
    // the other filters and the cursor, as on the account's route
    const get = async (q: string) => (await gw.get(`/admin/v1/requests?${q}`, admin)).json.data.result;
    const byKey = await get(`key_id=${a2.id}&status=4xx`);
    expect(byKey.data.map((e: Entry) => [e.key_id, e.status])).toEqual(Array(3).fill([a2.id, 400]));
    expect((await get(`account_id=${b.accountId}&from=${new Date(Date.now() + 60_000).toISOString()}`)).data).toEqual([]);
    expect((await get(`account_id=${b.accountId}&to=2020-01-01`)).data).toEqual([]);
    const p1 = await get(`account_id=${b.accountId}&function=sentiment-analysis&limit=3`);
    const p2 = await get(`account_id=${b.accountId}&function=sentiment-analysis&limit=3&cursor=${p1.next_cursor}`);
    expect([...p1.data, ...p2.data].map((e: Entry) => e.request_id)).toEqual(
      onlyB.json.data.result.data.map((e: Entry) => e.request_id),
    );
    expect(p2.next_cursor).toBeNull();
    const bad = await gw.get("/admin/v1/requests?status=teapot", admin);
    expect([bad.status, bad.json.error.param]).toEqual([400, "status"]);
    expect((await gw.get("/admin/v1/requests", { authorization: "Bearer wrong" })).status).toBe(403);
  });

  test("bad filters: 400 naming the parameter", async () => {
    for (const [q, param] of [
      ["limit=0", "limit"],
      ["limit=501", "limit"],
      ["limit=ten", "limit"],
      ["cursor=bm90IGEgY3Vyc29y", "cursor"],
      ["cursor=%25%25", "cursor"],
      ["status=teapot", "status"],
      ["status=99", "status"],
      ["from=yesterday", "from"],
      ["to=2026-13-45", "to"],
      ["from=2026-02-01&to=2026-01-01", "to"],
    ]) {
      const r = await gw.get(`/api/v1/account/requests?${q}`, H(a.key));
      expect(r.status, q).toBe(400);
      expect(r.json.error.code).toBe("invalid_request");
      expect(r.json.error.param, q).toBe(param);
    }
  });
});

test("retention: entries older than [log] retention_days are pruned at start", async () => {
  const g = await startGateway({ configText: "[log]\nretention_days = 2\n" });
  const k = g.newKey({ credits: 100 });
  await g.stop();
  const db = new Database(g.dbPath);
  const insert = db.prepare(
    "INSERT INTO request_log (request_id, time, account_id, key_id, method, path, status, latency_ms) VALUES (?, ?, ?, ?, 'POST', '/x', 200, 1)",
  );
  const day = 86_400_000;
  for (let i = 0; i < 1200; i++) insert.run(`req_old_${i}`, Date.now() - 3 * day - i, k.accountId, k.id);
  insert.run("req_recent", Date.now() - day, k.accountId, k.id);
  db.close();
  const g2 = await startGateway({ env: { TEXTAI_DB: g.dbPath }, configText: "[log]\nretention_days = 2\n" });
  try {
    const until = Date.now() + 5000;
    let data: Entry[] = [];
    while (Date.now() < until) {
      data = (await g2.get("/api/v1/account/requests?limit=500", H(k.key))).json.data.result.data;
      if (!data.some((e) => e.request_id.startsWith("req_old_"))) break;
      await Bun.sleep(100);
    }
    const ids = data.map((e) => e.request_id);
    expect(ids).toContain("req_recent");
    expect(ids.filter((id) => id.startsWith("req_old_"))).toEqual([]);
  } finally {
    await g2.close();
    rmSync(g.dir, { recursive: true, force: true });
  }
});

test("what is recorded just before shutdown is written by it", async () => {
  const g = await startGateway();
  const k = g.newKey({ credits: 100 });
  const r = await g.post("/api/v1/ai/sentiment-analysis", { text: "a calm day" }, H(k.key));
  expect(r.status).toBe(200);
  await g.stop();
  const db = new Database(g.dbPath, { readonly: true });
  const row = db.query("SELECT function, status FROM request_log WHERE request_id = ?").get(r.json.request_id);
  db.close();
  rmSync(g.dir, { recursive: true, force: true });
  expect(row).toEqual({ function: "sentiment-analysis", status: 200 });
});

describe("textai requests", () => {
  const cli = async (args: string[]) => {
    const p = Bun.spawn([process.execPath, "src/cli.ts", "requests", ...args], {
      cwd: `${import.meta.dir}/../..`,
      env: { ...process.env, TEXTAI_DB: gw.dbPath },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
    return { code: await p.exited, out, err };
  };

  test("prints the same entries as the admin route, filtered by account, function and time", async () => {
    const api = (await gw.get(`/admin/v1/requests?account_id=${b.accountId}&function=sentiment-analysis&limit=500`, admin)).json
      .data.result.data as Entry[];
    expect(api.length).toBe(4);
    const since = api[api.length - 1].time;
    const r = await cli(["--account", b.accountId, "--function", "sentiment-analysis", "--since", since, "--json"]);
    expect(r.code, r.err).toBe(0);
    expect((JSON.parse(r.out) as Entry[]).map((e) => e.request_id)).toEqual(api.map((e) => e.request_id));
    const later = await cli(["--account", b.accountId, "--since", new Date(Date.now() + 60_000).toISOString()]);
    expect(later.out.trim()).toBe("No requests match.");
    // --until bounds the other end; an account that does not exist is said so, exit 1
    const before = await cli(["--account", b.accountId, "--until", since, "--json"]);
    expect(before.code, before.err).toBe(0);
    expect((JSON.parse(before.out) as Entry[]).every((e) => e.time <= since)).toBe(true);
    const nobody = await cli(["--account", "acc_nope"]);
    // (saying which database was opened: an id of another gateway's is otherwise a puzzle)
    // (after the note that it reads the running server's config file: cli-server-config.test.ts)
    expect([nobody.code, nobody.err.trim().split("\n").at(-1)]).toEqual([1, `no account acc_nope in ${gw.dbPath}`]);
    const table = await cli(["--account", b.accountId, "--function", "sentiment-analysis"]);
    expect(table.out.split("\n")[0]).toMatch(/^time\s+request_id\s+account_id\s+key_id\s+function\s+status/);
    for (const e of api) expect(table.out).toContain(e.request_id);
    expect(table.out).not.toContain(MARKER);
    // the documented extra flags: --status, --key, --limit
    const narrow = await cli(["--key", a2.id, "--status", "4xx", "--limit", "2", "--json"]);
    expect(narrow.code, narrow.err).toBe(0);
    const two = JSON.parse(narrow.out) as Entry[];
    expect(two.map((e) => [e.key_id, e.status])).toEqual([
      [a2.id, 400],
      [a2.id, 400],
    ]);
    const bad = await cli(["--since", "last tuesday"]);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("--since");
    // five CLI processes, each loading the whole CLI: seconds on a busy 2-core machine
  }, 30_000);
});

test("while the database cannot be written, entries wait in memory (the pending gauge says how many) and are written after", async () => {
  const admin = "request-log-operator-token-0123456789abcdef";
  const g = await startGateway({ env: { TEXTAI_DB_BUSY_TIMEOUT_MS: "20", TEXTAI_ADMIN_TOKEN: admin } });
  try {
    const k = g.newKey({ credits: 10 });
    // another process's write transaction holds the file's write lock; reads still work (WAL)
    const other = new Database(g.dbPath);
    other.run("PRAGMA busy_timeout = 5000");
    other.run("BEGIN IMMEDIATE");
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await g.get("/api/v1/account/usage", H(k.key));
      expect(r.status).toBe(200);
      ids.push(r.json.request_id);
    }
    await Bun.sleep(1200); // two flushes fail
    const metrics = await (await fetch(`${g.url}/metrics`, { headers: { authorization: `Bearer ${admin}` } })).text();
    expect(Number(/^textai_request_log_pending (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(5);
    expect(metrics).toMatch(/^textai_request_log_dropped 0$/m);
    expect(g.logs.some((l) => l.includes("request log write failed"))).toBe(true);
    other.run("COMMIT");
    other.close();
    const until = Date.now() + 5000;
    let found: string[] = [];
    while (Date.now() < until && found.length < 5) {
      const db = new Database(g.dbPath, { readonly: true });
      found = ids.filter((id) => db.query("SELECT 1 FROM request_log WHERE request_id = ?").get(id));
      db.close();
      if (found.length < 5) await Bun.sleep(100);
    }
    expect(found).toEqual(ids);
  } finally {
    await g.close();
  }
});

test("[log] enabled = false records nothing (the bench measures the log's cost against it)", async () => {
  const g = await startGateway({ configText: "[log]\nenabled = false\n" });
  try {
    const k = g.newKey({ credits: 10 });
    expect((await g.get("/api/v1/account/usage", H(k.key))).status).toBe(200);
    await Bun.sleep(1200);
    const db = new Database(g.dbPath, { readonly: true });
    try {
      expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM request_log").get()?.n).toBe(0);
    } finally {
      db.close();
    }
  } finally {
    await g.close();
  }
});
