/**
 * Guardrails (CONTRACT section 14) on every /v1 path, driven by the official `openai` SDK (streaming
 * included) through a real server against the upstream simulator, which records what it received:
 * no guarded value reaches it, whatever field or shape the client put it in; restored answers
 * (text, tool-call arguments, streamed events) carry the client's values; blocks name the kind,
 * are not charged and are counted; the request log and /metrics hold counts, never values.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type OpenAI from "openai";
import type { APIError } from "openai";
import type { TestGateway } from "../helpers/gateway";
import type { Upstream } from "../helpers/upstream";
import { openaiClient } from "../openai/setup";
import { guardedGateway } from "./setup";

const ADMIN = "guardrails-sdk-paths-operator-token-0123456789";
const admin = { authorization: `Bearer ${ADMIN}` };
const EMAIL = "maria.garcia@example.com";
const PHONE = "+1 415 555 0132";
const NAME = "Maria Garcia";
const SSN = "219-09-9999";
const CARD = "4111 1111 1111 1111";
const IP = "10.20.30.40";
const ADDRESS = "12 Main Street\nSpringfield, IL 62704";
/** what must never reach the simulator (the address by its street, the rest by their distinctive parts) */
const VALUES = [EMAIL, "415 555", "Garcia", SSN, "4111", IP, "Main Street", "62704", "Łukasiewicz", "u0141"];
const PNG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

let gw: TestGateway;
let sim: Upstream;

beforeAll(async () => {
  ({ gw, sim } = await guardedGateway(
    `[plans.guarded.guardrails]
redact_pii = ["email", "phone", "credit_card", "ssn", "ip_address", "name", "address"]
restore_pii = true

[plans.blocking.guardrails]
block_pii = ["ssn"]
block_moderation = ["threat"]
`,
    { TEXTAI_ADMIN_TOKEN: ADMIN },
  ));
});
afterAll(async () => {
  await gw.close();
  await sim.close();
});

const sentSince = (from: number) => JSON.stringify(sim.calls.requests.slice(from).map((r) => r.body));
const noValues = (from: number) => {
  const sent = sentSince(from);
  for (const v of VALUES) expect(sent).not.toContain(v);
  return sent;
};
const client = (plan: string, credits = 100_000) => {
  const k = gw.newKey({ plan, credits });
  return { ...k, c: openaiClient(gw, k.key) };
};

/** The request log's entry of a request (written after the answer, so polled). */
async function logEntry(id: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 50; i++) {
    const l = await gw.get(`/admin/v1/requests/${id}`, admin);
    if (l.status === 200) return l.json.data.result;
    await Bun.sleep(100);
  }
  throw new Error(`no request log entry for ${id}`);
}
const metricsText = async () => (await fetch(`${gw.url}/metrics`, { headers: admin })).text();
const metric = (text: string, name: string, kind: string) =>
  Number(new RegExp(`^${name}\\{kind="${kind}"\\} (\\d+)$`, "m").exec(text)?.[1] ?? 0);

/** A tool whose arguments the simulator fills with these constants (so it "uses" the placeholders). */
const toolWith = (name: string, consts: Record<string, string>) => ({
  type: "function" as const,
  function: {
    name,
    parameters: {
      type: "object",
      properties: Object.fromEntries(Object.entries(consts).map(([k, v]) => [k, { type: "string", const: v }])),
      required: Object.keys(consts),
    },
  },
});

