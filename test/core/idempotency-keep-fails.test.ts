import { afterAll, beforeAll, expect, test } from "bun:test";
import type { IdempotencyStore } from "../../src/idempotency/interface";
import { startGateway, type TestGateway } from "../helpers/gateway";

// A call that is charged and answered but whose answer cannot be kept (database locked, Redis gone)
// must not leave the key free: an abandoned key made the retry pay a second time.
let gw: TestGateway;
beforeAll(async () => {
  // the lease of a record in flight is the request timeout + 5 s
  gw = await startGateway({ configText: "[limits]\nrequest_timeout_ms = 200\n" });
});
afterAll(() => gw.close());

test("the answer is still given, and a retry after the record's lease is answered free", async () => {
  const { key } = gw.newKey({ credits: 10 });
  const h = { "x-api-key": key, "idempotency-key": "keep-fails-1" };
  const body = { text: "The parcel arrived early and the staff were lovely." };
  const store = gw.deps.idempotency as IdempotencyStore;
  const complete = store.complete.bind(store);
  store.complete = () => {
    throw new Error("database is locked");
  };
  let first: Awaited<ReturnType<TestGateway["post"]>>;
  try {
    first = await gw.post("/api/v1/ai/sentiment-analysis", body, h);
  } finally {
    store.complete = complete;
  }
  expect(first.status).toBe(200);
  expect(first.json.meta).toMatchObject({ credits_deducted: 1, credits_remaining: 9 });
  expect(gw.logs.join("\n")).toContain("idempotency: the answer could not be kept");
  // still in flight: a retry now is told so, and nothing is charged
  const early = await gw.post("/api/v1/ai/sentiment-analysis", body, h);
  expect(early.status).toBe(409);
  await Bun.sleep(5400);
  const retry = await gw.post("/api/v1/ai/sentiment-analysis", body, h);
  expect(retry.status).toBe(200);
  expect(retry.headers.get("idempotent-recovered")).toBe(first.json.request_id);
  expect(retry.json.meta).toMatchObject({ credits_deducted: 0, credits_remaining: 9 });
  expect(retry.json.data).toEqual(first.json.data);
  // and from now on the kept answer is replayed
  const replay = await gw.post("/api/v1/ai/sentiment-analysis", body, h);
  expect(replay.json.meta).toMatchObject({ credits_deducted: 0, credits_remaining: 9 });
  expect((await gw.get("/api/v1/account/usage", { "x-api-key": key })).json.data.result).toMatchObject({
    balance: 9,
    credits_used: 1,
  });
}, 20_000);
