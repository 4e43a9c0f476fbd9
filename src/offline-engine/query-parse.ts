/**
 * Search query parsing for the offline engine: turns "red nike running shoes under $100 size 10
 * without laces, newest first" into keywords, filters, a date range, a sort and negations.
 *
 *   parseSearchQuery(query: string, opts?: { facets?: Record<string, string[]>; referenceDate?: Date }): ParsedQuery
 *     facets: caller-defined filter name -> allowed values (from the request's schema); values
 *     named in the query land in filters[name].
 *   -> { keywords, searchText, filters: { price?, colors?, sizes?, brands?, rating?, condition?, ...facets },
 *        dateRange?, sort?, negations }
 */
import { checkCpuBudget, tickCpuBudget } from "./budget";
import { parseDates } from "./dates";
import { STOPWORDS } from "./keywords";
import { isAsciiWord } from "./phrase-scan";

export interface PriceRange {
  min?: number;
  max?: number;
  currency?: string;
}

export interface ParsedQuery {
  keywords: string[];
  /** the query without the parts turned into filters, sort or negations */
  searchText: string;
  filters: Record<string, unknown> & {
    price?: PriceRange;
    colors?: string[];
    sizes?: string[];
    brands?: string[];
    min_rating?: number;
    condition?: string;
    free_shipping?: boolean;
    near_me?: boolean;
    open_now?: boolean;
    in_stock?: boolean;
    on_sale?: boolean;
  };
  dateRange?: { start: string; end?: string; text: string };
  sort?: { field: "price" | "date" | "rating" | "popularity" | "relevance" | "distance"; order: "asc" | "desc"; text: string };
  negations: string[];
}

const COLORS =
  "red|blue|green|yellow|black|white|grey|gray|pink|purple|orange|brown|beige|navy|teal|maroon|gold|silver|khaki|olive|turquoise|ivory|cream|burgundy|lavender|charcoal|tan|coral|mint|multicolor|rose gold|dark blue|light blue|dark green|light green|off white";
// A short list of widely searched consumer brands; callers with their own catalogue pass facets.
const BRANDS =
  "nike|adidas|puma|reebok|new balance|asics|converse|vans|under armour|skechers|apple|samsung|sony|lg|dell|hp|lenovo|asus|acer|microsoft|google|xiaomi|huawei|oneplus|canon|nikon|bose|jbl|philips|panasonic|dyson|ikea|lego|levi's|levis|zara|h&m|uniqlo|gucci|prada|north face|the north face|patagonia|columbia|timberland|dr martens|ray-ban|casio|seiko|rolex|garmin|fitbit|logitech|razer|nintendo|playstation|xbox|toyota|honda|ford|bmw|tesla|kitchenaid|le creuset|nespresso|delonghi|bosch|makita|dewalt|anker|kindle|amazon basics|hermes|chanel|dior";
const BRANDS_RE = new RegExp(`(?<![\\w-])(?:${BRANDS.replace(/\$/g, "\\$")})(?![\\w-])`, "g");
const SIZE_WORDS =
  "xxs|xs|s|m|l|xl|xxl|xxxl|2xl|3xl|small|medium|large|extra large|x-large|petite|plus size|king|queen|twin|full";

type Span = [number, number];

const CURRENCY_OF: Record<string, string> = {
  $: "USD",
  "€": "EUR",
  "£": "GBP",
  "¥": "JPY",
  "₹": "INR",
  usd: "USD",
  eur: "EUR",
  gbp: "GBP",
  dollars: "USD",
  dollar: "USD",
  euros: "EUR",
  euro: "EUR",
  pounds: "GBP",
  bucks: "USD",
};
const MONEY = String.raw`([$€£¥₹])?\s?(\d+(?:[.,]\d+)?)(k)?\s?(usd|euros?|eur|gbp|dollars?|pounds|bucks)?\b`;

