import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import commentModerate from "../../src/functions/comment-moderate";
import type { AnyFunctionDef } from "../../src/functions/define";
import grammarFix from "../../src/functions/grammar-fix";
import intentDetection from "../../src/functions/intent-detection";
import jsonExtractor from "../../src/functions/json-extractor";
import searchQueryParse from "../../src/functions/search-query-parse";
import spamDetection from "../../src/functions/spam-detection";
import textSummarize from "../../src/functions/text-summarize";
import { startGateway, type TestGateway } from "../helpers/gateway";

/** The analysis functions on a gateway with no model configured: the offline engine answers. */
let gw: TestGateway;
let key: string;

beforeAll(async () => {
  gw = await startGateway();
  key = gw.newKey({ credits: 1000 }).key;
});
afterAll(() => gw.close());

const call = (path: string, body: unknown) => gw.post(path, body, { "x-api-key": key });

const DEFS: AnyFunctionDef[] = [
  spamDetection,
  commentModerate,
  intentDetection,
  textSummarize,
  grammarFix,
  jsonExtractor,
  searchQueryParse,
];

describe("analysis functions answer offline", () => {
  test.each(DEFS.map((d) => [d.name, d] as const))(
    "%s: the example request is answered by the local engine for 1 credit",
    async (_n, def) => {
      const res = await call(def.path, def.example.request);
      expect({ status: res.status, provider: res.json.meta?.provider, credits: res.json.meta?.credits_deducted }).toEqual({
        status: 200,
        provider: "local",
        credits: 1,
      });
      expect(typeof res.json.data.result).toBe("object");
    },
  );

  test("the /v1/ai/intent alias answers like intent detection", async () => {
    const body = { text: "Please cancel my subscription today" };
    const [a, b] = await Promise.all([call("/v1/ai/intent", body), call("/api/v1/ai/intent-detection", body)]);
    expect(a.status).toBe(200);
    expect(a.json.data.result.intent).toBe("cancel");
    expect(a.json.data.result).toEqual(b.json.data.result);
  });

  test("json-extractor returns exactly the caller's fields", async () => {
    const res = await call("/api/v1/ai/json-extractor", {
      text: "Order ORD-55120 for $89.99 was placed by Lisa Moreno on 2 February 2026.",
      schema: { order_id: "string", total: "number", customer_name: "string", order_date: "date" },
    });
    expect(res.json.data.result).toEqual({
      order_id: "ORD-55120",
      total: 89.99,
      customer_name: "Lisa Moreno",
      order_date: "2026-02-02",
    });
  });

  test("an invalid json-extractor schema is a 400 naming schema", async () => {
    const res = await call("/api/v1/ai/json-extractor", { text: "x", schema: "" });
    expect({ status: res.status, param: res.json.error?.param }).toEqual({ status: 400, param: "schema" });
  });

  test("a request beyond the engine is a 503 naming what to configure, not a guess", async () => {
    const res = await call("/api/v1/ai/intent-detection", {
      text: "Lovely weather today.",
      intent_types: ["refund", "shipping"],
    });
    expect(res.status).toBe(503);
    expect(res.json.error.code).toBe("no_provider");
    expect(res.json.meta.credits_deducted).toBe(0);
  });

  test("grammar-fix offsets point into the text sent", async () => {
    const text = "Their going to the store tomorow.";
    const res = await call("/api/v1/ai/grammar-fix", { text, dialect: "british", return_explanations: true });
    const r = res.json.data.result as {
      corrected_text: string;
      corrections: { original: string; start: number; end: number; explanation: string }[];
    };
    expect(r.corrected_text).toBe("They're going to the store tomorrow.");
    for (const c of r.corrections) {
      expect(text.slice(c.start, c.end)).toBe(c.original);
      expect(c.explanation.length).toBeGreaterThan(0);
    }
  });
});
