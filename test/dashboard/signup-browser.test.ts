/**
 * Open sign-up in headless Chromium (issue 36, item 5): from the sign-in page's link, "Create
 * account" lands on the overview signed in, at /dashboard (Post/Redirect/Get); a reload there sends
 * a GET, no second sign-up, and makes no second account. A taken email lands on the sign-in page,
 * saying so, signed out. The sign-in page's links have no stray separator.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { skipBrowser } from "./browser-suite";

const CHROMIUM = "/usr/bin/chromium";
const WAIT = { timeout: 20_000 };
const EMAIL = "new.signup@example.com";
const PASSWORD = "a brand new long password";

describe.skipIf(skipBrowser)("open sign-up in headless Chromium", () => {
  let gw: TestGateway;
  let browser: Browser;
  let page: Page;
  const posts: string[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium, or set TEXTAI_SKIP_BROWSER=1`);
    // no admin token: the sign-in page has one link only
    gw = await startGateway({ configText: "[dashboard]\nsignup = true\n" });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on("pageerror", (e) => pageErrors.push(e.message));
    page.on("request", (r) => {
      if (r.method() === "POST") posts.push(new URL(r.url()).pathname);
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await gw?.close();
  });

  test("the sign-in page links to sign-up with no stray separator, and says anyone may sign up", async () => {
    await page.goto(`${gw.url}/dashboard/login`);
    expect((await page.locator("p.links").textContent())?.trim()).toBe("Create an account");
    expect(await page.locator("#how-accounts").textContent()).toContain("Anyone may create one");
  }, 30_000);

  test("Create account: signed in on the overview at /dashboard; a reload posts nothing and makes no second account", async () => {
    await page.getByRole("link", { name: "Create an account" }).click();
    await page.getByRole("heading", { name: "Create an account", level: 1 }).waitFor(WAIT);
    await page.getByLabel("Email").fill(EMAIL);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Create account" }).click();
    await page.getByRole("heading", { name: "Overview", level: 1 }).waitFor(WAIT);
    expect(new URL(page.url()).pathname + new URL(page.url()).search).toBe("/dashboard");
    expect(await page.locator(".who").textContent()).toBe(EMAIL);
    expect((await page.context().cookies()).map((c) => c.name)).toEqual(["textai_session"]);
    expect(posts).toEqual(["/dashboard/signup"]);

    await page.reload();
    await page.getByRole("heading", { name: "Overview", level: 1 }).waitFor(WAIT);
    expect(new URL(page.url()).pathname).toBe("/dashboard");
    expect(posts).toEqual(["/dashboard/signup"]);
    expect((await gw.deps.dashboard.searchAccounts(EMAIL, 10)).length).toBe(1);
    // the session is an ordinary one: the keys page opens
    await page.getByRole("link", { name: "Keys" }).click();
    await page.getByRole("heading", { name: "Keys", level: 1 }).waitFor(WAIT);
  }, 60_000);

  test("a taken email: the sign-in page says so at a clean address, not signed in", async () => {
    const other = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const p = await other.newPage();
      await p.goto(`${gw.url}/dashboard/signup`);
      await p.getByLabel("Email").fill(EMAIL);
      await p.getByLabel("Password").fill("somebody else's password");
      await p.getByRole("button", { name: "Create account" }).click();
      await p.getByRole("status").filter({ hasText: "already has an account" }).waitFor(WAIT);
      expect(new URL(p.url()).pathname).toBe("/dashboard/login");
      expect(await other.cookies()).toEqual([]);
      expect((await gw.deps.dashboard.searchAccounts(EMAIL, 10)).length).toBe(1);
    } finally {
      await other.close();
    }
    expect(pageErrors).toEqual([]);
  }, 60_000);
});