const PRICE_RULES: [RegExp, (a: number, b?: number) => PriceRange][] = [
  [new RegExp(String.raw`\b(?:between|from)\s+${MONEY}\s+(?:and|to|-)\s+${MONEY}`, "i"), (a, b) => ({ min: a, max: b })],
  [new RegExp(String.raw`(?<![\w.])${MONEY}\s?(?:-|–|to)\s?${MONEY}(?![\w%])`, "i"), (a, b) => ({ min: a, max: b })],
  [
    new RegExp(
      String.raw`\b(?:under|below|less than|cheaper than|max(?:imum)?|up to|no more than|within|<|at most)\s*${MONEY}`,
      "i",
    ),
    (a) => ({ max: a }),
  ],
  [
    new RegExp(String.raw`\b(?:over|above|more than|at least|min(?:imum)?|from|starting at|>)\s*${MONEY}`, "i"),
    (a) => ({ min: a }),
  ],
  [
    new RegExp(String.raw`\b(?:around|about|approximately|roughly|~)\s*${MONEY}`, "i"),
    (a) => ({ min: Math.round(a * 0.8), max: Math.round(a * 1.2) }),
  ],
];

const SORTS: [RegExp, NonNullable<ParsedQuery["sort"]>["field"], "asc" | "desc"][] = [
  [
    /\b(?:cheapest(?: first)?|lowest price|price low to high|least expensive|low to high|sort(?:ed)? by price)\b/i,
    "price",
    "asc",
  ],
  [/\b(?:most expensive|highest price|price high to low|high to low|priciest)\b/i, "price", "desc"],
  [/\b(?:newest(?: first)?|latest|most recent|recently added|new arrivals)\b/i, "date", "desc"],
  [/\b(?:oldest(?: first)?)\b/i, "date", "asc"],
  [/\b(?:best[- ]rated|top[- ]rated|highest[- ]rated|best reviewed|top reviewed)\b/i, "rating", "desc"],
  [/\b(?:most popular|best[- ]selling|bestsellers?|trending|popular)\b/i, "popularity", "desc"],
  [/\b(?:nearest|closest)\b/i, "distance", "asc"],
];

