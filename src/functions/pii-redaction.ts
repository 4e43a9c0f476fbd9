import { type Static, Type } from "@sinclair/typebox";
import { tickCpuBudget } from "../offline-engine/budget";
import { accountHashKey, applyRedactions, PII_HASH_SECRET, PII_TYPES, type PiiType, redactPii } from "../offline-engine/pii";
import { defineFunction } from "./define";
import { Confidence, Enum, Model, Result, Text } from "./schemas";

/** Request names (the spec's plural forms) -> entity types of results. */
const REDACT_TYPES = {
  names: "name",
  emails: "email",
  phone_numbers: "phone_number",
  ssn: "ssn",
  credit_cards: "credit_card",
  ip_addresses: "ip_address",
  dates_of_birth: "date_of_birth",
  addresses: "address",
} as const satisfies Record<string, PiiType>;
type RedactType = keyof typeof REDACT_TYPES;
const REDACT_TYPE_NAMES = Object.keys(REDACT_TYPES) as RedactType[];
const STYLES = ["placeholder", "hash", "mask"] as const;

const request = Type.Object({
  text: Text("the text to redact"),
  redact_types: Type.Optional(
    Type.Array(Enum(REDACT_TYPE_NAMES, "a kind of personal data"), {
      uniqueItems: true,
      maxItems: REDACT_TYPE_NAMES.length,
      description: "kinds of personal data to redact; default: all of them",
    }),
  ),
  redaction_style: Type.Optional(
    Enum(
      STYLES,
      "placeholder: a category label in square brackets ([EMAIL]); mask: one asterisk per character; hash: HMAC-SHA-256 hex of the value under a key of the account (same value, same token within one account; not reversible without the gateway's secret). Default placeholder",
    ),
  ),
  return_entities: Type.Optional(Type.Boolean({ description: "also list the entities found; default false" })),
  model: Model(),
});
type Req = Static<typeof request>;

const PiiEntity = Type.Object(
  {
    type: Enum(PII_TYPES, "kind of personal data"),
    start: Type.Integer({ minimum: 0, description: "start offset in text, in UTF-16 code units (JavaScript string index)" }),
    end: Type.Integer({ minimum: 0, description: "end offset (exclusive), same units; text.slice(start, end) is the entity" }),
    text: Type.String({ minLength: 1, description: "the entity as written in the original text" }),
    score: Confidence(),
  },
  { additionalProperties: false },
);

const Counts = Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
  description: "number of redacted entities per type (only types that occur)",
});

const base = {
  redacted_text: Type.String({ description: "the text with every selected entity replaced" }),
  redaction_count: Type.Integer({ minimum: 0, description: "how many entities were replaced" }),
  counts: Counts,
};
const DESCRIPTION = "the redacted text, counts per type and, when asked, the entities with their offsets";
const result = Result(
  { ...base, entities: Type.Optional(Type.Array(PiiEntity, { description: "present when return_entities is true" })) },
  DESCRIPTION,
);

// The two result schemas a request can ask for, built once (the gateway asks for one per request).
const RESULT_WITH_ENTITIES = Result(
  {
    ...base,
    entities: Type.Array(PiiEntity, { description: "every redacted entity, in text order, offsets into the original text" }),
  },
  DESCRIPTION,
);
const RESULT_WITHOUT_ENTITIES = Result(base, DESCRIPTION);

/** Hash style needs the entities even when they are not returned: the gateway computes the tokens from them. */
function resultFor(req: Req) {
  if (req.return_entities) return RESULT_WITH_ENTITIES;
  return req.redaction_style === "hash" ? result : RESULT_WITHOUT_ENTITIES;
}

/**
 * The account's key for hash-style tokens, set by `prepare` under a symbol: never part of the
 * request's JSON (the cache key, the idempotency digest, the prompt) and never settable by a client.
 */
const HASH_KEY = Symbol("pii-redaction hash key");
type Keyed = Req & { [HASH_KEY]?: string };

function hashKeyOf(req: Req): string {
  const key = (req as Keyed)[HASH_KEY];
  if (!key) throw new Error("pii-redaction: hash style without the account's key");
  return key;
}

function selectedTypes(req: Req): PiiType[] {
  return req.redact_types && req.redact_types.length > 0 ? req.redact_types.map((t) => REDACT_TYPES[t]) : [...PII_TYPES];
}

function styleRule(style: Req["redaction_style"]): string {
  if (style === "mask") return "Replace each entity with asterisks, one * per character of the entity.";
  // The tokens are keyed hashes only the gateway can compute: it rebuilds redacted_text from the entities.
  if (style === "hash")
    return "Replace each entity with its category label in square brackets ([NAME], [EMAIL], ...) and list every redacted entity in entities.";
  return "Replace each entity with its category label in square brackets: [NAME], [EMAIL], [PHONE_NUMBER], [SSN], [CREDIT_CARD], [IP_ADDRESS], [DATE_OF_BIRTH], [ADDRESS].";
}

