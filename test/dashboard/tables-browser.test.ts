/**
 * The dashboard's tables fit (issue 36, item 4): every page with a table, filled with realistic
 * data (key labels of several words, 40-character request ids, long grant reasons, 60 requests),
 * in headless Chromium at 400, 1280 and 1920 px. Fails when a cell's content overflows its box, when
 * a cell designed to truncate does not carry its full value in `title`, when a table is wider
 * than its box anywhere but inside a scroll container, when a table needs that scroll container
 * at a desktop width, when a scroll container that scrolls shows no affordance, and when the main
 * column does not grow with the window. Screenshots of each page and width go to a temporary
 * folder (TEXTAI_SCREENSHOTS=1: a few of them to docs/screenshots).
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
const ADMIN = "operator-token-for-table-layout-0123456789";
const EMAIL = "finance.and.operations.team@subsidiary-of-a-long-company-name.example.com";
const PASSWORD = "a long pass phrase for tables";
const SHOTS = mkdtempSync(join(tmpdir(), "textai-tables-"));
const DOCS_SHOTS = join(import.meta.dir, "../../docs/screenshots");
/** the page and width whose screenshot docs/dashboard.md shows, written there with TEXTAI_SCREENSHOTS=1 */
const FOR_DOCS = new Set(["requests-1920", "ledger-1280", "requests-400"]);
const WIDTHS = [400, 1280, 1920];
const SENTIMENT = "/api/v1/ai/sentiment-analysis";
const SUMMARIZE = "/api/v1/ai/text-summarize";

/** What a page's layout check finds wrong; empty when everything fits. */
interface LayoutReport {
  problems: string[];
  mainWidth: number;
  pageWidth: number;
  tables: number;
  scrolling: number;
}

/**
 * Runs in the page: every table, cell and element inside a cell is measured.
 * - an element inside a table (a cell, or a block inside one) whose content is wider than its box
 *   is a problem, unless it truncates by design (text-overflow: ellipsis) and its title is its full text;
 * - a table wider than its parent is a problem unless the parent is a scroll container
 *   (overflow-x auto or scroll) and the page allows scrolling (`allowScroll`, the narrow width);
 * - a scroll container whose table does scroll must show it: focusable (tabindex 0, so the
 *   keyboard scrolls it), named, with the edge shadows (a gradient background) and the line
 *   "Scroll sideways for more" above the table;
 * - the page itself never scrolls sideways.
 */
/** The few DOM shapes the check below uses (the project's TypeScript has no DOM library). */
interface Box {
  tagName: string;
  id: string;
  textContent: string | null;
  clientWidth: number;
  scrollWidth: number;
  offsetParent: unknown;
  parentElement: Box | null;
  cellIndex?: number;
  getAttribute(name: string): string | null;
  closest(selector: string): Box | null;
  querySelector(selector: string): Box | null;
  querySelectorAll(selector: string): Iterable<Box>;
  getClientRects?(): { length: number };
  getBoundingClientRect(): { width: number };
}
interface InPage {
  document: {
    documentElement: Box;
    querySelector(selector: string): Box | null;
    querySelectorAll(selector: string): Iterable<Box>;
  };
  innerWidth: number;
  getComputedStyle(
    el: Box,
    pseudo?: string,
  ): { display: string; textOverflow: string; overflow: string; overflowX: string; backgroundImage: string; content: string };
}

