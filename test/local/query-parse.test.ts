import { describe, expect, test } from "bun:test";
import { parseSearchQuery } from "../../src/offline-engine/query-parse";
import { evaluateQueryParse, loadQueryFixture } from "../eval/evaluators/query-parse";
import { expectTargetsMet, medianMs } from "./helpers";

const items = loadQueryFixture();

describe("parseSearchQuery on labeled queries", () => {
  test("tuning set", () => expectTargetsMet(evaluateQueryParse(items), 25));
  test("held-out set", () => expectTargetsMet(evaluateQueryParse(loadQueryFixture("query-parse-holdout.jsonl")), 10));
});

describe("parseSearchQuery details", () => {
  test("caller facets pick values named in the query", () => {
    const q = parseSearchQuery("waterproof hiking boots for women", {
      facets: { gender: ["men", "women", "kids"], category: ["boots", "sandals"] },
    });
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

// Timing is measured by `bun run bench` (bench/offline.ts); set TEXTAI_TIMED_TESTS=1 to assert it here too.
test.skipIf(!process.env.TEXTAI_TIMED_TESTS)("speed: a long query median well under 1 ms", () => {
  const query = items
    .map((i) => i.query)
    .join(" ")
    .slice(0, 1024);
  expect(medianMs(() => parseSearchQuery(query))).toBeLessThan(1);
});

test("'in' is a unit only before a screen word or the end, and connectors left between parsed-out filters go with them", () => {
  const iphone = parseSearchQuery("phone case for iphone 13 in black");
  expect(iphone.filters.sizes).toBeUndefined();
  expect(iphone.filters.colors).toEqual(["black"]);
  expect(iphone.searchText).toBe("phone case for iphone 13");
  expect(parseSearchQuery("55 in tv samsung").filters.sizes).toEqual(["55 INCH"]);
  expect(parseSearchQuery("cheap 4k tv 55 inch samsung or lg under 600 euros with free delivery").searchText).toBe("cheap 4k tv");
  expect(parseSearchQuery("red nike or adidas running shoes").searchText).toBe("running shoes");
  // a connector between words that stay, stays
  expect(parseSearchQuery("salt and pepper grinder").searchText).toBe("salt and pepper grinder");
  expect(parseSearchQuery("tv or case under 50 dollars").searchText).toBe("tv or case");
});

// 2026-12-06, a newcomer walkthrough: "dresses not used" came back as condition "used"
test("a negated filter word is a negation, not the filter", () => {
  expect(parseSearchQuery("dresses not used")).toMatchObject({ filters: {}, negations: ["used"] });
  const shoes = parseSearchQuery("red nike running shoes, not used");
  expect(shoes.filters.condition).toBeUndefined();
  expect(shoes.negations).toEqual(["used"]);
  expect(parseSearchQuery("used cars").filters.condition).toBe("used");
});
