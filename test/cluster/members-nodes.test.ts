/**
 * Members and roles on three gateway processes sharing one PostgreSQL database and one Redis
 * (CONTRACT section 17, docs/teams.md), through the real HTTP APIs: an invitation made on one node
 * is used on another and its member signs in on the third; the link is one-time on every node (even
 * used on three nodes at once) and refused once expired; a role change made on one node counts on
 * the member's sessions on the others from their next request, and a removal ends them everywhere;
 * two owners demoted or removed at once on two nodes leave exactly one owner, round after round;
 * each change writes its audit entry exactly once. Also: the account's audit trail read with a key
 * (GET /api/v1/account/audit) follows its maker's role, read on every node. Needs 127.0.0.1:5432 and
 * :6379; skips loudly without them, fails under CI.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { LAST_OWNER } from "../../src/dashboard/members";
import { freshDatabase, nodesRedis, sharedServersUp, type TestRedis } from "../helpers/shared-servers";
import { admin, type Cluster, keyCall, type Node, startCluster } from "./nodes";

const shared = await sharedServersUp("the members' cluster tests");
const PASSWORD = "a long enough password";

let db: Awaited<ReturnType<typeof freshDatabase>>;
let redis: TestRedis;
let cluster: Cluster;
let pg: SQL;

beforeAll(async () => {
  if (!shared) return;
  db = await freshDatabase();
  redis = await nodesRedis("the members' nodes on a Redis Cluster");
  cluster = await startCluster({ n: 3, databaseUrl: db.url, redisUrl: redis.url, redisPrefix: redis.prefix, configText: "" });
  pg = new SQL(db.url, { max: 2 });
}, 60_000);

afterAll(async () => {
  if (!shared) return;
  await cluster?.close();
  await pg?.close();
  await db?.drop();
  await redis?.flush();
}, 30_000);

const nodeAt = (i: number) => cluster.nodes[i % 3] as Node;
const tag = () => Math.random().toString(36).slice(2, 10);

// biome-ignore lint/suspicious/noExplicitAny: the tests walk the envelope; their assertions check its shape
type Json = Record<string, any>;

/** A dashboard request on `node` from its own origin (a form, or JSON), with a session cookie when given. */
async function web(
  node: Node,
  method: string,
  path: string,
  o: { form?: Record<string, string>; json?: unknown; cookie?: string } = {},
) {
  const headers: Record<string, string> = { origin: new URL(node.url).origin };
  if (o.cookie) headers.cookie = o.cookie;
  let body: string | undefined;
  if (o.form) {
    headers["content-type"] = "application/x-www-form-urlencoded";
    body = new URLSearchParams(o.form).toString();
  } else if (o.json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(o.json);
  }
  const res = await fetch(node.url + path, { method, headers, body, redirect: "manual" });
  const text = await res.text();
  let json: Json = {};
  try {
    json = JSON.parse(text);
  } catch {}
  return {
    status: res.status,
    text,
    json,
    location: res.headers.get("location"),
    cookie: (res.headers.get("set-cookie") ?? "").split(";")[0] as string,
    /** a refused form's flash (Post/Redirect/Get: its 303's page says why), as name=value */
    flash:
      res.headers
        .getSetCookie()
        .find((c) => c.startsWith("textai_flash="))
        ?.split(";")[0] ?? null,
    label: `${method} ${node.url}${path}: ${res.status} ${text.slice(0, 300)}`,
  };
}

/** What a form's answer shows: a refused one's page (asked on `node` with its flash), else the answer itself. */
async function shownOn(node: Node, r: Awaited<ReturnType<typeof web>>, cookie = "") {
  if (r.status !== 303 || !r.flash) return r;
  return web(node, "GET", r.location as string, { cookie: [cookie, r.flash].filter(Boolean).join("; ") });
}

/** A new account on `node` whose login (its first owner) is `email`. */
async function newAccount(node: Node, email: string): Promise<string> {
  const made = await admin(node, "POST", "/admin/v1/accounts", { email, password: PASSWORD, credits: 10 });
  expect(made.status, JSON.stringify(made.json)).toBe(201);
  return made.result.id as string;
}

/** An invitation made on `node`: the link's path (with its token) and the invitation's id. */
async function invite(node: Node, account: string, email: string, role: string): Promise<{ path: string; id: string }> {
  const r = await admin(node, "POST", `/admin/v1/accounts/${account}/members`, { email, role });
  expect(r.status, JSON.stringify(r.json)).toBe(201);
  const url = new URL(r.result.url as string);
  expect(url.origin).toBe(new URL(node.url).origin);
  return { path: url.pathname + url.search, id: r.result.id as string };
}

