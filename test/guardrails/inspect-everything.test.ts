/**
 * Issue 41, white-box cases: the guard reads the whole body that will be forwarded (every string
 * value and every object key but the skip list's, src/providers/guard-walk.ts), so fields no list
 * named are redacted and refused on too. Each case runs through a real server with a plan that
 * redacts every kind and blocks credit_card, and reads what the upstream simulator received.
 */
import { describe, expect, test } from "bun:test";
import { rawPost } from "../openai/setup";
import { guardedSuite, STRICT_PLAN } from "./setup";

/** the values placed: a plan that redacts every kind and blocks cards meets them */
const [EMAIL, NAME, SSN, CARD] = ["maria.garcia@example.com", "Maria Garcia", "219-09-9999", "4111 1111 1111 1111"];
const suite = guardedSuite(`${STRICT_PLAN}\n[routes]\njson-extractor = ["sim"]\n`, ["strict"]);
const post = (path: string, body: unknown) => rawPost(suite.gw, path, suite.keys.strict as string, body);

/** `body(text)` with redactable values is sent redacted; with a card it is refused, sent nowhere. */
async function redactedAndBlocked(path: string, body: (text: string) => Record<string, unknown>) {
  const from = suite.sim.calls.requests.length;
  const r = await post(path, body(`${NAME}, ${EMAIL}, SSN ${SSN}`));
  expect(r.status).toBe(200);
  const sent = suite.sentSince(from);
  expect(sent.length).toBeGreaterThan(2);
  for (const v of [EMAIL, "Garcia", SSN]) expect(sent).not.toContain(v);
  expect(sent).toContain("[EMAIL_1]");

  const before = suite.sim.calls.requests.length;
  const blocked = await post(path, body(`card ${CARD}`));
  expect(blocked.status).toBe(422);
  expect(((await blocked.json()) as { error: { code: string } }).error.code).toBe("guardrail_blocked");
  expect(suite.sim.calls.requests.length).toBe(before);
}

const chat = (messages: unknown[]) => ({ model: "model-a", messages });
const responses = (input: unknown[]) => ({ model: "model-a", input });

describe("fields no list named are inspected", () => {
  test("chat: an assistant message's refusal part", () =>
    redactedAndBlocked("/v1/chat/completions", (t) =>
      chat([
        { role: "user", content: "hello" },
        { role: "assistant", content: [{ type: "refusal", refusal: `I cannot share ${t}.` }] },
        { role: "user", content: "why?" },
      ]),
    ));

  test("responses: an assistant message's refusal part", () =>
    redactedAndBlocked("/v1/responses", (t) =>
      responses([
        { role: "user", content: "hello" },
        { type: "message", role: "assistant", content: [{ type: "refusal", refusal: `I cannot share ${t}.` }] },
        { role: "user", content: "why?" },
      ]),
    ));

  test("chat: a custom tool call's input (custom.input)", () =>
    redactedAndBlocked("/v1/chat/completions", (t) =>
      chat([
        { role: "user", content: "look it up" },
        { role: "assistant", tool_calls: [{ id: "c1", type: "custom", custom: { name: "lookup", input: `find ${t}` } }] },
        { role: "tool", tool_call_id: "c1", content: "done" },
      ]),
    ));

  test("chat: tool-call arguments sent as a JSON object, not a string", () =>
    redactedAndBlocked("/v1/chat/completions", (t) =>
      chat([
        { role: "user", content: "look it up" },
        {
          role: "assistant",
          tool_calls: [
            { id: "c1", type: "function", function: { name: "lookup", arguments: { who: t, nested: [{ note: t }] } } },
          ],
        },
        { role: "tool", tool_call_id: "c1", content: "done" },
      ]),
    ));

  test("responses: a function call's arguments sent as a JSON object", () =>
    redactedAndBlocked("/v1/responses", (t) =>
      responses([
        { role: "user", content: "look it up" },
        { type: "function_call", call_id: "c1", name: "lookup", arguments: { who: t } },
        { type: "function_call_output", call_id: "c1", output: "done" },
      ]),
    ));

  const PDF = "data:application/pdf;base64,JVBERi0xLjQK";
  /** a user message of an instruction and a file part */
  const withFile = (text: Record<string, unknown>, file: Record<string, unknown>) => [
    { role: "user", content: [{ ...text, text: "summarise the file" }, file] },
  ];
  test("responses: input_file.filename", () =>
    redactedAndBlocked("/v1/responses", (t) =>
      responses(withFile({ type: "input_text" }, { type: "input_file", filename: `${t}.pdf`, file_data: PDF })),
    ));
  test("chat: a file part's filename", () =>
    redactedAndBlocked("/v1/chat/completions", (t) =>
      chat(withFile({ type: "text" }, { type: "file", file: { filename: `${t}.pdf`, file_data: PDF } })),
    ));

  test("object keys of a /v1 body: a metadata key and a tool schema's property name", () =>
    redactedAndBlocked("/v1/chat/completions", (t) => ({
      ...chat([{ role: "user", content: "hello" }]),
      metadata: { [t.slice(0, 60)]: "x" },
      tools: [
        { type: "function", function: { name: "f", parameters: { type: "object", properties: { [t]: { type: "string" } } } } },
      ],
    })));
});

describe("function endpoints: object keys", () => {
  test("json-extractor: a schema whose property names are a card and an email never reaches the upstream verbatim; the answer has them back", async () => {
    const from = suite.sim.calls.requests.length;
    suite.sim.program([{ content: JSON.stringify({ "[EMAIL_1]": "yes", "[NAME_1]": "no" }) }]);
    const r = await suite.gw.post(
      "/api/v1/ai/json-extractor",
      { text: "The customer agreed.", schema: { [EMAIL]: "string", [NAME]: "string" } },
      { "x-api-key": suite.keys.strict as string },
    );
    expect(r.status).toBe(200);
    const sent = suite.sentSince(from);
    expect(sent).not.toContain(EMAIL);
    expect(sent).not.toContain("Garcia");
    expect(sent).toContain("[EMAIL_1]");
    expect(JSON.stringify(r.json)).toContain(EMAIL);

    const before = suite.sim.calls.requests.length;
    const blocked = await suite.gw.post(
      "/api/v1/ai/json-extractor",
      { text: "The customer agreed.", schema: { [CARD]: "string", [EMAIL]: "string" } },
      { "x-api-key": suite.keys.strict as string },
    );
    expect(blocked.status).toBe(422);
    expect(suite.sim.calls.requests.length).toBe(before);
  });
});
