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

// 2026-12-06, a newcomer walkthrough: a threat joined to another act scored 0
test("a threat joined to another act ('... and hurt you') is a threat; a plain 'and' sentence is not", () => {
  for (const t of ["I will find where you live and hurt you", "You are an idiot and I will find where you live and hurt you"]) {
    const r = moderate(t);
    expect(r.categories.threat, t).toBeGreaterThanOrEqual(0.8);
    expect(r.action, t).toBe("remove");
  }
  expect(moderate("I will go home and kill some time before the match").categories.threat).toBe(0);
  expect(moderate("We will meet at noon and then discuss the plan").categories.threat).toBe(0);
});
