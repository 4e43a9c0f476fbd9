import { describe, expect, test } from "bun:test";
import { MODERATION_CATEGORIES, moderate } from "../../src/local/moderation";
import { loadJsonl, medianMs } from "./helpers";

interface Item {
  text: string;
  action: "allow" | "review" | "remove";
}

const items = loadJsonl<Item>("moderation.jsonl");

describe("moderate on labeled examples", () => {
  test("action accuracy, and harmful content never allowed", () => {
    const misses: string[] = [];
    let harmfulAllowed = 0;
    for (const it of items) {
      const r = moderate(it.text);
      if (r.action !== it.action) misses.push(`${it.text} -> ${r.action} (want ${it.action}) ${r.flaggedCategories.join(",")}`);
      if (it.action !== "allow" && r.action === "allow") harmfulAllowed++;
    }
    const accuracy = 1 - misses.length / items.length;
    const harmful = items.filter((i) => i.action !== "allow").length;
    console.log(
      `moderation action accuracy ${(accuracy * 100).toFixed(1)}% on ${items.length}; harmful let through ${harmfulAllowed}/${harmful}`,
      misses.length ? `\n  ${misses.join("\n  ")}` : "",
    );
    expect(items.length).toBeGreaterThanOrEqual(40);
    expect(accuracy).toBeGreaterThanOrEqual(0.8);
    expect(harmfulAllowed / harmful).toBeLessThanOrEqual(0.1);
  });
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

test("speed: 1 KB median well under 1 ms", () => {
  const text = items
    .map((i) => i.text)
    .join(" ")
    .slice(0, 1024);
  expect(medianMs(() => moderate(text))).toBeLessThan(1);
});

test("held-out examples (never tuned on) stay accurate", () => {
  const holdout = loadJsonl<Item>("moderation-holdout.jsonl");
  const hits = holdout.filter((it) => moderate(it.text).action === it.action).length;
  console.log(`moderation holdout accuracy ${((hits / holdout.length) * 100).toFixed(1)}% on ${holdout.length}`);
  expect(hits / holdout.length).toBeGreaterThanOrEqual(0.75);
});
