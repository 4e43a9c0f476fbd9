/**
 * A dashboard address a browser opens that has no page (mistyped, sign-up while it is off, the
 * operator console without an admin token, a request id of no request) answers a page in the
 * dashboard's layout with its status and the ways back, not the raw JSON envelope (walkthrough
 * 2026-12-06, item 1). API clients (Accept: application/json) and the dashboard's own JSON routes
 * (/dashboard/api/...) keep the envelope, whatever they accept.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync } from "node:fs";
import { chromium } from "playwright-core";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { requestFrom } from "../helpers/raw-http";
import { ADMIN_TOKEN, skipBrowser } from "./browser-suite";

const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8";
const JSON_ACCEPT = "application/json";
const PASSWORD = "a long enough password";
const SHOTS = process.env.TEXTAI_SHOTS ?? "/tmp/textai-shots";

let plain: TestGateway; // no admin token, sign-up off (the defaults)
let withOperator: TestGateway;
let memberCookie = "";
let operatorCookie = "";

async function cookieOf(gw: TestGateway, path: string, form: Record<string, string>): Promise<string> {
  const res = await requestFrom(gw.url, "127.0.0.1", "POST", path, { form });
  if (res?.status !== 303) throw new Error(`sign-in failed: ${res?.status} ${res?.body.slice(0, 200)}`);
  return (res.headers["set-cookie"] ?? "").split(";")[0];
}

beforeAll(async () => {
  plain = await startGateway();
  withOperator = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: ADMIN_TOKEN } });
  const made = await withOperator.post(
    "/admin/v1/accounts",
    { email: "holder@example.com", password: PASSWORD },
    { authorization: `Bearer ${ADMIN_TOKEN}` },
  );
  expect(made.status).toBe(201);
  memberCookie = await cookieOf(withOperator, "/dashboard/login", { email: "holder@example.com", password: PASSWORD });
  operatorCookie = await cookieOf(withOperator, "/dashboard/operator/login", { token: ADMIN_TOKEN });
}, 30_000);
afterAll(async () => {
  await plain?.close();
  await withOperator?.close();
});

type Row = { gw: () => TestGateway; path: string; status: number; cookie?: () => string; back: string };
/** Addresses a browser may open, each with the status it answers and the sign-in its page leads to. */
const PAGES: Row[] = [
  { gw: () => plain, path: "/dashboard/nope", status: 404, back: "/dashboard/login" },
  { gw: () => plain, path: "/dashboard/signup", status: 404, back: "/dashboard/login" },
  { gw: () => plain, path: "/dashboard/operator", status: 404, back: "/dashboard/login" },
  { gw: () => plain, path: "/dashboard/operator/keys", status: 404, back: "/dashboard/login" },
  { gw: () => plain, path: "/dashboard/assets/nope.css", status: 404, back: "/dashboard/login" },
  { gw: () => plain, path: "/dashboard/keys/key_x/revoke", status: 405, back: "/dashboard/login" },
  { gw: () => plain, path: "/dashboard/%zz", status: 400, back: "/dashboard/login" },
  { gw: () => withOperator, path: "/dashboard/operator/keys", status: 404, back: "/dashboard/operator/login" },
  { gw: () => withOperator, path: "/dashboard/nope/deeper", status: 404, back: "/dashboard/login" },
  {
    gw: () => withOperator,
    path: "/dashboard/requests/req_00000000-0000-0000-0000-000000000000",
    status: 404,
    cookie: () => memberCookie,
    back: "/dashboard/login",
  },
  {
    gw: () => withOperator,
    path: "/dashboard/operator/accounts/acc_nobody",
    status: 404,
    cookie: () => operatorCookie,
    back: "/dashboard/operator/login",
  },
];

async function get(gw: TestGateway, path: string, accept: string, cookie?: string) {
  const res = await fetch(gw.url + path, { headers: { accept, ...(cookie ? { cookie } : {}) }, redirect: "manual" });
  return { status: res.status, type: res.headers.get("content-type") ?? "", headers: res.headers, body: await res.text() };
}

