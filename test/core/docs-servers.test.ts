import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";

/**
 * Issue 24.24: /openapi.json names the server it was fetched from, so the code samples on /docs
 * carry a host. X-Forwarded-Proto counts only from a trusted proxy (TEXTAI_TRUSTED_PROXIES).
 */
let plain: TestGateway;
let behindProxy: TestGateway;
beforeAll(async () => {
  plain = await startGateway();
  behindProxy = await startGateway({ env: { TEXTAI_TRUSTED_PROXIES: "127.0.0.1" } });
});
afterAll(async () => {
  await plain.close();
  await behindProxy.close();
});

const servers = async (gw: TestGateway, headers: Record<string, string> = {}) =>
  (await gw.get("/openapi.json", headers)).json.servers;

describe("the OpenAPI document's servers entry", () => {
  test("is the request's own origin", async () => {
    expect(await servers(plain)).toEqual([{ url: plain.url }]);
    expect(await servers(plain, { host: "gateway.example:8443" })).toEqual([{ url: "http://gateway.example:8443" }]);
  });

  test("X-Forwarded-Proto from an untrusted peer is ignored", async () => {
    expect(await servers(plain, { "x-forwarded-proto": "https" })).toEqual([{ url: plain.url }]);
  });

  test("X-Forwarded-Proto from a trusted proxy is honoured", async () => {
    expect(await servers(behindProxy, { host: "api.example.com", "x-forwarded-proto": "https" })).toEqual([
      { url: "https://api.example.com" },
    ]);
  });

  test("each request gets its own origin (the document is cached, the entry is not)", async () => {
    expect(await servers(plain, { host: "a.example" })).toEqual([{ url: "http://a.example" }]);
    expect(await servers(plain, { host: "b.example" })).toEqual([{ url: "http://b.example" }]);
  });
});
