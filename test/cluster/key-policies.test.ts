/**
 * Key policies on three gateway processes sharing one PostgreSQL database and one Redis db
 * (CONTRACT section 13): a change made on one node applies on the other within one second, and
 * a key's monthly credit limit and its own rate limit hold over the nodes together. Needs
 * 127.0.0.1:5432 and :6379; skips loudly without them, fails under CI.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { type freshDatabase, sharedServersUp } from "../helpers/shared-servers";
import type { Upstream } from "../helpers/upstream";
import { admin, balanceOn, type Cluster, chat, type Node, newKey, startSimCluster } from "./nodes";

const shared = await sharedServersUp("the key-policy cluster tests");

let sim: Upstream;
let db: Awaited<ReturnType<typeof freshDatabase>>;
let cluster: Cluster;
let close: (() => Promise<void>) | undefined;

beforeAll(async () => {
  if (!shared) return;
  ({ sim, db, cluster, close } = await startSimCluster({ n: 3, latencyMs: 20 }));
}, 60_000);

afterAll(async () => {
  await close?.();
}, 30_000);

const patch = (node: Node, id: string, policy: unknown) => admin(node, "PATCH", `/admin/v1/keys/${id}`, { policy });
const code = (r: { text: string }) => (JSON.parse(r.text) as { error?: { code: string } }).error?.code;

describe.skipIf(!shared)("key policies on three nodes, one PostgreSQL, one Redis", () => {
  test("a policy changed on node 1 is applied by node 2 within one second (its key cache held the old one)", async () => {
    const [n1, n2] = cluster.nodes;
    const { key, id } = await newKey(n1, 100);
    // node 2 has the key, policy-free, in its key cache
    expect((await chat(n2, key, "warm")).status).toBe(200);
    const refusedAt = (async () => {
      for (;;) {
        const r = await chat(n2, key, "watch", { "cache-control": "no-cache" });
        if (r.status === 403) return { at: performance.now(), r };
        await Bun.sleep(2);
      }
    })();
    const changed = await patch(n1, id, { allowed_functions: ["sentiment-analysis"] });
    const t1 = performance.now();
    expect(changed.status, JSON.stringify(changed.json)).toBe(200);
    const { at, r } = await refusedAt;
    console.log(`policy change: applied on node 2 ${Math.max(0, at - t1).toFixed(1)} ms after node 1 answered it`);
    expect(at - t1).toBeLessThan(1000);
    expect(code(r)).toBe("forbidden");
    expect(r.text).toContain("sentiment-analysis");
  });

  test("monthly_credit_limit of 10: 50 concurrent 1-credit calls over three nodes admit exactly 10, the rest 402 key_budget_exceeded before any provider call", async () => {
    const [n1, n2] = cluster.nodes;
    const { key, id, accountId } = await newKey(n1, 1000);
    expect((await patch(n1, id, { monthly_credit_limit: 10 })).status).toBe(200);
    sim.reset();
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        chat(cluster.nodes[i % 3] as Node, key, `spend ${i}`, { "cache-control": "no-cache" }),
      ),
    );
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 402);
    expect(ok.length, results.map((r) => `${r.status} ${r.text.slice(0, 200)}`).join("\n")).toBe(10);
    expect(refused.length).toBe(40);
    for (const r of refused) expect(code(r)).toBe("key_budget_exceeded");
    expect(sim.calls.count).toBe(10);
    const view = await admin(n2, "GET", `/admin/v1/keys/${id}`);
    expect(view.result.month_credits_used).toBe(10);
    const acc = await admin(n2, "GET", `/admin/v1/accounts/${accountId}`);
    expect(JSON.stringify(acc.result)).toContain('"balance":990');
  });

  test("monthly_credit_limit counts the calendar month (UTC) on PostgreSQL: what the key spent last month does not count", async () => {
    const [n1, n2, n3] = cluster.nodes;
    const { key, id } = await newKey(n1, 100);
    expect((await patch(n1, id, { monthly_credit_limit: 2 })).status).toBe(200);
    for (const n of [n1, n2]) expect((await chat(n, key, `spend on ${n.url}`, { "cache-control": "no-cache" })).status).toBe(200);
    expect(code(await chat(n3, key, "over", { "cache-control": "no-cache" }))).toBe("key_budget_exceeded");
    const now = new Date();
    const lastMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1) - 1;
    const sql = new SQL(db.url);
    try {
      const moved = await sql`UPDATE ledger SET created_at = ${lastMonth} WHERE key_id = ${id} AND kind = 'charge' RETURNING 1`;
      expect(moved.length).toBe(2);
    } finally {
      await sql.close();
    }
    expect((await admin(n2, "GET", `/admin/v1/keys/${id}`)).result.month_credits_used).toBe(0);
    expect((await chat(n3, key, "a new month", { "cache-control": "no-cache" })).status).toBe(200);
    expect((await admin(n1, "GET", `/admin/v1/keys/${id}`)).result.month_credits_used).toBe(1);
  });

  test("rate_limit_per_minute of 4: 12 calls over both nodes admit exactly 4 (one bucket in Redis), the refused ones uncharged; another function has its own bucket", async () => {
    const [n1, n2] = cluster.nodes;
    const { key, id } = await newKey(n1, 100);
    expect((await patch(n2, id, { rate_limit_per_minute: 4 })).status).toBe(200);
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => chat(i % 2 ? n2 : n1, key, `limited ${i}`)));
    expect(results.filter((r) => r.status === 200).length).toBe(4);
    const limited = results.filter((r) => r.status === 429);
    expect(limited.length).toBe(8);
    for (const r of limited) {
      expect(code(r)).toBe("rate_limited");
      expect(r.headers.get("ratelimit-limit")).toBe("4");
      expect(r.headers.get("ratelimit-remaining")).toBe("0");
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    }
    // the four admitted calls are charged (1 credit each), the eight refused ones nothing
    expect(await balanceOn(n2, key)).toBe(96);
    const other = await fetch(`${n2.url}/api/v1/ai/sentiment-analysis`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key, "cache-control": "no-cache" },
      body: JSON.stringify({ text: "A bucket of its own." }),
    });
    expect(other.status).toBe(200);
    expect(other.headers.get("ratelimit-limit")).toBe("4");
  });

  test("rate_limit_per_minute never widens the plan: a key allowed 100 a minute on plan five is refused after 5 calls over the nodes", async () => {
    const [n1, n2] = cluster.nodes;
    const { key, id } = await newKey(n1, 100, "five");
    expect((await patch(n1, id, { rate_limit_per_minute: 100 })).status).toBe(200);
    const results = [];
    for (let i = 0; i < 8; i++) results.push(await chat(i % 2 ? n2 : n1, key, `plan ${i}`, { "cache-control": "no-cache" }));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
    for (const r of results.slice(5)) expect(r.headers.get("ratelimit-limit")).toBe("5");
    expect(await balanceOn(n2, key)).toBe(95);
  });

  test("allowed_functions and allowed_models, set at creation on node 1: 403 forbidden naming them on nodes 2 and 3, uncharged, no provider call; account endpoints answer, api-key/current shows the policy", async () => {
    const [n1, n2, n3] = cluster.nodes;
    const acc = await admin(n1, "POST", "/admin/v1/accounts", { plan: "pro", credits: 100 });
    const made = await admin(n1, "POST", "/admin/v1/keys", {
      label: "narrow",
      account_id: acc.result.id,
      policy: { allowed_functions: ["sentiment-analysis"], allowed_models: ["gpt-9*"] },
    });
    expect(made.status, JSON.stringify(made.json)).toBe(201);
    const key = made.result.key as string;
    const id = made.result.id as string;
    expect(made.result.policy).toMatchObject({ allowed_functions: ["sentiment-analysis"], allowed_models: ["gpt-9*"] });
    sim.reset();
    // chat-completions is not among the functions
    const fn = await chat(n2, key, "not allowed", { "cache-control": "no-cache" });
    expect(fn.status, fn.text).toBe(403);
    expect(code(fn)).toBe("forbidden");
    expect(fn.text).toContain("sentiment-analysis");
    // allowed: the model is not
    expect((await patch(n1, id, { allowed_functions: null })).status).toBe(200);
    const model = await chat(n3, key, "wrong model", { "cache-control": "no-cache" });
    expect(model.status, model.text).toBe(403);
    expect(code(model)).toBe("forbidden");
    expect(model.text).toContain("gpt-9*");
    // a function names no model: the route's models are held to the list, and none is left
    const fn2 = await fetch(`${n2.url}/api/v1/ai/sentiment-analysis`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key, "cache-control": "no-cache" },
      body: JSON.stringify({ text: "Which model may answer?" }),
    });
    const fn2Text = await fn2.text();
    expect(fn2.status, fn2Text).toBe(403);
    expect(fn2Text).toContain("gpt-9*");
    expect(sim.calls.count).toBe(0);
    for (const n of [n2, n3]) {
      for (const path of ["/api/v1/account/usage", "/api/v1/account/usage-summary"]) {
        const r = await fetch(n.url + path, { headers: { "x-api-key": key } });
        expect(r.status, path).toBe(200);
      }
      const current = await fetch(`${n.url}/api/v1/account/api-key/current`, { headers: { "x-api-key": key } });
      expect(current.status).toBe(200);
      const view = ((await current.json()) as { data: { result: Record<string, unknown> } }).data.result;
      expect(view.policy).toMatchObject({ allowed_functions: null, allowed_models: ["gpt-9*"], monthly_credit_limit: null });
      expect(view.month_credits_used).toBe(0);
    }
    const acct = await admin(n2, "GET", `/admin/v1/accounts/${acc.result.id}`);
    expect(JSON.stringify(acct.result)).toContain('"balance":100');
  });

  test("expires_at set on node 1: 401 expired_api_key on every node within one second; cleared, the key authenticates again", async () => {
    const [n1] = cluster.nodes;
    const { key, id } = await newKey(n1, 100);
    for (const n of cluster.nodes) expect((await chat(n, key, "warm")).status).toBe(200);
    const changed = await patch(n1, id, { expires_at: "2020-01-01T00:00:00Z" });
    const t1 = performance.now();
    expect(changed.status, JSON.stringify(changed.json)).toBe(200);
    expect((changed.result.policy as Record<string, unknown>).expires_at).toBe("2020-01-01T00:00:00.000Z");
    const worst = await Promise.all(
      cluster.nodes.map(async (n) => {
        for (;;) {
          const r = await fetch(`${n.url}/api/v1/account/usage`, { headers: { "x-api-key": key } });
          const text = await r.text();
          if (r.status === 401) {
            expect(code({ text })).toBe("expired_api_key");
            return performance.now() - t1;
          }
          if (performance.now() - t1 > 2000) throw new Error(`${n.url} still answers ${r.status}`);
          await Bun.sleep(5);
        }
      }),
    );
    console.log(`expiry: refused on every node within ${Math.max(...worst).toFixed(1)} ms of node 1's answer`);
    expect(Math.max(...worst)).toBeLessThan(1000);
    expect((await patch(cluster.nodes[2] as Node, id, { expires_at: null })).status).toBe(200);
    const t2 = performance.now();
    for (const n of cluster.nodes) {
      for (;;) {
        const r = await chat(n, key, "again");
        if (r.status === 200) break;
        if (performance.now() - t2 > 1000) throw new Error(`${n.url} still refuses: ${r.status} ${r.text}`);
        await Bun.sleep(5);
      }
    }
  });

  test("admin API on PostgreSQL: GET shows every field and month_credits_used, PATCH replaces the given fields, null clears one and { policy: null } all; a bad policy is 400 naming the field", async () => {
    const [n1, n2, n3] = cluster.nodes;
    const { key, id } = await newKey(n1, 100);
    expect((await patch(n2, id, { rate_limit_per_minute: 30, monthly_credit_limit: 50 })).status).toBe(200);
    expect((await chat(n3, key, "spend one", { "cache-control": "no-cache" })).status).toBe(200);
    const patched = await patch(n3, id, { allowed_models: ["model-*"], monthly_credit_limit: null });
    expect(patched.result.policy).toEqual({
      allowed_functions: null,
      allowed_models: ["model-*"],
      rate_limit_per_minute: 30,
      monthly_credit_limit: null,
      expires_at: null,
      guardrails: null,
      tags: null,
    });
    const view = await admin(n1, "GET", `/admin/v1/keys/${id}`);
    expect(view.result.policy).toEqual(patched.result.policy);
    expect(view.result.month_credits_used).toBe(1);
    for (const [bad, param] of [
      [{ allowed_models: [] }, "policy.allowed_models"],
      [{ rate_limit_per_minute: 1.5 }, "policy.rate_limit_per_minute"],
      [{ expires_at: "soon" }, "policy.expires_at"],
    ] as const) {
      const r = await patch(n2, id, bad);
      expect(r.status, JSON.stringify(r.json)).toBe(400);
      expect((r.json as unknown as { error: { param: string } }).error.param).toBe(param);
    }
    const cleared = await patch(n1, id, null);
    expect(cleared.status).toBe(200);
    expect(Object.values(cleared.result.policy as Record<string, unknown>).every((v) => v === null)).toBe(true);
    expect((await admin(n2, "GET", `/admin/v1/keys/${id}`)).result.policy).toEqual(cleared.result.policy);
  });

  test("keys create with policy flags and keys list from the CLI on the cluster's PostgreSQL; every node enforces it", async () => {
    const cli = (...args: string[]) => {
      const p = Bun.spawnSync([process.execPath, "src/cli.ts", ...args], { cwd: `${import.meta.dir}/../..`, env: cluster.env });
      return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
    };
    const made = cli(
      "keys",
      "create",
      "--label",
      "cli-policy",
      "--plan",
      "pro",
      "--credits",
      "10",
      "--models",
      "model-a",
      "--rpm",
      "3",
      "--monthly-credits",
      "2",
      "--expires",
      "2099-01-01T00:00:00Z",
      "--json",
    );
    expect(made.code, made.err).toBe(0);
    const k = JSON.parse(made.out) as { id: string; key: string; account_id: string };
    const results = [];
    for (const n of cluster.nodes) results.push(await chat(n, k.key, `cli key ${n.url}`, { "cache-control": "no-cache" }));
    expect(results.map((r) => r.status)).toEqual([200, 200, 402]);
    expect(code(results[2] as { text: string })).toBe("key_budget_exceeded");
    const listed = cli("keys", "list", "--account", k.account_id);
    expect(listed.code, listed.err).toBe(0);
    expect(listed.out).toContain("models=model-a rpm=3 monthly-credits=2 expires=2099-01-01T00:00:00.000Z");
    const json = JSON.parse(cli("keys", "list", "--account", k.account_id, "--json").out) as {
      policy: Record<string, unknown>;
    }[];
    expect(json[0]?.policy).toMatchObject({ allowed_models: ["model-a"], rate_limit_per_minute: 3, monthly_credit_limit: 2 });
    // an empty value clears a field: the monthly and per-minute limits gone, the key is admitted again
    const cleared = cli("keys", "update", k.id, "--monthly-credits", "", "--rpm=");
    expect(cleared.code, cleared.err).toBe(0);
    const after = cli("keys", "list", "--account", k.account_id).out;
    expect(after).toContain("models=model-a expires=2099-01-01T00:00:00.000Z");
    expect(after).not.toContain("monthly-credits=");
    const again = await chat(cluster.nodes[2] as Node, k.key, "cleared", { "cache-control": "no-cache" });
    expect(again.status, again.text).toBe(200);
  });

  test("an account holder narrows, then revokes, its own key in the dashboard of node 1; nodes 2 and 3 apply each within one second", async () => {
    const [n1] = cluster.nodes;
    const email = `holder-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const acc = await admin(n1, "POST", "/admin/v1/accounts", {
      plan: "pro",
      credits: 100,
      email,
      password: "a long enough password",
    });
    expect(acc.status, JSON.stringify(acc.json)).toBe(201);
    const madeKey = await admin(n1, "POST", "/admin/v1/keys", { label: "dash", account_id: acc.result.id });
    const key = madeKey.result.key as string;
    const id = madeKey.result.id as string;
    for (const n of cluster.nodes) expect((await chat(n, key, "warm")).status).toBe(200);
    const origin = new URL(n1.url).origin;
    const form = (path: string, body: Record<string, string>, cookie = "") =>
      fetch(n1.url + path, {
        method: "POST",
        redirect: "manual",
        headers: { origin, cookie, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(body),
      });
    const login = await form("/dashboard/login", { email, password: "a long enough password" });
    expect(login.status).toBe(303);
    const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] as string;
    const fields = {
      allowed_functions: "",
      allowed_models: "",
      rate_limit_per_minute: "",
      monthly_credit_limit: "",
      expires_at: "",
    };
    const narrowed = await form(`/dashboard/keys/${id}/policy`, { ...fields, allowed_functions: "sentiment-analysis" }, cookie);
    const t1 = performance.now();
    expect(narrowed.status, await narrowed.text()).toBe(303);
    for (const n of cluster.nodes.slice(1)) {
      for (;;) {
        const r = await chat(n, key, "after the dashboard narrowed it", { "cache-control": "no-cache" });
        if (r.status === 403) break;
        if (performance.now() - t1 > 1000) throw new Error(`${n.url} still answers ${r.status}`);
        await Bun.sleep(5);
      }
    }
    console.log(
      `dashboard narrowing: refused on nodes 2 and 3 ${(performance.now() - t1).toFixed(1)} ms after node 1 answered it`,
    );
    const listed = await (await fetch(`${n1.url}/dashboard/keys`, { headers: { cookie } })).text();
    expect(listed).toContain("functions=sentiment-analysis");
    // widening is refused, also on PostgreSQL: a 303 back to the keys page (Post/Redirect/Get), which
    // says why on any node (the flash's key is a secret of the shared database)
    const widened = await form(`/dashboard/keys/${id}/policy`, fields, cookie);
    expect([widened.status, widened.headers.get("location")]).toEqual([303, "/dashboard/keys"]);
    const flash = widened.headers
      .getSetCookie()
      .find((c) => c.startsWith("textai_flash="))
      ?.split(";")[0];
    const refusedPage = await fetch(`${(cluster.nodes[1] as Node).url}/dashboard/keys`, {
      headers: { cookie: `${cookie}; ${flash}` },
    });
    expect(refusedPage.status).toBe(403);
    expect(await refusedPage.text()).toContain("you can only narrow a key");
    expect((await admin(cluster.nodes[2] as Node, "GET", `/admin/v1/keys/${id}`)).result.policy).toMatchObject({
      allowed_functions: ["sentiment-analysis"],
    });
    // revoked from the dashboard of node 1: nodes 2 and 3 refuse it within one second
    for (const n of cluster.nodes.slice(1)) expect((await chat(n, key, "still known")).status).toBe(403);
    const revoked = await form(`/dashboard/keys/${id}/revoke`, {}, cookie);
    const t2 = performance.now();
    expect(revoked.status).toBe(303);
    for (const n of cluster.nodes.slice(1)) {
      for (;;) {
        const r = await chat(n, key, "after the dashboard revoked it");
        if (r.status === 401) break;
        if (performance.now() - t2 > 1000) throw new Error(`${n.url} still answers ${r.status}`);
        await Bun.sleep(5);
      }
    }
    console.log(
      `dashboard revocation: refused on nodes 2 and 3 ${(performance.now() - t2).toFixed(1)} ms after node 1 answered it`,
    );
  });

  test("keys update from the CLI on the cluster's PostgreSQL: both nodes apply it at once (the CLI broadcasts it)", async () => {
    const [n1, n2] = cluster.nodes;
    const { key, id } = await newKey(n1, 100);
    for (const n of [n1, n2]) expect((await chat(n, key, "warm")).status).toBe(200);
    const p = Bun.spawnSync([process.execPath, "src/cli.ts", "keys", "update", id, "--models", "model-b"], {
      cwd: `${import.meta.dir}/../..`,
      env: cluster.env,
    });
    expect(p.exitCode, p.stderr.toString()).toBe(0);
    const t0 = performance.now();
    for (const n of [n1, n2]) {
      const r = await chat(n, key, "after the cli narrowed it", { "cache-control": "no-cache" });
      expect(r.status, r.text).toBe(403);
      expect(r.text).toContain("model-b");
    }
    // within the key cache's second even if the broadcast were lost; the broadcast makes it at once
    expect(performance.now() - t0).toBeLessThan(1000);
  });
});
