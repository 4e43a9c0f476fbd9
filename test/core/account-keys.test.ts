// More keys never mean more limit: a plan's limits hold per account across all its keys, key
// creation is rate-limited and capped per account by its plan, and key listings page.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";

const TOKEN = "operator-token-for-account-key-tests-0123456789";
const admin = { authorization: `Bearer ${TOKEN}` };

describe("keys of one account", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({
      env: { TEXTAI_ADMIN_TOKEN: TOKEN },
      configText: `
[plans.free]
max_keys = 3
[plans.free.rate_limits]
"sentiment-analysis" = 4
"key-create" = 2
[plans.pro]
max_keys = 5
[plans.pro.rate_limits]
"sentiment-analysis" = 6
`,
    });
  });
  afterAll(() => gw.close());

  const sentiment = (key: string) => gw.post("/api/v1/ai/sentiment-analysis", { text: "Lovely day." }, { "x-api-key": key });

  test("every key of an account draws on one bucket: a second key gets no fresh limit", async () => {
    const a = gw.newKey({ credits: 100 });
    const b = gw.newKey({ accountId: a.accountId });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await sentiment(i % 2 ? b.key : a.key)).status);
    expect(statuses).toEqual([200, 200, 200, 200]);
    const fifth = await sentiment(b.key);
    expect(fifth.status, JSON.stringify(fifth.json)).toBe(429);
    expect(fifth.json.error.code).toBe("rate_limited");
    expect(fifth.headers.get("ratelimit-limit")).toBe("4");
    // another account is not touched
    expect((await sentiment(gw.newKey().key)).status).toBe(200);
  });

  test("keys of one account on different plans never refill the bucket by taking turns", async () => {
    const a = gw.newKey({ credits: 100, plan: "pro" });
    const free = gw.newKey({ accountId: a.accountId, plan: "free" });
    let admitted = 0;
    for (let i = 0; i < 12; i++) if ((await sentiment(i % 2 ? free.key : a.key)).status === 200) admitted++;
    expect(admitted).toBeLessThanOrEqual(6);
    expect(admitted).toBeGreaterThanOrEqual(4);
  });

  test("an account holds at most its plan's max_keys active keys; revoking one makes room (admin API)", async () => {
    const acc = await gw.post("/admin/v1/accounts", { name: "capped" }, admin);
    const id = acc.json.data.result.id as string;
    const make = () => gw.post("/admin/v1/keys", { label: "k", account_id: id }, admin);
    const made = await Promise.all([make(), make(), make(), make(), make()]);
    expect(made.map((r) => r.status).sort()).toEqual([201, 201, 201, 403, 403]);
    const refused = made.find((r) => r.status === 403)!;
    expect(refused.json.error.code).toBe("forbidden");
    expect(refused.json.error.message).toContain("3 active keys");
    const first = made.find((r) => r.status === 201)!.json.data.result.id as string;
    const del = await fetch(`${gw.url}/admin/v1/keys/${first}`, { method: "DELETE", headers: admin });
    expect(del.status).toBe(200);
    expect((await make()).status).toBe(201);
    expect((await make()).status).toBe(403);
  });

  test("admin key listing pages with limit and offset; out-of-range values are 400 naming the parameter", async () => {
    const acc = await gw.post("/admin/v1/accounts", { name: "paged", plan: "pro" }, admin);
    const id = acc.json.data.result.id as string;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await gw.post("/admin/v1/keys", { label: `k${i}`, account_id: id }, admin)).json.data.result.id);
    const p1 = await gw.get(`/admin/v1/keys?account_id=${id}&limit=2`, admin);
    expect(p1.status).toBe(200);
    expect(p1.json.data.result).toMatchObject({ limit: 2, offset: 0, has_more: true });
    const p3 = await gw.get(`/admin/v1/keys?account_id=${id}&limit=2&offset=4`, admin);
    expect(p3.json.data.result).toMatchObject({ limit: 2, offset: 4, has_more: false });
    const p2 = await gw.get(`/admin/v1/keys?account_id=${id}&limit=2&offset=2`, admin);
    const seen = [...p1.json.data.result.data, ...p2.json.data.result.data, ...p3.json.data.result.data].map(
      (k: { id: string }) => k.id,
    );
    expect(seen.sort()).toEqual([...ids].sort());
    for (const [q, param] of [
      ["limit=0", "limit"],
      ["limit=501", "limit"],
      ["offset=1e30", "offset"],
      ["offset=-1", "offset"],
      ["limit=abc", "limit"],
    ]) {
      const r = await gw.get(`/admin/v1/keys?${q}`, admin);
      expect(r.status, q).toBe(400);
      expect(r.json.error).toMatchObject({ code: "invalid_request", param });
    }
  });

  test("the dashboard: key creation is rate-limited per account and capped; its listing pages", async () => {
    const email = "keys@example.com";
    const password = "a long enough password";
    expect((await gw.post("/admin/v1/accounts", { email, password }, admin)).status).toBe(201);
    const origin = new URL(gw.url).origin;
    const login = await fetch(`${gw.url}/dashboard/login`, {
      method: "POST",
      redirect: "manual",
      headers: { origin, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ email, password }),
    });
    expect(login.status).toBe(303);
    const headers = { cookie: (login.headers.get("set-cookie") ?? "").split(";")[0], origin };
    const create = (label: string) => gw.post("/dashboard/api/keys", { label }, headers);
    expect((await create("one")).status).toBe(201);
    expect((await create("two")).status).toBe(201);
    const third = await create("three");
    expect(third.status, JSON.stringify(third.json)).toBe(429);
    expect(third.json.error.code).toBe("rate_limited");
    expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(0);

    const listed = await gw.get("/dashboard/api/keys?limit=1", headers);
    expect(listed.status).toBe(200);
    expect(listed.json.data.result).toMatchObject({ limit: 1, offset: 0, has_more: true });
    expect(listed.json.data.result.data).toHaveLength(1);
    expect((await gw.get("/dashboard/api/keys?offset=1e30", headers)).status).toBe(400);
  });
});
