import { describe, expect, test } from "bun:test";
import { extractKeywords, tokenize } from "../../src/local/keywords";
import { evaluateKeywords, loadKeywordFixture } from "../eval/evaluators/keywords";
import { expectTargetsMet, medianMs } from "./helpers";

const items = loadKeywordFixture();

describe("extractKeywords on labeled texts", () => {
  test("the top 5 cover the labeled topics", () => expectTargetsMet(evaluateKeywords(items), 12));
});

describe("extractKeywords details", () => {
  test("scores are relative to the best keyword and sorted", () => {
    const k = extractKeywords(items[0].text, 8);
    expect(k[0].score).toBe(1);
    for (let i = 1; i < k.length; i++) expect(k[i].score).toBeLessThanOrEqual(k[i - 1].score);
  });

  test("n bounds the list; empty or stopword-only text gives none", () => {
    expect(extractKeywords(items[0].text, 3).length).toBeLessThanOrEqual(3);
    expect(extractKeywords("", 5)).toEqual([]);
    expect(extractKeywords("and the of it is", 5)).toEqual([]);
  });

  test("tokenize lower-cases and keeps inner apostrophes", () => {
    expect(tokenize("Don’t STOP-now, it's 5pm")).toEqual(["don't", "stop-now", "it's", "5pm"]);
  });
});

// Timing is measured by `bun run bench` (bench/offline.ts); set TEXTAI_TIMED_TESTS=1 to assert it here too.
test.skipIf(!process.env.TEXTAI_TIMED_TESTS)("speed: 1 KB median well under 1 ms", () => {
  const text = items
    .map((i) => i.text)
    .join(" ")
    .slice(0, 1024);
  expect(medianMs(() => extractKeywords(text, 10))).toBeLessThan(1);
});