describe("/v1/chat/completions through the SDK", () => {
  test("every place a client puts text: system, developer, content parts next to an image, JSON-mode prompt, name, user, tool calls and tool results (parts too)", async () => {
    const { c } = client("guarded");
    const from = sim.calls.requests.length;
    sim.program([{ content: '{"customer": "[NAME_1]", "mail": "[EMAIL_1]", "card": "[CREDIT_CARD_1]"}' }]);
    const { data, response } = await c.chat.completions
      .create({
        model: "model-a",
        response_format: { type: "json_object" },
        user: EMAIL,
        messages: [
          { role: "system", content: `Answer in JSON. The account holder is ${NAME} (${EMAIL}).` },
          { role: "developer", content: [{ type: "text", text: `Server ${IP} logged the call.` }] },
          {
            role: "user",
            name: EMAIL,
            content: [
              { type: "text", text: `Card (${CARD}); SSN [${SSN}]; phone:${PHONE}.` },
              { type: "image_url", image_url: { url: PNG } },
              { type: "text", text: `Ship to:\n${ADDRESS}` },
            ],
          },
          {
            role: "assistant",
            content: null,
            tool_calls: [
              { id: "c1", type: "function", function: { name: "lookup", arguments: JSON.stringify({ email: EMAIL, ip: IP }) } },
            ],
          },
          { role: "tool", tool_call_id: "c1", content: [{ type: "text", text: `Found ${NAME}, SSN ${SSN}.` }] },
          { role: "user", content: `{"customer": "${NAME}", "ssn": "${SSN}", "mail": "${EMAIL}"}` },
        ],
      })
      .withResponse();
    const sent = noValues(from);
    // the image and the structure are sent as they were
    expect(sent).toContain(PNG);
    expect(sent).toContain('"type":"image_url"');
    expect(sent).toContain("[EMAIL_1]");
    expect(sent).not.toContain("[EMAIL_2]");
    expect(sent).not.toContain("[SSN_2]");
    expect(JSON.parse(data.choices[0]?.message.content ?? "")).toEqual({ customer: NAME, mail: EMAIL, card: CARD });
    const header = response.headers.get("x-textai-guardrails") as string;
    expect(header).toMatch(/^redacted=address:1,credit_card:1,email:\d+,/);
    // the request log has the header's counts, never a value
    const entry = await logEntry(response.headers.get("x-request-id") as string);
    const counts = Object.fromEntries(
      header
        .slice("redacted=".length)
        .split(",")
        .map((kv) => kv.split(":")),
    );
    expect(entry.guardrails).toEqual(Object.fromEntries(Object.entries(counts).map(([k, n]) => [`redacted.${k}`, Number(n)])));
    for (const v of VALUES) expect(JSON.stringify(entry)).not.toContain(v);
  });

  test("a model's tool-call arguments with placeholders come back with the client's values, still valid JSON (a multi-line address too); streamed the same", async () => {
    const { c } = client("guarded");
    const tools = [toolWith("send", { to: "[EMAIL_1]", address: "[ADDRESS_1]", name: "[NAME_1]" })];
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: "user", content: `Send the parcel for ${NAME} (${EMAIL}) to:\n${ADDRESS}` },
    ];
    const from = sim.calls.requests.length;
    const plain = await c.chat.completions.create({ model: "model-a", tools, tool_choice: "required", messages });
    const args = plain.choices[0]?.message.tool_calls?.[0];
    expect(args?.type).toBe("function");
    if (args?.type !== "function") throw new Error("no function call");
    expect(JSON.parse(args.function.arguments)).toEqual({ to: EMAIL, address: ADDRESS, name: NAME });

    const stream = await c.chat.completions.create({ model: "model-a", tools, tool_choice: "required", messages, stream: true });
    let streamed = "";
    for await (const chunk of stream)
      for (const tc of chunk.choices[0]?.delta.tool_calls ?? []) streamed += tc.function?.arguments ?? "";
    expect(JSON.parse(streamed)).toEqual({ to: EMAIL, address: ADDRESS, name: NAME });
    noValues(from);
  });

  test("a streamed answer through the SDK is restored, each placeholder cut between chunks; header, /metrics and the request log count it", async () => {
    const { c } = client("guarded");
    const before = await metricsText();
    const from = sim.calls.requests.length;
    const answer = "Dear [NAME_1], we wrote to [EMAIL_1] and [EMAIL_1] again; card [CREDIT_CARD_1].";
    sim.program([{ content: answer, chunkChars: 2 }]);
    const { data: stream, response } = await c.chat.completions
      .create({
        model: "model-a",
        stream: true,
        messages: [{ role: "user", content: `I am ${NAME}. Mail ${EMAIL}, card ${CARD}. Again: ${EMAIL}.` }],
      })
      .withResponse();
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe(`Dear ${NAME}, we wrote to ${EMAIL} and ${EMAIL} again; card ${CARD}.`);
    const sent = noValues(from);
    expect(sent.match(/\[EMAIL_1\]/g)?.length).toBe(2);
    expect(response.headers.get("x-textai-guardrails")).toBe("redacted=credit_card:1,email:2,name:1");

    const after = await metricsText();
    expect(
      metric(after, "textai_guardrail_redactions_total", "email") - metric(before, "textai_guardrail_redactions_total", "email"),
    ).toBe(2);
    expect(
      metric(after, "textai_guardrail_redactions_total", "credit_card") -
        metric(before, "textai_guardrail_redactions_total", "credit_card"),
    ).toBe(1);
    const entry = await logEntry(response.headers.get("x-request-id") as string);
    expect(entry.guardrails).toEqual({ "redacted.credit_card": 1, "redacted.email": 2, "redacted.name": 1 });
    const all = JSON.stringify(entry) + after + gw.logs.join("\n");
    for (const v of [EMAIL, "4111 1111", "Garcia"]) expect(all).not.toContain(v);
  });

  test("a JSON-mode answer keeps valid JSON with a multi-line address restored into it, streamed and not", async () => {
    const { c } = client("guarded");
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: "system", content: "Answer in JSON with the fields name and address." },
      { role: "user", content: `I am ${NAME}; ship to:\n${ADDRESS}` },
    ];
    const answer = '{"name": "[NAME_1]", "address": "[ADDRESS_1]"}';
    const from = sim.calls.requests.length;
    sim.program([{ content: answer }, { content: answer, chunkChars: 5 }]);
    const plain = await c.chat.completions.create({ model: "model-a", response_format: { type: "json_object" }, messages });
    expect(JSON.parse(plain.choices[0]?.message.content ?? "")).toEqual({ name: NAME, address: ADDRESS });
    const stream = await c.chat.completions.create({
      model: "model-a",
      response_format: { type: "json_object" },
      messages,
      stream: true,
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(JSON.parse(text)).toEqual({ name: NAME, address: ADDRESS });
    noValues(from);
  });

  test("several choices streamed: each is restored on its own", async () => {
    const { c } = client("guarded");
    sim.program([{ content: "Dear [NAME_1] at [EMAIL_1]", chunkChars: 3 }]);
    const stream = await c.chat.completions.create({
      model: "model-a",
      n: 2,
      stream: true,
      messages: [{ role: "user", content: `I am ${NAME}, mail ${EMAIL}` }],
    });
    const texts = ["", ""];
    for await (const chunk of stream) for (const ch of chunk.choices) texts[ch.index] += ch.delta.content ?? "";
    expect(texts).toEqual([`Dear ${NAME} at ${EMAIL} (1)`, `Dear ${NAME} at ${EMAIL} (2)`]);
  });
});

