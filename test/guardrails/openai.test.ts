/**
 * Guardrails on the /v1 pass-through (CONTRACT section 14) through a real server against the
 * upstream simulator, which records what it received: chat (messages, content parts, tool results,
 * earlier tool calls), responses and embeddings are redacted; answers, streamed ones included (a
 * placeholder cut between chunks too), carry the client's values back.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { TestGateway } from "../helpers/gateway";
import type { Upstream } from "../helpers/upstream";
import { rawPost, sseData } from "../openai/setup";
import { guardedGateway } from "./setup";

const EMAIL = "maria.garcia@example.com";
const PHONE = "+1 415 555 0132";
const NAME = "Maria Garcia";
const SSN = "219-09-9999";

let gw: TestGateway;
let sim: Upstream;
let key: string;
let blockKey: string;

beforeAll(async () => {
  ({ gw, sim } = await guardedGateway(
    `[plans.guarded.guardrails]
redact_pii = ["email", "phone", "credit_card", "ssn", "ip_address", "name", "address"]
restore_pii = true

[plans.blocking.guardrails]
block_pii = ["ssn"]
`,
  ));
  key = gw.newKey({ plan: "guarded", credits: 100_000 }).key;
  blockKey = gw.newKey({ plan: "blocking", credits: 100_000 }).key;
});
afterAll(async () => {
  await gw.close();
  await sim.close();
});

const sentSince = (from: number) => JSON.stringify(sim.calls.requests.slice(from).map((r) => r.body));
const noValues = (sent: string) => {
  for (const v of [EMAIL, "415 555", "Garcia", SSN]) expect(sent).not.toContain(v);
};

describe("/v1/chat/completions", () => {
  test("every message text is redacted: content strings and parts, tool results, earlier tool-call arguments", async () => {
    const from = sim.calls.requests.length;
    sim.program([{ content: "I will write to [EMAIL_1] and ask [NAME_1] to call [PHONE_1]." }]);
    const r = await rawPost(gw, "/v1/chat/completions", key, {
      model: "model-a",
      messages: [
        { role: "system", content: `The customer is ${NAME}.` },
        { role: "user", content: [{ type: "text", text: `My email is ${EMAIL}, phone ${PHONE}.` }] },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c1", type: "function", function: { name: "lookup", arguments: JSON.stringify({ email: EMAIL }) } }],
        },
        { role: "tool", tool_call_id: "c1", content: `Found ${NAME}, SSN ${SSN}.` },
        { role: "user", content: `Please confirm to ${EMAIL}.` },
      ],
    });
    expect(r.status).toBe(200);
    const body = (await r.json()) as { choices: { message: { content: string } }[] };
    const sent = sentSince(from);
    noValues(sent);
    expect(sent).toContain("[EMAIL_1]");
    expect(sent).toContain("[SSN_1]");
    expect(sent).not.toContain("[EMAIL_2]");
    expect(body.choices[0]?.message.content).toBe(`I will write to ${EMAIL} and ask ${NAME} to call ${PHONE}.`);
    expect(r.headers.get("x-textai-guardrails")).toMatch(/^redacted=email:3,name:2,phone:1,ssn:1$/);
  });

  test("a streamed answer is restored, placeholders cut between chunks included", async () => {
    const from = sim.calls.requests.length;
    const answer = "Reply sent to [EMAIL_1] for [NAME_1]; done [";
    // 3-character chunks cut every placeholder; a lone "[" at the end is not one and is sent as it is
    sim.program([{ content: answer, chunkChars: 3 }]);
    const r = await rawPost(gw, "/v1/chat/completions", key, {
      model: "model-a",
      stream: true,
      messages: [{ role: "user", content: `Hi, I am ${NAME}, write to ${EMAIL}.` }],
    });
    expect(r.status).toBe(200);
    expect(r.headers.get("x-textai-guardrails")).toBe("redacted=email:1,name:1");
    const text = await r.text();
    noValues(sentSince(from));
    const events = sseData(text) as { choices: { delta: { content?: string } }[] }[];
    const joined = events.map((e) => e.choices[0]?.delta.content ?? "").join("");
    expect(joined).toBe(`Reply sent to ${EMAIL} for ${NAME}; done [`);
    expect(text).not.toContain("EMAIL_1");
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
  });
  test("a cached answer is the restored one and still says it was guarded", async () => {
    const req = { model: "model-a", temperature: 0, messages: [{ role: "user", content: `cache test: mail ${EMAIL}` }] };
    sim.program([{ content: "ok [EMAIL_1]" }]);
    const first = await rawPost(gw, "/v1/chat/completions", key, req);
    const again = await rawPost(gw, "/v1/chat/completions", key, req);
    expect(again.headers.get("x-cache")).toBe("HIT");
    for (const r of [first, again]) {
      expect(r.headers.get("x-textai-guardrails")).toBe("redacted=email:1");
      const body = (await r.json()) as { choices: { message: { content: string } }[] };
      expect(body.choices[0]?.message.content).toBe(`ok ${EMAIL}`);
    }
  });
});

describe("/v1/responses and /v1/embeddings", () => {
  test("responses: input and instructions redacted; the answer, streamed and not, restored", async () => {
    const from = sim.calls.requests.length;
    sim.program([{ content: "Hello [NAME_1] at [EMAIL_1]" }]);
    const plain = await rawPost(gw, "/v1/responses", key, {
      model: "model-a",
      instructions: `Address ${NAME} politely.`,
      input: [{ role: "user", content: [{ type: "input_text", text: `I am ${NAME}, ${EMAIL}` }] }],
    });
    expect(plain.status).toBe(200);
    const body = (await plain.json()) as { output: { content: { text: string }[] }[] };
    expect(body.output[0]?.content[0]?.text).toBe(`Hello ${NAME} at ${EMAIL}`);

    sim.program([{ content: "Hello [NAME_1] at [EMAIL_1]", chunkChars: 4 }]);
    const streamed = await rawPost(gw, "/v1/responses", key, { model: "model-a", stream: true, input: `I am ${NAME}, ${EMAIL}` });
    expect(streamed.status).toBe(200);
    const events = sseData(await streamed.text()) as { type: string; delta?: string; text?: string }[];
    const deltas = events
      .filter((e) => e.type === "response.output_text.delta")
      .map((e) => e.delta)
      .join("");
    expect(deltas).toBe(`Hello ${NAME} at ${EMAIL}`);
    expect(events.find((e) => e.type === "response.output_text.done")?.text).toBe(`Hello ${NAME} at ${EMAIL}`);
    noValues(sentSince(from));
  });

  test("embeddings: every input string is redacted", async () => {
    const from = sim.calls.requests.length;
    const r = await rawPost(gw, "/v1/embeddings", key, { model: "embed-a", input: [`mail ${EMAIL}`, `ssn ${SSN}`] });
    expect(r.status).toBe(200);
    noValues(sentSince(from));
    expect(sentSince(from)).toContain("[SSN_1]");
    expect(r.headers.get("x-textai-guardrails")).toBe("redacted=email:1,ssn:1");
  });

  test("block_pii: 422 guardrail_blocked in OpenAI's error shape, sent nowhere", async () => {
    const from = sim.calls.requests.length;
    for (const stream of [false, true]) {
      const r = await rawPost(gw, "/v1/chat/completions", blockKey, {
        model: "model-a",
        stream,
        messages: [{ role: "user", content: `my ssn is ${SSN}` }],
      });
      expect(r.status).toBe(422);
      const body = (await r.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("guardrail_blocked");
      expect(body.error.message).toContain("ssn");
      expect(body.error.message).not.toContain(SSN);
    }
    expect(sim.calls.requests.length).toBe(from);
  });
});
