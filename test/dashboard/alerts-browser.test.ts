/**
 * The Alerts page in headless Chromium (CONTRACT section 17, docs/alerts.md): the signed-in owner
 * adds a webhook endpoint (its secret shown once), an event raised by a take-back reaches a real
 * receiver after one failed attempt, the page shows the delivery, and its Resend button sends it
 * again with the same id. No request leaves the gateway. TEXTAI_SCREENSHOTS=1 writes docs/screenshots/alerts.png.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { docVerify, type Receiver, startReceiver } from "../alerts/receiver";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { skipBrowser } from "./browser-suite";

const CHROMIUM = "/usr/bin/chromium";
const WAIT = { timeout: 20_000 };
const ADMIN = "operator-token-for-the-alerts-page-0123456789";
const SHOTS =
  process.env.TEXTAI_SCREENSHOTS === "1"
    ? join(import.meta.dir, "../../docs/screenshots")
    : mkdtempSync(join(tmpdir(), "textai-shots-"));

describe.skipIf(skipBrowser)("Alerts page in headless Chromium", () => {
  let gw: TestGateway;
  let browser: Browser;
  let page: Page;
  let hook: Receiver;
  let accountId: string;
  const pageErrors: string[] = [];
  const elsewhere: string[] = [];

  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium, or set TEXTAI_SKIP_BROWSER=1`);
    hook = startReceiver(1);
    gw = await startGateway({
      env: { TEXTAI_ADMIN_TOKEN: ADMIN },
      configText: "[alerts]\npoll_ms = 50\nretry_base_ms = 100\nallow_private_urls = true\n",
    });
    const acc = await fetch(`${gw.url}/admin/v1/accounts`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
      body: JSON.stringify({ email: "alerts@example.com", password: "a long pass phrase", credits: 100 }),
    });
    accountId = ((await acc.json()) as { data: { result: { id: string } } }).data.result.id;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
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
    await page.getByLabel("Email").fill("alerts@example.com");
    await page.getByLabel("Password").fill("a long pass phrase");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Overview", level: 1 }).waitFor(WAIT);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await gw?.close();
    hook?.stop();
  });

  test("add an endpoint, see its secret once, its delivery after a retry, and resend it", async () => {
    await page.getByRole("link", { name: "Alerts" }).click();
    await page.getByRole("heading", { name: "Alerts", level: 1 }).waitFor(WAIT);
    await page.getByLabel("Webhook URL").fill(hook.url);
    await page.getByRole("checkbox", { name: "balance.low" }).check();
    await page.getByLabel("Balance under (for balance.low)").fill("50");
    await page.getByRole("button", { name: "Add endpoint" }).click();
    const secret = (await page.locator("#new-secret-value").textContent({ timeout: 20_000 })) ?? "";
    expect(secret).toMatch(/^whsec_/);

    const down = await fetch(`${gw.url}/admin/v1/accounts/${accountId}/credits`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
      body: JSON.stringify({ amount: -60 }),
    });
    expect(down.status).toBe(200);
    await hook.until(() => hook.acked().size === 1);
    await page.goto(`${gw.url}/dashboard/alerts`);
    // the secret is not shown again
    expect(await page.locator("#new-secret-value").count()).toBe(0);
    const row = page.locator('table[id^="deliveries-"] tbody tr').first();
    expect(await row.getAttribute("data-status")).toBe("delivered");
    expect((await row.textContent())?.replace(/\s+/g, " ")).toContain("balance.low");
    await page.screenshot({ path: join(SHOTS, "alerts.png"), fullPage: true });

    await row.getByRole("button", { name: "Resend" }).click();
    await page.getByRole("heading", { name: "Alerts", level: 1 }).waitFor(WAIT);
    await hook.until(() => hook.received.length === 3);
    const [first, , again] = hook.received;
    expect(again?.json.id).toBe(first?.json.id as string);
    const verify = await docVerify();
    for (const r of hook.received) expect(verify(r.signature, r.body, secret)).toBe(true);
    expect(pageErrors).toEqual([]);
    expect(elsewhere).toEqual([]);
  }, 30_000);
});
