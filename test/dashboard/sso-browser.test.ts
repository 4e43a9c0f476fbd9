/**
 * Single sign-on in headless Chromium (docs/sso.md): the sign-in page's single sign-on button goes
 * to a real OpenID provider (test/helpers/oidc-issuer.ts), whose sign-in and consent pages the user
 * fills; the browser comes back signed in on the Overview (the session's SameSite=Strict cookie
 * sent, though the way back began on the provider's site), as a member made with its group's role.
 * An identity no map entry matches comes back to a page that says why, signed in nowhere. Nothing
 * is reached but the gateway and the provider. TEXTAI_SCREENSHOTS=1 writes docs/screenshots/sso*.png.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { startIssuer, type TestIssuer } from "../helpers/oidc-issuer";
import { skipBrowser } from "./browser-suite";

const CHROMIUM = "/usr/bin/chromium";
const WAIT = { timeout: 20_000 };
const ADMIN = "operator-token-for-the-sso-page-0123456789";
const SHOTS =
  process.env.TEXTAI_SCREENSHOTS === "1"
    ? join(import.meta.dir, "../../docs/screenshots")
    : mkdtempSync(join(tmpdir(), "textai-shots-"));

describe.skipIf(skipBrowser)("single sign-on in headless Chromium", () => {
  let dir: string;
  let gw: TestGateway;
  let issuer: TestIssuer;
  let browser: Browser;
  let accountId: string;
  const pageErrors: string[] = [];
  const elsewhere: string[] = [];

  async function newPage(): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const allowed = new Set([new URL(gw.url).origin, new URL(issuer.url).origin]);
    await context.route(
      (url) => !allowed.has(url.origin) && url.protocol !== "data:",
      (route) => route.abort("internetdisconnected"),
    );
    // (the provider's development pages import a web font: aborted above, and not the gateway's doing)
    const gateway = new URL(gw.url).origin;
    context.on("request", (r) => {
      const from = r.frame().url();
      if (!r.url().startsWith("data:") && !allowed.has(new URL(r.url()).origin) && from.startsWith(gateway))
        elsewhere.push(r.url());
    });
    const page = await context.newPage();
    page.on("pageerror", (e) => pageErrors.push(e.message));
    return page;
  }

  /** Through the provider's own pages: its sign-in form (any login) and its consent. */
  async function throughIssuer(page: Page, login: string) {
    await page.getByRole("link", { name: "Sign in with single sign-on" }).click();
    await page.locator('input[name="login"]').waitFor(WAIT);
    await page.locator('input[name="login"]').fill(login);
    await page.locator('input[name="password"]').fill("anything");
    await page.getByRole("button", { name: "Sign-in" }).click();
    await page.getByRole("button", { name: "Continue" }).click(WAIT);
  }

  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium, or set TEXTAI_SKIP_BROWSER=1`);
    dir = mkdtempSync(join(tmpdir(), "textai-sso-browser-"));
    const db = join(dir, "gw.db");
    const first = await startGateway({ env: { TEXTAI_DB: db, TEXTAI_ADMIN_TOKEN: ADMIN } });
    const made = await fetch(`${first.url}/admin/v1/accounts`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Corp", email: "owner@corp.example", password: "a long pass phrase", credits: 100 }),
    });
    accountId = ((await made.json()) as { data: { result: { id: string } } }).data.result.id;
    await first.close();
    const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
    const port = probe.port as number;
    probe.stop(true);
    issuer = await startIssuer({
      redirectUri: `http://127.0.0.1:${port}/dashboard/sso/callback`,
      users: {
        "ada.lovelace": { email: "ada@corp.example", email_verified: true, name: "Ada Lovelace", groups: ["eng-leads"] },
        mallory: { email: "mallory@elsewhere.example", email_verified: true, groups: ["marketing"] },
      },
    });
    gw = await startGateway({
      env: { TEXTAI_DB: db, TEXTAI_ADMIN_TOKEN: ADMIN, PORT: String(port), TEXTAI_SSO_CLIENT_SECRET: issuer.clientSecret },
      configText: `[sso]\nissuer = "${issuer.url}"\nclient_id = "${issuer.clientId}"\nredirect_uri = "http://127.0.0.1:${port}/dashboard/sso/callback"\n\n[[sso.map]]\ngroup = "eng-leads"\naccount = "${accountId}"\nrole = "admin"\n`,
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await gw?.close();
    await issuer?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("the button, the provider's pages, and back on the Overview signed in as an admin member", async () => {
    const page = await newPage();
    await page.goto(`${gw.url}/dashboard/login`);
    await page.getByRole("link", { name: "Sign in with single sign-on" }).waitFor(WAIT);
    await page.screenshot({ path: join(SHOTS, "sso-sign-in.png"), fullPage: true });
    await throughIssuer(page, "ada.lovelace");
    await page.getByRole("heading", { name: "Overview", level: 1 }).waitFor(WAIT);
    expect(new URL(page.url()).pathname).toBe("/dashboard");
    expect(await page.locator("header").innerText()).toContain("ada@corp.example");
    // an admin's pages: the Audit page opens, and shows the sign-in's own entry
    await page.goto(`${gw.url}/dashboard/audit`);
    await page.getByRole("heading", { name: "Audit", level: 1 }).waitFor(WAIT);
    expect(await page.locator("main").innerText()).toContain("member.join");
    await page.screenshot({ path: join(SHOTS, "sso-signed-in.png"), fullPage: true });
    expect(pageErrors).toEqual([]);
    expect(elsewhere).toEqual([]);
  });

  test("an identity no map entry matches comes back to a page that says why, signed in nowhere", async () => {
    const page = await newPage();
    await page.goto(`${gw.url}/dashboard/login`);
    await throughIssuer(page, "mallory");
    await page.getByRole("heading", { name: "Single sign-on", level: 1 }).waitFor(WAIT);
    const alert = await page.getByRole("alert").innerText();
    expect(alert).toContain("No account of this gateway is mapped to mallory@elsewhere.example");
    await page.screenshot({ path: join(SHOTS, "sso-refused.png"), fullPage: true });
    await page.goto(`${gw.url}/dashboard`);
    expect(new URL(page.url()).pathname).toBe("/dashboard/login");
    expect(elsewhere).toEqual([]);
  });
});
