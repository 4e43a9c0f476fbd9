import { describe, expect, test } from "bun:test";
import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import commentModerate from "../../src/functions/comment-moderate";
import type { AnyFunctionDef } from "../../src/functions/define";
import grammarFix from "../../src/functions/grammar-fix";
import intentDetection from "../../src/functions/intent-detection";
import jsonExtractor from "../../src/functions/json-extractor";
import searchQueryParse from "../../src/functions/search-query-parse";
import spamDetection from "../../src/functions/spam-detection";
import textSummarize from "../../src/functions/text-summarize";

const DEFS: AnyFunctionDef[] = [
  spamDetection,
  commentModerate,
  intentDetection,
  textSummarize,
  grammarFix,
  jsonExtractor,
  searchQueryParse,
];
const ctx = { accountId: "acct_test" };

function schemaFor(def: AnyFunctionDef, req: unknown): TSchema {
  return def.resultSchemaFor?.(req) ?? def.result;
}

/** Schema errors of a value, readable in a failing assertion. */
function problems(schema: TSchema, value: unknown): string[] {
  return [...Value.Errors(schema, value)].map((e) => `${e.path} ${e.message}`);
}

async function runLocal(def: AnyFunctionDef, req: Record<string, unknown>): Promise<unknown> {
  const request = def.normalize ? def.normalize(req) : req;
  return def.local?.(request, ctx) ?? null;
}

describe.each(DEFS.map((d) => [d.name, d] as const))("%s definition", (_name, def) => {
  test("costs 1 credit on the standard rate class, path from the name", () => {
    expect(def.cost).toBe(1);
    expect(def.rateClass).toBe("standard");
    expect(def.path).toBe(`/api/v1/ai/${def.name}`);
  });

  test("the example request and result match the schemas", () => {
    expect(problems(def.request, def.example.request)).toEqual([]);
    expect(problems(schemaFor(def, def.example.request), def.example.result)).toEqual([]);
    expect(def.check?.(def.example.request, def.example.result) ?? []).toEqual([]);
  });

  test("the prompt carries every option of the example request", () => {
    const messages = def.prompt(def.example.request);
    const all = messages.map((m) => m.content).join("\n");
    expect(messages[0].role).toBe("system");
    for (const v of Object.values(def.example.request as Record<string, unknown>)) {
      if (typeof v === "string" && v.length < 200) expect(all).toContain(v);
    }
  });

  test("the offline engine answers the example with a valid, checked result", async () => {
    const out = await runLocal(def, def.example.request as Record<string, unknown>);
    expect(out).not.toBeNull();
    expect(problems(schemaFor(def, def.example.request), out)).toEqual([]);
    expect(def.check?.(def.example.request, out) ?? []).toEqual([]);
  }, 30_000);
});

describe("request options shape the answer", () => {
  test("intent_types become an enum and the engine picks among them", async () => {
    const req = { text: "I was charged twice, please refund me", intent_types: ["refund", "shipping"] };
    const schema = schemaFor(intentDetection, req);
    expect(Value.Check(schema, { intent: "other", confidence: 0.5, entities: {} })).toBe(false);
    const out = (await runLocal(intentDetection, req)) as { intent: string };
    expect(out.intent).toBe("refund");
  });

  test("intent: the engine declines when nothing supports any label", async () => {
    expect(await runLocal(intentDetection, { text: "Lovely weather.", intent_types: ["refund", "shipping"] })).toBeNull();
  });

  test("the alias /v1/ai/intent runs intent detection", () => {
    expect(intentDetection.aliases).toContain("/v1/ai/intent");
  });

  test("json-extractor: the caller's schema is the result schema", async () => {
    const req = {
      text: "Invoice INV-7 total $40 due May 1, 2026",
      schema: { invoice_number: "string", total: "number", due_date: "date" },
    };
    const schema = schemaFor(jsonExtractor, req);
    const out = await runLocal(jsonExtractor, req);
    expect(out).toEqual({ invoice_number: "INV-7", total: 40, due_date: "2026-05-01" });
    expect(problems(schema, out)).toEqual([]);
    expect(Value.Check(schema, { ...(out as object), extra: 1 })).toBe(false);
  });

  test("json-extractor: a string field it cannot find is null; a field of another type it cannot recognize goes to a model", async () => {
    expect(await runLocal(jsonExtractor, { text: "Great product!", schema: { sentiment: "string" } })).toEqual({
      sentiment: null,
    });
    expect(await runLocal(jsonExtractor, { text: "Great product!", schema: { recommended: "boolean" } })).toBeNull();
    expect(() => jsonExtractor.normalize?.({ text: "x", schema: "" })).toThrow();
  });

  test("spam-detection: optional parts appear exactly when asked", async () => {
    const plain = (await runLocal(spamDetection, { text: "hello there" })) as Record<string, unknown>;
    expect(Object.keys(plain)).not.toContain("toxicity");
    const req = { text: "You idiot, mail bob@x.com", detect_toxicity: true, detect_pii: true, return_sanitized: true };
    const full = (await runLocal(spamDetection, req)) as Record<string, unknown>;
    expect(Object.keys(full)).toEqual(expect.arrayContaining(["toxicity", "pii", "sanitized_text"]));
    expect(problems(schemaFor(spamDetection, req), full)).toEqual([]);
  });

  test("comment-moderate: a non-English comment is left to a model", async () => {
    expect(await runLocal(commentModerate, { comment: "Du bist ein Idiot", language: "de" })).toBeNull();
  });

  test("grammar-fix: a tone change is left to a model; explanations only when asked", async () => {
    expect(await runLocal(grammarFix, { text: "I has a apple.", tone: "formal" })).toBeNull();
    const bare = (await runLocal(grammarFix, { text: "I has a apple." })) as { corrections: Record<string, unknown>[] };
    expect(bare.corrections[0].explanation).toBeUndefined();
    const req = { text: "I has a apple.", return_explanations: true };
    const explained = await runLocal(grammarFix, req);
    expect(problems(schemaFor(grammarFix, req), explained)).toEqual([]);
  }, 30_000);

  test("text-summarize: custom instructions are left to a model; extract_schema adds extracted", async () => {
    expect(await runLocal(textSummarize, { text: "A. B. C.", custom_instructions: "rhyme" })).toBeNull();
    const req = {
      text: "Please call Ana at +1 415 555 0100 tomorrow. The server is down. We lose sales.",
      extract_schema: { phone: "string" },
    };
    const out = (await runLocal(textSummarize, req)) as { extracted?: Record<string, unknown> };
    expect(out.extracted).toEqual({ phone: "+1 415 555 0100" });
    expect(problems(schemaFor(textSummarize, req), out)).toEqual([]);
  });

  test("search-query-parse: caller facets constrain the filters", async () => {
    const req = {
      query: "leather boots for women under $120",
      schema: { gender: ["men", "women"], category: ["boots", "sandals"] },
    };
    const out = (await runLocal(searchQueryParse, req)) as { filters: Record<string, unknown> };
    expect(out.filters).toMatchObject({ gender: "women", category: "boots", price: { max: 120, currency: "USD" } });
    expect(problems(schemaFor(searchQueryParse, req), out)).toEqual([]);
    expect(await runLocal(searchQueryParse, { query: "boots", schema: { mood: "string" } })).toBeNull();
  });
});
