import { describe, expect, test } from "bun:test";
import { MODERATION_CATEGORIES, moderate } from "../../src/offline-engine/moderation";
import { evaluateModeration, loadModerationFixture, MODERATION_TARGETS } from "../eval/evaluators/moderation";
import { expectTargetsMet, medianMs } from "./helpers";

const items = loadModerationFixture();

describe("moderate on labeled examples", () => {
  test("tuning set", () => expectTargetsMet(evaluateModeration(items, MODERATION_TARGETS.dev), 40));
  test("held-out set (never tuned on)", () =>
    expectTargetsMet(evaluateModeration(loadModerationFixture("moderation-holdout.jsonl"), MODERATION_TARGETS.holdout), 20));
});

describe("moderate policy", () => {
  test("self-harm goes to review, never removed", () => {
    const r = moderate("I want to kill myself");
    expect(r.action).toBe("review");
    expect(r.flaggedCategories).toContain("self_harm");
  });

  test("a strict platform removes profanity that a general one reviews", () => {
    const text = "this shit is broken";
    expect(moderate(text).action).toBe("review");
    expect(moderate(text, { platform: "kids app" }).action).toBe("remove");
  });

  test("every category is scored in 0..1 and flagged is consistent with action", () => {
    for (const it of items.slice(0, 10)) {
      const r = moderate(it.text);
      for (const c of MODERATION_CATEGORIES) {
        expect(r.categories[c]).toBeGreaterThanOrEqual(0);
        expect(r.categories[c]).toBeLessThanOrEqual(1);
      }
      expect(r.flagged).toBe(r.action !== "allow");
    }
  });
});

// Timing is measured by `bun run bench` (bench/offline.ts); set TEXTAI_TIMED_TESTS=1 to assert it here too.
test.skipIf(!process.env.TEXTAI_TIMED_TESTS)("speed: 1 KB median well under 1 ms", () => {
  const text = items
    .map((i) => i.text)
    .join(" ")
    .slice(0, 1024);
  expect(medianMs(() => moderate(text))).toBeLessThan(1);
});

test("superlatives of insult words are insults (mild alone); scores are reported with three decimals at most", () => {
  for (const text of ["This is the dumbest take I have read all week", "The stupidest idea, honestly.", "an even dumber plan"]) {
    const r = moderate(text);
    expect(r.categories.insult, text).toBeGreaterThan(0);
    expect(r.severity, text).not.toBe("none");
    for (const v of Object.values(r.categories)) expect(Math.round(v * 1000) / 1000, text).toBe(v);
  }
});
