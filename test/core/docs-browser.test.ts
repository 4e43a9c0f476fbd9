import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import intentDetection from "../../src/functions/intent-detection";
import sentimentAnalysis from "../../src/functions/sentiment-analysis";
import { startGateway, type TestGateway } from "../helpers/gateway";

// Debian's chromium (apt-get install chromium). Missing it fails the suite; TEXTAI_SKIP_BROWSER=1 skips it.
const CHROMIUM = "/usr/bin/chromium";
const WAIT = { timeout: 20_000 };
const skip = process.env.TEXTAI_SKIP_BROWSER === "1";

interface PageLog {
  requests: string[];
  responses: Map<string, number>;
  failed: string[];
  consoleErrors: string[];
  pageErrors: string[];
}

describe.skipIf(skip)("GET /docs in headless Chromium", () => {
  let gw: TestGateway;
  let browser: Browser;
  let page: Page;
  const log: PageLog = { requests: [], responses: new Map(), failed: [], consoleErrors: [], pageErrors: [] };

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium, or set TEXTAI_SKIP_BROWSER=1 to skip browser tests`);
    }
    gw = await startGateway();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
    const context = await browser.newContext();
    // anything bound elsewhere is refused, so the page is proven to render offline even on a connected machine
    const origin = new URL(gw.url).origin;
    await context.route(
      (url) => url.origin !== origin,
      (route) => route.abort("internetdisconnected"),
    );
    // every request the page makes, including ones that fail before a response
    context.on("request", (r) => log.requests.push(r.url()));
    context.on("response", (r) => log.responses.set(new URL(r.url()).pathname, r.status()));
    context.on("requestfailed", (r) => log.failed.push(`${r.url()} ${r.failure()?.errorText}`));
    page = await context.newPage();
    page.on("console", (m) => {
      if (m.type() === "error") log.consoleErrors.push(`${m.text()} at ${m.location().url}`);
    });
    page.on("pageerror", (e) => log.pageErrors.push(e.message));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await gw?.close();
  });

  test("renders the API reference from the gateway alone", async () => {
    const res = await page.goto(`${gw.url}/docs`);
    expect(res?.status()).toBe(200);
    await page.getByRole("heading", { name: "Text-AI Gateway", level: 1 }).waitFor(WAIT);
    // the operations come from /openapi.json, so one listed operation proves the spec loaded and rendered
    await page.getByText("/api/v1/ai/sentiment-analysis").first().waitFor(WAIT);
    expect(log.responses.get("/docs/assets/scalar.js")).toBe(200);
    expect(log.responses.get("/openapi.json")).toBe(200);
  }, 60_000);

  test("search finds a function and opens it with its request example", async () => {
    await page.getByRole("button", { name: "Open Search" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByRole("combobox").or(dialog.getByRole("searchbox")).or(dialog.locator("input")).first().waitFor(WAIT);
    await page.keyboard.type("sentiment-analysis");
    await dialog.getByText(sentimentAnalysis.summary).first().waitFor(WAIT);
    await dialog.getByText(sentimentAnalysis.path).first().click();

    await page.getByRole("heading", { name: sentimentAnalysis.summary }).first().waitFor(WAIT);
    expect(page.url()).toEndWith(`/POST${sentimentAnalysis.path}`);
    // the request example, as the code sample a user copies
    const example = sentimentAnalysis.example.request as { text: string };
    await page.getByText(JSON.stringify(example.text)).first().waitFor(WAIT);
    await page.getByText("Cost: 1 credit per successful call").first().waitFor(WAIT);
  }, 60_000);

  test("the curl sample carries the gateway's own host, and the /v1/ai/intent alias is its own operation, listed once", async () => {
    // on the sentiment-analysis operation opened above
    const sample = page.getByText(`${gw.url}${sentimentAnalysis.path}`).first();
    await sample.waitFor(WAIT);
    await sample.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(process.env.TEXTAI_SCREENSHOT_DIR ?? gw.dir, "docs-curl.png") });
    // the sidebar lists each operation by its summary: the intent function once, and its alias once as its own operation
    const sidebar = page.locator("nav, aside").filter({ hasText: sentimentAnalysis.summary }).first();
    await sidebar.waitFor(WAIT);
    expect(await sidebar.getByText(intentDetection.summary, { exact: true }).count()).toBe(1);
    expect(await sidebar.getByText("intent: intent-detection at /v1/ai/intent", { exact: true }).count()).toBe(1);
  }, 60_000);

  test("works offline: no request leaves the gateway's origin, nothing fails, no console errors", () => {
    const origin = new URL(gw.url).origin;
    const elsewhere = log.requests.filter(
      (u) => !u.startsWith("data:") && !u.startsWith("blob:") && new URL(u).origin !== origin,
    );
    expect({ elsewhere, failed: log.failed, consoleErrors: log.consoleErrors, pageErrors: log.pageErrors }).toEqual({
      elsewhere: [],
      failed: [],
      consoleErrors: [],
      pageErrors: [],
    });
    expect(log.requests.length).toBeGreaterThanOrEqual(3);
  });
});
