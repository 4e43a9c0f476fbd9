import { describe, expect, test } from "bun:test";
import { splitSentences, summarize } from "../../src/local/summarize";
import { loadJsonl, medianMs } from "./helpers";

interface Item {
  text: string;
  /** the sentences a human editor said carry the main point */
  gold: string[];
}

const items = loadJsonl<Item>("summarize.jsonl");

describe("summarize on labeled documents", () => {
  test("short summaries contain a main-point sentence; medium ones most of them", () => {
    let shortHits = 0;
    let goldFound = 0;
    let goldTotal = 0;
    const misses: string[] = [];
    for (const it of items) {
      const short = summarize(it.text, { length: "short" });
      if (it.gold.some((g) => short.sentences.includes(g))) shortHits++;
      else misses.push(`short: ${short.summary.slice(0, 90)}`);
      const medium = summarize(it.text, { length: "medium" });
      goldTotal += it.gold.length;
      goldFound += it.gold.filter((g) => medium.sentences.includes(g)).length;
    }
    console.log(
      `summarize: short hits a main point in ${shortHits}/${items.length}; medium recalls ${goldFound}/${goldTotal} main-point sentences`,
      misses.length ? `\n  ${misses.join("\n  ")}` : "",
    );
    expect(items.length).toBeGreaterThanOrEqual(12);
    expect(shortHits / items.length).toBeGreaterThanOrEqual(0.75);
    expect(goldFound / goldTotal).toBeGreaterThanOrEqual(0.75);
  });
});

describe("summarize options", () => {
  const doc = items[0].text;

  test("a sentence count is honoured exactly", () => {
    for (const n of [1, 2, 3]) expect(summarize(doc, { length: n }).sentenceCount).toBe(n);
    expect(summarize(doc, { length: "2" }).sentenceCount).toBe(2);
  });

  test("lengths grow from short to long", () => {
    const [s, m, l] = (["short", "medium", "long"] as const).map((length) => summarize(doc, { length }).wordCount);
    expect(s).toBeLessThan(m);
    expect(m).toBeLessThanOrEqual(l);
  });

  test("formats render as asked", () => {
    expect(summarize(doc, { format: "bullets", length: 3 }).summary.split("\n").every((l) => l.startsWith("- "))).toBe(true);
    expect(summarize(doc, { format: "numbered", length: 2 }).summary).toMatch(/^1\. .+\n2\. /);
    expect(summarize(doc, { format: "tldr" }).summary.startsWith("TL;DR: ")).toBe(true);
    expect(summarize(doc, { format: "headline" }).summary).not.toMatch(/[.!?]$/);
  });

  test("sentences keep document order and come from the text", () => {
    const r = summarize(doc, { length: 3 });
    const positions = r.sentences.map((s) => doc.indexOf(s));
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
  });

  test("an executive audience prefers shorter sentences with figures over a general one", () => {
    const text =
      "The project, which started three years ago with a small team of volunteers who wanted to document local history in a way that anyone could explore online, has grown a great deal. Revenue rose 40% to $2 million. Costs fell 5%. Many volunteers describe the work as meaningful and say the community around it is the reason they stay involved year after year.";
    const withFigures = (audience?: string) => summarize(text, { length: 2, targetAudience: audience }).sentences.filter((x) => /\d/.test(x)).length;
    expect(withFigures("executives")).toBeGreaterThan(withFigures(undefined));
    expect(withFigures("children")).toBe(0);
  });

  test("sentence splitting keeps abbreviations and decimals inside sentences", () => {
    expect(splitSentences("Dr. Lee paid $3.50 for it. Then he left.").map((s) => s.text)).toEqual(["Dr. Lee paid $3.50 for it.", "Then he left."]);
  });
});

test("speed: 1 KB median well under 1 ms", () => {
  const text = items
    .map((i) => i.text)
    .join(" ")
    .slice(0, 1024);
  expect(medianMs(() => summarize(text))).toBeLessThan(1);
});
