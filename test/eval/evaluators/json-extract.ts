/**
 * Schema-driven JSON extraction: share of requested fields filled with exactly the expected
 * value, and fields the engine declared unresolved (left to a model). json-extract.jsonl guided
 * the field recognizers; json-extract-holdout.jsonl was written afterwards (first run: 18/22
 * fields; a name running into the next line and amounts for plain numeric fields were fixed).
 */
import { join } from "node:path";
import { extractJson, parseSchemaSpec } from "../../../src/offline-engine/json-extract";
import { readJsonl } from "../metrics";
import { type EvalReport, type Evaluator, tuningAndHeldOut } from "../registry";

export interface JsonExtractItem {
  text: string;
  schema: Record<string, unknown>;
  expected: Record<string, unknown>;
}

export const JSON_EXTRACT_TARGET = 0.8;
export const JSON_EXTRACT_REFERENCE_DATE = new Date("2026-11-21T12:00:00Z");

export function loadJsonExtractFixture(file = "json-extract.jsonl"): JsonExtractItem[] {
  return readJsonl(join(import.meta.dir, "../../fixtures/eval", file), (x) => x as JsonExtractItem);
}

export function evaluateJsonExtract(items: JsonExtractItem[], capability = "json-extract"): EvalReport {
  let right = 0;
  let total = 0;
  let unresolved = 0;
  const errors: string[] = [];
  for (const it of items) {
    const r = extractJson(it.text, parseSchemaSpec(it.schema) ?? [], { referenceDate: JSON_EXTRACT_REFERENCE_DATE });
    unresolved += r.unresolved.length;
    for (const [k, v] of Object.entries(it.expected)) {
      total++;
      if (JSON.stringify(r.value[k]) === JSON.stringify(v)) right++;
      else
        errors.push(
          `${k}: ${JSON.stringify(r.value[k])} (want ${JSON.stringify(v)})${r.unresolved.includes(k) ? " unresolved" : ""}: ${it.text.slice(0, 60)}`,
        );
    }
  }
  return {
    capability,
    items: items.length,
    metrics: [
      { name: "field accuracy", value: right / total, target: JSON_EXTRACT_TARGET },
      { name: "fields unresolved", value: unresolved / total },
    ],
    errors,
  };
}

const evaluator: Evaluator = {
  name: "json-extract",
  run: () => {
    const dev = evaluateJsonExtract(loadJsonExtractFixture());
    const holdout = evaluateJsonExtract(loadJsonExtractFixture("json-extract-holdout.jsonl"));
    return tuningAndHeldOut("json-extractor fields", dev, holdout);
  },
};
export default evaluator;
