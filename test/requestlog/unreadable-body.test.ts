import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";

// 2026-12-06, a helper trying the dashboard: a call with a valid key and a body that is not JSON answered 400 and
// was in no request log, so a user debugging a client could not find it
let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(() => gw.close());

test("a body that cannot be read, with a valid key: 400 as before, and in the account's request log; a wrong key's in none", async () => {
  const { key } = gw.newKey({ credits: 10 });
  const post = (k: string, body: string) =>
    fetch(`${gw.url}/api/v1/ai/sentiment-analysis`, {
      method: "POST",
      headers: { "x-api-key": k, "content-type": "application/json" },
      body,
    });
  const bad = await post(key, "notjson");
  expect(bad.status).toBe(400);
  const id = ((await bad.json()) as { request_id: string }).request_id;
  expect((await post("tai_live_not-a-key-at-all", "notjson")).status).toBe(400);
  let entries: { request_id: string; status: number; error_code: string; credits: number }[] = [];
  for (let i = 0; i < 40 && entries.length === 0; i++) {
    await Bun.sleep(50);
    entries = (await gw.get("/api/v1/account/requests", { "x-api-key": key })).json.data.result.data;
  }
  expect(entries.map((e) => [e.request_id, e.status, e.error_code, e.credits])).toEqual([[id, 400, "invalid_json", 0]]);
});
