// The audit trail's filters as docs/audit.md#reading-it has them, through a real server: an action
// the trail never writes is a 400 naming `action` and the actions (with the one meant), on the admin
// API, the account API and the dashboard's page; an actor given as the email the dashboard shows
// finds that member's entries, as its `mem_…` id does.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";

const TOKEN = "operator-token-for-audit-filter-tests-012";
const admin = { authorization: `Bearer ${TOKEN}` };
const PASSWORD = "alice's long enough password";

let gw: TestGateway;
let origin: string;
let accountId = "";
let cookie = "";
let reader = { authorization: "" };
let memberKeyId = "";

beforeAll(async () => {
  gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: TOKEN } });
  origin = new URL(gw.url).origin;
  const made = await gw.post("/admin/v1/accounts", { email: "alice@acme.test", password: PASSWORD, credits: 10 }, admin);
  accountId = made.json.data.result.id;
  const signedIn = await fetch(`${gw.url}/dashboard/login`, {
    method: "POST",
    redirect: "manual",
    headers: { origin, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ email: "alice@acme.test", password: PASSWORD }),
  });
  cookie = (signedIn.headers.get("set-cookie") ?? "").split(";")[0] as string;
  const key = await fetch(`${gw.url}/dashboard/api/keys`, {
    method: "POST",
    headers: { origin, cookie, "content-type": "application/json" },
    body: JSON.stringify({ label: "alice's" }),
  });
  memberKeyId = ((await key.json()) as { data: { result: { id: string } } }).data.result.id;
  const k = await gw.post("/admin/v1/keys", { label: "reader", account_id: accountId }, admin);
  reader = { authorization: `Bearer ${k.json.data.result.key}` };
});
afterAll(() => gw.close());

const page = async (path: string) => {
  const res = await fetch(gw.url + path, { headers: { cookie } });
  return { status: res.status, body: await res.text() };
};

describe("audit filters", () => {
  test("an unknown action is a 400 naming action and every action, with the one meant; a known one filters", async () => {
    for (const [path, headers] of [
      ["/admin/v1/audit", admin],
      ["/api/v1/account/audit", reader],
    ] as const) {
      const bad = await gw.get(`${path}?action=key.delete`, headers);
      expect(bad.status, JSON.stringify(bad.json)).toBe(400);
      expect(bad.json.error.code).toBe("invalid_request");
      expect(bad.json.error.param).toBe("action");
      expect(bad.json.error.message).toContain("key.revoke");
      expect(bad.json.error.message).toContain("webhook.rotate_secret");
      const typo = await gw.get(`${path}?action=key.revokd`, headers);
      expect(typo.status).toBe(400);
      expect(typo.json.error.message).toContain("did you mean key.revoke?");
      const csv = await gw.get(`${path}?action=key.delete&format=csv`, headers);
      expect(csv.status).toBe(400);
      const good = await gw.get(`${path}?action=key.create`, headers);
      expect(good.status).toBe(200);
      expect(good.json.data.result.data.length).toBeGreaterThan(0);
    }
    const shown = await page("/dashboard/audit?action=key.delete");
    expect(shown.status).toBe(400);
    expect(shown.body).toContain("unknown action");
  });

  test("actor as the member's email (any case) finds its entries, as its id does; an unknown email finds none", async () => {
    const byId = await gw.get(`/admin/v1/audit?account_id=${accountId}&action=key.create`, admin);
    const entry = (byId.json.data.result.data as { actor: string; target_id: string }[]).find((e) => e.target_id === memberKeyId);
    expect(entry?.actor).toStartWith("mem_");
    for (const [path, headers] of [
      ["/admin/v1/audit", admin],
      ["/api/v1/account/audit", reader],
    ] as const) {
      for (const actor of ["alice@acme.test", "Alice@Acme.test", entry?.actor ?? ""]) {
        const r = await gw.get(`${path}?actor=${encodeURIComponent(actor)}`, headers);
        expect(r.status, JSON.stringify(r.json)).toBe(200);
        const ids = (r.json.data.result.data as { target_id: string; actor: string }[]).map((e) => e.target_id);
        expect(ids, `${path} actor=${actor}`).toContain(memberKeyId);
        expect((r.json.data.result.data as { actor: string }[]).every((e) => e.actor === entry?.actor)).toBe(true);
      }
      const none = await gw.get(`${path}?actor=nobody@acme.test`, headers);
      expect(none.status).toBe(200);
      expect(none.json.data.result.data).toEqual([]);
    }
    const shown = await page("/dashboard/audit?actor=alice%40acme.test");
    expect(shown.status).toBe(200);
    expect(shown.body).toContain(memberKeyId);
    const download = await page("/dashboard/audit.csv?actor=alice%40acme.test");
    expect(download.body).toContain(memberKeyId);
  });
});