function layoutCheck(allowScroll: boolean): LayoutReport {
  const { document, getComputedStyle, innerWidth } = globalThis as unknown as InPage;
  const problems: string[] = [];
  const describe = (el: Box) => {
    const cell = el.closest("td, th");
    const table = el.closest("table");
    const text = (el.textContent ?? "").trim().replace(/\s+/g, " ").slice(0, 60);
    const where = table?.id || table?.querySelector("caption")?.textContent?.slice(0, 30) || "table";
    return cell ? `${where} ${cell.tagName.toLowerCase()}[${cell.cellIndex}] "${text}"` : where;
  };
  const tables = [...document.querySelectorAll("table")].filter((t) => t.offsetParent !== null);
  let scrolling = 0;
  for (const table of tables) {
    for (const h of table.querySelectorAll("th, td, th *, td *")) {
      // hidden, or visually hidden for screen readers (.sr: a 1 px box by design)
      if (h.offsetParent === null || h.closest("details:not([open]) > :not(summary), .sr")) continue;
      const style = getComputedStyle(h);
      // inline boxes have no client width: their content is measured by the block holding them
      if (style.display === "inline" || h.clientWidth === 0) continue;
      if (h.scrollWidth <= h.clientWidth + 1) continue;
      const full = (h.textContent ?? "").trim();
      if (style.textOverflow === "ellipsis" && (style.overflowX === "hidden" || style.overflow === "hidden")) {
        if (h.getAttribute("title")?.trim() !== full)
          problems.push(
            `truncated without its full value in title: ${describe(h)} (title ${JSON.stringify(h.getAttribute("title"))})`,
          );
      } else problems.push(`content overflows its box (${h.scrollWidth} > ${h.clientWidth}): ${describe(h)}`);
    }
    // a value that may break only at its marks (an email: after "@", before a dot) never breaks inside a part
    for (const part of table.querySelectorAll("td .part"))
      if ((part.getClientRects?.().length ?? 1) > 1)
        problems.push(`"${part.textContent}" breaks inside itself: ${describe(part)}`);
    const parent = table.parentElement as Box;
    const width = Math.round(table.getBoundingClientRect().width);
    if (width <= parent.clientWidth + 1) continue;
    if (!["auto", "scroll"].includes(getComputedStyle(parent).overflowX)) {
      problems.push(`table wider than its box, with no scroll container: ${describe(table)}`);
      continue;
    }
    if (!allowScroll) {
      problems.push(`table scrolls at a desktop width (${width} > ${parent.clientWidth}): ${describe(table)}`);
      continue;
    }
    scrolling++;
    const bg = getComputedStyle(parent).backgroundImage;
    const said = getComputedStyle(parent, "::before").content;
    if (
      parent.getAttribute("tabindex") !== "0" ||
      !parent.getAttribute("aria-label") ||
      !bg.includes("gradient") ||
      !said.includes("Scroll sideways")
    )
      problems.push(
        `a scrolling table with no affordance (tabindex ${parent.getAttribute("tabindex")}, aria-label ${parent.getAttribute("aria-label")}, background ${bg.slice(0, 40)}, hint ${said}): ${describe(table)}`,
      );
  }
  const pageWidth = document.documentElement.scrollWidth;
  if (pageWidth > innerWidth) problems.push(`the page scrolls sideways: ${pageWidth} > ${innerWidth}`);
  const main = document.querySelector("main") as Box;
  return { problems, mainWidth: main.getBoundingClientRect().width, pageWidth, tables: tables.length, scrolling };
}

