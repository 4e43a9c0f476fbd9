/**
 * A webhook URL that is itself a credential (a Slack incoming webhook's token is its path; others
 * carry one in the query) never reaches the audit trail, a listing or a log line whole (docs/audit.md,
 * docs/alerts.md#endpoints): a real gateway on a real port and SQLite file, endpoints made through the
 * admin API and the dashboard's Alerts page, read back through every way they are shown. Deliveries
 * still go to the whole URL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { maskSecrets, maskUrl } from "../../src/audit/mask";
import { shown, submit } from "../helpers/dashboard-forms";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { requestFrom } from "../helpers/raw-http";

const ADMIN = "admin-token-for-webhook-secret-tests-0123";
const auth = { authorization: `Bearer ${ADMIN}` };
const CONFIG = `
[alerts]
poll_ms = 50
scan_ms = 50
retry_base_ms = 100
allow_private_urls = true
`;
const SECRETS = ["SuperSecretToken123", "B0000", "QuerySecret456", "DashSecret789", "pw-in-url"];

let gw: TestGateway;
let receiver: ReturnType<typeof Bun.serve>;
const paths: string[] = [];

beforeAll(async () => {
  gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: ADMIN }, configText: CONFIG });
  receiver = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req) {
      const u = new URL(req.url);
      paths.push(u.pathname + u.search);
      return new Response("ok");
    },
  });
});
afterAll(async () => {
  receiver?.stop(true);
  await gw?.close();
});

const text = async (path: string, headers: Record<string, string>) => {
  const res = await fetch(gw.url + path, { headers });
  return `${res.status} ${await res.text()}`;
};
const noSecretIn = (where: string, body: string) => {
  for (const s of SECRETS) expect(body.includes(s), `${where} holds ${s}: ${body.slice(0, 600)}`).toBe(false);
};

describe("a webhook URL that is a credential", () => {
  test("masking: the path after its first segment, query values, user and fragment; the host stays; twice is once", () => {
    const slack = "https://hooks.slack.com/services/T0000/B0000/SuperSecretToken123";
    expect(maskUrl(slack)).toBe("https://hooks.slack.com/services/***/***/***");
    expect(maskUrl("https://u:p@h.example:8443/a/b?token=x&v=2#frag")).toBe(
      "https://***@h.example:8443/a/***?token=***&v=***#***",
    );
    expect(maskUrl(maskUrl(slack))).toBe(maskUrl(slack));
    // nothing to mask: as written
    expect(maskUrl("https://h.example")).toBe("https://h.example");
    expect(maskSecrets({ sso_issuer: "https://idp.example/realms/acme" })).toEqual({
      sso_issuer: "https://idp.example/realms/acme",
    });
    expect(maskUrl("not a url SuperSecretToken123")).toBe("***");
    expect(
      maskSecrets({
        url: slack,
        note: `see ${slack} now`,
        secret: "whsec_1",
        secret_rotated: true,
        nested: { webhook_url: slack },
      }),
    ).toEqual({
      url: "https://hooks.slack.com/services/***/***/***",
      note: "see https://hooks.slack.com/services/***/***/*** now",
      secret: "***",
      secret_rotated: true,
      nested: { webhook_url: "https://hooks.slack.com/services/***/***/***" },
    });
  });

  test("no audit entry, listing, page, export or log line holds it; the creation answers it once; deliveries use it whole", async () => {
    const acc = await gw.post(
      "/admin/v1/accounts",
      { name: "hooks", credits: 100, email: "hooks@example.com", password: "hooks' long password" },
      auth,
    );
    expect(acc.status, JSON.stringify(acc.json)).toBe(201);
    const account = acc.json.data.result.id as string;
    const base = `http://127.0.0.1:${receiver.port}`;
    const full = `${base}/services/T0000/B0000/SuperSecretToken123?sig=QuerySecret456`;
    const made = await gw.post(
      "/admin/v1/webhooks",
      { account_id: account, url: full, events: ["balance.low"], balance_below: 50, format: "slack" },
      auth,
    );
    expect(made.status, JSON.stringify(made.json)).toBe(201);
    expect(made.json.data.result.url).toBe(full);
    const id = made.json.data.result.id as string;

    // the Alerts page's form, signed in as the account
    const from = "127.0.41.2";
    const signedIn = await submit(
      gw.url,
      "/dashboard/login",
      { email: "hooks@example.com", password: "hooks' long password" },
      { from },
    );
    expect(signedIn.location, shown(signedIn)).toBe("/dashboard");
    const form = new URLSearchParams([
      ["url", `${base}/hooks/DashSecret789`],
      ["events", "key.budget_80"],
      ["format", "json"],
    ]);
    const added = await submit(gw.url, "/dashboard/alerts", form, { cookie: signedIn.cookie, from });
    expect(added.page?.status, shown(added)).toBe(200);
    noSecretIn("the Alerts page after adding", added.page?.body ?? "");
    expect(added.page?.body).toContain(`${base}/services/***/***/***?sig=***`);
    expect(added.page?.body).toContain(`${base}/hooks/***`);

    // an event reaches the whole URL
    const takeBack = await gw.post(`/admin/v1/accounts/${account}/credits`, { amount: -60 }, auth);
    expect(takeBack.status).toBe(200);
    const end = Date.now() + 5000;
    while (!paths.length && Date.now() < end) await Bun.sleep(20);
    expect(paths).toContain("/services/T0000/B0000/SuperSecretToken123?sig=QuerySecret456");

    await gw.post(`/admin/v1/webhooks/${id}/rotate-secret`, {}, auth);
    const removed = await fetch(`${gw.url}/admin/v1/webhooks/${id}`, { method: "DELETE", headers: auth });
    expect(removed.status).toBe(200);

    const key = await gw.post("/admin/v1/keys", { label: "reader", account_id: account }, auth);
    const byKey = { authorization: `Bearer ${key.json.data.result.key}` };
    const audit = await gw.get("/admin/v1/audit?limit=50", auth);
    const actions = (audit.json.data.result.data as { action: string; after: { url?: string } | null }[]).filter(
      (e) => e.action === "webhook.create",
    );
    expect(actions.map((e) => e.after?.url).sort()).toEqual([`${base}/hooks/***`, `${base}/services/***/***/***?sig=***`]);
    const cookie = { cookie: added.cookie };
    const shownTo: [string, string][] = [
      ["GET /admin/v1/audit", JSON.stringify(audit.json)],
      ["GET /api/v1/account/audit", await text("/api/v1/account/audit?limit=50", byKey)],
      ["the account's CSV export", await text("/api/v1/account/audit?format=csv", byKey)],
      ["GET /admin/v1/webhooks", await text("/admin/v1/webhooks", auth)],
      ["the Alerts page", (await requestFrom(gw.url, from, "GET", "/dashboard/alerts", { headers: cookie }))?.body ?? ""],
      ["the Audit page", (await requestFrom(gw.url, from, "GET", "/dashboard/audit", { headers: cookie }))?.body ?? ""],
      [
        "the dashboard's JSON export",
        (await requestFrom(gw.url, from, "GET", "/dashboard/audit.json", { headers: cookie }))?.body ?? "",
      ],
      ["the logs", gw.logs.join("\n")],
    ];
    for (const [where, body] of shownTo) noSecretIn(where, body);
    expect((await gw.get("/admin/v1/audit/verify", auth)).json.data.result.ok).toBe(true);
  }, 15_000);
});