/** Uses an invitation's link on `node`: the new member's session cookie. */
async function join(node: Node, path: string): Promise<string> {
  const r = await web(node, "POST", path, { form: { name: "Member", password: PASSWORD } });
  expect(r.status, r.label).toBe(303);
  expect(r.location).toBe("/dashboard");
  return r.cookie;
}

async function signIn(node: Node, email: string): Promise<string> {
  const r = await web(node, "POST", "/dashboard/login", { form: { email, password: PASSWORD } });
  expect(r.status, r.label).toBe(303);
  return r.cookie;
}

type Member = { id: string; email: string; role: string };
async function members(node: Node, account: string): Promise<Member[]> {
  const r = await admin(node, "GET", `/admin/v1/accounts/${account}/members`);
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  return r.result.data as Member[];
}
const idOf = async (node: Node, account: string, email: string) =>
  ((await members(node, account)).find((m) => m.email === email) as Member).id;

type Entry = { seq: number; actor: string; action: string; target_id: string | null };
/** The account's audit entries, oldest first, as `node` reads them (the admin API). */
async function trail(node: Node, account: string): Promise<Entry[]> {
  const out: Entry[] = [];
  let cursor = "";
  for (;;) {
    const r = await admin(node, "GET", `/admin/v1/audit?account_id=${account}&limit=500${cursor ? `&cursor=${cursor}` : ""}`);
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    out.push(...(r.result.data as Entry[]));
    if (!r.result.next_cursor) return out.reverse();
    cursor = r.result.next_cursor as string;
  }
}

/** Every node reads the same trail for the account, and it holds exactly the `want` entries ("action target actor"). */
async function expectTrail(account: string, want: string[]): Promise<void> {
  const seen = await Promise.all(cluster.nodes.map((n) => trail(n, account)));
  for (const other of seen) expect(other).toEqual(seen[0] as Entry[]);
  const got = (seen[0] as Entry[]).map((e) => `${e.action} ${e.target_id} ${e.actor}`);
  expect(got.sort()).toEqual([...want].sort());
}

