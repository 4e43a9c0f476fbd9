/**
 * Single sign-on across three nodes on one PostgreSQL database and Redis (docs/sso.md#many-nodes),
 * against a real OpenID provider (test/helpers/oidc-issuer.ts):
 *  - a sign-in started on one node completes on another (the cookie is sealed under the client's
 *    secret, which every node has), and its session works on the third;
 *  - its callback replayed on the third node is refused as a used state, before the provider is asked;
 *  - two first sign-ins of one email at once on two nodes make one member, joined once in the audit trail.
 * Needs 127.0.0.1:5432 and :6379; skips loudly without them, fails under CI.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startIssuer, type TestIssuer } from "../helpers/oidc-issuer";
import { freshDatabase, nodesRedis, sharedServersUp, type TestRedis } from "../helpers/shared-servers";
import { ADMIN, type Cluster, type Node, startCluster } from "./nodes";

const shared = await sharedServersUp("the single sign-on cluster tests");

// the issuer sends the browser here; the test takes the URL to whichever node it wants
const REDIRECT = "http://127.0.0.1:9/dashboard/sso/callback";
const admin = { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" };

let db: Awaited<ReturnType<typeof freshDatabase>>;
let redis: TestRedis;
let cluster: Cluster;
let issuer: TestIssuer;
const nodes: Node[] = [];
let account: string;

const on = (node: Node, url: string) => node.url + new URL(url).pathname + new URL(url).search;

async function callback(node: Node, url: string, ssoCookie: string) {
  const res = await fetch(on(node, url), { redirect: "manual", headers: { cookie: ssoCookie } });
  const session = res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0] as string)
    .find((c) => c.startsWith("textai_session=") && c.length > "textai_session=".length);
  return { status: res.status, text: await res.text(), session: session ?? null };
}

async function auditOf(node: Node): Promise<Record<string, unknown>[]> {
  const res = await fetch(`${node.url}/admin/v1/audit?account_id=${account}&limit=500`, { headers: admin });
  return ((await res.json()) as { data: { result: { data: Record<string, unknown>[] } } }).data.result.data;
}

describe.skipIf(!shared)("single sign-on across three nodes", () => {
  beforeAll(async () => {
    db = await freshDatabase();
    redis = await nodesRedis("the single sign-on nodes on a Redis Cluster");
    issuer = await startIssuer({
      redirectUri: REDIRECT,
      users: {
        nina: { email: "nina@corp.example", email_verified: true, groups: ["eng"] },
        ola: { email: "ola@corp.example", email_verified: true, groups: ["eng"] },
      },
    });
    // one node makes the account the map names, then three start with the map
    cluster = await startCluster({ n: 1, databaseUrl: db.url, redisUrl: redis.url, redisPrefix: redis.prefix, configText: "" });
    // the node listens before its migrations are done (its calls answer 503 until then): wait for /ready
    for (let t = Date.now(); Date.now() - t < 30_000; await Bun.sleep(100))
      if ((await fetch(`${cluster.nodes[0]?.url}/ready`)).status === 200) break;
    const made = await fetch(`${cluster.nodes[0]?.url}/admin/v1/accounts`, {
      method: "POST",
      headers: admin,
      body: JSON.stringify({ name: "corp", credits: 5 }),
    });
    account = ((await made.json()) as { data: { result: { id: string } } }).data.result.id;
    const config = join(cluster.dir, "sso.toml");
    await Bun.write(
      config,
      `[sso]\nissuer = "${issuer.url}"\nclient_id = "${issuer.clientId}"\nredirect_uri = "${REDIRECT}"\n\n` +
        `[[sso.map]]\ngroup = "eng"\naccount = "${account}"\nrole = "developer"\n`,
    );
    for (let i = 0; i < 3; i++) {
      const node = await cluster.spawn({ TEXTAI_CONFIG: config, TEXTAI_SSO_CLIENT_SECRET: issuer.clientSecret });
      cluster.nodes.push(node);
      nodes.push(node);
    }
  }, 60_000);

  afterAll(async () => {
    await cluster?.close();
    await issuer?.close();
    await redis?.flush();
    await db?.drop();
  });

  test("started on one node, completed on another, its session works on the third; its replay is refused there", async () => {
    const [a, b, c] = nodes as [Node, Node, Node];
    const { callback: url, ssoCookie } = await issuer.signIn(`${a.url}/dashboard/sso/start`, "nina");
    const done = await callback(b, url, ssoCookie);
    expect(done.status, done.text).toBe(200);
    expect(done.session).not.toBeNull();
    const home = await fetch(`${c.url}/dashboard`, { redirect: "manual", headers: { cookie: done.session as string } });
    expect(home.status).toBe(200);
    expect(await home.text()).toContain("nina@corp.example");

    const calls = issuer.tokenCalls;
    const replay = await callback(c, url, ssoCookie);
    expect(replay.status).toBe(400);
    expect(replay.text).toContain("already used");
    expect(replay.session).toBeNull();
    expect(issuer.tokenCalls).toBe(calls);
  });

  test("two first sign-ins of one email at once on two nodes make one member, joined once", async () => {
    const [a, b, c] = nodes as [Node, Node, Node];
    const one = await issuer.signIn(`${a.url}/dashboard/sso/start`, "ola");
    const two = await issuer.signIn(`${c.url}/dashboard/sso/start`, "ola");
    const [x, y] = await Promise.all([callback(b, one.callback, one.ssoCookie), callback(c, two.callback, two.ssoCookie)]);
    expect(x.status, x.text).toBe(200);
    expect(y.status, y.text).toBe(200);
    const res = await fetch(`${a.url}/admin/v1/accounts/${account}/members`, { headers: admin });
    const members = ((await res.json()) as { data: { result: { data: { email: string; role: string }[] } } }).data.result.data;
    expect(members.filter((m) => m.email === "ola@corp.example")).toEqual([
      expect.objectContaining({ email: "ola@corp.example", role: "developer" }),
    ]);
    const joins = (await auditOf(b)).filter(
      (e) => e.action === "member.join" && (e.after as { email?: string }).email === "ola@corp.example",
    );
    expect(joins.length).toBe(1);
  });
});
