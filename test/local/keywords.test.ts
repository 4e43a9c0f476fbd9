import { describe, expect, test } from "bun:test";
import { extractKeywords, lowerWords } from "../../src/offline-engine/keywords";
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
    expect(lowerWords("Don’t STOP-now, it's 5pm")).toEqual(["don't", "stop-now", "it's", "5pm"]);
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

test("in the other languages the engine reads, their stop words are no key phrase", () => {
  const keys = (text: string, lang: string) => extractKeywords(text, 6, lang).map((k) => k.keyword);
  const de = keys("Das Zelt ist leicht und schnell aufgebaut, aber beim ersten Regen war alles nass.", "de");
  expect(de).toContain("zelt");
  for (const k of de) expect(k, k).not.toMatch(/\b(?:das|ist|und|aber|beim|war|alles)\b/);
  const es = keys("La tienda tardó tres semanas en enviar el pedido y el paquete llegó roto.", "es");
  for (const k of es) expect(k, k).not.toMatch(/^(?:la|el|en|y)\b|\b(?:la|el|en|y)$/);
  // English text is read as before
  expect(keys("The battery life is great but the charger broke.", "en")).toEqual(
    extractKeywords("The battery life is great but the charger broke.", 6).map((k) => k.keyword),
  );
});