describe.skipIf(!shared)("members on three nodes, one PostgreSQL", () => {
  test("invited on A, joined on B, signed in on C; the link is one-time on every node (three at once too) and refused once expired", async () => {
    const [a, b, c] = cluster.nodes as [Node, Node, Node];
    const t = tag();
    const account = await newAccount(a, `owner-${t}@one.example`);
    const email = `new-${t}@one.example`;
    const inv = await invite(a, account, email, "developer");
    expect((await web(b, "GET", inv.path)).status).toBe(200);
    const joined = await join(b, inv.path);
    // the session made on B is good on every node, and the member signs in on C
    for (const n of cluster.nodes) {
      const r = await web(n, "GET", "/dashboard/api/overview", { cookie: joined });
      expect(r.status, r.label).toBe(200);
      expect(r.json.data.result.email).toBe(email);
    }
    const onC = await signIn(c, email);
    expect((await web(a, "GET", "/dashboard/api/overview", { cookie: onC })).json.data.result.email).toBe(email);
    const mem = await idOf(c, account, email);
    expect((await members(b, account)).find((m) => m.id === mem)?.role).toBe("developer");
    // the link again, on every node: used (a form refused answers 303 to the link's page, which says why)
    const opened = async (n: Node, method: string, path: string) =>
      method === "POST" ? shownOn(n, await web(n, "POST", path, { form: { password: PASSWORD } })) : web(n, "GET", path);
    for (const n of cluster.nodes) {
      for (const method of ["GET", "POST"]) {
        const again = await opened(n, method, inv.path);
        expect(again.status, again.label).toBe(410);
        expect(again.text).toContain("already been used");
      }
    }
    // one link used on three nodes at the same moment: one member, two refusals
    const race = await invite(b, account, `race-${t}@one.example`, "viewer");
    const tries = await Promise.all(
      cluster.nodes.map(async (n) => shownOn(n, await web(n, "POST", race.path, { form: { password: PASSWORD } }))),
    );
    expect(tries.map((r) => r.status).sort()).toEqual([303, 410, 410]);
    const raced = await idOf(a, account, `race-${t}@one.example`);
    // expired: this test's own invitation, aged in this test's own database (invitation_hours is whole hours)
    const late = await invite(c, account, `late-${t}@one.example`, "admin");
    await pg`UPDATE invitations SET expires_at = ${Date.now() - 1} WHERE id = ${late.id}`;
    for (const n of cluster.nodes) {
      for (const method of ["GET", "POST"]) {
        const r = await opened(n, method, late.path);
        expect(r.status, r.label).toBe(410);
        expect(r.text).toContain("has expired");
      }
    }
    expect((await members(a, account)).map((m) => m.email).sort()).toEqual(
      [email, `owner-${t}@one.example`, `race-${t}@one.example`].sort(),
    );
    await expectTrail(account, [
      `account.create ${account} admin-token`,
      `member.invite ${inv.id} admin-token`,
      `member.join ${mem} ${mem}`,
      `member.invite ${race.id} admin-token`,
      `member.join ${raced} ${raced}`,
      `member.invite ${late.id} admin-token`,
    ]);
  }, 60_000);

  test("a role change made on A counts on the member's sessions on B and C at their next request; a removal ends them on every node", async () => {
    const [a, b, c] = cluster.nodes as [Node, Node, Node];
    const t = tag();
    const account = await newAccount(a, `owner-${t}@two.example`);
    const email = `adm-${t}@two.example`;
    const inv = await invite(a, account, email, "admin");
    const onB = await join(b, inv.path);
    const onC = await signIn(c, email);
    const mem = await idOf(a, account, email);
    const apiKey = await admin(b, "POST", "/admin/v1/keys", { label: "admin API's", account_id: account });
    // the admin's own key, made in the dashboard on B: it reads the account's trail on every node
    const made = await web(b, "POST", "/dashboard/api/keys", { json: { label: "admin's" }, cookie: onB });
    expect(made.status, made.label).toBe(201);
    const admKey = made.json.data.result.key as string;
    for (const [node, cookie] of [
      [b, onB],
      [c, onC],
    ] as const) {
      expect((await web(node, "GET", "/dashboard/audit.json", { cookie })).status).toBe(200);
      expect((await keyCall(node, admKey, "GET", "/api/v1/account/audit?limit=5")).status).toBe(200);
    }
    const demoted = await admin(a, "PATCH", `/admin/v1/accounts/${account}/members/${mem}`, { role: "viewer" });
    expect(demoted.status, JSON.stringify(demoted.json)).toBe(200);
    expect(demoted.result.role).toBe("viewer");
    // right after, on B and C: the admin's pages and JSON routes are refused, reading still works
    for (const [node, cookie] of [
      [b, onB],
      [c, onC],
      [c, onB],
      [b, onC],
    ] as const) {
      const page = await web(node, "GET", "/dashboard/audit.json", { cookie });
      expect(page.status, page.label).toBe(403);
      const narrow = await web(node, "PATCH", `/dashboard/api/keys/${apiKey.result.id}`, {
        json: { policy: { rate_limit_per_minute: 5 } },
        cookie,
      });
      expect(narrow.status, narrow.label).toBe(403);
      expect(narrow.json.error.code).toBe("forbidden");
      expect((await web(node, "GET", "/dashboard/api/overview", { cookie })).status).toBe(200);
      // and the key it made no longer reads the trail (docs/audit.md#reading-it); the admin API's key does
      const refused = await keyCall(node, admKey, "GET", "/api/v1/account/audit?limit=5");
      expect(refused.status, refused.text).toBe(403);
      expect(JSON.parse(refused.text).error.code).toBe("forbidden");
      expect((await keyCall(node, apiKey.result.key as string, "GET", "/api/v1/account/audit?limit=5")).status).toBe(200);
    }
    const removed = await admin(a, "DELETE", `/admin/v1/accounts/${account}/members/${mem}`);
    expect(removed.status, JSON.stringify(removed.json)).toBe(200);
    for (const n of cluster.nodes) {
      for (const cookie of [onB, onC]) {
        const json = await web(n, "GET", "/dashboard/api/overview", { cookie });
        expect(json.status, json.label).toBe(401);
        expect(json.json.error.code).toBe("not_signed_in");
        const page = await web(n, "GET", "/dashboard", { cookie });
        expect(page.status, page.label).toBe(303);
        expect(page.location).toBe("/dashboard/login");
      }
    }
    const again = await shownOn(c, await web(b, "POST", "/dashboard/login", { form: { email, password: PASSWORD } }));
    expect(again.status, again.label).toBe(401);
    expect((await keyCall(a, admKey, "GET", "/api/v1/account/audit?limit=5")).status).toBe(403);
    await expectTrail(account, [
      `account.create ${account} admin-token`,
      `member.invite ${inv.id} admin-token`,
      `member.join ${mem} ${mem}`,
      `key.create ${apiKey.result.id} admin-token`,
      `key.create ${made.json.data.result.id} ${mem}`,
      `member.role.update ${mem} admin-token`,
      `member.remove ${mem} admin-token`,
    ]);
  }, 60_000);

  test("the last owner under concurrency (admin API): two owners demoted or removed at once on two nodes leave exactly one, 10 rounds", async () => {
    const t = tag();
    const account = await newAccount(nodeAt(0), `owner-${t}@three.example`);
    const want = [`account.create ${account} admin-token`];
    let n = 0;
    /** one more owner, invited on one node and joined on another */
    const addOwner = async (i: number) => {
      const email = `o${n++}-${t}@three.example`;
      const inv = await invite(nodeAt(i), account, email, "owner");
      await join(nodeAt(i + 1), inv.path);
      const id = await idOf(nodeAt(i + 2), account, email);
      want.push(`member.invite ${inv.id} admin-token`, `member.join ${id} ${id}`);
    };
    await addOwner(0);
    const OPS = [
      ["demote", "demote"],
      ["demote", "remove"],
      ["remove", "demote"],
      ["remove", "remove"],
    ] as const;
    for (let round = 0; round < 10; round++) {
      const owners = (await members(nodeAt(round), account)).filter((m) => m.role === "owner").map((m) => m.id);
      expect(owners.length).toBe(2);
      const ops = OPS[round % OPS.length] as (typeof OPS)[number];
      const path = (id: string) => `/admin/v1/accounts/${account}/members/${id}`;
      const results = await Promise.all(
        owners.map((id, j) =>
          ops[j] === "demote"
            ? admin(nodeAt(round + j), "PATCH", path(id), { role: "admin" })
            : admin(nodeAt(round + j), "DELETE", path(id)),
        ),
      );
      expect(results.map((r) => r.status).sort(), JSON.stringify(results.map((r) => r.json))).toEqual([200, 409]);
      const refused = results.find((r) => r.status === 409) as (typeof results)[number];
      expect((refused.json as Json).error.message).toBe(LAST_OWNER);
      const won = results.findIndex((r) => r.status === 200);
      const loser = owners[won] as string;
      want.push(`${ops[won] === "demote" ? "member.role.update" : "member.remove"} ${loser} admin-token`);
      // exactly one owner, read on every node: the one whose change was refused
      for (const node of cluster.nodes) {
        const left = (await members(node, account)).filter((m) => m.role === "owner").map((m) => m.id);
        expect(left).toEqual([owners[1 - won] as string]);
      }
      // a second owner again for the next round
      if (ops[won] === "demote") {
        expect((await admin(nodeAt(round + 2), "PATCH", path(loser), { role: "owner" })).status).toBe(200);
        want.push(`member.role.update ${loser} admin-token`);
      } else await addOwner(round);
    }
    await expectTrail(account, want);
  }, 120_000);

  test("the last owner under concurrency (dashboard): two owners demoting each other at once on two nodes leave exactly one, 10 rounds", async () => {
    const t = tag();
    const first = `owner-${t}@four.example`;
    const account = await newAccount(nodeAt(0), first);
    const inv = await invite(nodeAt(1), account, `second-${t}@four.example`, "owner");
    const cookies = [await signIn(nodeAt(0), first), await join(nodeAt(2), inv.path)];
    const ids = [await idOf(nodeAt(0), account, first), await idOf(nodeAt(0), account, `second-${t}@four.example`)] as [
      string,
      string,
    ];
    const want = [
      `account.create ${account} admin-token`,
      `member.invite ${inv.id} admin-token`,
      `member.join ${ids[1]} ${ids[1]}`,
    ];
    for (let round = 0; round < 10; round++) {
      // owner j, signed in, demotes the other owner on node round+j
      const results = await Promise.all(
        [0, 1].map(async (j) => {
          const posted = await web(nodeAt(round + j), "POST", `/dashboard/members/${ids[1 - j]}/role`, {
            form: { role: "admin" },
            cookie: cookies[j],
          });
          // a refusal is a 303 too, its page (asked on the next node) saying why
          return shownOn(nodeAt(round + j + 1), posted, cookies[j]);
        }),
      );
      const statuses = results.map((r) => r.status);
      // one demotion done (303 back to the list); the other refused by the store (409, the last owner)
      // or, when its owner was demoted before its request was read, by its role (403)
      expect(statuses.filter((s) => s === 303).length, results.map((r) => r.label).join("\n")).toBe(1);
      const other = results.find((r) => r.status !== 303) as (typeof results)[number];
      expect([403, 409], other.label).toContain(other.status);
      if (other.status === 409) expect(other.text).toContain("last owner");
      const won = statuses.indexOf(303);
      const demoted = ids[1 - won] as string;
      want.push(`member.role.update ${demoted} ${ids[won]}`);
      for (const node of cluster.nodes) {
        const owners = (await members(node, account)).filter((m) => m.role === "owner").map((m) => m.id);
        expect(owners).toEqual([ids[won] as string]);
      }
      expect(
        (await admin(nodeAt(round + 2), "PATCH", `/admin/v1/accounts/${account}/members/${demoted}`, { role: "owner" })).status,
      ).toBe(200);
      want.push(`member.role.update ${demoted} admin-token`);
    }
    await expectTrail(account, want);
    // the whole chain, every account's entries and this file's, verifies on every node
    for (const node of cluster.nodes)
      expect((await admin(node, "GET", "/admin/v1/audit/verify")).result).toMatchObject({ ok: true });
  }, 120_000);
});