describe("/v1/responses through the SDK", () => {
  test("input as a string and instructions; placeholders stable across both; restored, streamed and not", async () => {
    const { c } = client("guarded");
    const from = sim.calls.requests.length;
    sim.program([{ content: "Hello [NAME_1], mail [EMAIL_1], server [IP_ADDRESS_1]" }]);
    const plain = await c.responses.create({
      model: "model-a",
      instructions: `The user is ${NAME}; never share ${EMAIL}.`,
      input: `I am ${NAME}, ${EMAIL}, from ${IP}`,
    });
    expect(plain.output_text).toBe(`Hello ${NAME}, mail ${EMAIL}, server ${IP}`);
    const sent = noValues(from);
    expect(sent).not.toContain("[NAME_2]");
    expect(sent).not.toContain("[EMAIL_2]");

    sim.program([{ content: "Hello [NAME_1], mail [EMAIL_1]", chunkChars: 3 }]);
    const stream = await c.responses.create({ model: "model-a", stream: true, input: `I am ${NAME}, ${EMAIL}` });
    let deltas = "";
    let done = "";
    let completed = "";
    for await (const e of stream) {
      if (e.type === "response.output_text.delta") deltas += e.delta;
      if (e.type === "response.output_text.done") done = e.text;
      if (e.type === "response.completed")
        completed = e.response.output
          .flatMap((o) => (o.type === "message" ? o.content : []))
          .map((p) => (p.type === "output_text" ? p.text : ""))
          .join("");
    }
    for (const t of [deltas, done, completed]) expect(t).toBe(`Hello ${NAME}, mail ${EMAIL}`);
    noValues(from);
  });

  test("input as items: messages with parts, an image, earlier function calls and their outputs (string and parts), a reasoning summary; a stored prompt's variables; the end user's ids", async () => {
    const { c } = client("guarded");
    const from = sim.calls.requests.length;
    await c.responses.create({
      model: "model-a",
      safety_identifier: EMAIL,
      prompt: { id: "pmpt_1", variables: { customer: NAME, card: { type: "input_text", text: CARD } } },
      input: [
        { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: `The user ${NAME} wrote from ${IP}.` }] },
        { role: "developer", content: `Server ${IP}.` },
        {
          role: "user",
          content: [
            { type: "input_text", text: `Card ${CARD}, phone ${PHONE}` },
            { type: "input_image", image_url: PNG, detail: "auto" },
          ],
        },
        { type: "function_call", call_id: "c1", name: "lookup", arguments: JSON.stringify({ email: EMAIL }) },
        { type: "function_call_output", call_id: "c1", output: `Found ${NAME}, SSN ${SSN}` },
        { type: "function_call", call_id: "c2", name: "lookup", arguments: JSON.stringify({ ssn: SSN }) },
        { type: "function_call_output", call_id: "c2", output: [{ type: "input_text", text: `Address:\n${ADDRESS}` }] },
        { type: "custom_tool_call", call_id: "c3", name: "note", input: `Call ${PHONE} about card ${CARD}` },
        { type: "custom_tool_call_output", call_id: "c3", output: `Noted for ${EMAIL}` },
      ],
    });
    const sent = noValues(from);
    expect(sent).toContain(PNG);
    expect(sent).toContain("[SSN_1]");
    expect(sent).not.toContain("[SSN_2]");
  });

  test("a function call the model makes with placeholders carries the client's values, streamed and not", async () => {
    const { c } = client("guarded");
    const tools: OpenAI.Responses.Tool[] = [
      {
        type: "function",
        name: "send",
        strict: false,
        parameters: {
          type: "object",
          properties: { to: { type: "string", const: "[EMAIL_1]" }, address: { type: "string", const: "[ADDRESS_1]" } },
          required: ["to", "address"],
        },
      },
    ];
    const input = `Send it to ${EMAIL} at\n${ADDRESS}`;
    const from = sim.calls.requests.length;
    const plain = await c.responses.create({ model: "model-a", tools, tool_choice: "required", input });
    const call = plain.output.find((o) => o.type === "function_call");
    if (call?.type !== "function_call") throw new Error("no function call");
    expect(JSON.parse(call.arguments)).toEqual({ to: EMAIL, address: ADDRESS });

    const stream = await c.responses.create({ model: "model-a", tools, tool_choice: "required", input, stream: true });
    let deltas = "";
    let done = "";
    for await (const e of stream) {
      if (e.type === "response.function_call_arguments.delta") deltas += e.delta;
      if (e.type === "response.function_call_arguments.done") done = e.arguments;
    }
    expect(JSON.parse(deltas)).toEqual({ to: EMAIL, address: ADDRESS });
    expect(JSON.parse(done)).toEqual({ to: EMAIL, address: ADDRESS });
    noValues(from);
  });
});

