/**
 * The Members page in headless Chromium (docs/teams.md): an owner invites a member with the form
 * and gets the one-time link (shown once, with Copy), the invitee opens it in another browser,
 * sets a password and lands on the overview, the owner changes its role and removes another member
 * after a confirmation; the invitee, a viewer, reads the list without the forms. No request leaves
 * the gateway. TEXTAI_SCREENSHOTS=1 writes docs/screenshots/members*.png.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { skipBrowser } from "./browser-suite";

const CHROMIUM = "/usr/bin/chromium";
const WAIT = { timeout: 20_000 };
const ADMIN = "operator-token-for-the-members-page-0123456789";
const SHOTS =
  process.env.TEXTAI_SCREENSHOTS === "1"
    ? join(import.meta.dir, "../../docs/screenshots")
    : mkdtempSync(join(tmpdir(), "textai-shots-"));

describe.skipIf(skipBrowser)("Members page in headless Chromium", () => {
  let gw: TestGateway;
  let browser: Browser;
  let owner: Page;
  let invitee: Page;
  let accountId: string;
  const pageErrors: string[] = [];
  const elsewhere: string[] = [];
  const adminCall = (method: string, path: string, body?: unknown) =>
    fetch(gw.url + path, {
      method,
      headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, json: (await r.json()) as { data: { result: Record<string, string> } } }));

  /** A page in a browser context of its own (its own cookies) that reaches nothing but the gateway. */
  async function newPage(): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const origin = new URL(gw.url).origin;
    await context.route(
      (url) => url.origin !== origin && url.protocol !== "data:",
      (route) => route.abort("internetdisconnected"),
    );
    context.on("request", (r) => {
      if (!r.url().startsWith("data:") && new URL(r.url()).origin !== origin) elsewhere.push(r.url());
    });
    const page = await context.newPage();
    page.on("pageerror", (e) => pageErrors.push(e.message));
    return page;
  }

  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium, or set TEXTAI_SKIP_BROWSER=1`);
    gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: ADMIN } });
    const acc = await adminCall("POST", "/admin/v1/accounts", { email: "owner@team.example", password: "a long pass phrase" });
    accountId = acc.json.data.result.id as string;
    // a member the owner will remove
    const inv = await adminCall("POST", `/admin/v1/accounts/${accountId}/members`, {
      email: "leaving@team.example",
      role: "admin",
    });
    const joined = await fetch(inv.json.data.result.url as string, {
      method: "POST",
      redirect: "manual",
      headers: { origin: new URL(gw.url).origin, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ name: "Lee Ving", password: "another long pass phrase" }),
    });
    expect(joined.status).toBe(303);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
    owner = await newPage();
    await owner.goto(`${gw.url}/dashboard/login`);
    await owner.getByLabel("Email").fill("owner@team.example");
    await owner.getByLabel("Password").fill("a long pass phrase");
    await owner.getByRole("button", { name: "Sign in" }).click();
    await owner.getByRole("heading", { name: "Overview", level: 1 }).waitFor(WAIT);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await gw?.close();
  });

  test("an owner invites, the invitee joins by the link, the owner changes a role and removes a member", async () => {
    await owner.getByRole("link", { name: "Members" }).click();
    await owner.getByRole("heading", { name: "Members", level: 1 }).waitFor(WAIT);
    await owner.getByLabel("Email").fill("new@team.example");
    await owner.getByLabel("Role", { exact: true }).selectOption("viewer");
    await owner.getByRole("button", { name: "Invite" }).click();
    const link = owner.locator("#invite-url");
    await link.waitFor(WAIT);
    const url = (await link.textContent()) as string;
    expect(url).toStartWith(`${new URL(gw.url).origin}/dashboard/join/${accountId}?token=inv_`);
    expect(await owner.getByRole("button", { name: "Copy" }).isVisible()).toBe(true);

    invitee = await newPage();
    await invitee.goto(url);
    await invitee.getByText("new@team.example").waitFor(WAIT);
    await invitee.getByLabel("Name").fill("Nia Newcomer");
    await invitee.getByLabel("Password").fill("the newcomer's pass phrase");
    await invitee.getByRole("button", { name: "Join" }).click();
    await invitee.getByRole("heading", { name: "Overview", level: 1 }).waitFor(WAIT);

    // the owner's list now holds the newcomer; a role change, then a removal after its confirmation
    await owner.goto(`${gw.url}/dashboard/members`);
    await owner.getByLabel("Role of new@team.example").selectOption("developer");
    await owner
      .locator("form", { has: owner.getByLabel("Role of new@team.example") })
      .getByRole("button", { name: "Change role" })
      .click();
    await owner.getByRole("heading", { name: "Members", level: 1 }).waitFor(WAIT);
    expect(await owner.getByLabel("Role of new@team.example").inputValue()).toBe("developer");
    owner.once("dialog", (d) => void d.accept());
    await owner.getByRole("button", { name: "Remove leaving@team.example" }).click();
    await owner.getByRole("heading", { name: "Members", level: 1 }).waitFor(WAIT);
    await expect(owner.locator("#members tbody tr").count()).resolves.toBe(2);
    await owner.screenshot({ path: join(SHOTS, "members.png"), fullPage: true });

    // the newcomer, a developer now, reads the list without the owners' forms
    await invitee.goto(`${gw.url}/dashboard/members`);
    await invitee.getByRole("heading", { name: "Members", level: 1 }).waitFor(WAIT);
    expect(await invitee.locator("#members tbody tr").count()).toBe(2);
    expect(await invitee.getByRole("button", { name: "Invite" }).count()).toBe(0);
    expect(await invitee.getByText("Only the account's owners invite members").isVisible()).toBe(true);
    await invitee.screenshot({ path: join(SHOTS, "members-readonly.png"), fullPage: true });

    // the link worked once
    await invitee.goto(url);
    await invitee.getByText("already been used").waitFor(WAIT);
    expect(pageErrors).toEqual([]);
    expect(elsewhere).toEqual([]);
  }, 60_000);
});
