// An account holder narrows a key's policy in headless Chromium (Debian's /usr/bin/chromium): the
// form per key, the table's policy column and filter, a refused widening shown on the page.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { skipBrowser } from "./browser-suite";

const CHROMIUM = "/usr/bin/chromium";
const TOKEN = "operator-token-for-policy-browser-tests";
const WAIT = { timeout: 20_000 };

describe.skipIf(skipBrowser)("key policy form in headless Chromium", () => {
  let gw: TestGateway;
  let browser: Browser;
  let accountId: string;
  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing (TEXTAI_SKIP_BROWSER=1 skips browser tests)`);
    gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: TOKEN } });
    const res = await gw.post(
      "/admin/v1/accounts",
      { email: "pia@example.com", password: "a long pass phrase", credits: 20 },
      { authorization: `Bearer ${TOKEN}` },
    );
    accountId = res.json.data.result.id;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
  });

  test("narrow a key from its row; the table shows it and filters on it; widening is refused on the page", async () => {
    const k = gw.newKey({ accountId, label: "backend" });
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${gw.url}/dashboard/login`);
    await page.getByLabel("Email").fill("pia@example.com");
    await page.getByLabel("Password").fill("a long pass phrase");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(/\/dashboard$/, WAIT);
    await page.goto(`${gw.url}/dashboard/keys`);

    const row = page.locator(`tr[data-key-id="${k.id}"]`);
    await row.getByText("Edit policy").click();
    await row.getByLabel("Allowed functions (comma-separated)").fill("text-summarize");
    await row.getByLabel("Credits per month").fill("12");
    await row.getByRole("button", { name: "Save policy" }).click();
    await page.waitForURL(/\/dashboard\/keys$/, WAIT);
    await expect(page.locator(`tr[data-key-id="${k.id}"] td.policy-summary`).textContent()).resolves.toContain(
      "functions=text-summarize monthly-credits=12",
    );
    const call = await gw.post("/api/v1/ai/sentiment-analysis", { text: "Nice." }, { "x-api-key": k.key });
    expect(call.status).toBe(403);

    // the filter matches the policy, not the form's labels
    const filter = page.getByLabel("Filter keys");
    await filter.fill("monthly-credits=12");
    expect(await page.locator(`tr[data-key-id="${k.id}"]`).isVisible()).toBe(true);
    await filter.fill("Allowed functions");
    expect(await page.locator(`tr[data-key-id="${k.id}"]`).isHidden()).toBe(true);
    await filter.fill("");

    // a higher limit is widening: refused, the page says why, the policy is unchanged
    const again = page.locator(`tr[data-key-id="${k.id}"]`);
    await again.getByText("Edit policy").click();
    await again.getByLabel("Credits per month").fill("50");
    await again.getByRole("button", { name: "Save policy" }).click();
    await page.getByRole("alert").waitFor(WAIT);
    expect(await page.getByRole("alert").textContent()).toContain("you can only narrow");
    const view = await gw.get(`/admin/v1/keys/${k.id}`, { authorization: `Bearer ${TOKEN}` });
    expect(view.json.data.result.policy.monthly_credit_limit).toBe(12);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
