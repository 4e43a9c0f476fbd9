/**
 * Schema pieces shared by the function catalog. Request pieces never set `additionalProperties: false`
 * (the spec lets clients send unknown fields, `api_key` among them); result objects always do, so a
 * provider's extra keys are cleaned off before the answer reaches a client.
 */
import { type TLiteral, type TObject, type TProperties, type TSchema, type TString, type TUnion, Type } from "@sinclair/typebox";
import { invalidRequest } from "../errors";
import { type FieldSpec, parseSchemaSpec, SCHEMA_LIMITS, SchemaSpecTooLarge } from "../offline-engine/json-extract";

// ---- request pieces ----

/** A required free text (email, ticket, review...); its length is capped globally by `limits.max_text_chars`. */
export const Text = (description: string) => Type.String({ minLength: 1, description });

/** A short free-text option (tone, platform...); the cap stops a misplaced document, not a real value. */
export const Short = (description: string, maxLength = 200) => Type.String({ minLength: 1, maxLength, description });

export const Model = () =>
  Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description: "model to use, or provider/model to pick both; default: the route's model for this function",
    }),
  );

export const Language = (description: string) => Type.Optional(Short(description, 64));

/** The language the input is written in (prompt.ts writtenIn). */
export const InputLanguage = (input: string) => Language(`language of the ${input}; detected when absent`);

/** The language to answer in (prompt.ts languageRule). */
export const ReplyLanguage = (input: string) => Language(`language to reply in; default: the ${input}'s language`);

export const Tone = (examples: string, what = "tone of the reply") => Type.Optional(Short(`${what}, e.g. ${examples}`, 100));

/** Where a comment was posted; a reply or a verdict matches the platform's norms. */
export const Platform = (examples: string) => Type.Optional(Short(`where it was posted: ${examples}`, 64));

export const BusinessName = () => Type.Optional(Short("the business replying"));

/** RFC 5322 caps a header line at 998 characters, so no real subject is longer. */
export const Subject = () => Type.Optional(Short("subject line of the message", 998));

export const CustomInstructions = (description = "extra instructions for the model, applied on top of the defaults") =>
  Type.Optional(Type.String({ maxLength: 10000, description }));

/** Background the caller gives (business, product, customer...): free text, any length. */
export const Context = (description: string) => Type.Optional(Type.String({ description }));

/** A list of labels that constrains one output field to these values. */
export const AllowedList = (description: string) =>
  Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
      minItems: 1,
      maxItems: 100,
      uniqueItems: true,
      description,
    }),
  );

/** A fact or policy to ground a reply: plain text, or a titled snippet. */
export const Fact = Type.Union([
  Type.String({ minLength: 1 }),
  Type.Object({ title: Type.Optional(Type.String()), content: Type.String({ minLength: 1 }) }),
]);

export const KnowledgeBase = () =>
  Type.Optional(
    Type.Array(Fact, { maxItems: 200, description: "facts and policies the answer must rely on and never contradict" }),
  );

/** An earlier message of the thread: plain text, or a turn with who wrote it. */
export const PreviousMessage = Type.Union([
  Type.String({ minLength: 1 }),
  Type.Object({
    role: Type.Optional(Type.String({ maxLength: 40, description: "who wrote it: customer, agent, user, assistant..." })),
    content: Type.String({ minLength: 1 }),
  }),
]);

export const PreviousMessages = () =>
  Type.Optional(Type.Array(PreviousMessage, { maxItems: 200, description: "earlier messages of the thread, oldest first" }));

export const ChatTurn = Type.Object({
  role: Type.Union([Type.Literal("user"), Type.Literal("assistant"), Type.Literal("system")]),
  content: Type.String({ description: "the turn text" }),
});

/** `reviews` is a text in the spec; a list of review texts is accepted too. */
export const Reviews = () =>
  Type.Union(
    [
      Text("the reviews, one per line or separated by blank lines"),
      Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 1000, description: "one review per item" }),
    ],
    { description: "the reviews: one text, or a list of review texts" },
  );

export const Rating = () =>
  Type.Optional(
    Type.Union([Type.Number({ minimum: 0, maximum: 10 }), Type.String({ minLength: 1, maxLength: 20 })], {
      description: 'star rating the reviewer gave: a number (usually 1 to 5) or a text such as "4/5"',
    }),
  );

/**
 * Fields the caller wants pulled out of the text: name -> type ("string", "number", "integer",
 * "boolean", "date", "string[]") or a description; an object value is taken as a JSON Schema.
 */
export const ExtractSchema = () =>
  Type.Optional(
    Type.Record(
      Type.String({ pattern: "^[A-Za-z_][A-Za-z0-9_.-]{0,63}$" }), // A Record, not Object({}), keeps the spec's keys through the pipeline's Value.Clean.
      Type.Union([Type.String(), Type.Record(Type.String(), Type.Unknown())]),
      {
        maxProperties: 50,
        additionalProperties: false,
        description:
          'fields to extract: name -> type ("string", "number", "integer", "boolean", "date", "string[]") or a description',
      },
    ),
  );

/**
 * The fields of a caller's schema (`param` is the request field holding it); null when it is no
 * field specification. A schema past SCHEMA_LIMITS (too deep, too many fields, a name or a value
 * too long) is a 400 naming the part that is, from a parse that stopped there: every function
 * that takes a schema calls this from `normalize`, before credits are held and anything else runs.
 */
export function schemaFields(schema: unknown, param: string): FieldSpec[] | null {
  try {
    return parseSchemaSpec(schema);
  } catch (err) {
    if (!(err instanceof SchemaSpecTooLarge)) throw err;
    const at = err.path ? `${param}.${err.path}` : param;
    throw invalidRequest(`${at} ${err.message}`, at);
  }
}

