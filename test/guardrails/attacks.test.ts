/**
 * Guardrails (CONTRACT section 14) tried as an attacker would, with the official `openai` SDK
 * through a real server against the upstream simulator, which records what it received: values in
 * punctuation, in lookalike digits (fullwidth, other scripts', mathematical), behind Unicode dashes
 * and spaces, JSON with `\u` escapes as Python writes it, blocked kinds hidden in a `name` or
 * `user` field or a tool call, placeholders the client writes itself. None of the values reaches
 * the simulator; the answer gets back exactly what the client wrote.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { APIError } from "openai";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";
import { ALL_FEATURES, openaiClient } from "../openai/setup";

let gw: TestGateway;
let sim: Upstream;

beforeAll(async () => {
  sim = await startUpstream();
  gw = await startGateway({
    configText: `${simProvider({ url: `${sim.url}/v1`, name: "sim", model: "model-a", extra: `features = ${ALL_FEATURES}` })}
${simProvider({ url: `${sim.url}/v1`, name: "sim2", model: "model-b" })}
[routes]
translation = ["sim", "sim2"]

[plans.guarded.guardrails]
redact_pii = ["email", "phone", "credit_card", "ssn", "ip_address", "name", "address"]
restore_pii = true

[plans.blocking.guardrails]
block_pii = ["ssn", "credit_card"]
`,
  });
});
afterAll(async () => {
  await gw.close();
  await sim.close();
});

const client = (plan: string) => openaiClient(gw, gw.newKey({ plan, credits: 100_000 }).key);
const sentSince = (from: number) => JSON.stringify(sim.calls.requests.slice(from).map((r) => r.body));
/** Python's json.dumps: every non-ASCII character as a \u escape */
const pythonJson = (v: unknown) =>
  JSON.stringify(v).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

describe("redact_pii", () => {
  test("values inside punctuation, in URLs and key=value pairs", async () => {
    const c = client("guarded");
    const from = sim.calls.requests.length;
    const content = [
      "(maria.garcia@example.com) <ann.lee@example.org> mailto:bo@example.net.",
      'card "4111111111111111"; card:5500-0000-0000-0004; [219-09-9999] ssn=078-05-1120&x=1',
      "ip(10.20.30.40) https://192.168.7.9:8080/admin phone:+1 415 555 0132 (+44 20 7946 0958)",
    ].join("\n");
    await c.chat.completions.create({ model: "model-a", messages: [{ role: "user", content }] });
    const sent = sentSince(from);
    for (const v of [
      "maria.garcia",
      "ann.lee",
      "bo@example",
      "4111111111111111",
      "5500",
      "219-09",
      "078-05",
      "10.20.30.40",
      "192.168",
      "415 555",
      "7946",
    ])
      expect(sent).not.toContain(v);
  });

  test("lookalike digits and signs: fullwidth, Arabic-Indic, mathematical, Unicode dashes, no-break and zero-width spaces; the answer gets the client's own characters back", async () => {
    const c = client("guarded");
    const values = [
      "２１９－０９－９９９９", // fullwidth SSN
      "４１１１ １１１１ １１１１ １１１１", // fullwidth card
      "٤١١١١١١١١١١١١١١١", // Arabic-Indic card
      "𝟓𝟓𝟎𝟎 𝟎𝟎𝟎𝟎 𝟎𝟎𝟎𝟎 𝟎𝟎𝟎𝟒", // mathematical bold card
      "078‐05‐1120", // SSN with U+2010 hyphens
      "3782\u00a0822463\u00a010005", // Amex with no-break spaces
      "ｍａｒｉａ＠ｅｘａｍｐｌｅ．ｃｏｍ", // fullwidth email
      "5105\u200b1051\u200b0510\u200b5100", // zero-width spaces between a card's groups
    ];
    const from = sim.calls.requests.length;
    sim.program([
      { content: "[SSN_1] [CREDIT_CARD_1] [CREDIT_CARD_2] [CREDIT_CARD_3] [SSN_2] [CREDIT_CARD_4] [EMAIL_1] [CREDIT_CARD_5]" },
    ]);
    const out = await c.chat.completions.create({
      model: "model-a",
      messages: [
        {
          role: "user",
          content: `ssn ${values[0]}, cards ${values.slice(1, 4).join(", ")}; ssn ${values[4]}; amex ${values[5]}; mail ${values[6]}; mc ${values[7]}`,
        },
      ],
    });
    const sent = sentSince(from);
    for (const v of values) expect(sent).not.toContain(v);
    for (const v of ["219-09-9999", "4111", "5500", "078-05", "3782", "maria", "5105"]) expect(sent).not.toContain(v);
    expect(out.choices[0]?.message.content).toBe(values.join(" "));
  });

  test("JSON with \\u escapes as Python's json.dumps writes it: tool results, tool-call arguments, a function's output", async () => {
    const c = client("guarded");
    const person = { customer: "Zoë Łukasiewicz", city: "Łódź", note: "prefers email" };
    const from = sim.calls.requests.length;
    sim.program([{ content: "The customer is [NAME_1]." }]);
    const answer = await c.chat.completions.create({
      model: "model-a",
      messages: [
        { role: "user", content: "Who is the customer of order 7?" },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "c1", type: "function", function: { name: "find", arguments: pythonJson({ name: "Zoë Łukasiewicz" }) } },
          ],
        },
        { role: "tool", tool_call_id: "c1", content: pythonJson(person) },
      ],
    });
    await c.responses.create({
      model: "model-a",
      input: [
        { role: "user", content: "Who is the customer of order 7?" },
        { type: "function_call", call_id: "c1", name: "find", arguments: pythonJson({ order: 7 }) },
        { type: "function_call_output", call_id: "c1", output: pythonJson(person) },
      ],
    });
    // the value as the JSON means it, one placeholder for both escaped forms
    expect(answer.choices[0]?.message.content).toBe("The customer is Zoë Łukasiewicz.");
    const sent = sentSince(from);
    for (const v of ["ukasiewicz", "Zo\\\\u00eb", "[NAME_2]"]) expect(sent).not.toContain(v);
    // the rest of the JSON is sent, as the same JSON value
    expect(sent).toContain("prefers email");
  });

  test("a placeholder the client writes itself is left as written; its own value gets the next number", async () => {
    const c = client("guarded");
    const from = sim.calls.requests.length;
    sim.program([{ content: "Template [EMAIL_1], yours [EMAIL_2], unknown [EMAIL_9]." }]);
    const out = await c.chat.completions.create({
      model: "model-a",
      messages: [{ role: "user", content: "Fill the template [EMAIL_1] with my address, ann.lee@example.org." }],
    });
    expect(sentSince(from)).toContain("Fill the template [EMAIL_1] with my address, [EMAIL_2].");
    expect(out.choices[0]?.message.content).toBe("Template [EMAIL_1], yours ann.lee@example.org, unknown [EMAIL_9].");
  });
});

