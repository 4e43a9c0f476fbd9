/**
 * The dashboard's charts in headless Chromium at 1440 and 375 px (walkthrough 2026-12-06, item 2:
 * the overview's "By function" labels overlapped and the last was cut off, "review-summ"). With
 * calls to every function that answers offline, so that "By function" has its longest names, no
 * chart label's box overlaps another's, none is cut off by its container (its text wider than its
 * box, or its box outside the chart's), and every label keeps a readable size. Screenshots of the
 * overview are written to TEXTAI_SHOTS (default a temporary folder) to look at.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { FUNCTIONS } from "../../src/functions/registry";
import { barChart } from "../../src/http/routes/dashboard/html";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { skipBrowser } from "./browser-suite";

const CHROMIUM = "/usr/bin/chromium";
const ADMIN = "operator-token-for-charts-0123456789";
const EMAIL = "charts@example.com";
const PASSWORD = "a long pass phrase for charts";
const SHOTS = process.env.TEXTAI_SHOTS ?? mkdtempSync(join(tmpdir(), "textai-shots-"));

/** What the browser measures of every chart label on the page. */
interface Measured {
  chart: string;
  text: string;
  box: { x: number; y: number; w: number; h: number };
  inChart: boolean;
  cut: boolean;
  fontPx: number;
}

/** What measureLabels reads of the page (the tests are type-checked without the DOM's types). */
interface El {
  textContent: string | null;
  scrollWidth?: number;
  clientWidth?: number;
  scrollHeight?: number;
  clientHeight?: number;
  getAttribute(name: string): string | null;
  querySelectorAll(selector: string): Iterable<El>;
  getBoundingClientRect(): {
    x: number;
    y: number;
    width: number;
    height: number;
    left: number;
    right: number;
    top: number;
    bottom: number;
  };
  /** SVG elements: the drawing's scale */
  getScreenCTM?: () => { d: number } | null;
}
interface InPage {
  document: { querySelectorAll(selector: string): Iterable<El> };
  getComputedStyle(el: El): { fontSize: string };
  HTMLElement: abstract new () => El;
}

/** Every chart label's box (in the page), whether it lies inside its chart, whether its text is cut, its font size. */
function measureLabels(): Measured[] {
  const { document, getComputedStyle, HTMLElement } = globalThis as unknown as InPage;
  const out: Measured[] = [];
  for (const chart of document.querySelectorAll(".chart")) {
    const c = chart.getBoundingClientRect();
    // every piece of text a chart shows: its labels and values, and any SVG text
    for (const el of chart.querySelectorAll(".label, .value, text")) {
      const r = el.getBoundingClientRect();
      // an HTML label's text wider or taller than its box is cut (SVG text has no such box: its chart's box says)
      const cut =
        el instanceof HTMLElement &&
        ((el.scrollWidth ?? 0) > (el.clientWidth ?? 0) + 1 || (el.scrollHeight ?? 0) > (el.clientHeight ?? 0) + 1);
      out.push({
        chart: chart.getAttribute("aria-label") ?? "",
        text: el.textContent ?? "",
        box: { x: r.x, y: r.y, w: r.width, h: r.height },
        inChart: r.left >= c.left - 0.5 && r.right <= c.right + 0.5 && r.top >= c.top - 0.5 && r.bottom <= c.bottom + 0.5,
        cut,
        // SVG text is drawn at its font size times its drawing's scale
        fontPx: Number.parseFloat(getComputedStyle(el).fontSize) * (el.getScreenCTM?.()?.d ?? 1),
      });
    }
  }
  return out;
}

const overlaps = (a: Measured["box"], b: Measured["box"]) =>
  a.x < b.x + b.w - 0.5 && b.x < a.x + a.w - 0.5 && a.y < b.y + b.h - 0.5 && b.y < a.y + a.h - 0.5;