describe("/v1/embeddings through the SDK", () => {
  test("a string input and an array of strings are redacted; the answer says what", async () => {
    const { c } = client("guarded");
    const from = sim.calls.requests.length;
    const one = await c.embeddings.create({ model: "embed-a", input: `Contact ${NAME} at ${EMAIL}` }).withResponse();
    expect(one.data.data.length).toBe(1);
    expect(one.response.headers.get("x-textai-guardrails")).toBe("redacted=email:1,name:1");
    const many = await c.embeddings
      .create({ model: "embed-a", input: [`card ${CARD}`, `ip ${IP}`, "nothing here"] })
      .withResponse();
    expect(many.data.data.length).toBe(3);
    expect(many.response.headers.get("x-textai-guardrails")).toBe("redacted=credit_card:1,ip_address:1");
    noValues(from);
  });
});

describe("blocking on /v1: 422 guardrail_blocked naming the kind, never the value; not charged, sent nowhere, counted", () => {
  test("block_pii on chat (streamed and not), responses and embeddings; block_moderation on chat", async () => {
    const { c, accountId } = client("blocking", 1000);
    const before = await metricsText();
    const from = sim.calls.requests.length;
    const attempts: [string, () => Promise<unknown>][] = [
      ["ssn", () => c.chat.completions.create({ model: "model-a", messages: [{ role: "user", content: `ssn: ${SSN}` }] })],
      [
        "ssn",
        () => c.chat.completions.create({ model: "model-a", stream: true, messages: [{ role: "user", content: `ssn ${SSN}` }] }),
      ],
      ["ssn", () => c.responses.create({ model: "model-a", instructions: `Customer SSN ${SSN}`, input: "hello" })],
      ["ssn", () => c.embeddings.create({ model: "embed-a", input: ["fine", `my ssn is ${SSN}`] })],
      [
        "threat",
        () =>
          c.chat.completions.create({
            model: "model-a",
            messages: [{ role: "user", content: "I will kill you and burn your house down, you worthless idiot" }],
          }),
      ],
    ];
    for (const [kind, attempt] of attempts) {
      const err = (await attempt().then(
        () => null,
        (e) => e,
      )) as APIError | null;
      expect(err?.status).toBe(422);
      expect(err?.code).toBe("guardrail_blocked");
      expect(err?.message).toContain(kind);
      expect(err?.message).not.toContain("9999");
      expect(err?.headers?.get("x-textai-guardrails")).toBe(`blocked=${kind}:1`);
      const entry = await logEntry(err?.requestID ?? (err?.headers?.get("x-request-id") as string));
      expect(entry).toMatchObject({ status: 422, error_code: "guardrail_blocked", credits: 0 });
      expect(entry.guardrails).toEqual({ [`blocked.${kind}`]: 1 });
    }
    expect(sim.calls.requests.length).toBe(from);
    expect(await gw.deps.ledger.balance(accountId)).toBe(1000);
    const after = await metricsText();
    expect(metric(after, "textai_guardrail_blocks_total", "ssn") - metric(before, "textai_guardrail_blocks_total", "ssn")).toBe(
      4,
    );
    expect(
      metric(after, "textai_guardrail_blocks_total", "threat") - metric(before, "textai_guardrail_blocks_total", "threat"),
    ).toBe(1);
    expect(after).not.toContain(SSN);
  });
});

