import { describe, expect, test } from "bun:test";
import { extractKeywords, tokenize } from "../../src/local/keywords";
import { loadJsonl, medianMs } from "./helpers";

interface Item {
  text: string;
  /** topic words an editor would tag the text with; a hit is a keyword containing one */
  topics: string[];
}

const items = loadJsonl<Item>("keywords.jsonl");

describe("extractKeywords on labeled texts", () => {
  test("the top 5 keywords cover the labeled topics", () => {
    let covered = 0;
    let total = 0;
    const misses: string[] = [];
    for (const it of items) {
      const top = extractKeywords(it.text, 5).map((k) => k.keyword);
      for (const t of it.topics) {
        total++;
        if (top.some((k) => k.split(" ").includes(t))) covered++;
        else misses.push(`${t} not in [${top.join(" | ")}]`);
      }
    }
    console.log(`keywords: top-5 cover ${covered}/${total} labeled topics (${((covered / total) * 100).toFixed(1)}%)`, misses.length ? `\n  ${misses.join("\n  ")}` : "");
    expect(items.length).toBeGreaterThanOrEqual(12);
    expect(covered / total).toBeGreaterThanOrEqual(0.75);
  });
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

test("speed: 1 KB median well under 1 ms", () => {
  const text = items
    .map((i) => i.text)
    .join(" ")
    .slice(0, 1024);
  expect(medianMs(() => extractKeywords(text, 10))).toBeLessThan(1);
});
