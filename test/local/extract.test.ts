import { describe, expect, test } from "bun:test";
import { extractEntities } from "../../src/offline-engine/extract";
import { evaluateEntities, loadEntityFixture, ENTITY_REFERENCE_DATE as REF } from "../eval/evaluators/entities";
import { expectTargetsMet, medianMs } from "./helpers";

const items = loadEntityFixture();

describe("extractEntities on labeled examples", () => {
  test("tuning set", () => expectTargetsMet(evaluateEntities(items), 30));
  test("held-out set", () => expectTargetsMet(evaluateEntities(loadEntityFixture("extract-holdout.jsonl")), 15));
});

describe("extractEntities details", () => {
  test("offsets select the entity text exactly, even after emoji", () => {
    const text = "😀 Café order #B77812 cost €12,50 — mail zoë@example.com";
    for (const e of extractEntities(text)) expect(text.slice(e.start, e.end)).toBe(e.text);
  });

  test("money carries amount and ISO currency", () => {
    const [m] = extractEntities("Total: £1,249.50", { types: ["money"] });
    expect(m).toMatchObject({ value: 1249.5, currency: "GBP" });
    const [k] = extractEntities("budget of $2.5k", { types: ["money"] });
    expect(k.value).toBe(2500);
  });

  test("dates resolve against the reference date", () => {
    const [d] = extractEntities("see you next Friday", { types: ["date"], referenceDate: REF });
    expect(d.value).toBe("2026-11-27");
  });

  test("a money amount is not also reported as a number", () => {
    const types = extractEntities("It costs $40 for 2 people").map((e) => e.type);
    expect(types).toEqual(["money", "number"]);
  });
});

// Timing is measured by `bun run bench` (bench/offline.ts); set TEXTAI_TIMED_TESTS=1 to assert it here too.
test.skipIf(!process.env.TEXTAI_TIMED_TESTS)("speed: 1 KB median well under 1 ms", () => {
  const text = items
    .map((i) => i.text)
    .join(" ")
    .slice(0, 1024);
  expect(medianMs(() => extractEntities(text))).toBeLessThan(1);
});
