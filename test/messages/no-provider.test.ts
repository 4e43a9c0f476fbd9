import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";

// 2026-12-06, a newcomer walkthrough: with no provider, /v1/messages answered that "/v1/chat/completions needs an
// AI provider", typed overloaded_error (which Anthropic's SDKs retry as a passing overload)
let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(() => gw.close());

test("/v1/messages with no provider: 503 api_error, said of /v1/messages, with what to configure; free", async () => {
  const { key } = gw.newKey({ credits: 5 });
  const res = await fetch(`${gw.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": key, "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ model: "claude-haiku-4-5", max_tokens: 16, messages: [{ role: "user", content: "Hi" }] }),
  });
  expect(res.status).toBe(503);
  const body = (await res.json()) as { type: string; error: { type: string; message: string } };
  expect(body.error.type).toBe("api_error");
  expect(body.error.message).toStartWith("/v1/messages (served through the chat-completions route) needs an AI provider");
  expect(body.error.message).toContain("ANTHROPIC_API_KEY");
  expect((await gw.get("/api/v1/account/usage", { "x-api-key": key })).json.data.result.balance).toBe(5);
});
