/**
 * Account tags (CONTRACT section 16, issue 39): an account carries `tags` (admin API), and a key's
 * tags add to its account's. An account tagged eu with an untagged key never reaches a deployment
 * without region = "eu", even when every eu deployment fails; a key whose tag contradicts its
 * account's is refused (400 naming the tag), sent nowhere. Real servers on SQLite, and two nodes
 * on one PostgreSQL + Redis (a change made on one node applies on the other at its next request),
 * with upstream simulators recording every call.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { groupToml } from "../helpers/groups-toml";
import { freshDatabase, freshRedis, sharedServersUp, type TestRedis } from "../helpers/shared-servers";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";

const ADMIN = "account-tags-admin-token-0123456789abcdef01";
const admin = { authorization: `Bearer ${ADMIN}` };

let eu: Upstream;
let us: Upstream;

beforeAll(async () => {
  [eu, us] = await Promise.all([startUpstream(), startUpstream()]);
});
afterAll(async () => {
  await Promise.all([eu?.close(), us?.close()]);
});

// the us deployment comes first in an ordered group: only the tags keep a call off it
const config = () => `${simProvider({ url: `${eu.url}/v1`, name: "sim-eu", model: "eu-default" })}
${simProvider({ url: `${us.url}/v1`, name: "sim-us", model: "us-default" })}
[cache]
enabled = false
${groupToml("acct", [
  { provider: "sim-us", model: "acct-us", tags: { region: "us" } },
  { provider: "sim-eu", model: "acct-eu", tags: { region: "eu" } },
])}`;

async function send(gw: TestGateway, method: string, path: string, body?: unknown) {
  const r = await fetch(gw.url + path, {
    method,
    headers: { ...admin, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, json: (await r.json()) as Record<string, any> };
}

async function keyOn(gw: TestGateway, accountId: string, policy?: unknown): Promise<string> {
  const r = await send(gw, "POST", "/admin/v1/keys", { label: "t", account_id: accountId, policy });
  expect(r.status, JSON.stringify(r.json)).toBe(201);
  return r.json.data.result.key as string;
}

async function chat(gw: TestGateway, key: string) {
  const r = await gw.post(
    "/v1/chat/completions",
    { model: "acct", messages: [{ role: "user", content: "Hello" }] },
    { authorization: `Bearer ${key}`, "cache-control": "no-cache" },
  );
  return {
    status: r.status,
    error: r.json.error as { code: string; message: string } | undefined,
    deployment: r.headers.get("x-textai-deployment"),
  };
}

/** The cases, on `nodes` sharing one database (a change made through the first, calls through the last). */
function cases(nodes: () => TestGateway[]) {
  const first = () => nodes()[0] as TestGateway;
  const last = () => nodes()[nodes().length - 1] as TestGateway;

  test("the admin API round trip: created with tags, read, changed, cleared; bad tags are 400, an unknown account 404", async () => {
    const made = await send(first(), "POST", "/admin/v1/accounts", { credits: 100, tags: { region: "eu" } });
    expect(made.status, JSON.stringify(made.json)).toBe(201);
    expect(made.json.data.result.tags).toEqual({ region: "eu" });
    const id = made.json.data.result.id as string;
    expect((await send(last(), "GET", `/admin/v1/accounts/${id}`)).json.data.result.tags).toEqual({ region: "eu" });
    const changed = await send(first(), "PATCH", `/admin/v1/accounts/${id}`, { tags: { region: "us", tier: "gold" } });
    expect(changed.status).toBe(200);
    expect(changed.json.data.result.tags).toEqual({ region: "us", tier: "gold" });
    expect((await send(first(), "PATCH", `/admin/v1/accounts/${id}`, { tags: null })).json.data.result.tags).toBeNull();
    const listed = await send(last(), "GET", "/admin/v1/accounts?limit=500");
    expect(listed.json.data.result.data.find((a: { id: string }) => a.id === id).tags).toBeNull();
    const bad = await send(first(), "PATCH", `/admin/v1/accounts/${id}`, { tags: { region: 5 } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.param).toBe("tags.region");
    expect((await send(first(), "POST", "/admin/v1/accounts", { tags: [] })).status).toBe(400);
    expect((await send(first(), "PATCH", "/admin/v1/accounts/acc_nope", { tags: { region: "eu" } })).status).toBe(404);
  });

  test("an account tagged eu, an untagged key: never the us deployment, even when the eu one fails", async () => {
    const made = await send(first(), "POST", "/admin/v1/accounts", { credits: 100 });
    const id = made.json.data.result.id as string;
    const key = await keyOn(first(), id);
    // untagged: the group's first deployment (us) serves it; node 2 now holds the key in its cache
    expect((await chat(last(), key)).deployment).toBe("sim-us/acct-us");
    expect((await send(first(), "PATCH", `/admin/v1/accounts/${id}`, { tags: { region: "eu" } })).status).toBe(200);
    // the other node drops the key from its cache on the change's broadcast (its 1 s TTL at worst)
    const t0 = performance.now();
    while ((await chat(last(), key)).deployment !== "sim-eu/acct-eu") expect(performance.now() - t0).toBeLessThan(1000);
    eu.reset();
    us.reset();
    expect(await chat(last(), key)).toMatchObject({ status: 200, deployment: "sim-eu/acct-eu" });
    eu.program([{ status: 500, times: 10 }], { model: "acct-eu" });
    const failed = await chat(last(), key);
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect(eu.calls.count).toBeGreaterThanOrEqual(2);
    expect(us.calls.count).toBe(0);
    eu.reset();
  });

  test("a key's tags add to its account's; a key contradicting its account's tag is 400 naming it, sent nowhere", async () => {
    const made = await send(first(), "POST", "/admin/v1/accounts", { credits: 100, tags: { region: "eu" } });
    const id = made.json.data.result.id as string;
    const narrowing = await keyOn(first(), id, { tags: { tier: "gold" } });
    // tier is carried by no deployment: it restricts nothing, region=eu still holds
    expect(await chat(last(), narrowing)).toMatchObject({ status: 200, deployment: "sim-eu/acct-eu" });
    const contradicting = await keyOn(first(), id, { tags: { region: "us" } });
    const before = eu.calls.count + us.calls.count;
    const refused = await chat(last(), contradicting);
    expect(refused.status).toBe(400);
    expect(refused.error?.code).toBe("invalid_request");
    expect(refused.error?.message).toContain('region="us"');
    expect(refused.error?.message).toContain('region="eu"');
    // a function naming the group: the same refusal
    const fn = await last().post("/api/v1/ai/chat", { message: "Hello", model: "acct" }, { "x-api-key": contradicting });
    expect({ status: fn.status, code: fn.json.error?.code }).toEqual({ status: 400, code: "invalid_request" });
    expect(fn.json.error?.message).toContain('region="us"');
    expect(eu.calls.count + us.calls.count).toBe(before);
  });
}

describe("account tags on SQLite", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: ADMIN }, configText: config() });
  });
  afterAll(async () => {
    await gw?.close();
  });
  cases(() => [gw]);

  test("the CLI: accounts tags --account ID --tags region=eu sets them (the server reads them within its key cache's second), --tags= clears them", async () => {
    const k = gw.newKey({ credits: 100 });
    const cli = (...args: string[]) => {
      const env = { ...process.env, TEXTAI_DB: gw.dbPath, TEXTAI_CONFIG: "" } as Record<string, string>;
      const p = Bun.spawnSync([process.execPath, join(import.meta.dir, "../../src/cli.ts"), "accounts", "tags", ...args], {
        env,
      });
      return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
    };
    const set = cli("--account", k.accountId, "--tags", "region=eu", "--json");
    expect(set.code, set.err).toBe(0);
    expect(JSON.parse(set.out).tags).toEqual({ region: "eu" });
    const t0 = performance.now();
    while ((await chat(gw, k.key)).deployment !== "sim-eu/acct-eu") expect(performance.now() - t0).toBeLessThan(1500);
    expect(cli("--account", k.accountId, "--tags=").code).toBe(0);
    expect((await send(gw, "GET", `/admin/v1/accounts/${k.accountId}`)).json.data.result.tags).toBeNull();
    const bad = cli("--account", k.accountId, "--tags", "region");
    expect(bad.code).not.toBe(0);
    expect(bad.err).toContain("--tags");
    expect(cli("--account", "acc_nope", "--tags", "region=eu").code).toBe(1);
  });
});

const shared = await sharedServersUp("the account-tags tests on PostgreSQL + Redis");

describe.skipIf(!shared)("account tags on two nodes, one PostgreSQL, one Redis", () => {
  const nodes: TestGateway[] = [];
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let redis: TestRedis;
  beforeAll(async () => {
    [db, redis] = await Promise.all([freshDatabase(), freshRedis()]);
    const env = { TEXTAI_ADMIN_TOKEN: ADMIN, TEXTAI_DATABASE_URL: db.url, ...redis.env };
    nodes.push(await startGateway({ env, configText: config() }));
    nodes.push(await startGateway({ env, configText: config() }));
  }, 60_000);
  afterAll(async () => {
    for (const n of nodes) await n.close();
    await redis?.flush();
    await db?.drop();
  }, 30_000);
  cases(() => nodes);
});
