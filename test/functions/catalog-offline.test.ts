import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";

/** The gateway on its embedded defaults: no provider keys, no network; only the offline engine. */
let gw: TestGateway;
let key: string;

beforeAll(async () => {
  gw = await startGateway();
  key = gw.newKey({ credits: 1000 }).key;
});
afterAll(() => gw.close());

const call = (path: string, body: unknown) => gw.post(path, body, { "x-api-key": key });

describe("catalog on a gateway with no model configured", () => {
  test("email-analyze answers from the offline engine, within the caller's lists, for 2 credits", async () => {
    const res = await call("/api/v1/ai/email-analyze", {
      email_content:
        "Hello, I was charged twice for invoice INV-2291. Please refund the duplicate payment of $49 as soon as possible.",
      allowed_categories: ["billing", "technical", "other"],
      allowed_intents: ["refund_request", "question"],
    });
    expect({ status: res.status, provider: res.json.meta?.provider }).toEqual({ status: 200, provider: "local" });
    expect(res.json.data.result).toMatchObject({ category: "billing", intent: "refund_request", priority: "high" });
    expect(res.json.meta.credits_deducted).toBe(2);
  });

  test("ticket-workflow routes an outage offline", async () => {
    const res = await call("/api/v1/ai/ticket-workflow", {
      ticket: "Our API returns 500 errors and checkout is down since 9am.",
      available_departments: ["billing", "technical_support"],
    });
    expect(res.status).toBe(200);
    expect(res.json.data.result).toMatchObject({ department: "technical_support", escalate: true });
  });

  test.each([
    ["/api/v1/ai/translation", { text: "Hello", target_language: "de" }],
    ["/api/v1/ai/chat", { message: "Hi" }],
    ["/api/v1/ai/ticket-reply", { ticket_body: "Where is my order?", agent_name: "Sam" }],
    ["/api/v1/ai/image-generation", { prompt: "a cat", aspect_ratio: "16:9" }],
  ])("%s is never faked offline: 503 no_provider, nothing charged", async (path, body) => {
    const res = await call(path, body);
    expect({ status: res.status, code: res.json.error?.code, charged: res.json.meta?.credits_deducted }).toEqual({
      status: 503,
      code: "no_provider",
      charged: 0,
    });
  });

  test("an email the offline engine cannot file into the caller's list is left to a model (503), not guessed", async () => {
    const res = await call("/api/v1/ai/email-analyze", {
      email_content: "Hello, I was charged twice for invoice INV-2291.",
      allowed_categories: ["legal", "press"],
    });
    expect({ status: res.status, code: res.json.error?.code }).toEqual({ status: 503, code: "no_provider" });
  });

  test("variant errors reach the client as 400 naming the field", async () => {
    const none = await call("/api/v1/ai/chat", { system_prompt: "be brief" });
    expect({ status: none.status, param: none.json.error?.param }).toEqual({ status: 400, param: "message" });
    const both = await call("/api/v1/ai/ticket-reply", { ticket: "a", ticket_body: "b" });
    expect({ status: both.status, param: both.json.error?.param }).toEqual({ status: 400, param: "ticket_body" });
    const size = await call("/api/v1/ai/image-generation", { prompt: "a cat", size: "9000x9000" });
    expect({ status: size.status, param: size.json.error?.param }).toEqual({ status: 400, param: "size" });
  });
});
