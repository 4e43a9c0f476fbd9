import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash, createHmac } from "node:crypto";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";

// Hash-style PII redaction: tokens are HMAC-SHA-256 under a key per account, derived from a secret
// the gateway keeps in its database. Offline engine and provider path give the same tokens.

const PHONE = "+1 415-555-0132";
const EMAIL = "sarah.j@example.com";
const TEXT = `Email ${EMAIL} or call ${PHONE}.`;

const sha256 = (v: string) => createHash("sha256").update(v).digest("hex");
const hmac = (key: string, v: string) => createHmac("sha256", key).update(v).digest("hex");

let sim: Upstream;
let gw: TestGateway;
beforeAll(async () => {
  sim = await startUpstream();
  gw = await startGateway({
    configText: simProvider({ url: `${sim.url}/v1`, model: "sim-model" }),
  });
});
afterAll(async () => {
  await gw.close();
  await sim.close();
});

type Result = { redacted_text: string; redaction_count: number; counts: Record<string, number>; entities?: unknown[] };

async function redact(
  key: string,
  body: Record<string, unknown>,
  on: TestGateway = gw,
): Promise<{ result: Result; provider: string }> {
  const r = await on.post(
    "/api/v1/ai/pii-redaction",
    { redaction_style: "hash", ...body },
    { "x-api-key": key, "cache-control": "no-cache" },
  );
  if (r.status !== 200) throw new Error(`${r.status} ${JSON.stringify(r.json)}`);
  return { result: r.json.data.result, provider: r.json.meta.provider };
}

/** The deployment secret as stored, and the account key the README documents. */
function accountKey(dbPath: string, accountId: string): string {
  const db = new Database(dbPath, { readonly: true });
  try {
    const row = db.query<{ value: string }, []>("SELECT value FROM gateway_secrets WHERE name = 'pii-hash'").get();
    if (!row) throw new Error("no pii-hash secret stored");
    return hmac(row.value, `textai pii-redaction hash v1\n${accountId}`);
  } finally {
    db.close();
  }
}

describe("hash-style redaction is a keyed hash per account", () => {
  test("one account: the same value gives the same token in two calls; it is not the plain SHA-256", async () => {
    const { key, accountId } = gw.newKey({ credits: 50 });
    const first = await redact(key, { text: TEXT });
    const second = await redact(key, { text: `Call ${PHONE} today` });
    expect(first.provider).toBe("local");
    const k = accountKey(gw.dbPath, accountId);
    expect(first.result.redacted_text).toBe(`Email ${hmac(k, EMAIL)} or call ${hmac(k, PHONE)}.`);
    expect(second.result.redacted_text).toBe(`Call ${hmac(k, PHONE)} today`);
    expect(first.result.redacted_text).not.toContain(sha256(PHONE));
    expect(first.result.redacted_text).not.toContain(sha256(EMAIL));
    expect(first.result.entities).toBeUndefined();
    expect(first.result).toMatchObject({ redaction_count: 2, counts: { email: 1, phone_number: 1 } });
  });

  test("two accounts get different tokens for the same value, also when the second could hit the cache", async () => {
    const a = gw.newKey({ credits: 50 });
    const b = gw.newKey({ credits: 50 });
    const post = (key: string) =>
      gw.post("/api/v1/ai/pii-redaction", { text: TEXT, redaction_style: "hash" }, { "x-api-key": key });
    const ra = await post(a.key);
    const rb = await post(b.key);
    expect(ra.status).toBe(200);
    expect(rb.status).toBe(200);
    const ta = ra.json.data.result.redacted_text as string;
    const tb = rb.json.data.result.redacted_text as string;
    expect(ta).not.toBe(tb);
    expect(tb).toBe(
      `Email ${hmac(accountKey(gw.dbPath, b.accountId), EMAIL)} or call ${hmac(accountKey(gw.dbPath, b.accountId), PHONE)}.`,
    );
  });

  test("another gateway process on the same database gives the same tokens (one secret per deployment)", async () => {
    const { key } = gw.newKey({ credits: 50 });
    const other = await startGateway({ env: { TEXTAI_DB: gw.dbPath } });
    try {
      const here = await redact(key, { text: TEXT });
      const there = await redact(key, { text: TEXT }, other);
      expect(there.result.redacted_text).toBe(here.result.redacted_text);
    } finally {
      await other.close();
    }
  });

  test("the provider path yields the gateway's keyed tokens, whatever the model wrote, and agrees with the offline engine", async () => {
    const { key } = gw.newKey({ credits: 50 });
    const offline = await redact(key, { text: TEXT, return_entities: true });
    const entities = [
      { type: "email", start: 6, end: 6 + EMAIL.length, text: EMAIL, score: 0.99 },
      { type: "phone_number", start: TEXT.indexOf(PHONE), end: TEXT.indexOf(PHONE) + PHONE.length, text: PHONE, score: 0.9 },
    ];
    // a model following the old instruction: plain SHA-256 in place of the values
    const modelSays = {
      redacted_text: `Email ${sha256(EMAIL)} or call ${sha256(PHONE)}.`,
      redaction_count: 2,
      counts: { email: 1, phone_number: 1 },
      entities,
    };
    for (const returnEntities of [false, true]) {
      sim.reset();
      sim.program([{ content: JSON.stringify(modelSays) }]);
      const viaModel = await redact(key, { text: TEXT, return_entities: returnEntities, model: "sim/sim-model" });
      expect(viaModel.provider).toBe("sim");
      expect(viaModel.result.redacted_text).toBe(offline.result.redacted_text);
      expect(viaModel.result.redacted_text).not.toContain(sha256(PHONE));
      expect(viaModel.result).toMatchObject({ redaction_count: 2, counts: { email: 1, phone_number: 1 } });
      const spans = (r: Result) => r.entities?.map((e) => ({ ...(e as object), score: undefined }));
      if (returnEntities) expect(spans(viaModel.result)).toEqual(spans(offline.result));
      else expect(viaModel.result.entities).toBeUndefined();
      // the model is asked for labels and the entities, never for hashes it cannot key
      const sent = JSON.stringify(sim.calls.requests[0]?.body.messages);
      expect(sent).not.toMatch(/SHA-256|sha256/i);
      expect(sent).toContain("entities");
    }
  });

  test("a model answer without entities cannot be hashed: it is not passed through", async () => {
    const { key, accountId } = gw.newKey({ credits: 50 });
    sim.reset();
    const made = {
      redacted_text: `Email ${sha256(EMAIL)} or call ${sha256(PHONE)}.`,
      redaction_count: 2,
      counts: { email: 1, phone_number: 1 },
    };
    sim.program([{ content: JSON.stringify(made), times: 2 }]);
    const r = await gw.post(
      "/api/v1/ai/pii-redaction",
      { text: TEXT, redaction_style: "hash", model: "sim/sim-model" },
      { "x-api-key": key, "cache-control": "no-cache" },
    );
    // the answer and its repair are refused; the offline engine, later in the route, answers
    expect(r.status).toBe(200);
    expect(r.json.meta.provider).toBe("local");
    const k = accountKey(gw.dbPath, accountId);
    expect(r.json.data.result.redacted_text).toBe(`Email ${hmac(k, EMAIL)} or call ${hmac(k, PHONE)}.`);
  });
});
