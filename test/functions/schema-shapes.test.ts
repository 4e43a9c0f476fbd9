import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { healthWhile, SCHEMA_SHAPES, schemaTakingFields } from "../helpers/adversarial";
import { startGateway, type TestGateway } from "../helpers/gateway";

/**
 * Issue 25.1: a caller's schema is request-shaped work. Its bounds (depth, fields, name and value
 * lengths) are checked while it is parsed, before credits are held, so the worst shapes are a 400
 * naming the field, in bounded time, with a key that has no credits, and /health never waits.
 */

const schemaFields = schemaTakingFields();

describe("the worst schema shapes", () => {
  let gw: TestGateway;
  let broke: string;
  let brokeAccount: string;
  let paying: string;
  beforeAll(async () => {
    gw = await startGateway();
    ({ key: broke, accountId: brokeAccount } = gw.newKey({ credits: 0 }));
    paying = gw.newKey({ credits: 1000, plan: "pro" }).key;
  });
  afterAll(() => gw.close());

  test("every function that takes a schema is found and sent the shapes", () => {
    expect(schemaFields.map(([d, f]) => `${d.name}.${f}`).sort()).toEqual([
      "email-classification.extract_schema",
      "json-extractor.schema",
      "search-query-parse.schema",
      "text-summarize.extract_schema",
    ]);
  });

  test.each(Object.keys(SCHEMA_SHAPES))(
    "%s: a 400 naming the field from every function, nothing charged, /health answering meanwhile",
    async (shape) => {
      const make = SCHEMA_SHAPES[shape] as () => unknown;
      const bodies = schemaFields.map(
        ([def, field]) => [def, field, JSON.stringify({ ...def.example.request, [field]: make() })] as const,
      );
      const { result: answers, worstMs: worstHealthMs } = await healthWhile(
        gw.url,
        Promise.all(bodies.map(([def, , body]) => gw.post(def.path, body, { "x-api-key": broke }))),
      );
      answers.forEach((a, i) => {
        const [def, field] = bodies[i] as (typeof bodies)[number];
        const seen = {
          fn: def.name,
          status: a.status,
          code: a.json.error?.code,
          param: String(a.json.error?.param ?? "").split(".")[0],
          charged: a.json.meta?.credits_deducted,
        };
        expect(seen).toEqual({ fn: def.name, status: 400, code: "invalid_request", param: field, charged: 0 });
        expect(a.json.success).toBe(false);
      });
      expect(gw.deps.ledger.balance(brokeAccount)).toBe(0);
      expect(worstHealthMs).toBeLessThan(500);
    },
    30_000,
  );

  test("the 400 names the field and the bound it is past", async () => {
    const deep = await gw.post(
      "/api/v1/ai/json-extractor",
      { text: "x", schema: { email: `string${"[]".repeat(9)}` } },
      { "x-api-key": broke },
    );
    expect({ status: deep.status, param: deep.json.error?.param }).toEqual({ status: 400, param: "schema.email" });
    expect(deep.json.error.message).toBe("schema.email nests deeper than 8 levels (objects, arrays and [] suffixes)");
    const many = await gw.post(
      "/api/v1/ai/search-query-parse",
      { query: "x", schema: { brand: Array.from({ length: 101 }, (_, i) => `b${i}`) } },
      { "x-api-key": broke },
    );
    expect({ status: many.status, param: many.json.error?.param, message: many.json.error?.message }).toEqual({
      status: 400,
      param: "schema.brand",
      message: "schema.brand has more than 100 allowed values",
    });
  });

  test("a schema at the bounds is still answered", async () => {
    const nested = (levels: number): unknown =>
      levels === 1 ? "email[]" : { type: "object", properties: { contact: nested(levels - 1) } };
    const text = "Write to ana@example.com or to bo@example.com before Friday.";
    const deep = await gw.post("/api/v1/ai/json-extractor", { text, schema: { who: nested(7) } }, { "x-api-key": paying });
    expect({ status: deep.status, error: deep.json.error?.message }).toEqual({ status: 200, error: undefined });
    const wide = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`email_${i}`, "string"]));
    const many = await gw.post("/api/v1/ai/json-extractor", { text, schema: wide }, { "x-api-key": paying });
    expect({ status: many.status, fields: Object.keys(many.json.data?.result ?? {}).length }).toEqual({
      status: 200,
      fields: 200,
    });
  });
});
