import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { FUNCTIONS } from "../../src/functions/registry";
import { startGateway, type TestGateway } from "../helpers/gateway";

/** Strict input on the /api/v1 function routes: unknown fields and bad enum values are explained, and not charged. */
let gw: TestGateway;
let key: string;
let accountId: string;
beforeAll(async () => {
  gw = await startGateway();
  ({ key, accountId } = gw.newKey({ credits: 100 }));
});
afterAll(() => gw.close());

const post = (path: string, body: unknown) => gw.post(path, body, { "x-api-key": key });

describe("unknown fields", () => {
  test('a misspelled field is a 400 naming it and the closest known name ("languag" -> "language")', async () => {
    const before = gw.deps.ledger.balance(accountId);
    const res = await post("/api/v1/ai/comment-analyze", { comment: "Do you ship to Canada?", languag: "en" });
    expect({ status: res.status, code: res.json.error?.code, param: res.json.error?.param }).toEqual({
      status: 400,
      code: "invalid_request",
      param: "languag",
    });
    expect(res.json.error.message).toContain('did you mean "language"?');
    expect(gw.deps.ledger.balance(accountId)).toBe(before);
  });

  test("a nested unknown field is named with its path", async () => {
    const res = await post("/api/v1/ai/chat", {
      messages: [{ role: "user", content: "hi", contnet: "x" }],
    });
    expect({ status: res.status, param: res.json.error?.param }).toEqual({ status: 400, param: "messages[0].contnet" });
    expect(res.json.error.message).toContain('did you mean "content"?');
  });

  test("a field with no near name lists the known ones", async () => {
    const res = await post("/api/v1/ai/sentiment-analysis", { text: "Great!", zzzzzzzz: 1 });
    expect(res.status).toBe(400);
    expect(res.json.error.message).toContain("known fields here: text");
  });

  test("api_key in the body and the documented variants stay accepted", async () => {
    const withKey = await gw.post("/api/v1/ai/sentiment-analysis", { text: "Great!", api_key: key });
    expect(withKey.status).toBe(200);
    const ticket = await post("/api/v1/ai/ticket-analyze", { ticket: "Export fails with E-503.", subject: "Export" });
    expect(ticket.status).toBe(200);
  });

  test("the OpenAI-compatible route lets unknown fields through to the provider (not refused as unknown)", async () => {
    const res = await post("/v1/chat/completions", {
      model: "x",
      messages: [{ role: "user", content: "hi" }],
      some_vendor_option: true,
    });
    expect(res.json.error?.message ?? "").not.toContain("unknown field");
  });
});

describe("a misspelled required field", () => {
  test('{"txt": "hello"} says text is required, that txt is unknown, and suggests text; not charged', async () => {
    const before = gw.deps.ledger.balance(accountId);
    const res = await post("/api/v1/ai/sentiment-analysis", { txt: "hello" });
    expect({ status: res.status, code: res.json.error?.code, param: res.json.error?.param }).toEqual({
      status: 400,
      code: "invalid_request",
      param: "text",
    });
    expect(res.json.error.message).toBe('text is required; unknown field "txt": did you mean "text"?');
    expect(res.json.message).toBe(res.json.error.message);
    expect(gw.deps.ledger.balance(accountId)).toBe(before);
  });

  test("nested: a chat turn with contnt instead of content", async () => {
    const res = await post("/api/v1/ai/chat", { messages: [{ role: "user", contnt: "hi" }] });
    expect({ status: res.status, param: res.json.error?.param }).toEqual({ status: 400, param: "messages[0].content" });
    expect(res.json.error.message).toBe(
      'messages[0].content is required; unknown field "messages[0].contnt": did you mean "content"?',
    );
  });

  test("a missing required field with no near unknown key names the unknown keys sent", async () => {
    // 2026-12-06, a newcomer walkthrough: `{"subject", "body"}` to email-analyze said only "email_content is
    // required", and the caller could not tell its "body" was not read
    const res = await post("/api/v1/ai/sentiment-analysis", { zzzzzzzz: "hello" });
    expect(res.json.error?.message).toBe('text is required; unknown field "zzzzzzzz"');
    const none = await post("/api/v1/ai/sentiment-analysis", {});
    expect(none.json.error?.message).toBe("text is required");
  });

  test("every function names the misspelled key of its first required field", async () => {
    const misses: string[] = [];
    for (const def of FUNCTIONS) {
      const body = { ...(def.example.request as Record<string, unknown>) };
      const required = (def.request as { required?: string[] }).required ?? [];
      // chat, ticket-reply and email-reply require one of two fields in code, after the schema
      const field =
        required[0] ?? ({ chat: "message", "ticket-reply": "ticket", "email-reply": "email_text" }[def.name] as string);
      const value = body[field] ?? "hello";
      delete body[field];
      delete body.messages;
      delete body.ticket_body;
      delete body.email_content;
      const typo = field.slice(0, -1);
      body[typo] = value;
      const res = await post(`/api/v1/ai/${def.name}`, body);
      const said = String(res.json.error?.message ?? "");
      if (res.status !== 400 || !said.includes(`unknown field "${typo}": did you mean "${field}"?`))
        misses.push(`${def.name}: ${res.status} ${said}`);
    }
    expect(misses).toEqual([]);
  });
});

describe("enum errors list the allowed values", () => {
  test("a chat message role", async () => {
    const res = await post("/api/v1/ai/chat", { messages: [{ role: "bot", content: "hi" }] });
    expect({ status: res.status, param: res.json.error?.param }).toEqual({ status: 400, param: "messages[0].role" });
    expect(res.json.error.message).toBe('messages[0].role must be one of "user", "assistant", "system"');
  });
});
