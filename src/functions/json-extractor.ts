import { type Static, type TProperties, type TSchema, Type } from "@sinclair/typebox";
import { defaultExtraction, extractJson, type FieldSpec, parseSchemaSpec } from "../offline-engine/json-extract";
import { defineFunction } from "./define";
import { decline, noteLowConfidence, noteNotFound } from "./offline-reach";
import { CustomInstructions, checkSchemaParam, MAX_SCHEMA_FIELDS, Model, Result, Strings, Text } from "./schemas";

const request = Type.Object({
  text: Text("the text to extract data from"),
  schema: Type.Optional(
    Type.Union(
      [
        Type.String({
          minLength: 1,
          maxLength: 20000,
          description: "a JSON Schema as JSON text, or a comma-separated list of field names",
        }),
        Type.Record(Type.String(), Type.Unknown(), {
          maxProperties: MAX_SCHEMA_FIELDS,
          description:
            'a JSON Schema object, or a map field name -> type ("string", "number", "date", "string[]"...) or description',
        }),
      ],
      { description: "the fields to extract; default: every entity found, grouped by kind" },
    ),
  ),
  custom_instructions: CustomInstructions(),
  model: Model(),
});
type Req = Static<typeof request>;

const Dated = Type.Object(
  { text: Type.String(), date: Type.String({ description: "ISO date, or start/end for a range" }) },
  { additionalProperties: false },
);
const Amount = Type.Object(
  {
    text: Type.String(),
    amount: Type.Number(),
    currency: Type.Union([Type.String({ description: "ISO 4217 code" }), Type.Null()]),
  },
  { additionalProperties: false },
);

/** Entities listed per kind (a long text can hold thousands of dates or numbers). */
const MAX_PER_KIND = 100;

/** The first `n` of every list: more would fail the result schema and answer 502. */
function firstOfEach<T extends object>(groups: T, n: number): T {
  return Object.fromEntries(Object.entries(groups).map(([k, v]) => [k, (v as unknown[]).slice(0, n)])) as T;
}

/** Without a schema: every entity found, grouped by kind (the first MAX_PER_KIND of each, in text order). */
const result = Result(
  {
    people: Strings("person names", 100),
    organizations: Strings("companies and institutions", 100),
    emails: Strings("email addresses", 100),
    phones: Strings("phone numbers, digits with a leading + when given", 100),
    urls: Strings("links and domains", 100),
    dates: Type.Array(Dated, { maxItems: MAX_PER_KIND }),
    amounts: Type.Array(Amount, { maxItems: MAX_PER_KIND }),
    percentages: Type.Array(Type.Number(), { maxItems: MAX_PER_KIND }),
    identifiers: Strings("order, invoice, ticket and tracking numbers and other codes", 100),
    numbers: Type.Array(Type.Number(), { maxItems: 100 }),
  },
  "entities found in the text, grouped by kind",
);

function typeOf(f: FieldSpec): TSchema {
  const description = f.description;
  if (f.enum?.length)
    return Type.Union(
      f.enum.map((v) => Type.Literal(v)),
      { description },
    );
  switch (f.type) {
    case "number":
      return Type.Number({ description });
    case "integer":
      return Type.Integer({ description });
    case "boolean":
      return Type.Boolean({ description });
    case "date":
      return Type.String({ pattern: "^\\d{4}-\\d{2}-\\d{2}", description: description ?? "ISO 8601 date" });
    case "array":
      return Type.Array(f.items ? typeOf(f.items) : Type.String(), { description });
    case "object":
      return f.properties?.length
        ? objectOf(f.properties, description)
        : Type.Record(Type.String(), Type.Unknown(), { description });
    default:
      return Type.String({ description });
  }
}

/** Every field present; a value the text does not give is null (arrays are empty instead). */
function objectOf(fields: readonly FieldSpec[], description?: string) {
  const props: TProperties = {};
  for (const f of fields)
    props[f.name] = f.type === "array" || f.type === "object" ? typeOf(f) : Type.Union([typeOf(f), Type.Null()]);
  return Type.Object(props, { additionalProperties: false, description });
}

function fieldsOf(req: Req): FieldSpec[] | null {
  return req.schema === undefined ? null : parseSchemaSpec(req.schema);
}

export default defineFunction({
  name: "json-extractor",
  summary: "Extract structured JSON from text: the fields of a given schema, or every entity by kind",
  description:
    'With `schema` (e.g. {"invoice_number": "string", "total": "number", "due_date": "date"} or a JSON Schema) the result is an object with exactly those fields, null when the text does not give one.',
  tags: ["extraction"],
  request,
  result,
  normalize: checkSchemaParam<Req>("schema", "a JSON Schema, a field name -> type map, or a comma-separated list of field names"),
  resultSchemaFor: (req) => {
    const fields = fieldsOf(req);
    return fields ? objectOf(fields, "the fields of the caller's schema; null when the text does not give them") : result;
  },
  role: "You extract structured data from text, exactly as it is written there.",
  brief: (req) => {
    const fields = fieldsOf(req);
    return {
      rules: [
        fields
          ? "Fill every field of the schema; use null (or an empty list) when the text does not give it. Never invent values."
          : "List every entity of each kind found in the text.",
        "Dates as ISO 8601 (YYYY-MM-DD); amounts as numbers with the ISO 4217 currency code when stated.",
      ],
      instructions: req.custom_instructions,
      inputs: [["text", req.text]],
      result: fields ? objectOf(fields) : result,
    };
  },
  local: (req) => {
    // free-form instructions are beyond pattern extraction
    if (req.custom_instructions?.trim())
      return decline(req, "custom_instructions", "free-form instructions need a model; the offline engine extracts by pattern");
    const fields = fieldsOf(req);
    if (!fields) return firstOfEach(defaultExtraction(req.text), MAX_PER_KIND);
    const ex = extractJson(req.text, fields);
    // a field with no recognizer would be a guess (null claims the text does not say): ask a model
    if (ex.unresolved.length)
      return decline(req, "schema", `no offline recognizer for ${ex.unresolved.map((f) => `"${f}"`).join(", ")}`);
    noteNotFound(req, ex.missing);
    // null because the text's value cannot be read with confidence ("1.234", "03/04/2026" with no cue)
    if (ex.doubtful.length) noteLowConfidence(req, ex.doubtful);
    // the result schema of this request is the caller's; the static type is the default shape's
    return ex.value as unknown as Static<typeof result>;
  },
  // Recognizers are exact on emails, dates and amounts but cannot read meaning the way a model does.
  preferLocal: false,
  example: {
    request: {
      text: "Invoice INV-2024-0042 from Acme Corp. Bill to: Jane Doe (jane.doe@example.com). Due date: April 2, 2026. Total: $1,249.50",
    },
    result: {
      people: ["Jane Doe"],
      organizations: ["Acme Corp"],
      emails: ["jane.doe@example.com"],
      phones: [],
      urls: [],
      dates: [{ text: "April 2, 2026", date: "2026-04-02" }],
      amounts: [{ text: "$1,249.50", amount: 1249.5, currency: "USD" }],
      percentages: [],
      identifiers: ["INV-2024-0042"],
      numbers: [],
    },
  },
});