/**
 * A `normalize` that checks the caller's schema in `param` (schemaFields) before anything else runs;
 * with `shapes`, a schema that names no field is a 400 saying what it must be.
 */
export function checkSchemaParam<R extends object>(param: keyof R & string, shapes?: string): (req: R) => R {
  return (req) => {
    const schema: unknown = req[param];
    if (schema === undefined) return req;
    if (!schemaFields(schema, param)?.length && shapes !== undefined) throw invalidRequest(`${param} must be ${shapes}`, param);
    return req;
  };
}

/** Fields a caller's schema may name at its top level (the rest of SCHEMA_LIMITS is checked by schemaFields). */
export const MAX_SCHEMA_FIELDS = SCHEMA_LIMITS.fields;

/**
 * A field `prepare` sets from stored resources (a knowledge base's revision, a chatbot's passages);
 * a client sending it is overwritten, so it can never steer the answer.
 */
export function Internal<S extends TSchema>(schema: S, what: string) {
  const described: S = { ...schema, description: `set by the gateway (${what}); ignored when sent` };
  return Type.Optional(described);
}

// ---- result pieces ----

/** An object result: closed, so a provider's extra keys are removed or rejected. */
export const Result = <P extends TProperties>(properties: P, description: string): TObject<P> =>
  Type.Object(properties, { additionalProperties: false, description });

export const Enum = <const V extends string>(values: readonly V[], description: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    { description },
  );

export const PRIORITIES = ["low", "medium", "high", "critical"] as const;
export const Priority = (description = "how soon it needs handling") => Enum(PRIORITIES, description);

export const SENTIMENTS = ["positive", "neutral", "negative", "mixed"] as const;
export const Sentiment = (description = "overall sentiment") => Enum(SENTIMENTS, description);

/** Email and ticket tone of the writer; the spec names frustrated and angry, its sample uses negative. */
export const WRITER_SENTIMENTS = ["positive", "neutral", "negative", "frustrated", "angry"] as const;

export const Confidence = () => Type.Number({ minimum: 0, maximum: 1, description: "confidence from 0 to 1" });

export const LanguageCode = () =>
  // No length bound: strict structured output cannot carry maxLength, so a model is never told of one.
  Type.String({ minLength: 1, description: "language as an ISO 639-1 code (en, de, pt-BR...); und when unknown" });

export const Entities = () =>
  Type.Record(Type.String(), Type.String(), {
    description: "named things found in the text: name (order_id, product, person...) -> value as written",
  });

export const Strings = (description: string, maxItems = 20) =>
  Type.Array(Type.String({ minLength: 1 }), { maxItems, description });

/**
 * A string field limited to `allowed` when the caller gave a list, otherwise free text; `examples`
 * ("billing, support, sales") guide a model only when there is no list to pick from.
 */
export function oneOf(
  allowed: readonly string[] | undefined,
  description: string,
  examples?: string,
): TString | TUnion<TLiteral<string>[]> {
  if (!allowed || allowed.length === 0)
    return Type.String({ minLength: 1, description: examples ? `${description}, e.g. ${examples}` : description });
  return Type.Union(
    allowed.map((v) => Type.Literal(v)),
    { description: `${description}; one of the caller's allowed values` },
  );
}

type ExtractSpec = Record<string, string | Record<string, unknown>>;

const EXTRACT_TYPES: Record<string, (description?: string) => TSchema> = {
  string: (description) => Type.String({ description }),
  text: (description) => Type.String({ description }),
  number: (description) => Type.Number({ description }),
  integer: (description) => Type.Integer({ description }),
  boolean: (description) => Type.Boolean({ description }),
  date: (description) => Type.String({ pattern: "^\\d{4}-\\d{2}-\\d{2}", description: description ?? "ISO 8601 date" }),
  "string[]": (description) => Type.Array(Type.String(), { description }),
  "number[]": (description) => Type.Array(Type.Number(), { description }),
};

function extractField(spec: string | Record<string, unknown>): TSchema {
  if (typeof spec === "string") {
    const known = EXTRACT_TYPES[spec.trim().toLowerCase()];
    return known ? known() : Type.String({ description: spec });
  }
  const description = typeof spec.description === "string" ? spec.description : undefined;
  if (Array.isArray(spec.enum) && spec.enum.length > 0 && spec.enum.every((v) => typeof v === "string")) {
    return Type.Union(
      (spec.enum as string[]).map((v) => Type.Literal(v)),
      { description },
    );
  }
  const known = typeof spec.type === "string" ? EXTRACT_TYPES[spec.type] : undefined;
  // Nested JSON Schemas are taken on trust: the shape is the caller's, only its presence is checked.
  return known ? known(description) : Type.Unknown({ description });
}

/** The `extracted` object for a caller's extract_schema: every field present, null when the text does not say. */
export function extractedResult(spec: ExtractSpec): TObject {
  const props: TProperties = {};
  for (const [name, fieldSpec] of Object.entries(spec)) props[name] = Type.Union([extractField(fieldSpec), Type.Null()]);
  return Type.Object(props, {
    additionalProperties: false,
    description: "the fields asked for in extract_schema; null when absent",
  });
}

/** What support tickets carry besides their text (ticket-analyze, -reply, -workflow). */
export const ticketContextFields = () => ({
  subject: Subject(),
  customer_context: Context("who the customer is: plan, history, account state"),
  product_context: Context("the product or service the ticket is about"),
  business_context: Context("the business and its support policies"),
  previous_messages: PreviousMessages(),
});
