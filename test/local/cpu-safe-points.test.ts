import { describe, expect, test } from "bun:test";
import piiRedaction from "../../src/functions/pii-redaction";
import { safePointsPassed, withCpuBudget } from "../../src/offline-engine/budget";
import { extractKeywords } from "../../src/offline-engine/keywords";
import { detectPii } from "../../src/offline-engine/pii";
import { analyzeSentiment } from "../../src/offline-engine/sentiment";
import { valenceSum } from "../../src/offline-engine/sentiment/vader";
import { judge, resultSchema } from "../../src/providers/answer";
import { fill, SHAPES, SIZE } from "../helpers/adversarial";

/**
 * A call under a CPU budget can only stop where it looks at the budget (a safe point). These
 * tests count safe points, not milliseconds: inside one unbroken 100 KB text (no sentence break,
 * no clause break) the engine must look at its budget at least once per thousand characters.
 * Before, it looked once per sentence or clause, so 100 KB of emoji passed 2 safe points and a
 * request overshot its budget by up to 80 ms.
 */

/** Safe points `run` passes, under a budget it cannot run out of. */
async function safePoints(run: () => unknown): Promise<number> {
  return withCpuBudget(600_000, async () => {
    await run();
    return safePointsPassed() ?? 0;
  });
}

/** at least one safe point per this many characters of one unbroken text */
const CHARS_PER_SAFE_POINT = 1000;

/** One "sentence" of 100 KB: words without any terminator, comma or line break. */
const unbrokenWords = `you ${fill("such a ", SIZE - 5)}!`;
const emoji = SHAPES.emoji(SIZE);

describe("safe points inside one unbroken 100 KB text", () => {
  test.each([
    ["sentiment of 100 KB of emoji (one word of 50,000 emoji)", () => analyzeSentiment(emoji)],
    ["sentiment of one 100 KB sentence of words", () => analyzeSentiment(unbrokenWords)],
    ["VADER valence of one 100 KB clause", () => valenceSum(unbrokenWords)],
    ["key phrases of one 100 KB clause", () => extractKeywords(unbrokenWords.replace("!", ""))],
    ["PII in 25,000 short sentences (25,000 name candidates)", () => detectPii(SHAPES["short sentences"](SIZE))],
  ])("%s", async (_name, run) => {
    const n = await safePoints(run);
    expect({ safePoints: n, enough: n >= SIZE / CHARS_PER_SAFE_POINT }).toEqual({ safePoints: n, enough: true });
  });
});

describe("the judge of a local answer runs under the budget, in linear work", () => {
  /** `count` distinct names after a title, each one PII the engine redacts */
  const names = (count: number) => {
    const letters = (i: number) =>
      String.fromCharCode(65 + (i % 26), 97 + (Math.floor(i / 26) % 26), 97 + (Math.floor(i / 676) % 26));
    return Array.from({ length: count }, (_, i) => `Dr ${letters(i)}son. `).join("");
  };
  const judged = async (text: string) => {
    const request = { text, return_entities: true, redaction_style: "placeholder" as const };
    const answer = await piiRedaction.local?.(request, { accountId: "acc_test" });
    return withCpuBudget(600_000, () => {
      const verdict = judge(piiRedaction, request, resultSchema(piiRedaction, request), answer);
      return { ok: verdict.ok, safePoints: safePointsPassed() ?? 0 };
    });
  };

  test("checking that 8,000 redacted names are gone is linear (a regular expression per name was quadratic: 1 s)", async () => {
    const half = await judged(names(4000));
    const full = await judged(names(8000));
    expect(half.ok && full.ok).toBe(true);
    // the judge looks at the budget as it goes, and twice the names cost about twice the work
    expect(half.safePoints).toBeGreaterThan(10);
    expect(full.safePoints / half.safePoints).toBeLessThan(2.5);
  });

  test("a model's answer that leaves a redacted value in the text still fails the check", () => {
    const text = "Hi, I'm Sarah Johnson, write to sarah.j@example.com.";
    const request = { text, return_entities: true };
    const entities = [
      { type: "name", text: "Sarah Johnson", start: 8, end: 21, score: 0.9 },
      { type: "email", text: "sarah.j@example.com", start: 32, end: 51, score: 0.99 },
    ];
    const answer = (redacted: string) => ({
      redacted_text: redacted,
      redaction_count: 2,
      counts: { name: 1, email: 1 },
      entities,
    });
    const leaked = judge(
      piiRedaction,
      request,
      resultSchema(piiRedaction, request),
      answer("Hi, I'm Sarah Johnson, write to [EMAIL]."),
    );
    expect(leaked.ok ? [] : leaked.problems).toEqual(['"Sarah Johnson" is still in redacted_text']);
    // only a whole-word occurrence is a leak: "Sarah Johnsons" is another word
    const clean = judge(piiRedaction, request, resultSchema(piiRedaction, request), answer("Hi, I'm [NAME], write to [EMAIL]."));
    expect(clean.ok).toBe(true);
    const longer = judge(piiRedaction, request, resultSchema(piiRedaction, request), answer("Hi, Sarah Johnsons, [EMAIL]."));
    expect(longer.ok).toBe(true);
  });
});

describe("VADER's negation by a judgement verb", () => {
  test("'wouldn't call it good' still flips the praise at the end of the clause", () => {
    expect(valenceSum("I wouldn't call the food at that place good").sum).toBeLessThan(0);
    expect(valenceSum("I would call the food at that place good").sum).toBeGreaterThan(0);
    // a contrast word ends its reach
    expect(valenceSum("I wouldn't call the food bad but the service was good").sum).toBeGreaterThan(0);
  });

  test("10,000 pairs of 'wouldn't call' cost linear work (a scan per pair was quadratic)", async () => {
    const text = (pairs: number) => `${"I wouldn't call it ".repeat(pairs)}good`;
    const small = await safePoints(() => valenceSum(text(5000)));
    const large = await safePoints(() => valenceSum(text(10_000)));
    expect(large / small).toBeLessThan(2.5);
  });
});
