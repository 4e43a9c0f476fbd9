import { describe, expect, test } from "bun:test";
import { parseSearchQuery } from "../../src/local/query-parse";
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
