import { describe, expect, test } from "bun:test";
import { defaultExtraction, extractJson, parseSchemaSpec } from "../../src/offline-engine/json-extract";
import { evaluateJsonExtract, loadJsonExtractFixture, JSON_EXTRACT_REFERENCE_DATE as REF } from "../eval/evaluators/json-extract";
import { evaluateJsonExtractLocale } from "../eval/evaluators/json-extract-locale";
import { expectTargetsMet, medianMs } from "./helpers";

const items = loadJsonExtractFixture();

describe("extractJson on labeled documents", () => {
  test("tuning set", () => expectTargetsMet(evaluateJsonExtract(items), 12));
  test("held-out set", () => expectTargetsMet(evaluateJsonExtract(loadJsonExtractFixture("json-extract-holdout.jsonl")), 6));
  test("other languages and locales, dev part: the target met and no value faked", () => {
    const r = evaluateJsonExtractLocale(loadJsonExtractFixture("json-extract-locale-dev.jsonl"), "dev", true);
    expectTargetsMet(r, 60);
    expect(r.metrics.find((m) => m.name.startsWith("wrong values"))?.value).toBe(0);
  });
});

describe("schema shapes", () => {
  test("JSON Schema, name -> type map, JSON text and a field list all parse", () => {
    expect(parseSchemaSpec({ type: "object", properties: { total: { type: "number" } }, required: ["total"] })).toEqual([
      { name: "total", type: "number", required: true, format: undefined, description: undefined },
    ]);
    expect(parseSchemaSpec({ tags: "string[]" })?.[0]).toMatchObject({ type: "array", items: { type: "string" } });
    expect(parseSchemaSpec('{"email": "string"}')?.[0].name).toBe("email");
    expect(parseSchemaSpec("name, email, phone number")?.map((f) => f.name)).toEqual(["name", "email", "phone_number"]);
    expect(parseSchemaSpec("")).toBeNull();
    expect(parseSchemaSpec(42)).toBeNull();
  });

  test("a string field with no recognizer is read from a sentence or missing; other types are unresolved", () => {
    const r = extractJson(
      "Email me at a@b.co. My mood is cheerful today.",
      parseSchemaSpec({ email: "string", phone: "string", mood: "string", colour: "string", happy: "boolean" }) ?? [],
    );
    expect(r.value.email).toBe("a@b.co");
    expect(r.value.mood).toBe("cheerful today");
    expect(r.value.colour).toBeNull();
    expect(r.missing).toEqual(["phone", "colour"]);
    expect(r.unresolved).toEqual(["happy"]);
  });

  test("nested objects are filled field by field", () => {
    const r = extractJson(
      "Customer: Ana Lopez, ana@x.com",
      parseSchemaSpec({ customer: { type: "object", properties: { name: { type: "string" }, email: { type: "string" } } } }) ??
        [],
    );
    expect(r.value.customer).toEqual({ name: "Ana Lopez", email: "ana@x.com" });
  });

  test("a count field takes a plain number, never an amount of money; another numeric field may", () => {
    const fields = parseSchemaSpec({ seats: "integer", deposit: "number" }) ?? [];
    expect(extractJson("We need 25 seats. Deposit $3,700.", fields).value).toEqual({ seats: 25, deposit: 3700 });
    const onlyMoney = extractJson("Invoice INV-77 was $120.50.", fields);
    expect(onlyMoney.value).toEqual({ seats: null, deposit: 120.5 });
    expect(onlyMoney.missing).toEqual(["seats"]);
  });

  test("without a schema every entity is grouped by kind", () => {
    const g = defaultExtraction("Pay $20 to bob@x.com by May 1, 2026", { referenceDate: REF });
    expect(g.emails).toEqual(["bob@x.com"]);
    expect(g.amounts).toEqual([{ text: "$20", amount: 20, currency: "USD" }]);
    expect(g.dates[0].date).toBe("2026-05-01");
  });
});

// Timing is measured by `bun run bench` (bench/offline.ts); set TEXTAI_TIMED_TESTS=1 to assert it here too.
test.skipIf(!process.env.TEXTAI_TIMED_TESTS)("speed: 1 KB median well under 1 ms", () => {
  const text = items
    .map((i) => i.text)
    .join(" ")
    .slice(0, 1024);
  const fields = parseSchemaSpec(items[0].schema) ?? [];
  expect(medianMs(() => extractJson(text, fields))).toBeLessThan(1);
});
