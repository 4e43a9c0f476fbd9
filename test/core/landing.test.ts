import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { startGateway, type TestGateway } from "../helpers/gateway";

// what Chromium and Firefox send for a page they navigate to
const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8";
const LINKS = ["/docs", "/dashboard", "/health"];

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(() => gw.close());

describe("GET /: a landing page, HTML for a browser and JSON for an API client", () => {
  test("a browser gets an HTML page with the version and working links to /docs, /dashboard and /health", async () => {
    const res = await fetch(`${gw.url}/`, { headers: { accept: BROWSER_ACCEPT } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("vary")).toBe("Accept");
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    expect(res.headers.get("content-security-policy")).toContain("default-src 'self'");
    const page = await res.text();
    expect(page).toStartWith("<!doctype html>");
    expect(page).toContain(`Version ${pkg.version}`);
    for (const path of LINKS) {
      expect(page).toContain(`<a href="${path}">`);
      // each link answers (the dashboard sends a browser without a session to its sign-in page)
      const target = await fetch(gw.url + path, { headers: { accept: BROWSER_ACCEPT }, redirect: "manual" });
      expect(target.status, path).toBeLessThan(400);
    }
    // the stylesheet it names is served, so the page needs nothing from outside the gateway
    expect(page).toContain('href="/dashboard/assets/app.css"');
    expect((await fetch(`${gw.url}/dashboard/assets/app.css`)).status).toBe(200);
  });

  test("an API client (application/json, */*, no Accept at all) gets the JSON envelope with the version and the links", async () => {
    for (const accept of ["application/json", "*/*", null, "text/html;q=0.5, application/json"]) {
      const res = await fetch(`${gw.url}/`, { headers: accept === null ? {} : { accept } });
      expect(res.status, String(accept)).toBe(200);
      expect(res.headers.get("content-type"), String(accept)).toStartWith("application/json");
      expect(res.headers.get("vary")).toBe("Accept");
      const body = (await res.json()) as { success: boolean; data: { result: Record<string, unknown> } };
      expect(body.success).toBe(true);
      expect(body.data.result).toEqual({
        name: "Text-AI Gateway",
        version: pkg.version,
        links: { docs: "/docs", dashboard: "/dashboard", health: "/health", ready: "/ready", openapi: "/openapi.json" },
      });
    }
  });

  test("HTML only where it is preferred: text/html above application/json by q-value", async () => {
    const kind = async (accept: string) => (await fetch(`${gw.url}/`, { headers: { accept } })).headers.get("content-type");
    expect(await kind("text/html")).toStartWith("text/html");
    expect(await kind("application/json;q=0.4, text/*")).toStartWith("text/html");
    expect(await kind("text/html;q=0.2, application/json;q=0.9")).toStartWith("application/json");
    expect(await kind("text/html, application/json")).toStartWith("application/json");
    expect(await kind("image/png")).toStartWith("application/json");
  });

  test("/ answers anyone, whatever credential is sent; another method is 405", async () => {
    const res = await fetch(`${gw.url}/`, { headers: { "x-api-key": "tai_live_notAKeyAtAll0000000000000000000000" } });
    expect(res.status).toBe(200);
    const other = await fetch(`${gw.url}/`, { method: "POST" });
    expect(other.status).toBe(405);
  });
});

describe("textai serve's start-up banner", () => {
  test("names the URL, the version, /docs, /dashboard and /health", async () => {
    const dir = mkdtempSync(join(tmpdir(), "textai-banner-"));
    const proc = Bun.spawn(["bun", join(import.meta.dir, "../../src/cli.ts"), "serve"], {
      env: { ...process.env, PORT: "0", HOST: "127.0.0.1", TEXTAI_DB: join(dir, "t.db"), TEXTAI_DRAIN_GRACE_MS: "0" },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "ignore",
    });
    try {
      const reader = proc.stdout.getReader();
      let out = "";
      const until = Date.now() + 20_000;
      while (!/\/health\n/.test(out) && Date.now() < until) {
        const { done, value } = await reader.read();
        if (done) break;
        out += new TextDecoder().decode(value);
      }
      const url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
      expect(url, out).toBeString();
      expect(out).toContain(`Text-AI Gateway ${pkg.version} listening on ${url}\n`);
      for (const path of LINKS) expect(out).toContain(` ${url}${path}`);
    } finally {
      proc.kill("SIGINT");
      await proc.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