type Res = Static<typeof result>;
type Entity = NonNullable<Res["entities"]>[number];

/**
 * Models get character offsets wrong far more often than the values: an entity whose offsets do
 * not select its text is moved to the occurrence of its text nearest to where it claimed to be;
 * one whose text is nowhere in the input is dropped; overlaps keep the earlier entity.
 */
function anchorEntities(text: string, entities: Entity[]): Entity[] {
  const anchored: Entity[] = [];
  for (const e of entities) {
    tickCpuBudget();
    const score = Math.min(1, Math.max(0, e.score));
    if (e.text && text.slice(e.start, e.end) === e.text) {
      anchored.push({ ...e, score });
      continue;
    }
    let best = -1;
    for (let at = e.text ? text.indexOf(e.text) : -1; at >= 0; at = text.indexOf(e.text, at + 1)) {
      tickCpuBudget();
      if (best < 0 || Math.abs(at - e.start) < Math.abs(best - e.start)) best = at;
    }
    if (best >= 0) anchored.push({ ...e, start: best, end: best + e.text.length, score });
  }
  anchored.sort((a, b) => a.start - b.start || b.end - a.end);
  const out: Entity[] = [];
  for (const e of anchored) if (out.length === 0 || e.start >= out[out.length - 1].end) out.push(e);
  return out;
}

function countByType(entities: Entity[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const e of entities) counts[e.type] = (counts[e.type] ?? 0) + 1;
  return counts;
}

const WORD_CHAR = /[\p{L}\p{N}]/u;

/** Whether the code point ending just before `at` is a letter or digit. */
function wordCharBefore(text: string, at: number): boolean {
  if (at <= 0) return false;
  const low = text.charCodeAt(at - 1);
  const pair = low >= 0xdc00 && low <= 0xdfff && at >= 2;
  return WORD_CHAR.test(text.slice(pair ? at - 2 : at - 1, at));
}

/** Whether the code point starting at `at` is a letter or digit. */
function wordCharAt(text: string, at: number): boolean {
  if (at >= text.length) return false;
  return WORD_CHAR.test(String.fromCodePoint(text.codePointAt(at) ?? 0));
}

/** Values that must not be left in a redacted text: four characters or more (shorter ones are too common to tell). */
const LEAK_MIN = 4;

/**
 * The redacted values that still appear in `redacted` as a whole word (they have leaked). One
 * pass over the text, values looked up by their first four characters: a regular expression per
 * value, each run over the whole text, took a second for 8,000 names in 100 KB.
 */
function leakedValues(redacted: string, values: readonly string[]): Set<string> {
  const byPrefix = new Map<string, string[]>();
  for (const v of new Set(values)) {
    tickCpuBudget();
    if (v.length < LEAK_MIN) continue;
    const key = v.slice(0, LEAK_MIN);
    const list = byPrefix.get(key);
    if (list) list.push(v);
    else byPrefix.set(key, [v]);
  }
  const leaked = new Set<string>();
  if (byPrefix.size === 0) return leaked;
  for (let at = 0; at + LEAK_MIN <= redacted.length; at++) {
    tickCpuBudget();
    const candidates = byPrefix.get(redacted.slice(at, at + LEAK_MIN));
    if (!candidates || wordCharBefore(redacted, at)) continue;
    for (const v of candidates) {
      tickCpuBudget();
      if (!leaked.has(v) && redacted.startsWith(v, at) && !wordCharAt(redacted, at + v.length)) leaked.add(v);
    }
  }
  return leaked;
}

