import { describe, expect, test } from "bun:test";
import { defaultExtraction, extractJson, parseSchemaSpec } from "../../src/local/json-extract";
import { loadJsonl, medianMs } from "./helpers";

interface Item {
  text: string;
  schema: Record<string, unknown>;
  expected: Record<string, unknown>;
}

const items = loadJsonl<Item>("json-extract.jsonl");
const REF = new Date("2026-11-21T12:00:00Z");

describe("extractJson on labeled documents", () => {
  test("field accuracy; unrecognizable fields are reported, never guessed", () => {
    let right = 0;
    let total = 0;
    let unresolved = 0;
    const misses: string[] = [];
    for (const it of items) {
      const fields = parseSchemaSpec(it.schema);
      expect(fields).not.toBeNull();
      const r = extractJson(it.text, fields ?? [], { referenceDate: REF });
      unresolved += r.unresolved.length;
      for (const [k, v] of Object.entries(it.expected)) {
        total++;
        if (JSON.stringify(r.value[k]) === JSON.stringify(v)) right++;
        else misses.push(`${k}: ${JSON.stringify(r.value[k])} (want ${JSON.stringify(v)})${r.unresolved.includes(k) ? " [unresolved]" : ""}`);
      }
    }
    console.log(`json-extract field accuracy ${((right / total) * 100).toFixed(1)}% of ${total} fields in ${items.length} documents; unresolved ${unresolved}`, misses.length ? `\n  ${misses.join("\n  ")}` : "");
    expect(items.length).toBeGreaterThanOrEqual(12);
    expect(right / total).toBeGreaterThanOrEqual(0.8);
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

  test("a field with no recognizer is unresolved, and null only means absent", () => {
    const r = extractJson("Email me at a@b.co", parseSchemaSpec({ email: "string", phone: "string", mood: "string" }) ?? []);
    expect(r.value.email).toBe("a@b.co");
    expect(r.missing).toEqual(["phone"]);
    expect(r.unresolved).toEqual(["mood"]);
  });

  test("nested objects are filled field by field", () => {
    const r = extractJson("Customer: Ana Lopez, ana@x.com", parseSchemaSpec({ customer: { type: "object", properties: { name: { type: "string" }, email: { type: "string" } } } }) ?? []);
    expect(r.value.customer).toEqual({ name: "Ana Lopez", email: "ana@x.com" });
  });

  test("without a schema every entity is grouped by kind", () => {
    const g = defaultExtraction("Pay $20 to bob@x.com by May 1, 2026", { referenceDate: REF });
    expect(g.emails).toEqual(["bob@x.com"]);
    expect(g.amounts).toEqual([{ text: "$20", amount: 20, currency: "USD" }]);
    expect(g.dates[0].date).toBe("2026-05-01");
  });
});

test("speed: 1 KB median well under 1 ms", () => {
  const text = items
    .map((i) => i.text)
    .join(" ")
    .slice(0, 1024);
  const fields = parseSchemaSpec(items[0].schema) ?? [];
  expect(medianMs(() => extractJson(text, fields))).toBeLessThan(1);
});

test("held-out documents stay accurate", () => {
  const holdout = loadJsonl<Item>("json-extract-holdout.jsonl");
  let right = 0;
  let total = 0;
  for (const it of holdout) {
    const r = extractJson(it.text, parseSchemaSpec(it.schema) ?? [], { referenceDate: REF });
    for (const [k, v] of Object.entries(it.expected)) {
      total++;
      if (JSON.stringify(r.value[k]) === JSON.stringify(v)) right++;
    }
  }
  console.log(`json-extract holdout field accuracy ${((right / total) * 100).toFixed(1)}% of ${total}`);
  expect(right / total).toBeGreaterThanOrEqual(0.8);
});
