/**
 * Alerts by signed webhook on one node (docs/alerts.md, CONTRACT section 17): a real gateway on a
 * real port and SQLite file, real receivers on 127.0.0.1. Events raised by real charges (a key's
 * monthly limit), a take-back (the balance) and a real breaker (a provider that refuses
 * connections) reach a receiver that answers 500 three times, each exactly once by id; every
 * signature verifies with the JavaScript of docs/alerts.md; a rotation signs with both secrets.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { checkWebhookUrl } from "../../src/alerts/sign";
import { CircuitBreaker } from "../../src/providers/breaker";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { docVerify, type Receiver, startReceiver } from "./receiver";

const ADMIN = "admin-token-for-alert-tests-0123456789";
const CONFIG = `
[alerts]
poll_ms = 50
scan_ms = 50
retry_base_ms = 100
allow_private_urls = true

[breaker]
failure_threshold = 1
cooldown_ms = 600000

[[providers]]
name = "dead"
type = "openai-compatible"
base_url = "http://127.0.0.1:9/v1"
api_key = "sk-none"
default_model = "m"

[routes]
"pii-redaction" = ["dead", "local"]
`;

let gw: TestGateway;
let hook: Receiver;
let ops: Receiver;
let verify: Awaited<ReturnType<typeof docVerify>>;
const auth = { authorization: `Bearer ${ADMIN}` };
let account = "";
let endpoint = { id: "", secret: "" };

beforeAll(async () => {
  gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: ADMIN }, configText: CONFIG });
  hook = startReceiver(3);
  ops = startReceiver(0);
  verify = await docVerify();
});
afterAll(async () => {
  hook?.stop();
  ops?.stop();
  await gw?.close();
});

const admin = (method: string, path: string, body?: unknown) =>
  method === "GET" ? gw.get(path, auth) : gw.post(path, body ?? {}, auth).then((r) => r);
const call = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(gw.url + path, {
    method,
    headers: { ...auth, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: the tests walk the envelope; their assertions check its shape
  return { status: res.status, json: (await res.json()) as Record<string, any> };
};

describe("alerts on one node", () => {
  test("charges, a take-back and a breaker raise events; a receiver failing 3 times gets each once by id, signed", async () => {
    const acc = await admin("POST", "/admin/v1/accounts", { name: "alerts", credits: 100 });
    expect(acc.status).toBe(201);
    account = acc.json.data.result.id;
    const created = await call("POST", "/admin/v1/webhooks", {
      account_id: account,
      url: hook.url,
      events: ["balance.low", "key.budget_80", "key.budget_100"],
      balance_below: 50,
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    endpoint = { id: created.json.data.result.id, secret: created.json.data.result.secret };
    expect(endpoint.secret).toMatch(/^whsec_[0-9a-f]{64}$/);
    const opsHook = await call("POST", "/admin/v1/webhooks", {
      url: ops.url,
      events: ["provider.circuit_open"],
      format: "slack",
    });
    expect(opsHook.status, JSON.stringify(opsHook.json)).toBe(201);
    // the secret is shown once: no list answers it
    const listed = await call("GET", "/admin/v1/webhooks");
    expect(listed.json.data.result.data.map((w: { id: string }) => w.id).sort()).toEqual(
      [endpoint.id, opsHook.json.data.result.id].sort(),
    );
    expect(JSON.stringify(listed.json)).not.toContain("whsec_");

    const key = await call("POST", "/admin/v1/keys", { label: "k", account_id: account, policy: { monthly_credit_limit: 5 } });
    expect(key.status).toBe(201);
    for (let i = 0; i < 5; i++) {
      const r = await gw.post(
        "/api/v1/ai/pii-redaction",
        { text: `Mail jane${i}@example.com` },
        { "x-api-key": key.json.data.result.key },
      );
      expect(r.status, JSON.stringify(r.json)).toBe(200);
    }
    const takeBack = await call("POST", `/admin/v1/accounts/${account}/credits`, { amount: -60 });
    expect(takeBack.json.data.result.balance).toBe(35);

    await hook.until(() => hook.acked().size === 3);
    await ops.until(() => ops.acked().size === 1);
    await Bun.sleep(300); // nothing more comes
    const acked = hook.acked();
    expect([...acked.values()]).toEqual([1, 1, 1]);
    expect(hook.received.filter((r) => r.status === 500).length).toBe(3);
    const byType = new Map(hook.received.filter((r) => r.status === 200).map((r) => [r.json.type, r.json]));
    expect([...byType.keys()].sort()).toEqual(["balance.low", "key.budget_100", "key.budget_80"]);
    expect(byType.get("balance.low")?.data).toEqual({ account_id: account, balance: 35, threshold: 50 });
    expect(byType.get("key.budget_80")?.data).toMatchObject({ account_id: account, monthly_credit_limit: 5, used: 4 });
    expect(byType.get("key.budget_100")?.data).toMatchObject({ monthly_credit_limit: 5, used: 5 });
    // a retry carries the same id: the failed attempts' ids are among the delivered ones
    for (const r of hook.received) expect(acked.has(r.json.id)).toBe(true);
    // every delivery verifies with the doc's few lines, and not with another secret or another body
    for (const r of hook.received) {
      expect(verify(r.signature, r.body, endpoint.secret)).toBe(true);
      expect(verify(r.signature, r.body, `${endpoint.secret}0`)).toBe(false);
      expect(verify(r.signature, `${r.body} `, endpoint.secret)).toBe(false);
    }
    const circuit = ops.received[0] as NonNullable<(typeof ops.received)[number]>;
    expect(circuit.json).toMatchObject({ type: "provider.circuit_open", data: { provider: "dead", model: "m", state: "open" } });
    expect((circuit.json as unknown as { text: string }).text).toContain("provider.circuit_open");
    expect(verify(circuit.signature, circuit.body, opsHook.json.data.result.secret)).toBe(true);

    const deliveries = await call("GET", `/admin/v1/webhooks/${endpoint.id}/deliveries`);
    const rows = deliveries.json.data.result.data as {
      status: string;
      attempts: number;
      last_status_code: number;
      event_id: string;
    }[];
    expect(rows.map((d) => d.status)).toEqual(["delivered", "delivered", "delivered"]);
    expect(rows.reduce((s, d) => s + d.attempts, 0)).toBe(6);
    expect(rows.every((d) => d.last_status_code === 200 && acked.has(d.event_id))).toBe(true);
  }, 15_000);

  test("a rotated secret: the next delivery carries two v1 values, each verifies; resend sends one again", async () => {
    const rotated = await call("POST", `/admin/v1/webhooks/${endpoint.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    const fresh = rotated.json.data.result.secret as string;
    expect(fresh).not.toBe(endpoint.secret);
    expect(Date.parse(rotated.json.data.result.previous_valid_until)).toBeGreaterThan(Date.now() + 23 * 3600_000);
    const before = hook.received.length;
    await call("POST", `/admin/v1/accounts/${account}/credits`, { amount: 30 });
    await call("POST", `/admin/v1/accounts/${account}/credits`, { amount: -30 });
    await hook.until(() => hook.received.length > before);
    const r = hook.received[before] as NonNullable<(typeof hook.received)[number]>;
    expect(r.json.type).toBe("balance.low");
    expect(r.signature.match(/v1=/g)?.length).toBe(2);
    expect(verify(r.signature, r.body, fresh)).toBe(true);
    expect(verify(r.signature, r.body, endpoint.secret)).toBe(true);

    const d = (await call("GET", `/admin/v1/webhooks/${endpoint.id}/deliveries`)).json.data.result.data[0];
    const resent = await call("POST", `/admin/v1/webhooks/${endpoint.id}/deliveries/${d.id}/resend`);
    expect(resent.json.data.result.status).toBe("pending");
    await hook.until(() => hook.received.length > before + 1);
    expect(hook.received[before + 1]?.json.id).toBe(r.json.id);

    const audit = await call("GET", "/admin/v1/audit?limit=50");
    const actions = (audit.json.data.result.data as { action: string }[]).map((e) => e.action);
    for (const a of ["webhook.create", "webhook.rotate_secret", "webhook.resend"]) expect(actions).toContain(a);
    expect(JSON.stringify(audit.json)).not.toContain("whsec_");
  }, 10_000);

  test("key.expiring and spend.spike are found by looking, each delivered once although every look finds them", async () => {
    const looked = startReceiver(0);
    try {
      const acc = (await call("POST", "/admin/v1/accounts", { name: "looked at", credits: 100 })).json.data.result.id as string;
      const made = await call("POST", "/admin/v1/webhooks", {
        account_id: acc,
        url: looked.url,
        events: ["key.expiring", "spend.spike"],
        expiring_days: 3,
        spike_factor: 2,
      });
      expect(made.status, JSON.stringify(made.json)).toBe(201);
      const soon = new Date(Date.now() + 2 * 86_400_000).toISOString();
      const later = new Date(Date.now() + 10 * 86_400_000).toISOString();
      const key = await call("POST", "/admin/v1/keys", { label: "soon", account_id: acc, policy: { expires_at: soon } });
      await call("POST", "/admin/v1/keys", { label: "later", account_id: acc, policy: { expires_at: later } });
      // three credits this hour, none the day before: over twice the hourly mean (counted as at least 1),
      // but a new account's first hour is no spike: it has no day of history to compare with
      for (let i = 0; i < 3; i++) {
        const r = await gw.post(
          "/api/v1/ai/pii-redaction",
          { text: `Call 555-010${i}` },
          { "x-api-key": key.json.data.result.key },
        );
        expect(r.status, JSON.stringify(r.json)).toBe(200);
      }
      await looked.until(() => looked.acked().size === 1);
      await Bun.sleep(400); // eight more looks: no spike without history
      expect(looked.received.map((r) => r.json.type)).toEqual(["key.expiring"]);
      // a charge 26 hours ago, in the gateway's own file: a whole day of history, none of it in the trailing day
      const db = new Database(gw.dbPath);
      db.query("INSERT INTO ledger (account_id, amount, kind, created_at, public_id) VALUES (?, -1, 'charge', ?, ?)").run(
        acc,
        Date.now() - 26 * 3600_000,
        `led_old_${acc}`,
      );
      db.close();
      await looked.until(() => looked.acked().size === 2);
      await Bun.sleep(400); // eight more looks: nothing more
      expect(looked.received.length).toBe(2);
      const byType = new Map(looked.received.map((r) => [r.json.type, r.json.data]));
      expect(byType.get("key.expiring")).toMatchObject({ key_id: key.json.data.result.id, days_left: 2 });
      // the mean it compared with: none the day before, counted as 1
      expect(byType.get("spend.spike")).toEqual({ account_id: acc, last_hour: 3, hourly_mean: 1, spike_factor: 2 });
      for (const r of looked.received) expect(verify(r.signature, r.body, made.json.data.result.secret)).toBe(true);
    } finally {
      looked.stop();
    }
  });

  test("a new balance.low endpoint whose threshold the balance is already under is told at once, and only it", async () => {
    const above = startReceiver(0);
    const under = startReceiver(0);
    try {
      const acc = (await call("POST", "/admin/v1/accounts", { name: "already low", credits: 30 })).json.data.result.id as string;
      const add = (url: string, balance_below: number) =>
        call("POST", "/admin/v1/webhooks", { account_id: acc, url, events: ["balance.low"], balance_below });
      expect((await add(above.url, 20)).status).toBe(201);
      const made = await add(under.url, 50);
      expect(made.status, JSON.stringify(made.json)).toBe(201);
      await under.until(() => under.acked().size === 1);
      await Bun.sleep(400); // eight more looks: nothing more, to either
      expect(under.received.map((r) => [r.json.type, r.json.data])).toEqual([
        ["balance.low", { account_id: acc, balance: 30, threshold: 50 }],
      ]);
      expect(verify(under.received[0]?.signature ?? "", under.received[0]?.body ?? "", made.json.data.result.secret)).toBe(true);
      expect(above.received).toEqual([]);
    } finally {
      above.stop();
      under.stop();
    }
  });

  test("bad input gets a clear error in the envelope; remove ends an endpoint", async () => {
    const bad = async (body: Record<string, unknown>, code: string, param: string) => {
      const r = await call("POST", "/admin/v1/webhooks", {
        account_id: account,
        url: hook.url,
        events: ["balance.low"],
        balance_below: 5,
        ...body,
      });
      expect(r.status, JSON.stringify(r.json)).toBe(code === "not_found" ? 404 : 400);
      expect(r.json.error.code).toBe(code);
      expect(r.json.error.param).toBe(param);
    };
    await bad({ url: "not a url" }, "invalid_request", "url");
    await bad({ url: "ftp://example.com/x" }, "invalid_request", "url");
    await bad({ events: ["balance.lowish"] }, "invalid_request", "events");
    await bad({ balance_below: undefined }, "invalid_request", "balance_below");
    await bad({ account_id: undefined }, "invalid_request", "events");
    await bad({ events: ["provider.circuit_open"] }, "invalid_request", "events");
    await bad({ account_id: "acc_nope" }, "not_found", "account_id");
    await bad({ secret: "mine" }, "invalid_request", "secret");
    const gone = await fetch(`${gw.url}/admin/v1/webhooks/${endpoint.id}`, { method: "DELETE", headers: auth });
    expect(gone.status).toBe(200);
    expect((await call("GET", `/admin/v1/webhooks/${endpoint.id}/deliveries`)).status).toBe(404);
    expect((await call("POST", `/admin/v1/webhooks/${endpoint.id}/rotate-secret`)).status).toBe(404);
  });

  test("the SSRF gate: private, loopback and link-local URLs are refused unless the operator allows them", async () => {
    for (const url of [
      "http://127.0.0.1:8080/x",
      "http://10.0.0.5/x",
      "http://169.254.169.254/latest",
      "http://[::1]/x",
      "http://localhost/x",
    ])
      await expect(checkWebhookUrl(url, false)).rejects.toThrow(/private, loopback or link-local/);
    await checkWebhookUrl("http://127.0.0.1:8080/x", true);
  });

  test("a breaker tells when it opens from closed and when it closes, once each", () => {
    let t = 0;
    const b = new CircuitBreaker({ failureThreshold: 2, cooldownMs: 10, now: () => t });
    const seen: string[] = [];
    b.onChange = (s) => seen.push(s);
    b.failure();
    b.failure();
    t = 20;
    expect(b.tryAcquire()).toBe(true);
    b.failure(); // the probe failed: still open, no second "open"
    t = 40;
    expect(b.tryAcquire()).toBe(true);
    b.success();
    b.success();
    expect(seen).toEqual(["open", "closed"]);
    // a pause the provider asked for (429 with Retry-After) is no opening, and its end no closing
    b.pauseFor(5);
    t = 60;
    expect(b.tryAcquire()).toBe(true);
    b.success();
    expect(seen).toEqual(["open", "closed"]);
  });
});
