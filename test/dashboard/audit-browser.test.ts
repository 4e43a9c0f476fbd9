/**
 * The Audit pages in headless Chromium (CONTRACT section 17, docs/audit.md#the-dashboard): the
 * account holder's (its own entries only: a key made in the browser, the operator's changes to
 * the account; filters; the CSV and JSON downloads) and the operator console's (every account's).
 * No request leaves the gateway. TEXTAI_SCREENSHOTS=1 writes docs/screenshots/audit*.png.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { skipBrowser } from "./browser-suite";

const CHROMIUM = "/usr/bin/chromium";
const WAIT = { timeout: 20_000 };
const ADMIN = "operator-token-for-the-audit-pages-0123456789";
const SHOTS =
  process.env.TEXTAI_SCREENSHOTS === "1"
    ? join(import.meta.dir, "../../docs/screenshots")
    : mkdtempSync(join(tmpdir(), "textai-shots-"));

describe.skipIf(skipBrowser)("Audit pages in headless Chromium", () => {
  let gw: TestGateway;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let accountId: string;
  const pageErrors: string[] = [];
  const elsewhere: string[] = [];
  const adminCall = (method: string, path: string, body?: unknown) =>
    fetch(gw.url + path, {
      method,
      headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, json: (await r.json()) as { data: { result: Record<string, string> } } }));
  const actions = () =>
    page.locator("#audit-table tbody tr").evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-action")));

  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium, or set TEXTAI_SKIP_BROWSER=1`);
    gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: ADMIN } });
    const acc = await adminCall("POST", "/admin/v1/accounts", {
      email: "auditor@example.com",
      password: "a long pass phrase",
      credits: 20,
    });
    accountId = acc.json.data.result.id as string;
    const key = await adminCall("POST", "/admin/v1/keys", { label: "backend", account_id: accountId });
    expect(
      (await adminCall("PATCH", `/admin/v1/keys/${key.json.data.result.id}`, { policy: { rate_limit_per_minute: 30 } })).status,
    ).toBe(200);
    expect((await adminCall("POST", `/admin/v1/accounts/${accountId}/credits`, { amount: 15, reason: "pilot" })).status).toBe(
      200,
    );
    // another account's change, never on this account's page
    await adminCall("POST", "/admin/v1/accounts", { name: "someone else", credits: 5 });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    const origin = new URL(gw.url).origin;
    await context.route(
      (url) => url.origin !== origin && url.protocol !== "data:",
      (route) => route.abort("internetdisconnected"),
    );
    context.on("request", (r) => {
      if (!r.url().startsWith("data:") && new URL(r.url()).origin !== origin) elsewhere.push(r.url());
    });
    page = await context.newPage();
    page.on("pageerror", (e) => pageErrors.push(e.message));
    await page.goto(`${gw.url}/dashboard/login`);
    await page.getByLabel("Email").fill("auditor@example.com");
    await page.getByLabel("Password").fill("a long pass phrase");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Overview", level: 1 }).waitFor(WAIT);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await gw?.close();
  });

  test("a key made in the browser is on the Audit page, with the operator's changes to the account, newest first", async () => {
    await page.getByRole("link", { name: "Keys" }).click();
    await page.getByLabel("Label").fill("made in the browser");
    await page.getByRole("button", { name: "Create key" }).click();
    await page.getByText("made in the browser").first().waitFor(WAIT);
    await page.getByRole("link", { name: "Audit" }).click();
    await page.getByRole("heading", { name: "Audit", level: 1 }).waitFor(WAIT);
    expect(await actions()).toEqual(["key.create", "credits.grant", "key.policy.update", "key.create", "account.create"]);
    const first = page.locator("#audit-table tbody tr").first();
    // the actor of a dashboard change is the member who made it: the account's owner (docs/teams.md)
    const members = (await adminCall("GET", `/admin/v1/accounts/${accountId}/members`)).json.data.result as unknown as {
      data: { id: string }[];
    };
    // shown as the member's email, its id in the title (2026-12-06: the id alone, which reads as nobody)
    const actor = first.locator("td").nth(1).locator("span");
    expect(await actor.textContent()).toBe("auditor@example.com");
    expect(await actor.getAttribute("title")).toBe(members.data[0]?.id as string);
    expect(await first.textContent()).toContain("made in the browser");
    const policyRow = page.locator('#audit-table tbody tr[data-action="key.policy.update"]');
    expect((await policyRow.textContent())?.replace(/\s+/g, " ")).toContain("rate_limit_per_minute: — → 30");
    expect(await page.locator("#audit-table").textContent()).not.toContain("someone else");
    await page.screenshot({ path: join(SHOTS, "audit.png"), fullPage: true });
  });

  test("filters by action and actor, and downloads CSV and JSON of what is filtered", async () => {
    await page.getByLabel("Action").fill("key.create");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/action=key.create/, WAIT);
    expect(await actions()).toEqual(["key.create", "key.create"]);
    await page.getByLabel("Actor").fill("admin-token");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/actor=admin-token/, WAIT);
    expect(await actions()).toEqual(["key.create"]);
    const [csv] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download CSV" }).click()]);
    const csvText = readFileSync((await csv.path()) as string, "utf8");
    expect(csvText.trim().split("\r\n").length).toBe(2);
    expect(csvText).toContain("backend");
    const [json] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download JSON" }).click()]);
    const entries = JSON.parse(readFileSync((await json.path()) as string, "utf8")) as { action: string; actor: string }[];
    expect(entries.map((e) => [e.action, e.actor])).toEqual([["key.create", "admin-token"]]);
    await page.getByLabel("Since (UTC)").fill("2999-01-01T00:00");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.getByText("Audit entries, newest first: none match").waitFor(WAIT);
  });

  test("the operator console's Audit trail shows every account's entries", async () => {
    const op = await context.browser()!.newContext({ viewport: { width: 1280, height: 900 } });
    const p = await op.newPage();
    p.on("pageerror", (e) => pageErrors.push(e.message));
    await p.goto(`${gw.url}/dashboard/operator/login`);
    await p.getByLabel("Admin token").fill(ADMIN);
    await p.getByRole("button", { name: "Sign in" }).click();
    await p.getByRole("link", { name: "Audit trail" }).click();
    await p.getByRole("heading", { name: "Audit trail", level: 1 }).waitFor(WAIT);
    const rows = await p.locator("#audit-table tbody tr").count();
    expect(rows).toBe(6);
    expect(await p.locator("#audit-table").textContent()).toContain("someone else");
    await p.getByLabel("Account").fill(accountId);
    await p.getByRole("button", { name: "Filter" }).click();
    await p.waitForURL(/account_id=/, WAIT);
    expect(await p.locator("#audit-table tbody tr").count()).toBe(5);
    await p.screenshot({ path: join(SHOTS, "audit-operator.png"), fullPage: true });
    await op.close();
  });

  test("no script error, and no request left the gateway", () => {
    expect(pageErrors).toEqual([]);
    expect(elsewhere).toEqual([]);
  });
});