describe.skipIf(skipBrowser)("dashboard tables fit at 400, 1280 and 1920 px", () => {
  let gw: TestGateway;
  let browser: Browser;
  let holder: Page;
  let operator: Page;
  let accountId = "";
  let detailId = "";
  const pageErrors: string[] = [];
  const reports: Record<string, LayoutReport> = {};

  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium, or set TEXTAI_SKIP_BROWSER=1`);
    gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: ADMIN } });
    const admin = { authorization: `Bearer ${ADMIN}` };
    const acc = await gw.post(
      "/admin/v1/accounts",
      { email: EMAIL, password: PASSWORD, credits: 5000, name: "Subsidiary of a Long Company Name, Finance and Operations" },
      admin,
    );
    expect(acc.status).toBe(201);
    accountId = acc.json.data.result.id;
    const key = async (label: string, policy?: Record<string, unknown>) => {
      const res = await gw.post("/admin/v1/keys", { label, account_id: accountId, ...(policy ? { policy } : {}) }, admin);
      expect(res.status, JSON.stringify(res.json)).toBe(201);
      return res.json.data.result.key as string;
    };
    const prod = await key("Production server, EU west, nightly batch summariser");
    const staging = await key("Staging environment for the customer support chatbot", {
      allowed_functions: ["sentiment-analysis", "text-summarize"],
      rate_limit_per_minute: 30,
      monthly_credit_limit: 2000,
    });
    await key("Laptop of the on-call engineer (temporary, revoke after the incident)");
    // one word of 200 characters (2026-12-06: such a label made the keys table 2,317 px wide at 1280)
    await key(`ci-runner-${"x".repeat(190)}`);
    const call = (k: string, path: string, body: unknown) => gw.post(path, body, { "x-api-key": k });
    for (let i = 0; i < 40; i++)
      expect((await call(prod, SENTIMENT, { text: `Great service number ${i}, thanks.` })).status).toBe(200);
    // cache hits: the same text again
    for (let i = 0; i < 5; i++)
      expect((await call(prod, SENTIMENT, { text: "Great service number 1, thanks." })).status).toBe(200);
    for (let i = 0; i < 10; i++)
      expect((await call(staging, SUMMARIZE, { text: `First point ${i}. Second point. Third point, longer.` })).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await call(staging, SENTIMENT, { txt: "typo" })).status).toBe(400);
    // a function the staging key may not call: 403
    expect((await call(staging, "/api/v1/ai/spam-detection", { text: "one two three" })).status).toBe(403);
    for (const reason of [
      "Quarterly top-up for the EU pilot programme, approved by finance (ticket FIN-20431)",
      "Compensation for the outage of 14 November: every request of that window refunded",
    ])
      expect((await gw.post(`/admin/v1/accounts/${accountId}/credits`, { amount: 750, reason }, admin)).status).toBe(200);
    detailId = ((await gw.get("/api/v1/account/requests?function=text-summarize&limit=1", { "x-api-key": prod })).json.data.result
      .data[0].request_id ?? "") as string;

    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
    const origin = new URL(gw.url).origin;
    const open = async () => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      await context.route(
        (url) => url.origin !== origin && url.protocol !== "data:",
        (route) => route.abort("internetdisconnected"),
      );
      const p = await context.newPage();
      p.on("pageerror", (e) => pageErrors.push(e.message));
      return p;
    };
    holder = await open();
    await holder.goto(`${gw.url}/dashboard/login`);
    await holder.getByLabel("Email").fill(EMAIL);
    await holder.getByLabel("Password").fill(PASSWORD);
    await holder.getByRole("button", { name: "Sign in" }).click();
    await holder.getByRole("heading", { name: "Overview", level: 1 }).waitFor(WAIT);
    operator = await open();
    await operator.goto(`${gw.url}/dashboard/operator/login`);
    await operator.getByLabel("Admin token").fill(ADMIN);
    await operator.getByRole("button", { name: "Sign in" }).click();
    await operator.getByRole("heading", { name: "Operator console" }).waitFor(WAIT);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await gw?.close();
  });

  const pagesToCheck = () => [
    { name: "overview", page: holder, path: "/dashboard" },
    { name: "keys", page: holder, path: "/dashboard/keys" },
    { name: "ledger", page: holder, path: "/dashboard/ledger" },
    { name: "requests", page: holder, path: "/dashboard/requests" },
    { name: "request", page: holder, path: `/dashboard/requests/${detailId}` },
    { name: "operator", page: operator, path: "/dashboard/operator" },
    { name: "operator-account", page: operator, path: `/dashboard/operator/accounts/${accountId}` },
  ];

  for (const width of WIDTHS) {
    test(`${width} px: no cell overflows, tables fit or scroll with an affordance; screenshots`, async () => {
      const problems: string[] = [];
      for (const p of pagesToCheck()) {
        await p.page.setViewportSize({ width, height: 900 });
        const res = await p.page.goto(gw.url + p.path);
        expect(res?.status(), p.path).toBe(200);
        await p.page.locator("main h1").waitFor(WAIT);
        const report = (await p.page.evaluate(layoutCheck, width < 700)) as LayoutReport;
        reports[`${p.name}-${width}`] = report;
        problems.push(...report.problems.map((m) => `${p.path} at ${width}px: ${m}`));
        // a window's worth; at 400 px from the page's first table's box down (the forms above it fill the first)
        const shot = `${p.name}-${width}`;
        if (width < 700)
          await p.page
            .locator("main .scroll, main dl")
            .first()
            .evaluate((el) => el.scrollIntoView());
        await p.page.screenshot({ path: join(SHOTS, `${shot}.png`) });
        if (process.env.TEXTAI_SCREENSHOTS === "1" && FOR_DOCS.has(shot))
          await p.page.screenshot({ path: join(DOCS_SHOTS, `tables-${shot}.png`) });
      }
      expect(problems).toEqual([]);
    }, 120_000);
  }

  test("the main column grows with the window, up to a comfortable maximum", () => {
    const main = (w: number) => reports[`requests-${w}`]?.mainWidth ?? 0;
    // the whole window at 1280 (less no more than the padding), and more at 1920 than at 1280
    expect(main(1280)).toBeGreaterThan(1280 - 60);
    expect(main(1920)).toBeGreaterThan(main(1280) + 100);
    // but not every pixel of a wide screen: lines of a table stay readable
    expect(main(1920)).toBeLessThanOrEqual(1680);
  });

  test("the narrow page does scroll a table (so the affordance above was checked), and no script failed", () => {
    const scrolled = Object.entries(reports).filter(([k, r]) => k.endsWith("-400") && r.scrolling > 0);
    expect(scrolled.length).toBeGreaterThan(0);
    expect(pageErrors).toEqual([]);
  });

  test("columns with no value for the account are not shown: these calls carry no tokens", async () => {
    await holder.setViewportSize({ width: 1280, height: 900 });
    for (const path of ["/dashboard", "/dashboard/ledger"]) {
      await holder.goto(gw.url + path);
      await holder.locator("main h1").waitFor(WAIT);
      expect(await holder.getByRole("columnheader", { name: /Tokens/ }).count(), path).toBe(0);
    }
  }, 60_000);

  test("a truncated request id on the ledger carries the full id and links to the request", async () => {
    await holder.goto(`${gw.url}/dashboard/ledger`);
    const link = holder.locator(`a[href="/dashboard/requests/${detailId}"]`);
    expect(await link.count()).toBe(1);
    expect(await link.getAttribute("title")).toBe(detailId);
    await link.click();
    await holder.getByTestId("request-detail").waitFor(WAIT);
    expect(await holder.getByTestId("request-detail").textContent()).toContain(detailId);
  }, 60_000);
});
