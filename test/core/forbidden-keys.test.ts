import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";

/** __proto__ / constructor / prototype keys are dropped after parsing, however the JSON spells them. */
let gw: TestGateway;
let key: string;
beforeAll(async () => {
  gw = await startGateway();
  key = gw.newKey({ credits: 100 }).key;
});
afterAll(() => gw.close());

const raw = (path: string, body: string) => gw.post(path, body, { "x-api-key": key, "content-type": "application/json" });

test('an escaped "\\u0063onstructor" key in extract_schema is dropped, not answered with 502', async () => {
  const body = String.raw`{"email_content":"Please cancel account 88213 before 2026-12-01.","allowed_categories":["billing","cancellation"],"extract_schema":{"\u0063onstructor":"string","account_id":"string"}}`;
  const res = await raw("/api/v1/ai/email-classification", body);
  expect({ status: res.status, provider: res.json.meta?.provider }).toEqual({ status: 200, provider: "local" });
  const extracted = res.json.data.result.extracted_data ?? res.json.data.result.extracted ?? {};
  expect(Object.keys(extracted)).not.toContain("constructor");
});

test("escaped __proto__ and prototype keys are dropped at any depth", async () => {
  const body = String.raw`{"text":"Mail jane@example.com","\u005f_proto__":{"polluted":true},"redact_types":["emails"],"x":{"protot\u0079pe":{"a":1}}}`;
  const res = await raw("/api/v1/ai/pii-redaction", body);
  expect(res.status).toBeLessThan(500);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
});

test("field names in a caller's schema are data, never code, when the answer's checker is compiled", async () => {
  const g = globalThis as { pwned?: number };
  g.pwned = 0;
  const hostile = [
    `a"]){globalThis.pwned=1}//`,
    "a'+(globalThis.pwned=1)+'",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a template literal's syntax, sent as a plain name
    "`${globalThis.pwned=1}`",
    'x\\"];globalThis.pwned=1;//',
  ];
  for (const name of hostile) {
    const res = await gw.post(
      "/api/v1/ai/json-extractor",
      { text: "Order 12 from Ann Lee on 2024-01-02, total $30", schema: { [name]: "string", total: "number" } },
      { "x-api-key": key },
    );
    expect(res.status).toBe(200);
    expect(res.json.data.result).toEqual({ [name]: null, total: 30 });
  }
  expect(g.pwned).toBe(0);
});
