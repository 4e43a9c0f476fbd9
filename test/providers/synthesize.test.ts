import { describe, expect, test } from "bun:test";
import { Type as T, type TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { ensureFormats } from "../../src/providers/formats";
import { synthesize } from "../../src/providers/synthesize";
import type { JsonSchema } from "../../src/providers/types";

const schemas: Record<string, TSchema> = {
  email: T.Object(
    {
      category: T.String({ minLength: 1 }),
      priority: T.Union([T.Literal("low"), T.Literal("medium"), T.Literal("high"), T.Literal("critical")]),
      confidence: T.Number({ minimum: 0, maximum: 1 }),
      count: T.Integer({ minimum: 3, maximum: 7 }),
      entities: T.Record(T.String(), T.String()),
      tags: T.Array(T.String({ maxLength: 10 }), { minItems: 2, maxItems: 4 }),
      note: T.Optional(T.Union([T.String(), T.Null()])),
      kind: T.Literal("x"),
      when: T.String({ format: "date-time" }),
      ok: T.Boolean(),
    },
    { additionalProperties: false },
  ),
  nested: T.Object({
    items: T.Array(
      T.Object({
        start: T.Integer({ minimum: 0 }),
        type: T.String(),
        score: T.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1 }),
      }),
      { minItems: 1 },
    ),
    code: T.String({ pattern: "^[a-z]+$" }),
    long: T.String({ minLength: 40 }),
  }),
  unique: T.Array(T.Union([T.Literal("a"), T.Literal("b")]), { minItems: 2, maxItems: 2, uniqueItems: true }),
  scalar: T.String(),
};

ensureFormats();

describe("synthesize", () => {
  for (const [name, schema] of Object.entries(schemas)) {
    test(`${name}: valid for many seeds`, () => {
      for (let i = 0; i < 200; i++) {
        const v = synthesize(schema as unknown as JsonSchema, `seed-${i}`);
        const first = Value.Errors(schema, v).First();
        if (first) throw new Error(`${JSON.stringify(v)}: ${first.path} ${first.message}`);
      }
    });
  }

  test("deterministic per seed, different across seeds", () => {
    const s = schemas.email as unknown as JsonSchema;
    expect(synthesize(s, "a")).toEqual(synthesize(s, "a"));
    expect(JSON.stringify(synthesize(s, "a"))).not.toBe(JSON.stringify(synthesize(s, "b")));
  });

  test("plain JSON schema with $ref and type arrays", () => {
    const schema = {
      type: "object",
      properties: { a: { $ref: "#/$defs/n" }, b: { type: ["string", "null"] } },
      required: ["a", "b"],
      additionalProperties: false,
      $defs: { n: { type: "integer", minimum: 5, maximum: 5 } },
    };
    const v = synthesize(schema, "x") as { a: number; b: string | null };
    expect(v.a).toBe(5);
    expect(typeof v.b).toBe("string");
  });
});
