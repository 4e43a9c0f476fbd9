import { describe, expect, test } from "bun:test";
import { type ParsedQuery, parseSearchQuery } from "../../src/local/query-parse";
import { loadJsonl, medianMs } from "./helpers";

interface Item {
  query: string;
  expect: {
    keywords?: string[];
    filters?: Record<string, unknown>;
    sort?: { field: string; order: string };
    negations?: string[];
    date_start?: string;
  };
}

const items = loadJsonl<Item>("query-parse.jsonl");
const REF = new Date("2026-11-21T12:00:00Z");

/** Each expected part is one check; a query is right when all its checks pass. */
function checks(q: ParsedQuery, want: Item["expect"]): [string, boolean][] {
  const out: [string, boolean][] = [];
  if (want.keywords) out.push(["keywords", JSON.stringify([...q.keywords].sort()) === JSON.stringify([...want.keywords].sort())]);
  for (const [k, v] of Object.entries(want.filters ?? {})) out.push([`filters.${k}`, JSON.stringify(q.filters[k]) === JSON.stringify(v)]);
  const extra = Object.keys(q.filters).filter((k) => !(k in (want.filters ?? {})));
  out.push(["no extra filters", extra.length === 0]);
  if (want.sort) out.push(["sort", q.sort?.field === want.sort.field && q.sort?.order === want.sort.order]);
  else out.push(["no sort", q.sort === undefined]);
  out.push(["negations", JSON.stringify(q.negations) === JSON.stringify(want.negations ?? [])]);
  if (want.date_start) out.push(["date", q.dateRange?.start === want.date_start]);
  else out.push(["no date", q.dateRange === undefined]);
  return out;
}

describe("parseSearchQuery on labeled queries", () => {
  test("query-level and part-level accuracy", () => {
    let fullyRight = 0;
    let partsRight = 0;
    let parts = 0;
    const misses: string[] = [];
    for (const it of items) {
      const q = parseSearchQuery(it.query, { referenceDate: REF });
      const c = checks(q, it.expect);
      parts += c.length;
      partsRight += c.filter(([, ok]) => ok).length;
      if (c.every(([, ok]) => ok)) fullyRight++;
      else misses.push(`${it.query}: ${c.filter(([, ok]) => !ok).map(([n]) => n).join(", ")} -> ${JSON.stringify(q)}`);
    }
    console.log(
      `query-parse: ${((fullyRight / items.length) * 100).toFixed(1)}% of ${items.length} queries fully right, ${((partsRight / parts) * 100).toFixed(1)}% of parts`,
      misses.length ? `\n  ${misses.join("\n  ")}` : "",
    );
    expect(items.length).toBeGreaterThanOrEqual(25);
    expect(fullyRight / items.length).toBeGreaterThanOrEqual(0.75);
    expect(partsRight / parts).toBeGreaterThanOrEqual(0.9);
  });
});

describe("parseSearchQuery details", () => {
  test("caller facets pick values named in the query", () => {
    const q = parseSearchQuery("waterproof hiking boots for women", { facets: { gender: ["men", "women", "kids"], category: ["boots", "sandals"] } });
    expect(q.filters.gender).toBe("women");
    expect(q.filters.category).toBe("boots");
  });

  test("a plain number range is not taken for a price without a currency or price word", () => {
    expect(parseSearchQuery("kids 5-7 years").filters.price).toBeUndefined();
  });

  test("search text keeps what is left once filters are taken", () => {
    expect(parseSearchQuery("red nike running shoes under $100").searchText).toBe("running shoes");
  });
});

test("speed: a long query median well under 1 ms", () => {
  const query = items
    .map((i) => i.query)
    .join(" ")
    .slice(0, 1024);
  expect(medianMs(() => parseSearchQuery(query))).toBeLessThan(1);
});

test("held-out queries stay accurate", () => {
  const holdout = loadJsonl<Item>("query-parse-holdout.jsonl");
  const right = holdout.filter((it) => checks(parseSearchQuery(it.query, { referenceDate: REF }), it.expect).every(([, ok]) => ok));
  for (const it of holdout.filter((h) => !right.includes(h))) console.log("  holdout miss:", it.query, JSON.stringify(parseSearchQuery(it.query, { referenceDate: REF })));
  console.log(`query-parse holdout: ${((right.length / holdout.length) * 100).toFixed(1)}% of ${holdout.length} fully right`);
  expect(right.length / holdout.length).toBeGreaterThanOrEqual(0.7);
});
