/**
 * Guardrails on the function endpoints (CONTRACT section 14) through a real server against the
 * upstream simulator, which records what it received: no guarded value ever reaches it, restored
 * answers carry the client's values, blocked requests are refused uncharged and sent nowhere.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";

const ADMIN = "admin-token-guardrails-0123456789abcdef";
const EMAIL = "maria.garcia@example.com";
const PHONE = "+1 415 555 0132";
const NAME = "Maria Garcia";
const CARD = "4111 1111 1111 1111";
const TEXT = `Hi, my name is ${NAME}. Email ${EMAIL} or call ${PHONE}; again ${EMAIL}. Thanks!`;

let gw: TestGateway;
let sim: Upstream;
const H = (key: string, extra: Record<string, string> = {}) => ({ "x-api-key": key, ...extra });
const admin = { authorization: `Bearer ${ADMIN}` };

beforeAll(async () => {
  sim = await startUpstream();
  gw = await startGateway({
    env: { TEXTAI_ADMIN_TOKEN: ADMIN },
    configText: `${simProvider({ url: `${sim.url}/v1`, name: "sim", model: "model-a" })}
[routes]
translation = ["sim"]
text-summarize = ["sim", "local"]

[plans.guarded.guardrails]
redact_pii = ["email", "phone", "name", "credit_card", "ssn", "ip_address", "address"]
restore_pii = true

[plans.unrestored.guardrails]
redact_pii = ["email", "phone_number"]

[plans.blocking.guardrails]
block_pii = ["credit_card"]
block_moderation = ["threat"]
`,
  });
});
afterAll(async () => {
  await gw.close();
  await sim.close();
});

/** Everything the simulator was sent since `from`, as one text. */
const sentSince = (from: number) => JSON.stringify(sim.calls.requests.slice(from).map((r) => r.body));

describe("redact_pii and restore_pii on a function call", () => {
  test("the provider never sees the values; the answer has them back; header, meta, metrics and log say so", async () => {
    const k = gw.newKey({ plan: "guarded", credits: 100 });
    const from = sim.calls.requests.length;
    // the provider answers with the placeholders it was given
    sim.program([
      {
        content: JSON.stringify({
          translated_text: "Hola [NAME_1], escribe a [EMAIL_1] o llama al [PHONE_1].",
          source_language: "en",
          target_language: "es",
        }),
      },
    ]);
    const r = await gw.post("/api/v1/ai/translation", { text: TEXT, target_language: "es" }, H(k.key));
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    const sent = sentSince(from);
    expect(sent).not.toContain(EMAIL);
    expect(sent).not.toContain("415 555");
    expect(sent).not.toContain("Garcia");
    // stable within the request: the email's two occurrences share one placeholder
    expect(sent.match(/\[EMAIL_1\]/g)?.length).toBe(2);
    expect(sent).toContain("[NAME_1]");
    expect(sent).toContain("[PHONE_1]");
    expect(r.json.data.result.translated_text).toBe(`Hola ${NAME}, escribe a ${EMAIL} o llama al ${PHONE}.`);
    expect(r.headers.get("x-textai-guardrails")).toBe("redacted=email:2,name:1,phone:1");
    expect(r.json.meta.guardrails).toEqual({ redacted: { email: 2, name: 1, phone: 1 } });

    const metrics = await (await fetch(`${gw.url}/metrics`, { headers: admin })).text();
    expect(metrics).toContain('textai_guardrail_redactions_total{kind="email"} 2');
    expect(metrics).toContain('textai_guardrail_redactions_total{kind="phone"} 1');
    expect(metrics).not.toContain(EMAIL);

    const id = r.headers.get("x-request-id") as string;
    let entry: Record<string, unknown> | undefined;
    for (let i = 0; i < 50 && !entry; i++) {
      const l = await gw.get(`/admin/v1/requests/${id}`, admin);
      if (l.status === 200) entry = l.json.data.result;
      else await Bun.sleep(100);
    }
    expect(entry?.guardrails).toEqual({ "redacted.email": 2, "redacted.name": 1, "redacted.phone": 1 });
  });

  test("an Idempotency-Key replay carries the restored answer and the header", async () => {
    const k = gw.newKey({ plan: "guarded", credits: 100 });
    sim.program([
      { content: JSON.stringify({ translated_text: "Hola [NAME_1]", source_language: "en", target_language: "es" }) },
    ]);
    const body = { text: `Hello, my name is ${NAME}.`, target_language: "es" };
    const first = await gw.post("/api/v1/ai/translation", body, H(k.key, { "idempotency-key": "guard-1" }));
    const again = await gw.post("/api/v1/ai/translation", body, H(k.key, { "idempotency-key": "guard-1" }));
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    for (const r of [first, again]) {
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      expect(r.json.data.result.translated_text).toBe(`Hola ${NAME}`);
      expect(r.headers.get("x-textai-guardrails")).toBe("redacted=name:1");
      expect(r.json.meta.guardrails).toEqual({ redacted: { name: 1 } });
    }
  });

  test("without restore_pii the answer keeps the placeholders", async () => {
    const k = gw.newKey({ plan: "unrestored", credits: 100 });
    const from = sim.calls.requests.length;
    sim.program([
      { content: JSON.stringify({ translated_text: "Escribe a [EMAIL_1].", source_language: "en", target_language: "es" }) },
    ]);
    const r = await gw.post("/api/v1/ai/translation", { text: `Write to ${EMAIL} today.`, target_language: "es" }, H(k.key));
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(sentSince(from)).not.toContain(EMAIL);
    expect(r.json.data.result.translated_text).toBe("Escribe a [EMAIL_1].");
    expect(r.headers.get("x-textai-guardrails")).toBe("redacted=email:1");
  });

  test("a fallback to the offline engine sees the client's own text; the provider tried before it did not", async () => {
    const k = gw.newKey({ plan: "guarded", credits: 100 });
    const from = sim.calls.requests.length;
    sim.program([{ status: 500 }]);
    const text = `Dear team, please contact ${NAME} at ${EMAIL} about the refund. The refund was approved yesterday after a long review. We will send the money this week.`;
    const r = await gw.post("/api/v1/ai/text-summarize", { text }, H(k.key));
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json.meta.provider).toBe("local");
    expect(sim.calls.requests.length).toBe(from + 1);
    expect(sentSince(from)).not.toContain(EMAIL);
    expect(sentSince(from)).toContain("[EMAIL_1]");
    // the offline engine summarized the text as the client wrote it
    expect(JSON.stringify(r.json.data.result)).toContain(EMAIL);
    // the request went out redacted (to the provider that failed): the answer says so
    expect(r.headers.get("x-textai-guardrails")).toBe("redacted=email:1,name:1");
  });

  test("a plan without guardrails sends the text as it is", async () => {
    const k = gw.newKey({ credits: 100 });
    const from = sim.calls.requests.length;
    const r = await gw.post("/api/v1/ai/translation", { text: `Write to ${EMAIL} today.`, target_language: "es" }, H(k.key));
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(sentSince(from)).toContain(EMAIL);
    expect(r.headers.get("x-textai-guardrails")).toBeNull();
  });
});