describe("a function call", () => {
  test("a field holding Python-escaped JSON and lookalike digits: nothing reaches the provider; the result has the client's text back", async () => {
    const { key } = gw.newKey({ plan: "guarded", credits: 100 });
    const from = sim.calls.requests.length;
    sim.program([
      {
        content: JSON.stringify({
          translated_text: "Cliente [NAME_1], tarjeta [CREDIT_CARD_1]",
          source_language: "en",
          target_language: "es",
        }),
      },
    ]);
    const text = `Customer record ${pythonJson({ customer: "Zoë Łukasiewicz" })}, card ４１１１ １１１１ １１１１ １１１１`;
    const r = await gw.post("/api/v1/ai/translation", { text, target_language: "es" }, { "x-api-key": key });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    const sent = sentSince(from);
    for (const v of ["ukasiewicz", "u0141", "１１１１", "4111"]) expect(sent).not.toContain(v);
    expect(r.json.data.result.translated_text).toBe("Cliente Zoë Łukasiewicz, tarjeta ４１１１ １１１１ １１１１ １１１１");
  });
});

describe("fallback", () => {
  test("every provider tried is sent the same redacted request; the values are counted once", async () => {
    const { key } = gw.newKey({ plan: "guarded", credits: 100 });
    const from = sim.calls.requests.length;
    sim.program([{ status: 500 }]);
    const r = await gw.post(
      "/api/v1/ai/translation",
      { text: "Write to ann.lee@example.org, or to ann.lee@example.org.", target_language: "es" },
      { "x-api-key": key },
    );
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json.meta.provider).toBe("sim2");
    const sent = sim.calls.requests.slice(from);
    expect(sent.map((c) => c.model)).toEqual(["model-a", "model-b"]);
    const users = sent.map((c) => JSON.stringify((c.body.messages as unknown[]).slice(1)));
    expect(users[0]).toBe(users[1] as string);
    expect(users[0]).toContain("Write to [EMAIL_1], or to [EMAIL_1].");
    expect(r.headers.get("x-textai-guardrails")).toBe("redacted=email:2");
  });
});

describe("block_pii wherever the kind hides", () => {
  test("in a message name, the user field, tool-call arguments, a tool result, lookalike digits: 422, sent nowhere", async () => {
    const c = client("blocking");
    const from = sim.calls.requests.length;
    const bodies = [
      { messages: [{ role: "user" as const, name: "user_219-09-9999", content: "hello" }] },
      { user: "4111111111111111", messages: [{ role: "user" as const, content: "hello" }] },
      {
        messages: [
          { role: "user" as const, content: "pay" },
          {
            role: "assistant" as const,
            content: null,
            tool_calls: [
              { id: "c1", type: "function" as const, function: { name: "pay", arguments: '{"card":"4111-1111-1111-1111"}' } },
            ],
          },
          { role: "tool" as const, tool_call_id: "c1", content: "ok" },
        ],
      },
      {
        messages: [
          { role: "user" as const, content: "check" },
          {
            role: "assistant" as const,
            content: null,
            tool_calls: [{ id: "c1", type: "function" as const, function: { name: "f", arguments: "{}" } }],
          },
          { role: "tool" as const, tool_call_id: "c1", content: '{"ssn": "219-09-9999"}' },
        ],
      },
      { messages: [{ role: "user" as const, content: "my ssn is ２１９－０９－９９９９" }] },
    ];
    for (const body of bodies) {
      const err = (await c.chat.completions.create({ model: "model-a", ...body }).then(
        () => null,
        (e) => e,
      )) as APIError | null;
      expect(err?.status, JSON.stringify(body)).toBe(422);
      expect(err?.code).toBe("guardrail_blocked");
      expect(err?.message).not.toMatch(/9999|1111/);
    }
    expect(sim.calls.requests.length).toBe(from);
  });
});
