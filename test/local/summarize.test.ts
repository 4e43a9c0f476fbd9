import { describe, expect, test } from "bun:test";
import { isSupportedLength, summarize } from "../../src/offline-engine/summarize";
import { evaluateSummaries, loadSummaryFixture, SUMMARY_TARGETS } from "../eval/evaluators/summarize";
import { expectTargetsMet, medianMs } from "./helpers";

const items = loadSummaryFixture();

describe("summarize on labeled documents", () => {
  test("short summaries hold a main point; medium ones recall most", () => expectTargetsMet(evaluateSummaries(items), 12));
  test("held-out documents", () =>
    expectTargetsMet(
      evaluateSummaries(loadSummaryFixture("summarize-holdout.jsonl"), "summarize held-out", SUMMARY_TARGETS.heldOutMediumRecall),
      6,
    ));
});

describe("summarize options", () => {
  const doc = items[0].text;

  test("a sentence count is honoured exactly", () => {
    for (const n of [1, 2, 3]) expect(summarize(doc, { length: n }).sentenceCount).toBe(n);
    expect(summarize(doc, { length: "2" }).sentenceCount).toBe(2);
  });

  test("sentence counts and word budgets written as text are understood", () => {
    expect(summarize(doc, { length: "3 sentences" }).sentenceCount).toBe(3);
    const budget = summarize(doc, { length: "40 words" });
    expect(budget.wordCount).toBeLessThanOrEqual(40);
    expect(budget.sentenceCount).toBeGreaterThanOrEqual(1);
    expect(isSupportedLength("a haiku")).toBe(false);
    expect(isSupportedLength("long")).toBe(true);
  });

  test("lengths grow from short to long", () => {
    const [s, m, l] = (["short", "medium", "long"] as const).map((length) => summarize(doc, { length }).wordCount);
    expect(s).toBeLessThan(m);
    expect(m).toBeLessThanOrEqual(l);
  });

  test("formats render as asked", () => {
    expect(
      summarize(doc, { format: "bullets", length: 3 })
        .summary.split("\n")
        .every((l) => l.startsWith("- ")),
    ).toBe(true);
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
    const withFigures = (audience?: string) =>
      summarize(text, { length: 2, targetAudience: audience }).sentences.filter((x) => /\d/.test(x)).length;
    expect(withFigures("executives")).toBeGreaterThan(withFigures(undefined));
    expect(withFigures("children")).toBe(0);
  });

  test("abbreviations, decimals and list markers do not break sentences", () => {
    expect(summarize("Dr. Lee paid $3.50 for it.\n- Then he left.", { length: 2 }).sentences).toEqual([
      "Dr. Lee paid $3.50 for it.",
      "Then he left.",
    ]);
  });
});

// Timing is measured by `bun run bench` (bench/offline.ts); set TEXTAI_TIMED_TESTS=1 to assert it here too.
test.skipIf(!process.env.TEXTAI_TIMED_TESTS)("speed: 1 KB median well under 1 ms", () => {
  const text = items
    .map((i) => i.text)
    .join(" ")
    .slice(0, 1024);
  expect(medianMs(() => summarize(text))).toBeLessThan(1);
});