describe("a key's policy through the SDK: it adds protection to its plan's", () => {
  const patch = (id: string, policy: unknown) =>
    fetch(`${gw.url}/admin/v1/keys/${id}`, {
      method: "PATCH",
      headers: { ...admin, "content-type": "application/json" },
      body: JSON.stringify({ policy }),
    });

  test("a key's block_pii and block_moderation refuse on a plan that only redacts; its restore_pii false keeps the placeholders", async () => {
    const { id, c } = client("guarded");
    expect(
      (await patch(id, { guardrails: { block_pii: ["credit_card"], block_moderation: ["threat"], restore_pii: false } })).status,
    ).toBe(200);
    const from = sim.calls.requests.length;
    for (const content of [`pay with ${CARD}`, "I will kill you and burn your house down, you worthless idiot"]) {
      const err = (await c.chat.completions.create({ model: "model-a", messages: [{ role: "user", content }] }).then(
        () => null,
        (e) => e,
      )) as APIError | null;
      expect(err?.status).toBe(422);
      expect(err?.code).toBe("guardrail_blocked");
    }
    expect(sim.calls.requests.length).toBe(from);
    sim.program([{ content: "Hi [NAME_1], noted [EMAIL_1]." }]);
    const ok = await c.chat.completions.create({
      model: "model-a",
      messages: [{ role: "user", content: `I am ${NAME}, ${EMAIL}` }],
    });
    expect(ok.choices[0]?.message.content).toBe("Hi [NAME_1], noted [EMAIL_1].");
    noValues(from);
  });
});