describe("a browser's GET of a dashboard address with no page", () => {
  for (const row of PAGES) {
    test(`${row.path} (${row.gw() === plain ? "no operator" : "operator on"}${row.cookie ? ", signed in" : ""}): an HTML ${row.status} page`, async () => {
      const r = await get(row.gw(), row.path, BROWSER_ACCEPT, row.cookie?.());
      expect(r.status, r.body.slice(0, 200)).toBe(row.status);
      expect(r.type).toBe("text/html; charset=utf-8");
      expect(r.body).toStartWith("<!doctype html>");
      // the layout: its stylesheet and header, a heading, the way back
      expect(r.body).toContain('<link rel="stylesheet" href="/dashboard/assets/app.css">');
      expect(r.body).toContain('<a class="brand" href="/dashboard">');
      expect(r.body).toMatch(/<h1>(Page not found|Bad request)<\/h1>/);
      expect(r.body).toContain('<a href="/dashboard">Back to the overview</a>');
      expect(r.body).toContain(`<a href="${row.back}">`);
      expect(r.body).not.toContain('"success":false');
      expect(r.headers.get("content-security-policy")).toContain("default-src 'self'");
      expect(r.headers.get("x-request-id")).toMatch(/^req_/);
      expect(r.body).toContain(r.headers.get("x-request-id") as string);
      if (row.status === 405) expect(r.headers.get("allow")).toBe("POST");
    });
    test(`${row.path} asked for JSON: the envelope, as before`, async () => {
      const r = await get(row.gw(), row.path, JSON_ACCEPT, row.cookie?.());
      expect(r.status).toBe(row.status);
      expect(r.type).toBe("application/json");
      expect(JSON.parse(r.body)).toMatchObject({ success: false, code: row.status });
    });
  }

  for (const path of ["/dashboard/api/nope", "/dashboard/api/overview"]) {
    test(`${path}, a JSON route of the dashboard: the envelope for a browser too`, async () => {
      for (const accept of [BROWSER_ACCEPT, JSON_ACCEPT]) {
        const r = await get(plain, path, accept);
        expect(r.status).toBe(path.endsWith("nope") ? 404 : 401);
        expect(r.type).toBe("application/json");
        expect(JSON.parse(r.body).success).toBe(false);
      }
    });
  }

  test("a POST to an address with no page keeps the envelope (a form's refusals are its own pages)", async () => {
    const r = await fetch(`${plain.url}/dashboard/nope`, { method: "POST", headers: { accept: BROWSER_ACCEPT } });
    expect(r.status).toBe(404);
    expect(r.headers.get("content-type")).toBe("application/json");
  });

  test.skipIf(skipBrowser)(
    "in Chromium: the page is in the layout and its link leads back to sign-in",
    async () => {
      const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu"] });
      try {
        mkdirSync(SHOTS, { recursive: true });
        for (const width of [1440, 375]) {
          const page = await (await browser.newContext({ viewport: { width, height: 800 } })).newPage();
          const res = await page.goto(`${plain.url}/dashboard/nope`);
          expect(res?.status()).toBe(404);
          await page.getByRole("heading", { name: "Page not found", level: 1 }).waitFor({ timeout: 10_000 });
          await page.screenshot({ path: `${SHOTS}/error-page-${width}.png`, fullPage: true });
          await page.getByRole("link", { name: "Back to the overview" }).click();
          await page.getByRole("heading", { name: "Sign in", level: 1 }).waitFor({ timeout: 10_000 });
          expect(new URL(page.url()).pathname).toBe("/dashboard/login");
        }
        expect(existsSync(`${SHOTS}/error-page-375.png`)).toBe(true);
      } finally {
        await browser.close();
      }
    },
    60_000,
  );
});
