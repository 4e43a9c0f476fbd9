import { type Static, type TProperties, type TSchema, Type } from "@sinclair/typebox";
import { type FieldSpec, parseSchemaSpec } from "../offline-engine/json-extract";
import { parseSearchQuery } from "../offline-engine/query-parse";
import { defineFunction } from "./define";
import { decline } from "./offline-reach";
import { Context, checkSchemaParam, Enum, MAX_SCHEMA_FIELDS, Result, Strings, Text } from "./schemas";

const request = Type.Object({
  query: Text("the search query as the user typed it"),
  schema: Type.Optional(
    Type.Union(
      [
        Type.String({
          minLength: 1,
          maxLength: 20000,
          description: "the filters as JSON text, or a comma-separated list of filter names",
        }),
        Type.Record(Type.String(), Type.Unknown(), {
          maxProperties: MAX_SCHEMA_FIELDS,
          description: 'filters the catalogue supports: name -> allowed values (["shoes", "bags"]), a type, or a JSON Schema',
        }),
      ],
      { description: "the filters to fill; default: price, colors, sizes, brands, rating, condition and availability" },
    ),
  ),
  context: Context("what is being searched: the shop, catalogue or site"),
});
type Req = Static<typeof request>;

const SORT_FIELDS = ["price", "date", "rating", "popularity", "relevance", "distance"] as const;

const PriceRange = Type.Object(
  {
    min: Type.Optional(Type.Number()),
    max: Type.Optional(Type.Number()),
    currency: Type.Optional(Type.String({ description: "ISO 4217 code" })),
  },
  { additionalProperties: false },
);

// Filters the engine knows without a schema; open-ended so a model may add what it reads.
const standardFilters: TProperties = {
  price: Type.Optional(PriceRange),
  colors: Type.Optional(Strings("colors asked for")),
  sizes: Type.Optional(Strings("sizes asked for")),
  brands: Type.Optional(Strings("brands asked for")),
  min_rating: Type.Optional(Type.Number({ minimum: 0, maximum: 5 })),
  condition: Type.Optional(Type.String({ description: "new, used or refurbished" })),
  free_shipping: Type.Optional(Type.Boolean()),
  in_stock: Type.Optional(Type.Boolean()),
  on_sale: Type.Optional(Type.Boolean()),
  near_me: Type.Optional(Type.Boolean()),
  open_now: Type.Optional(Type.Boolean()),
};

const fields = (filters: TSchema) => ({
  keywords: Strings("search terms left once filters, sort and negations are taken out", 30),
  search_text: Type.String({ description: "the query without the parts turned into filters" }),
  filters,
  date_range: Type.Optional(
    Type.Object(
      {
        start: Type.String({ description: "ISO date" }),
        end: Type.Optional(Type.String({ description: "ISO date" })),
        text: Type.String(),
      },
      { additionalProperties: false },
    ),
  ),
  sort: Type.Optional(
    Type.Object(
      { field: Enum(SORT_FIELDS, "what to sort by"), order: Enum(["asc", "desc"] as const, "direction") },
      { additionalProperties: false },
    ),
  ),
  negations: Strings("terms the user excludes (without X, no X, -X)", 20),
});

const DESCRIPTION = "structured reading of a search query";
const result = Result(fields(Type.Record(Type.String(), Type.Unknown(), { description: "filter name -> value" })), DESCRIPTION);

function facetType(f: FieldSpec): TSchema {
  if (f.enum?.length) {
    const one = Type.Union(f.enum.map((v) => Type.Literal(v)));
    return Type.Union([one, Type.Array(one)], { description: f.description });
  }
  if (f.type === "number" || f.type === "integer") return Type.Number({ description: f.description });
  if (f.type === "boolean") return Type.Boolean({ description: f.description });
  if (f.type === "array") return Type.Array(Type.Unknown(), { description: f.description });
  return Type.Unknown({ description: f.description });
}

function filtersFor(spec: FieldSpec[]): TSchema {
  const props: TProperties = { ...standardFilters };
  for (const f of spec) props[f.name] = Type.Optional(facetType(f));
  return Type.Object(props, {
    additionalProperties: false,
    description: "filter name -> value: the standard filters and the caller's",
  });
}

const specOf = (req: Req) => (req.schema === undefined ? null : parseSchemaSpec(req.schema));

export default defineFunction({
  name: "search-query-parse",
  summary: "Parse a search query into keywords, filters (price, colors, sizes, brands...), a date range, a sort and negations",
  tags: ["extraction"],
  request,
  result,
  normalize: checkSchemaParam<Req>(
    "schema",
    "a filter name -> allowed values map, a JSON Schema, or a comma-separated list of filter names",
  ),
  resultSchemaFor: (req) => {
    const spec = specOf(req);
    return spec ? Result(fields(filtersFor(spec)), DESCRIPTION) : result;
  },
  role: "You turn what a user typed into a search box into a structured query for a search engine.",
  brief: (req) => {
    const spec = specOf(req);
    return {
      rules: [
        spec
          ? `filters: use these filters where the query asks for them (allowed values only where a list is given): ${JSON.stringify(req.schema)}; also price, colors, sizes, brands, min_rating, condition when asked.`
          : "filters: price (min, max, currency), colors, sizes, brands, min_rating, condition, free_shipping, in_stock, on_sale, near_me, open_now; only those the query asks for.",
        "date_range: ISO dates for time words (last week, since March, next weekend); leave out when there are none.",
        "sort: only when the query asks for an order (cheapest, newest, best rated...).",
        "negations: terms the user excludes. keywords: the remaining search terms, without stop words.",
      ],
      inputs: [
        ["context", req.context],
        ["query", req.query],
      ],
      result: spec ? Result(fields(filtersFor(spec)), DESCRIPTION) : result,
    };
  },
  check: (_req, res) => {
    const p = (res.filters as { price?: { min?: number; max?: number } }).price;
    return p && p.min !== undefined && p.max !== undefined && p.min > p.max ? ["price.min is above price.max"] : [];
  },
  local: (req) => {
    const spec = specOf(req);
    const STANDARD = new Set(Object.keys(standardFilters));
    // caller filters without allowed values need understanding, not matching
    const open = spec?.find((f) => !f.enum?.length && !STANDARD.has(f.name));
    if (open) return decline(req, "filters", `filter "${open.name}" has no allowed values; reading it needs a model`);
    const facets = Object.fromEntries((spec ?? []).filter((f) => f.enum?.length).map((f) => [f.name, f.enum ?? []]));
    const q = parseSearchQuery(req.query, { facets });
    return {
      keywords: q.keywords,
      search_text: q.searchText,
      filters: q.filters,
      ...(q.dateRange ? { date_range: q.dateRange } : {}),
      ...(q.sort ? { sort: { field: q.sort.field, order: q.sort.order } } : {}),
      negations: q.negations,
    };
  },
  // Rules read common shopping queries well but not open-ended requests a model understands.
  preferLocal: false,
  example: {
    request: { query: "red nike running shoes under $100 size 10 without laces, newest first", context: "sports shoe shop" },
    result: {
      keywords: ["running", "shoes"],
      search_text: "running shoes",
      filters: { price: { max: 100, currency: "USD" }, sizes: ["10"], colors: ["red"], brands: ["nike"] },
      sort: { field: "date", order: "desc" },
      negations: ["laces"],
    },
  },
});