// One word: "no pineapple open now" must not exclude "open".
const NEGATION = /(?:\b(?:without|no|not|excluding|exclude|except|minus|but not|non)\s+|(?:^|\s)-)([a-z0-9][\w'-]*)/gi;

function amount(num: string, k: string | undefined): number {
  const n = Number(num.replace(",", "."));
  return k ? n * 1000 : n;
}

function overlaps(spans: Span[], s: number, e: number): boolean {
  return spans.some(([a, b]) => s < b && a < e);
}

function isoDay(d: Date): string {
  const p = (x: number) => String(x).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}

const wordOrHyphenAt = (text: string, i: number) => {
  const c = text.charCodeAt(i);
  return c === 45 || isAsciiWord(c);
};

/**
 * The first mention of a caller's facet value (lower case) in the query: the value, or its plural
 * with an "s", not inside a longer word. A scan, never a regex built from the value (phrase-scan.ts).
 */
function facetValueAt(lower: string, value: string): { start: number; end: number } | null {
  if (!value) return null;
  for (let i = lower.indexOf(value); i >= 0; i = lower.indexOf(value, i + 1)) {
    tickCpuBudget();
    if (i > 0 && wordOrHyphenAt(lower, i - 1)) continue;
    const end = i + value.length;
    const plural = lower.charCodeAt(end) === 115 ? end + 1 : -1; // s
    if (plural > 0 && (plural >= lower.length || !wordOrHyphenAt(lower, plural))) return { start: i, end: plural };
    if (end >= lower.length || !wordOrHyphenAt(lower, end)) return { start: i, end };
  }
  return null;
}

/** A query being read: what is parsed out of it so far (spans of the query) and the filters found. */
interface Reading {
  query: string;
  lower: string;
  consumed: Span[];
  filters: ParsedQuery["filters"];
}

/** Marks a span of the query as parsed out. */
function take(r: Reading, s: number, e: number): void {
  r.consumed.push([s, e]);
}

/** Prices: "under $100", "between 5 and 10 euros" (a bare "5-10" needs a currency or a price word). */
function readPrices(r: Reading): void {
  const { query, consumed, filters } = r;
  for (const [re, make] of PRICE_RULES) {
    const m = re.exec(query);
    if (!m || overlaps(consumed, m.index, m.index + m[0].length)) continue;
    const g = m.slice(1);
    const a = amount(g[1], g[2]);
    const b = g.length > 4 && g[5] ? amount(g[5], g[6]) : undefined;
    // "5-10" with no currency and no price word could be a size or a count: require a cue
    const hasCue = Boolean(g[0] || g[3] || g[4] || g[7]) || !/^\s*\d/.test(m[0]);
    if (!hasCue) continue;
    const range = make(a, b);
    const cur = g[0] ?? g[3] ?? g[4] ?? g[7];
    if (cur) range.currency = CURRENCY_OF[cur.toLowerCase()] ?? CURRENCY_OF[cur];
    filters.price = { ...filters.price, ...range };
    take(r, m.index, m.index + m[0].length);
  }
}

/** The first sort phrase ("newest first", "sort by price"), with the words around it that belong to it. */
function readSort(r: Reading): ParsedQuery["sort"] {
  const { query } = r;
  for (const [re, field, order] of SORTS) {
    const m = re.exec(query);
    if (!m) continue;
    take(r, m.index, m.index + m[0].length);
    // "sort by" / "first" around the phrase belong to it
    const after = /^\s*(?:first|on top)\b/i.exec(query.slice(m.index + m[0].length));
    if (after) take(r, m.index + m[0].length, m.index + m[0].length + after[0].length);
    const before = /\b(?:sort(?:ed)? by|order(?:ed)? by|show)\s*$/i.exec(query.slice(0, m.index));
    if (before) take(r, before.index, m.index);
    return { field, order, text: m[0] };
  }
  return undefined;
}

/** A minimum rating ("4+ stars", "rated 4.5"), and the negated terms ("without laces"). */
function readRatingAndNegations(r: Reading): string[] {
  const { query, consumed, filters } = r;
  const rating =
    /\b(\d(?:\.\d)?)\s*(?:\+\s*stars?|stars?\s*(?:and up|& up|or more|or higher|\+)?|\+)|\brated\s+(\d(?:\.\d)?)\s*\+?(?:\s*stars?)?/i.exec(
      query,
    );
  if (rating && !overlaps(consumed, rating.index, rating.index + rating[0].length)) {
    filters.min_rating = Number(rating[1] ?? rating[2]);
    take(r, rating.index, rating.index + rating[0].length);
  }
  const negations: string[] = [];
  for (const m of query.matchAll(NEGATION)) {
    const at = m.index ?? 0;
    const term = m[1].toLowerCase();
    // (a stopword negated is no term, unless it is a filter's: "not used" is no condition "used")
    if (overlaps(consumed, at, at + m[0].length) || (STOPWORDS.has(term) && !FLAGS.some(([re]) => re.test(term)))) continue;
    negations.push(term);
    take(r, at, at + m[0].length);
  }
  return negations;
}

/** Yes-or-no filters and the condition: a phrase each ("free shipping", "in stock", "refurbished"). */
const FLAGS: [RegExp, keyof ParsedQuery["filters"], unknown][] = [
  [/\bfree (?:shipping|delivery)\b/i, "free_shipping", true],
  [/\bin stock\b|\bavailable now\b/i, "in_stock", true],
  [/\bon sale\b|\bdiscounted\b|\bclearance\b/i, "on_sale", true],
  [/\b(?:brand[- ]new|new condition)\b/i, "condition", "new"],
  [/\b(?:used|second[- ]hand|pre[- ]owned)\b/i, "condition", "used"],
  [/\brefurbished\b|\brenewed\b/i, "condition", "refurbished"],
  [/\bnear me\b|\bnearby\b|\bclose to me\b/i, "near_me", true],
  [/\bopen now\b|\bopen (?:late|24 hours|24\/7)\b/i, "open_now", true],
];

/** Every match of `re` in `text` that is not parsed out yet, as `value` gives it; each match is then parsed out. */
function takeAll(r: Reading, text: string, re: RegExp, value: (m: RegExpMatchArray, at: number) => string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(re)) {
    const at = m.index ?? 0;
    if (overlaps(r.consumed, at, at + m[0].length)) continue;
    found.push(value(m, at));
    take(r, at, at + m[0].length);
  }
  return found;
}

/** a size the query names ("size 10", "XL", "55 inch") */
const SIZES_RE = new RegExp(
  String.raw`\bsize[sd]?\s*(?::\s*)?(\d{1,2}(?:\.5)?|${SIZE_WORDS})\b|\b(xxs|xs|xl|xxl|xxxl|2xl|3xl|extra large|plus size|king size|queen size)\b|\b(\d{2})\s?(?:inch(?:es)?|"|in(?=\s*(?:$|[,.;)]|(?:tvs?|screen|monitor|display|laptop|television)\b)))(?!\w)`,
  "gi",
);
/** a color the query names */
const COLORS_RE = new RegExp(`\\b(?:${COLORS})\\b`, "g");

/** The flags, sizes, colors and brands the query names. */
function readAttributes(r: Reading): void {
  const { query, lower, consumed, filters } = r;
  for (const [re, key, value] of FLAGS) {
    const m = re.exec(query);
    if (m && !overlaps(consumed, m.index, m.index + m[0].length)) {
      filters[key] = value;
      take(r, m.index, m.index + m[0].length);
    }
  }
  const sizes = takeAll(r, query, SIZES_RE, (m) => (m[1] ?? m[2] ?? `${m[3]} inch`).toUpperCase().replace(/ SIZE$/, ""));
  if (sizes.length) filters.sizes = [...new Set(sizes)];
  const colors = takeAll(r, lower, COLORS_RE, (m) => (m[0] === "grey" ? "gray" : m[0]));
  if (colors.length) filters.colors = [...new Set(colors)];
  const brands = takeAll(r, lower, BRANDS_RE, (m, at) => query.slice(at, at + m[0].length));
  if (brands.length) filters.brands = brands;
}

/** The caller's facets: each value the query names lands in filters[facet]. */
function readFacets(r: Reading, facets: Record<string, string[]>): void {
  for (const [facet, values] of Object.entries(facets)) {
    const hits: string[] = [];
    for (const v of values) {
      // each value is a scan of the query: a caller's long list is the budget's to stop
      checkCpuBudget();
      const m = facetValueAt(r.lower, v.toLowerCase());
      if (m) {
        hits.push(v);
        take(r, m.start, m.end);
      }
    }
    if (hits.length) r.filters[facet] = hits.length === 1 ? hits[0] : hits;
  }
}

/** The first date or date range not parsed out yet ("since March", "last week": a range that ends today). */
function readDateRange(r: Reading, ref: Date): ParsedQuery["dateRange"] {
  const { query, consumed } = r;
  for (const d of parseDates(query, ref)) {
    // "for 8 years" is a duration or an age, not a date filter
    if (
      overlaps(consumed, d.index, d.index + d.text.length) ||
      /^(?:\d+|now|right now)$/i.test(d.text.trim()) ||
      /^for\b/i.test(d.text)
    )
      continue;
    const dateRange: NonNullable<ParsedQuery["dateRange"]> = {
      start: isoDay(d.start.date()),
      ...(d.end ? { end: isoDay(d.end.date()) } : {}),
      text: d.text,
    };
    // "last week" / "since March": chrono gives a point; a range ends today
    if (!d.end && /\b(?:since|after|from|last|past|this)\b/i.test(query.slice(Math.max(0, d.index - 8), d.index + d.text.length)))
      dateRange.end = isoDay(ref);
    take(r, d.index, d.index + d.text.length);
    const lead = /\b(?:since|after|before|from|in|on|during)\s*$/i.exec(query.slice(0, d.index));
    if (lead) take(r, lead.index, d.index);
    return dateRange;
  }
  return undefined;
}

/** What is left of the query once everything parsed out is removed: its text and its keywords. */
function leftover(r: Reading): { searchText: string; keywords: string[] } {
  const { query, consumed } = r;
  const used = new Uint8Array(query.length);
  for (const [a, b] of consumed) used.fill(1, a, b);
  // a connector between two parsed-out filters, or before (after) nothing but parsed-out filters,
  // joins nothing that is left ("tv [samsung] or [lg] [under 600] with [free delivery]"): it goes with them
  if (consumed.length > 0) dropLooseConnectors(query, used);
  let rest = "";
  for (let i = 0; i < query.length; i++) rest += used[i] ? " " : query[i];
  const searchText = rest.replace(/[,;]+/g, " ").replace(/\s+/g, " ").trim();
  const keywords = searchText
    .toLowerCase()
    .split(/[^\p{L}\p{N}'&+-]+/u)
    .filter(
      (w) =>
        w &&
        !STOPWORDS.has(w) &&
        !/^(?:for|with|and|or|show|find|me|sort|by|cheap|best|good|looking|search|buy|want|need|some)$/.test(w),
    );
  return { searchText, keywords };
}

/** Structured reading of a free-text search query: each part read in turn, a part once read taken out of the query. */
export function parseSearchQuery(
  query: string,
  opts: { facets?: Record<string, string[]>; referenceDate?: Date } = {},
): ParsedQuery {
  const r: Reading = { query, lower: query.toLowerCase(), consumed: [], filters: {} };
  readPrices(r);
  const sort = readSort(r);
  const negations = readRatingAndNegations(r);
  readAttributes(r);
  readFacets(r, opts.facets ?? {});
  const dateRange = readDateRange(r, opts.referenceDate ?? new Date());
  const { searchText, keywords } = leftover(r);
  return {
    keywords: [...new Set(keywords)],
    searchText,
    filters: r.filters,
    ...(dateRange ? { dateRange } : {}),
    ...(sort ? { sort } : {}),
    negations,
  };
}

const CONNECTOR = /^(?:or|and|with|in|for|from|of|at|by|&)$/i;

/**
 * Marks as used the connectors that join nothing left once the filters are parsed out: between two
 * removed parts, or with only removed parts (and connectors) before or after them. One pass over
 * the query's tokens each way: linear, whatever it holds.
 */
function dropLooseConnectors(query: string, used: Uint8Array): void {
  const tokens: { start: number; end: number; kind: "removed" | "connector" | "word" }[] = [];
  for (let i = 0; i < query.length; ) {
    tickCpuBudget();
    const c = query[i] as string;
    if (used[i] !== 1 && (c === " " || c === "\t" || c === "\n" || c === "\r" || c === "," || c === ";")) {
      i++;
      continue;
    }
    const start = i;
    const removed = used[i] === 1;
    while (i < query.length && (used[i] === 1) === removed && (removed || !/[\s,;]/.test(query[i] as string))) i++;
    const kind = removed ? "removed" : CONNECTOR.test(query.slice(start, i)) ? "connector" : "word";
    tokens.push({ start, end: i, kind });
  }
  const kind = (k: number) => tokens[k]?.kind;
  const drop = (k: number) => {
    const t = tokens[k];
    if (t) used.fill(1, t.start, t.end);
  };
  // leading and trailing runs of removed parts and connectors
  for (let k = 0; k < tokens.length && kind(k) !== "word"; k++) if (kind(k) === "connector") drop(k);
  for (let k = tokens.length - 1; k >= 0 && kind(k) !== "word"; k--) if (kind(k) === "connector") drop(k);
  for (let k = 1; k + 1 < tokens.length; k++)
    if (kind(k) === "connector" && kind(k - 1) === "removed" && kind(k + 1) === "removed") drop(k);
}