describe("block_pii and block_moderation", () => {
  test("a request with a blocked PII kind is refused with 422 guardrail_blocked, uncharged, sent nowhere", async () => {
    const k = gw.newKey({ plan: "blocking", credits: 100 });
    const from = sim.calls.requests.length;
    const r = await gw.post(
      "/api/v1/ai/translation",
      { text: `Charge my card ${CARD} please.`, target_language: "es" },
      H(k.key),
    );
    expect(r.status).toBe(422);
    expect(r.json.error.code).toBe("guardrail_blocked");
    expect(r.json.message).toContain("credit_card");
    expect(JSON.stringify(r.json)).not.toContain("4111");
    expect(r.json.meta.credits_deducted).toBe(0);
    expect(r.json.meta.guardrails).toEqual({ blocked: { credit_card: 1 } });
    expect(r.headers.get("x-textai-guardrails")).toBe("blocked=credit_card:1");
    expect(sim.calls.requests.length).toBe(from);
    expect(await gw.deps.ledger.balance(k.accountId)).toBe(100);
    const metrics = await (await fetch(`${gw.url}/metrics`, { headers: admin })).text();
    expect(metrics).toContain('textai_guardrail_blocks_total{kind="credit_card"} 1');
    const id = r.headers.get("x-request-id") as string;
    let entry: Record<string, unknown> | undefined;
    for (let i = 0; i < 50 && !entry; i++) {
      const l = await gw.get(`/admin/v1/requests/${id}`, admin);
      if (l.status === 200) entry = l.json.data.result;
      else await Bun.sleep(100);
    }
    expect(entry).toMatchObject({ status: 422, error_code: "guardrail_blocked", credits: 0 });
    expect(entry?.guardrails).toEqual({ "blocked.credit_card": 1 });
  });

  test("a request the moderation engine flags in a blocked category is refused the same way", async () => {
    const k = gw.newKey({ plan: "blocking", credits: 100 });
    const from = sim.calls.requests.length;
    const r = await gw.post(
      "/api/v1/ai/translation",
      { text: "I will kill you and burn your house down, you worthless idiot", target_language: "es" },
      H(k.key),
    );
    expect(r.status).toBe(422);
    expect(r.json.error.code).toBe("guardrail_blocked");
    expect(r.json.message).toContain("threat");
    expect(sim.calls.requests.length).toBe(from);
  });

  test("the same plan lets a clean request through", async () => {
    const k = gw.newKey({ plan: "blocking", credits: 100 });
    const r = await gw.post("/api/v1/ai/translation", { text: "Good morning, how are you?", target_language: "es" }, H(k.key));
    expect(r.status, JSON.stringify(r.json)).toBe(200);
  });
});
