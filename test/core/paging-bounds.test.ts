/**
 * Paging parameters out of range are 400 invalid_request naming the parameter, on SQLite and on
 * PostgreSQL (the latter needs the shared servers of test/helpers/shared-servers.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { freshDatabase, sharedServersUp } from "../helpers/shared-servers";

const TOKEN = "paging-admin-token-0123456789abcdef0123456789";
const shared = await sharedServersUp("paging bounds on PostgreSQL");
const TOO_BIG = ["1e30", "9223372036854775807", "1e19", "1e400", "-1", "1.5", "abc", "0x10", " 1"];

for (const backend of ["SQLite", "PostgreSQL"] as const) {
  describe.skipIf(backend === "PostgreSQL" && !shared)(`paging on ${backend}`, () => {
    let gw: TestGateway;
    let drop = async () => {};
    let cookie = "";
    const admin = { authorization: `Bearer ${TOKEN}` };
    beforeAll(async () => {
      const env: Record<string, string> = { TEXTAI_ADMIN_TOKEN: TOKEN };
      if (backend === "PostgreSQL") {
        const db = await freshDatabase();
        env.TEXTAI_DATABASE_URL = db.url;
        drop = db.drop;
      }
      gw = await startGateway({ env });
      for (let i = 0; i < 100 && (await gw.get("/ready")).status !== 200; i++) await Bun.sleep(100);
      const made = await gw.post("/admin/v1/accounts", { email: "pager@example.com", password: "a long enough password" }, admin);
      expect(made.status).toBe(201);
      const res = await fetch(`${gw.url}/dashboard/login`, {
        method: "POST",
        redirect: "manual",
        headers: { origin: new URL(gw.url).origin, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ email: "pager@example.com", password: "a long enough password" }),
      });
      cookie = (res.headers.get("set-cookie") ?? "").split(";")[0];
      expect(cookie).toContain("=");
    });
    afterAll(async () => {
      await gw.close();
      await drop();
    });

    const expect400 = (res: Awaited<ReturnType<TestGateway["get"]>>, param: string) => {
      expect({ status: res.status, code: res.json.error?.code, param: res.json.error?.param }).toEqual({
        status: 400,
        code: "invalid_request",
        param,
      });
      expect(res.json.message).toContain(param);
    };

    test("/admin/v1/accounts: offset and limit out of range are 400 naming them; the largest offset is an empty page", async () => {
      for (const v of TOO_BIG) {
        expect400(await gw.get(`/admin/v1/accounts?offset=${encodeURIComponent(v)}`, admin), "offset");
        expect400(await gw.get(`/admin/v1/accounts?limit=${encodeURIComponent(v)}`, admin), "limit");
      }
      expect400(await gw.get("/admin/v1/accounts?limit=0", admin), "limit");
      expect400(await gw.get("/admin/v1/accounts?limit=501", admin), "limit");
      const last = await gw.get(`/admin/v1/accounts?offset=${Number.MAX_SAFE_INTEGER}&limit=500`, admin);
      expect(last.status).toBe(200);
      expect(last.json.data.result).toMatchObject({ data: [], limit: 500, offset: Number.MAX_SAFE_INTEGER });
      expect((await gw.get("/admin/v1/accounts", admin)).json.data.result.data.length).toBeGreaterThan(0);
    });

    test("/dashboard/api/ledger: the same bounds", async () => {
      const h = { cookie };
      for (const v of TOO_BIG) {
        expect400(await gw.get(`/dashboard/api/ledger?offset=${encodeURIComponent(v)}`, h), "offset");
        expect400(await gw.get(`/dashboard/api/ledger?limit=${encodeURIComponent(v)}`, h), "limit");
      }
      expect400(await gw.get("/dashboard/api/ledger?limit=201", h), "limit");
      const last = await gw.get(`/dashboard/api/ledger?offset=${Number.MAX_SAFE_INTEGER}`, h);
      expect(last.status).toBe(200);
      expect(last.json.data.result.rows).toEqual([]);
      const first = await gw.get("/dashboard/api/ledger?limit=1", h);
      expect(first.json.data.result.rows.length).toBe(1);
    });

    test("/dashboard/ledger: a page out of range is a 400 page naming it, not a 500", async () => {
      for (const v of ["1e400", "1e19", "0", "-3", "abc", "9223372036854775807"]) {
        const res = await fetch(`${gw.url}/dashboard/ledger?page=${encodeURIComponent(v)}`, { headers: { cookie } });
        const text = await res.text();
        expect(res.status, v).toBe(400);
        expect(res.headers.get("content-type")).toContain("text/html");
        expect(text).toContain("page must be a whole number");
        expect(res.headers.get("x-request-id")).toMatch(/^req_/);
      }
      // a page past the last: the last page ("page 99 of 2" with an empty table before)
      const far = await fetch(`${gw.url}/dashboard/ledger?page=${Math.floor(Number.MAX_SAFE_INTEGER / 25)}`, {
        headers: { cookie },
        redirect: "manual",
      });
      expect(far.status).toBe(303);
      expect(far.headers.get("location")).toMatch(/^\/dashboard\/ledger(?:\?page=\d+)?$/);
      const last = await fetch(new URL(far.headers.get("location") as string, gw.url), { headers: { cookie } });
      expect(last.status).toBe(200);
      expect(await last.text()).not.toMatch(/page (\d+) of (?!\1)/);
      expect((await fetch(`${gw.url}/dashboard/ledger?page=1`, { headers: { cookie } })).status).toBe(200);
    });

    test("the resource listings (knowledge bases, documents, FAQ collections, chatbots) read them the same way", async () => {
      const made = await gw.post("/admin/v1/keys", { label: "pager" }, admin);
      const h = { "x-api-key": made.json.data.result.key as string };
      const kb = await gw.post("/api/v1/knowledge-bases", { name: "paged" }, h);
      expect(kb.status).toBe(201);
      const lists = [
        "/api/v1/knowledge-bases",
        `/api/v1/knowledge-bases/${kb.json.data.result.id}/documents`,
        "/api/v1/ai/faq-collections",
        "/api/v1/chatbots",
      ];
      for (const path of lists) {
        for (const v of ["1e30", "9223372036854775807", "-1"]) {
          expect400(await gw.get(`${path}?offset=${v}`, h), "offset");
          expect400(await gw.get(`${path}?limit=${v}`, h), "limit");
        }
        expect((await gw.get(`${path}?offset=${Number.MAX_SAFE_INTEGER}`, h)).status, path).toBe(200);
      }
    });

    test("nothing of it was an internal error", () => {
      expect(gw.logs.join("\n")).not.toContain("unhandled error");
    });
  });
}
