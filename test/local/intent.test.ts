import { describe, expect, test } from "bun:test";
import { BUILTIN_INTENTS, detectIntent, intentEntities } from "../../src/offline-engine/intent";
import { evaluateIntent, INTENT_TARGETS, loadIntentFixture } from "../eval/evaluators/intent";
import { expectTargetsMet, medianMs } from "./helpers";

const items = loadIntentFixture();

describe("detectIntent on labeled examples", () => {
  test("accuracy on the tuning set", () => expectTargetsMet(evaluateIntent(items, INTENT_TARGETS.dev), 50));
  test("accuracy on the held-out set (never tuned on)", () =>
    expectTargetsMet(evaluateIntent(loadIntentFixture("intent-holdout.jsonl"), INTENT_TARGETS.holdout), 30));

  test("confidence is in 0..1 and custom answers stay in the caller's list", () => {
    for (const it of items) {
      const r = detectIntent(it.text, it.intent_types);
      expect(r.confidence).toBeGreaterThanOrEqual(0);
      expect(r.confidence).toBeLessThanOrEqual(1);
      if (it.intent_types && r.matched) expect(it.intent_types).toContain(r.intent);
    }
  });
});

describe("detectIntent behaviour", () => {
  test("every built-in answer is in the documented taxonomy", () => {
    const known: readonly string[] = BUILTIN_INTENTS;
    for (const it of items.filter((i) => !i.intent_types)) expect(known).toContain(detectIntent(it.text).intent);
  });

  test("no cue: matched is false and the caller's fallback label is used", () => {
    const r = detectIntent("The weather is nice today.", ["billing", "general"]);
    expect(r.matched).toBe(false);
    expect(r.intent).toBe("general");
  });

  test("decisive cues give higher confidence than weak ones", () => {
    const strong = detectIntent("Please cancel my subscription and close my account.");
    const weak = detectIntent("Is it possible?");
    expect(strong.confidence).toBeGreaterThan(weak.confidence);
  });

  test("alternatives never outrank the answer", () => {
    const r = detectIntent("I want a refund, the product arrived broken and I'm disappointed");
    for (const a of r.alternatives) expect(a.confidence).toBeLessThanOrEqual(r.confidence);
  });
});

describe("intentEntities", () => {
  const text = "Order #A-10234 was charged $59.99 twice on March 3, 2026. Reach me at ana@example.com or +44 20 7946 0958.";

  test("fills the names the caller asks for and only those", () => {
    const e = intentEntities(text, {
      order_id: "the order number",
      amount: "money",
      contact_email: "email",
      favourite_color: "a color",
    });
    expect(e).toEqual({ order_id: "A-10234", amount: "$59.99", contact_email: "ana@example.com" });
  });

  test("without a spec, one key per entity kind", () => {
    const e = intentEntities(text);
    expect(e.email).toBe("ana@example.com");
    expect(e.amount).toBe("$59.99");
    expect(e.phone).toBe("+44 20 7946 0958");
    expect(e.date).toContain("March 3, 2026");
  });
});

// Timing is measured by `bun run bench` (bench/offline.ts); set TEXTAI_TIMED_TESTS=1 to assert it here too.
test.skipIf(!process.env.TEXTAI_TIMED_TESTS)("speed: 1 KB median well under 1 ms", () => {
  const text = items
    .map((i) => i.text)
    .join(" ")
    .slice(0, 1024);
  expect(medianMs(() => detectIntent(text))).toBeLessThan(1);
});

test("a greeting opening a longer message is not its intent; what the message asks is", () => {
  expect(detectIntent("hey can you tell me if the blue hoodie comes in XL before I order").intent).toBe("information");
  expect(detectIntent("Hi! Does the rain jacket come in other colours?").intent).toBe("information");
  expect(detectIntent("Hey, my order 5521 hasn't arrived yet").intent).toBe("order_status");
  expect(detectIntent("hello, order #A-7781 still has not arrived").intent).toBe("order_status");
  // nothing else to go on: not a greeting, and said with little confidence
  const vague = detectIntent("hi, I was wondering about something for my sister next month");
  expect(vague.intent).not.toBe("greeting");
  expect(vague.confidence).toBeLessThan(0.5);
  // a greeting alone, or with a few words, is one
  expect(detectIntent("hello").intent).toBe("greeting");
  expect(detectIntent("Hey there, anyone around?").intent).not.toBe("other");
});
