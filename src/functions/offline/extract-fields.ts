/**
 * Offline answer to a caller's extract_schema where the result must hold every field (the
 * `extracted` object of email-classification): json-extract's field filling (local/json-extract.ts,
 * the one implementation of type conversion, enum matching and entity choice, shared with
 * json-extractor and text-summarize), with each field the text does not state set to null, as the
 * result schema says ("null when absent"), also list fields that found nothing and fields no
 * recognizer covers.
 */
import { extractJson, parseSchemaSpec } from "../../offline-engine/json-extract";

type FieldSpec = string | Record<string, unknown>;

/** Every field of `spec`, with the value the text states or null. */
export function extractFields(text: string, spec: Record<string, FieldSpec>): Record<string, unknown> {
  const fields = parseSchemaSpec(spec) ?? [];
  const { value, missing } = extractJson(text, fields);
  const absent = new Set(missing);
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(spec)) out[name] = absent.has(name) ? null : (value[name] ?? null);
  return out;
}
