import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";

/** Contract section 4: x-request-id on every response; meta.credits_remaining on account endpoints; 405 + Allow. */
let gw: TestGateway;
let key: string;
beforeAll(async () => {
  gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: "admin-token-for-tests-0123456789abcdef" } });
  key = gw.newKey({ credits: 42 }).key;
});
afterAll(() => gw.close());

describe("x-request-id on every route", () => {
  test.each([
    ["GET", "/health"],
    ["GET", "/ready"],
    ["GET", "/metrics"],
    ["GET", "/docs"],
    ["GET", "/openapi.json"],
    ["GET", "/docs/assets/scalar.js"],
    ["GET", "/no/such/route"],
    ["GET", "/api/v1/ai/sentiment-analysis"],
    ["POST", "/api/v1/ai/sentiment-analysis"],
    ["POST", "/api/v1/no-such-function"],
    ["GET", "/api/v1/account/usage"],
    ["GET", "/v1/models"],
    ["POST", "/v1/chat/completions"],
    ["GET", "/v1/no-such-route"],
    ["GET", "/dashboard/login"],
    ["POST", "/health"],
    ["GET", "/admin/v1/accounts"],
  ])("%s %s", async (method, path) => {
    const res = await fetch(gw.url + path, { method });
    await res.arrayBuffer();
    expect({ path, id: res.headers.get("x-request-id")?.startsWith("req_") }).toEqual({ path, id: true });
  });

  test("it equals the envelope's request_id", async () => {
    const res = await gw.get("/no/such/route");
    expect(res.headers.get("x-request-id")).toBe(res.json.request_id);
  });
});

describe("account endpoints carry meta.credits_remaining", () => {
  test.each(["/api/v1/account/usage", "/api/v1/account/usage-summary", "/api/v1/account/api-key/current"])("%s", async (path) => {
    const res = await gw.get(path, { "x-api-key": key });
    expect({ status: res.status, remaining: res.json.meta?.credits_remaining, charged: res.json.meta?.credits_deducted }).toEqual(
      {
        status: 200,
        remaining: 42,
        charged: 0,
      },
    );
  });
});

describe("405 with Allow for a wrong method on a known path", () => {
  test.each([
    ["GET", "/api/v1/ai/sentiment-analysis", "POST"],
    ["POST", "/health", "GET"],
    ["DELETE", "/api/v1/account/usage", "GET"],
    ["PUT", "/api/v1/knowledge-bases/kb_123", "DELETE, GET, PATCH"],
  ])("%s %s", async (method, path, allow) => {
    const res = await fetch(gw.url + path, { method, headers: { "x-api-key": key } });
    const json = (await res.json()) as { success: boolean; error?: { code: string } };
    expect({ status: res.status, allow: res.headers.get("allow"), code: json.error?.code, success: json.success }).toEqual({
      status: 405,
      allow,
      code: "method_not_allowed",
      success: false,
    });
  });

  test("an unknown path stays 404", async () => {
    const res = await gw.get("/api/v1/ai/no-such-function");
    expect({ status: res.status, code: res.json.error?.code }).toEqual({ status: 404, code: "not_found" });
  });
});
