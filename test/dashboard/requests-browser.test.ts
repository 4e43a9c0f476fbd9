/**
 * The dashboard's Requests page in headless Chromium (CONTRACT section 13): filters (function,
 * status, key, time range), cursor paging, each row linking to its details, the CSV download of
 * what is filtered, and the overview's chart bars linking to the filtered list. A body's marker
 * appears on no page and in no CSV. TEXTAI_SCREENSHOTS=1 writes docs/screenshots/requests.png.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { skipBrowser } from "./browser-suite";

const CHROMIUM = "/usr/bin/chromium";
const WAIT = { timeout: 20_000 };
const ADMIN = "operator-token-for-request-log-0123456789";
const MARKER = `MARKER-${crypto.randomUUID()}`;
const SHOTS =
  process.env.TEXTAI_SCREENSHOTS === "1"
    ? join(import.meta.dir, "../../docs/screenshots")
    : mkdtempSync(join(tmpdir(), "textai-shots-"));
const SENTIMENT = "/api/v1/ai/sentiment-analysis";

describe.skipIf(skipBrowser)("Requests page in headless Chromium", () => {
  let gw: TestGateway;
  let browser: Browser;
  let page: Page;
  let main: { key: string; id: string };
  let second: { key: string; id: string };
  const pageErrors: string[] = [];
  const elsewhere: string[] = [];
  const call = (key: string, path: string, body: unknown) => gw.post(path, body, { "x-api-key": key });
  const rowIds = async () =>
    page.locator("#requests-table tbody tr").evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-request-id")));
  const cells = async (col: number) =>
    page
      .locator(`#requests-table tbody tr td:nth-child(${col})`)
      .evaluateAll((tds) => tds.map((td) => td.textContent?.trim() ?? ""));

  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium, or set TEXTAI_SKIP_BROWSER=1`);
    gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: ADMIN } });
    const acc = await gw.post(
      "/admin/v1/accounts",
      { email: "reader@example.com", password: "a long pass phrase", credits: 500 },
      { authorization: `Bearer ${ADMIN}` },
    );
    const accountId = acc.json.data.result.id as string;
    main = gw.newKey({ accountId, label: "production" });
    second = gw.newKey({ accountId, label: "staging" });
    // 56 sentiment calls (one page of 50 and more), 3 refused ones on the second key, one summary
    for (let i = 0; i < 56; i++)
      expect((await call(main.key, SENTIMENT, { text: `Great service ${i % 4}. ${MARKER}` })).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await call(second.key, SENTIMENT, { txt: MARKER })).status).toBe(400);
    expect((await call(second.key, "/api/v1/ai/text-summarize", { text: `First point. Second point. ${MARKER}` })).status).toBe(
      200,
    );
    // another account's calls never show
    const other = gw.newKey({ credits: 10 });
    await call(other.key, SENTIMENT, { text: "someone else" });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
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
    await page.getByLabel("Email").fill("reader@example.com");
    await page.getByLabel("Password").fill("a long pass phrase");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Overview", level: 1 }).waitFor(WAIT);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await gw?.close();
  });

  test("the overview's function bar opens the list filtered to that function", async () => {
    await page.locator('[aria-label="Requests by function this month"] a[aria-label="Requests of text-summarize"]').click();
    await page.getByRole("heading", { name: "Requests", level: 1 }).waitFor(WAIT);
    expect(new URL(page.url()).searchParams.get("function")).toBe("text-summarize");
    expect(await cells(2)).toEqual(["text-summarize"]);
    expect(await page.getByLabel("Function").inputValue()).toBe("text-summarize");
    // a day's bar: that day's requests
    await page.goto(`${gw.url}/dashboard`);
    const today = new Date().toISOString().slice(0, 10);
    await page.locator(`[aria-label="Credits used by day this month"] a[aria-label="Requests of ${today.slice(8)}"]`).click();
    await page.getByRole("heading", { name: "Requests", level: 1 }).waitFor(WAIT);
    expect(new URL(page.url()).searchParams.get("from")).toBe(today);
    expect(await page.getByLabel("From (UTC)").inputValue()).toBe(`${today}T00:00`);
    expect((await rowIds()).length).toBe(50);
  }, 60_000);

  test("cursor paging: Older walks every entry once, newest first; Newest comes back", async () => {
    await page.goto(`${gw.url}/dashboard/requests`);
    const first = await rowIds();
    expect(first.length).toBe(50);
    await page.getByRole("link", { name: "Older" }).click();
    await page.getByRole("link", { name: "Newest" }).waitFor(WAIT);
    const second = await rowIds();
    // 56 + 3 + 1 calls with the account's keys; the dashboard pages themselves are not API requests
    expect(second.length).toBe(10);
    expect(new Set([...first, ...second]).size).toBe(60);
    expect(await page.getByRole("link", { name: "Older" }).count()).toBe(0);
    const api = (await gw.get("/api/v1/account/requests?limit=500", { "x-api-key": main.key })).json.data.result.data as {
      request_id: string;
      function: string;
    }[];
    // the API's list (which now also holds that call itself) in the same order
    expect(api.filter((e) => e.function !== "account").map((e) => e.request_id)).toEqual([...first, ...second]);
  }, 60_000);

  test("filters by status, key and time range", async () => {
    await page.goto(`${gw.url}/dashboard/requests`);
    await page.getByLabel("Status").selectOption("4xx");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/status=4xx/, WAIT);
    expect(await cells(3)).toEqual(Array(3).fill("400 invalid_request"));
    await page.getByLabel("Status").selectOption("");
    const chosen = await page.getByLabel("Key").selectOption(second.id);
    expect(chosen).toEqual([second.id]);
    expect(await page.locator(`#f-key option[value="${second.id}"]`).textContent()).toMatch(/^staging \(/);
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(new RegExp(`key_id=${second.id}`), WAIT);
    expect((await cells(4)).every((k) => k === "staging")).toBe(true);
    expect((await rowIds()).length).toBe(4);
    await page.getByLabel("Key").selectOption("");
    await page.getByLabel("From (UTC)").fill("2030-01-01T00:00");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/from=2030/, WAIT);
    expect((await rowIds()).length).toBe(0);
    await page.getByText("none match").waitFor(WAIT);
    // a bad value: the page says which, with no table rows
    await page.goto(`${gw.url}/dashboard/requests?status=teapot`);
    expect(await page.getByRole("alert").textContent()).toContain("status");
  }, 60_000);

  test("a row links to its details; no body anywhere", async () => {
    await page.goto(`${gw.url}/dashboard/requests?function=text-summarize`);
    const [id] = await rowIds();
    await page.getByRole("link", { name: `Request ${id} at` }).click();
    await page.getByTestId("request-detail").waitFor(WAIT);
    const detail = (await page.getByTestId("request-detail").textContent()) ?? "";
    expect(detail).toContain(id as string);
    expect(detail).toContain("/api/v1/ai/text-summarize");
    expect(detail).toContain("staging");
    expect(await page.content()).not.toContain(MARKER);
    await page.goto(`${gw.url}/dashboard/requests`);
    expect(await page.content()).not.toContain(MARKER);
  }, 60_000);

  test("the CSV holds exactly what is filtered, and no body", async () => {
    await page.goto(`${gw.url}/dashboard/requests?function=sentiment-analysis&status=2xx`);
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("link", { name: /Download CSV/ }).click(),
    ]);
    const text = readFileSync((await download.path()) as string, "utf8");
    const lines = text.trim().split("\r\n");
    expect(lines[0]).toBe(
      "request_id,time,account_id,key_id,method,path,function,status,error_code,provider,model,latency_ms,credits,cache,prompt_tokens,completion_tokens,idempotent_replay,guardrails,key_label",
    );
    expect(lines.length - 1).toBe(56);
    expect(lines.slice(1).every((l) => l.split(",")[6] === "sentiment-analysis" && l.split(",")[7] === "200")).toBe(true);
    expect(text).not.toContain(MARKER);
  }, 60_000);

  test("the filter form lines up: on each row the labels share a top, the fields a top and a height, the button the fields' bottom", async () => {
    await page.goto(`${gw.url}/dashboard/requests`);
    await page.getByRole("heading", { name: "Requests", level: 1 }).waitFor(WAIT);
    for (const width of [1280, 1000, 700]) {
      await page.setViewportSize({ width, height: 900 });
      const boxes = await page.locator("form.filters").evaluate((form) => {
        type Boxed = { getBoundingClientRect(): { top: number; bottom: number; height: number } };
        const box = (el: Boxed | null) => {
          const r = (el as Boxed).getBoundingClientRect();
          return { top: Math.round(r.top), bottom: Math.round(r.bottom), height: Math.round(r.height) };
        };
        return {
          fields: ["function", "status", "key", "from", "to"].map((f) => ({
            label: box(form.querySelector(`label[for="f-${f}"]`)),
            field: box(form.querySelector(`#f-${f}`)),
          })),
          button: box(form.querySelector("button[type=submit]")),
        };
      });
      // a row: the fields whose boxes overlap vertically (the grid's wrapping decides how many)
      const rows: (typeof boxes.fields)[] = [];
      for (const f of [...boxes.fields].sort((x, y) => x.field.top - y.field.top)) {
        const row = rows.at(-1);
        if (row && f.field.top < Math.max(...row.map((r) => r.field.bottom))) row.push(f);
        else rows.push([f]);
      }
      const label = `${width}px: ${JSON.stringify(boxes)}`;
      for (const row of rows) {
        expect(new Set(row.map((f) => f.label.top)).size, label).toBe(1);
        expect(new Set(row.map((f) => f.field.top)).size, label).toBe(1);
        expect(new Set(row.map((f) => f.field.height)).size, label).toBe(1);
      }
      // the button sits on the last fields' row, or a row of its own: either way its bottom is a field's bottom
      const lastRow = rows[rows.length - 1];
      if (boxes.button.top < lastRow[0].field.bottom) expect(boxes.button.bottom, label).toBe(lastRow[0].field.bottom);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  }, 60_000);

  test("screenshot of the Requests page; nothing fetched elsewhere, no script errors", async () => {
    await page.goto(`${gw.url}/dashboard/requests`);
    await page.getByRole("heading", { name: "Requests", level: 1 }).waitFor(WAIT);
    await page.screenshot({ path: join(SHOTS, "requests.png"), fullPage: false });
    expect(elsewhere).toEqual([]);
    expect(pageErrors).toEqual([]);
  }, 60_000);
});
