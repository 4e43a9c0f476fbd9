/**
 * Offline answer to a caller's extract_schema: each named field is filled from the entity
 * extractor (the intent engine decides which entity a name asks for) and converted to the type
 * the field declares; anything the text does not state, or that cannot be converted, is null.
 */
import { type Entity, extractEntities } from "../../local/extract";
import { intentEntities } from "../../local/intent";

type FieldSpec = string | Record<string, unknown>;

function declaredType(spec: FieldSpec): string | undefined {
  if (typeof spec === "string") return spec.trim().toLowerCase();
  return typeof spec.type === "string" ? spec.type : undefined;
}

function describe(spec: FieldSpec): string {
  if (typeof spec === "string") return spec;
  return [spec.type, spec.description].filter((x) => typeof x === "string").join(" ");
}

function enumValue(text: string, spec: FieldSpec): string | null {
  if (typeof spec === "string" || !Array.isArray(spec.enum)) return null;
  const lower = text.toLowerCase();
  return (spec.enum as unknown[]).find((v): v is string => typeof v === "string" && lower.includes(v.toLowerCase())) ?? null;
}

function convert(found: string, entity: Entity | undefined, type: string | undefined): unknown {
  switch (type) {
    case "number":
    case "integer": {
      const n = typeof entity?.value === "number" ? entity.value : Number(found.replace(/[^\d.-]/g, ""));
      if (!Number.isFinite(n)) return null;
      return type === "integer" ? (Number.isInteger(n) ? n : null) : n;
    }
    case "date": {
      const iso = typeof entity?.value === "string" ? entity.value.slice(0, 10) : found;
      return /^\d{4}-\d{2}-\d{2}$/.test(iso) ? iso : null;
    }
    case "boolean":
      return null;
    case "string[]":
      return [found];
    case "number[]":
      return null;
    default:
      return found;
  }
}

/** Every field of `spec`, with the value the text states or null. */
export function extractFields(text: string, spec: Record<string, FieldSpec>): Record<string, unknown> {
  const entities = extractEntities(text);
  const names: Record<string, string> = {};
  for (const [name, field] of Object.entries(spec)) names[name] = describe(field);
  const found = intentEntities(text, names, entities);
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(spec)) {
    if (typeof field !== "string" && Array.isArray(field.enum)) {
      out[name] = enumValue(text, field);
      continue;
    }
    const value = found[name];
    out[name] =
      value === undefined
        ? null
        : convert(
            value,
            entities.find((e) => e.text === value),
            declaredType(field),
          );
  }
  return out;
}