export default defineFunction({
  name: "pii-redaction",
  summary: "Find and redact personal data: names, emails, phone numbers, SSNs, cards, IPs, birth dates, addresses",
  description:
    "Offsets in entities are JavaScript string indices (UTF-16 code units) into the original text. Overlapping detections are resolved to one entity per span.",
  tags: ["safety"],
  request,
  result,
  rateClass: "bulk",
  promptVersion: 2,
  resultSchemaFor: resultFor,
  role: "You find personal data (PII) in text and redact it without changing anything else.",
  brief: (req) => ({
    rules: [
      `Redact only these kinds: ${selectedTypes(req).join(", ")}. Leave all other text exactly as it is.`,
      "Phone numbers in any international or national format; SSNs only when valid (area not 000, 666 or 900-999; group not 00; serial not 0000); card numbers only when they pass the Luhn check; IPv4 and IPv6; dates only when they are a date of birth; full street addresses.",
      styleRule(req.redaction_style),
      "When two detections overlap, keep one entity for the span.",
      req.return_entities || req.redaction_style === "hash"
        ? "entities: each redacted entity with its type, its exact original text, start and end as JavaScript string indices (UTF-16 code units) into the original text, and a score from 0 to 1."
        : "Do not list entities.",
      "counts: the number of redacted entities per type; redaction_count: their total.",
    ],
    inputs: [["text", req.text]],
  }),
  postprocess: (req, res) => {
    if (req.redaction_style === "hash") {
      // whatever the model wrote in place of the values, the tokens are the gateway's keyed hashes
      if (!res.entities) throw new Error("hash style needs the entities");
      const entities = anchorEntities(req.text, res.entities);
      const redacted_text = applyRedactions(req.text, entities, "hash", hashKeyOf(req));
      const counts = countByType(entities);
      return { redacted_text, redaction_count: entities.length, counts, ...(req.return_entities ? { entities } : {}) };
    }
    if (!req.return_entities || !res.entities) {
      const { entities: _dropped, ...rest } = res;
      return { ...rest, redaction_count: Object.values(res.counts).reduce((a, b) => a + b, 0) };
    }
    const entities = anchorEntities(req.text, res.entities);
    return { ...res, entities, counts: countByType(entities), redaction_count: entities.length };
  },
  check: (req, res) => {
    const problems: string[] = [];
    if (req.return_entities && !res.entities) problems.push("entities missing though return_entities is true");
    const allowed = new Set(selectedTypes(req));
    let previousEnd = 0;
    for (const e of res.entities ?? []) {
      if (req.text.slice(e.start, e.end) !== e.text) problems.push(`entity "${e.text}" does not match text[${e.start}:${e.end}]`);
      if (e.end <= e.start) problems.push(`entity "${e.text}" has an empty or reversed span`);
      if (e.start < previousEnd) problems.push(`entity "${e.text}" overlaps the one before it`);
      if (!allowed.has(e.type)) problems.push(`entity "${e.text}" is of type ${e.type}, which was not asked for`);
      if (e.score < 0 || e.score > 1) problems.push(`entity "${e.text}" has a score outside 0..1`);
      previousEnd = Math.max(previousEnd, e.end);
    }
    const total = Object.values(res.counts).reduce((a, b) => a + b, 0);
    if (total !== res.redaction_count) problems.push("redaction_count is not the sum of counts");
    if (res.entities && res.entities.length !== res.redaction_count)
      problems.push("redaction_count differs from the number of entities");
    const leaked = leakedValues(
      res.redacted_text,
      (res.entities ?? []).map((e) => e.text),
    );
    for (const e of res.entities ?? []) if (leaked.has(e.text)) problems.push(`"${e.text}" is still in redacted_text`);
    return problems;
  },
  prepare: async (req, ctx) => {
    if (req.redaction_style !== "hash") return req;
    if (!ctx.secret) throw new Error("pii-redaction: hash style needs the gateway's secret store");
    const keyed: Keyed = { ...req, [HASH_KEY]: accountHashKey(await ctx.secret(PII_HASH_SECRET), ctx.accountId) };
    return keyed;
  },
  local: (req) => {
    // hash style: postprocess builds the tokens from the entities for every answer, this one as a
    // model's, so labels stand in here and the entities go along (dropped there unless asked for)
    const hash = req.redaction_style === "hash";
    const { redacted_text, entities } = redactPii(req.text, {
      types: selectedTypes(req),
      style: hash ? "placeholder" : (req.redaction_style ?? "placeholder"),
    });
    return {
      redacted_text,
      redaction_count: entities.length,
      counts: countByType(entities),
      ...(req.return_entities || hash
        ? { entities: entities.map(({ type, start, end, text, score }) => ({ type, start, end, text, score })) }
        : {}),
    };
  },
  // The engine's recognizers are measured (bun run eval) and answer in well under a millisecond.
  preferLocal: true,
  example: {
    request: {
      text: "Hi, I'm Sarah Johnson. Email sarah.j@example.com or call +1 415-555-0132. SSN 219-09-9999.",
      redact_types: ["names", "emails", "phone_numbers", "ssn"],
      redaction_style: "placeholder",
      return_entities: true,
    },
    result: {
      redacted_text: "Hi, I'm [NAME]. Email [EMAIL] or call [PHONE_NUMBER]. SSN [SSN].",
      redaction_count: 4,
      counts: { name: 1, email: 1, phone_number: 1, ssn: 1 },
      entities: [
        { type: "name", start: 8, end: 21, text: "Sarah Johnson", score: 0.9 },
        { type: "email", start: 29, end: 48, text: "sarah.j@example.com", score: 0.99 },
        { type: "phone_number", start: 57, end: 72, text: "+1 415-555-0132", score: 0.95 },
        { type: "ssn", start: 78, end: 89, text: "219-09-9999", score: 0.97 },
      ],
    },
  },
});