describe.skipIf(skipBrowser)("the dashboard's charts in headless Chromium", () => {
  let gw: TestGateway;
  let browser: Browser;
  const answered: string[] = [];

  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium, or set TEXTAI_SKIP_BROWSER=1`);
    mkdirSync(SHOTS, { recursive: true });
    gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: ADMIN } });
    const acc = await gw.post(
      "/admin/v1/accounts",
      { email: EMAIL, password: PASSWORD, credits: 5000 },
      { authorization: `Bearer ${ADMIN}` },
    );
    const { key } = gw.newKey({ accountId: acc.json.data.result.id, label: "charts" });
    // each function's own example; those the offline engine answers are charged and charted
    for (const f of FUNCTIONS) {
      const r = await gw.post(f.path, f.example.request, { "x-api-key": key });
      if (r.status === 200) answered.push(f.name);
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await gw?.close();
  });

  for (const width of [1440, 375]) {
    test(`at ${width} px: no chart label overlaps another or is cut off, and each is readable`, async () => {
      // the longest names are among the charted ones (knowledge-base-inline-search needs none of a provider)
      expect(answered.length).toBeGreaterThan(10);
      const context = await browser.newContext({ viewport: { width, height: 900 } });
      try {
        const page = await context.newPage();
        await page.goto(`${gw.url}/dashboard/login`);
        await page.getByLabel("Email").fill(EMAIL);
        await page.getByLabel("Password").fill(PASSWORD);
        await page.getByRole("button", { name: "Sign in" }).click();
        await page.getByRole("heading", { name: "Overview", level: 1 }).waitFor({ timeout: 20_000 });
        await page.screenshot({ path: join(SHOTS, `charts-overview-${width}.png`), fullPage: true });
        await page
          .locator('[aria-label="Requests by function this month"]')
          .screenshot({ path: join(SHOTS, `charts-by-function-${width}.png`) });
        await page
          .locator('[aria-label="Credits used by day this month"]')
          .screenshot({ path: join(SHOTS, `charts-by-day-${width}.png`) });

        const labels = await page.evaluate(measureLabels);
        // both charts, and every function charted shows its whole name
        expect(new Set(labels.map((l) => l.chart))).toEqual(
          new Set(["Credits used by day this month", "Requests by function this month"]),
        );
        const names = labels.filter((l) => l.chart === "Requests by function this month").map((l) => l.text);
        for (const fn of answered) expect(names).toContain(fn);

        const problems: string[] = [];
        for (const [i, a] of labels.entries()) {
          if (!a.inChart) problems.push(`${a.chart}: "${a.text}" lies outside its chart`);
          if (a.cut) problems.push(`${a.chart}: "${a.text}" is cut off`);
          if (a.fontPx < 10) problems.push(`${a.chart}: "${a.text}" is ${a.fontPx}px`);
          for (const b of labels.slice(i + 1))
            if (a.chart === b.chart && overlaps(a.box, b.box)) problems.push(`${a.chart}: "${a.text}" overlaps "${b.text}"`);
        }
        expect(problems).toEqual([]);
        // no label is drawn as SVG text (stretched with its chart, it shrinks or widens with the window)
        expect(await page.locator(".chart svg text").count()).toBe(0);
      } finally {
        await context.close();
      }
    }, 60_000);
  }

  test("any chart at 375 and 1440 px: a whole month of days, and names long enough to wrap", async () => {
    const days = Array.from({ length: 31 }, (_, i) => ({ label: String(i + 1).padStart(2, "0"), value: (i * 7) % 40 }));
    const names = [
      "knowledge-base-inline-search",
      "a-function-name-far-longer-than-any-there-is-today-and-then-some",
      "nohyphensatallinthisnamewhichisstillverylong",
      "spam-detection",
    ].map((label, i) => ({ label, value: 100_000 * (i + 1), href: `/dashboard/requests?function=${label}` }));
    for (const width of [375, 1440]) {
      const context = await browser.newContext({ viewport: { width, height: 900 } });
      try {
        const page = await context.newPage();
        await page.goto(`${gw.url}/dashboard/login`);
        await page.setContent(
          `<!doctype html><html><head><meta name="viewport" content="width=device-width, initial-scale=1"><link rel="stylesheet" href="${gw.url}/dashboard/assets/app.css"></head><body><main>${barChart("Days", days)}${barChart("Names", names)}</main></body></html>`,
          { waitUntil: "load" },
        );
        await page.screenshot({ path: join(SHOTS, `charts-synthetic-${width}.png`), fullPage: true });
        const labels = await page.evaluate(measureLabels);
        expect(labels.filter((l) => l.chart === "Days").length).toBe(2 + 8); // the scale's two, and a label every 4 days
        const problems = labels.flatMap((a, i) => [
          ...(a.inChart ? [] : [`"${a.text}" outside`]),
          ...(a.cut ? [`"${a.text}" cut`] : []),
          ...labels
            .slice(i + 1)
            .filter((b) => a.chart === b.chart && overlaps(a.box, b.box))
            .map((b) => `"${a.text}" on "${b.text}"`),
        ]);
        expect(problems).toEqual([]);
        for (const n of names) expect(labels.map((l) => l.text)).toContain(n.label);
      } finally {
        await context.close();
      }
    }
  }, 60_000);

  test("a function's row links to its requests", async () => {
    const context = await browser.newContext({ viewport: { width: 375, height: 900 } });
    try {
      const page = await context.newPage();
      await page.goto(`${gw.url}/dashboard/login`);
      await page.getByLabel("Email").fill(EMAIL);
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.locator('[aria-label="Requests by function this month"] a[aria-label="Requests of sentiment-analysis"]').click();
      await page.getByRole("heading", { name: "Requests", level: 1 }).waitFor({ timeout: 20_000 });
      expect(new URL(page.url()).searchParams.get("function")).toBe("sentiment-analysis");
    } finally {
      await context.close();
    }
  }, 60_000);
});
