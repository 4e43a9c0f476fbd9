/**
 * json-extractor on texts in other languages and locales: European and Swiss number shapes
 * ("1.234,56", "1 234,56", "1'234.56", "12,50 €"), day-first and month-first dates, and label words
 * in German, French, Spanish, Italian, Dutch and Portuguese ("Rechnung Nr.", "facture n°").
 * json-extract-locale-dev.jsonl (invoices, receipts, orders, bookings; written by hand on
 * 2026-12-06) was tuned on and --errors lists its misses. json-extract-locale-blind.jsonl (emails
 * and chat messages) was written and committed first, before any change, and is run only with
 * JSON_EXTRACT_BLIND=1: once before the change, once at the end; its misses are never printed.
 * Figures: field accuracy (exactly the expected value, null included) and wrong values (a
 * non-null value that is not the expected one: the engine faking a result), both over all fields.
 */
import { extractJson, parseSchemaSpec } from "../../../src/offline-engine/json-extract";
import type { EvalReport, Evaluator } from "../registry";
import { JSON_EXTRACT_REFERENCE_DATE, type JsonExtractItem, loadJsonExtractFixture } from "./json-extract";

export const JSON_EXTRACT_LOCALE_TARGET = 0.8;

export function evaluateJsonExtractLocale(items: JsonExtractItem[], part: string, printErrors: boolean): EvalReport {
  let right = 0;
  let wrong = 0;
  let total = 0;
  const errors: string[] = [];
  for (const it of items) {
    const r = extractJson(it.text, parseSchemaSpec(it.schema) ?? [], { referenceDate: JSON_EXTRACT_REFERENCE_DATE });
    for (const [k, want] of Object.entries(it.expected)) {
      total++;
      const got = r.value[k];
      if (JSON.stringify(got) === JSON.stringify(want)) right++;
      else {
        if (got !== null && got !== undefined) wrong++;
        if (printErrors)
          errors.push(`${part} ${k}: ${JSON.stringify(got)} (want ${JSON.stringify(want)}): ${it.text.slice(0, 70)}`);
      }
    }
  }
  return {
    capability: part,
    items: items.length,
    metrics: [
      { name: `field accuracy, ${part}`, value: right / total, target: JSON_EXTRACT_LOCALE_TARGET },
      { name: `wrong values, ${part}`, value: wrong / total },
    ],
    errors,
  };
}

const evaluator: Evaluator = {
  name: "json-extract-locale",
  run: () => {
    const parts = [evaluateJsonExtractLocale(loadJsonExtractFixture("json-extract-locale-dev.jsonl"), "dev", true)];
    if (process.env.JSON_EXTRACT_BLIND === "1")
      parts.push(evaluateJsonExtractLocale(loadJsonExtractFixture("json-extract-locale-blind.jsonl"), "blind", false));
    return {
      capability: `json-extractor fields in other languages and locales (dev${parts.length > 1 ? " + blind" : ""})`,
      items: parts.reduce((s, p) => s + p.items, 0),
      metrics: parts.flatMap((p) => p.metrics),
      errors: parts.flatMap((p) => p.errors ?? []),
    };
  },
};
export default evaluator;
