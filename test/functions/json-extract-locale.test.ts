import { describe, expect, test } from "bun:test";
import { offlineGatewayFor } from "../helpers/gateway";

/**
 * json-extractor on European numbers and dates over HTTP, on a gateway with no model configured
 * (the walkthrough of 2026-12-06: "1.234,56 EUR" answered 234.56, "03.04.2026" month-first). Texts
 * written for this test.
 */
const call = offlineGatewayFor(10_000);
const show = (r: { status: number; json: unknown }) => `${r.status} ${JSON.stringify(r.json).slice(0, 800)}`;

describe("json-extractor: numbers and dates of the text's locale", () => {
  test("a German invoice is read whole and nothing is flagged", async () => {
    const r = await call("/api/v1/ai/json-extractor", {
      text: "Rechnung Nr. 5088 vom 09.02.2026. Endbetrag: 2.718,28 EUR. Fällig am 23.02.2026.",
      schema: { invoice_number: "string", total: "number", issue_date: "string", due_date: "string" },
    });
    expect(r.status, show(r)).toBe(200);
    expect(r.json.data.result, show(r)).toEqual({
      invoice_number: "5088",
      total: 2718.28,
      issue_date: "2026-02-09",
      due_date: "2026-02-23",
    });
    expect(r.json.meta.low_confidence, show(r)).toBeUndefined();
  });

  test("a number and a date the text does not settle are null and named in meta.low_confidence", async () => {
    const r = await call("/api/v1/ai/json-extractor", {
      text: "Ref 7 — Amt: 3.333 — Date: 07/08/2026",
      schema: { amt: "number", date: "string" },
    });
    expect(r.status, show(r)).toBe(200);
    expect(r.json.data.result, show(r)).toEqual({ amt: null, date: null });
    expect(r.json.meta.low_confidence, show(r)).toEqual(["amt", "date"]);
  });
});
