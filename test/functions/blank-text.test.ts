import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { TSchema } from "@sinclair/typebox";
import type { AnyFunctionDef } from "../../src/functions/define";
import { FUNCTIONS, KNOWLEDGE_FUNCTIONS } from "../../src/functions/registry";
import { startGateway, type TestGateway } from "../helpers/gateway";

/**
 * A text of only blanks is as empty as "": on every function (walked from the registry, so a new
 * one is covered), each of its non-empty text fields sent as blanks is a 400 naming the field,
 * answered by no provider and charged nothing.
 */
let gw: TestGateway;
let key: string;
let accountId: string;
beforeAll(async () => {
  gw = await startGateway();
  ({ key, accountId } = gw.newKey({ credits: 1000 }));
});
afterAll(() => gw.close());

/** A string schema that must not be empty, or a union with such a variant. */
function nonEmptyText(s: TSchema): boolean {
  const variants = (s as { anyOf?: TSchema[] }).anyOf;
  if (variants) return variants.some(nonEmptyText);
  return (s as { type?: string }).type === "string" && ((s as { minLength?: number }).minLength ?? 0) >= 1;
}

/** The top-level text fields a blank value must be refused in: the required ones and those the example fills. */
function textFields(def: AnyFunctionDef): string[] {
  const props = (def.request as { properties: Record<string, TSchema> }).properties;
  const required = new Set((def.request as { required?: string[] }).required ?? []);
  const example = def.example.request as Record<string, unknown>;
  return Object.entries(props)
    .filter(([name, s]) => nonEmptyText(s) && (required.has(name) || typeof example[name] === "string"))
    .map(([name]) => name);
}

const pathOf = (def: AnyFunctionDef) => def.path.replace(":id", "some-id");

const cases = [...FUNCTIONS, ...KNOWLEDGE_FUNCTIONS].flatMap((def) =>
  textFields(def)
    .filter((field) => !def.path.includes(`:${field}`))
    .flatMap((field) => ["   ", "\n\t \n"].map((blank) => ({ def, field, blank }))),
);

describe("blank text fields", () => {
  test("every function has a text field to check", () => {
    const uncovered = [...FUNCTIONS, ...KNOWLEDGE_FUNCTIONS].filter((def) => textFields(def).length === 0).map((d) => d.name);
    expect(uncovered).toEqual([]);
  });

  test.each(cases.map((c) => [c.def.name, c.field, JSON.stringify(c.blank), c] as const))(
    "%s: %s = %s is a 400 naming it, not charged",
    async (_name, field, _shown, { def, blank }) => {
      const before = gw.deps.ledger.balance(accountId);
      const body = { ...(def.example.request as Record<string, unknown>), [field]: blank };
      delete body.id; // a path parameter
      const res = await gw.post(pathOf(def), body, { "x-api-key": key, "cache-control": "no-cache" });
      expect({ status: res.status, code: res.json.error?.code, param: res.json.error?.param }).toEqual({
        status: 400,
        code: "invalid_request",
        param: field,
      });
      expect(res.json.error.message).toBe(`${field} must hold a character other than spaces`);
      expect(gw.deps.ledger.balance(accountId)).toBe(before);
    },
  );

  test("a nested blank text is named with its path", async () => {
    const res = await gw.post(
      "/api/v1/ai/ticket-reply",
      { ticket: "Export fails.", previous_messages: ["Hi", "  "] },
      { "x-api-key": key },
    );
    expect({ status: res.status, param: res.json.error?.param }).toEqual({ status: 400, param: "previous_messages[1]" });
  });

  test("text with a blank around it stays accepted", async () => {
    const res = await gw.post("/api/v1/ai/sentiment-analysis", { text: "  Great service!  " }, { "x-api-key": key });
    expect(res.status).toBe(200);
  });
});
