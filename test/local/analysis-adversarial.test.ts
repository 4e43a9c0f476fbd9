import { describe, expect, test } from "bun:test";
import { extractEntities } from "../../src/offline-engine/extract";
import { fixGrammar } from "../../src/offline-engine/grammar";
import { detectIntent } from "../../src/offline-engine/intent";
import { extractJson, parseSchemaSpec } from "../../src/offline-engine/json-extract";
import { extractKeywords } from "../../src/offline-engine/keywords";
import { moderate } from "../../src/offline-engine/moderation";
import { parseSearchQuery } from "../../src/offline-engine/query-parse";
import { detectSpam } from "../../src/offline-engine/spam";
import { summarize } from "../../src/offline-engine/summarize";

/**
 * Linear-time guards: 100 KB (the default max_text_chars) of shapes that make backtracking
 * patterns quadratic. Quadratic code takes tens of seconds here, linear code milliseconds, so
 * the generous bound fails only on a real regression, not on a loaded machine.
 */
const SIZE = 100_000;
const SHAPES: Record<string, string> = {
  digits: "1".repeat(SIZE),
  letters: "a".repeat(SIZE),
  "letters and digits": "a1".repeat(SIZE / 2),
  "single letters": "a ".repeat(SIZE / 2),
  "dotted letters": "a.".repeat(SIZE / 2),
  "dashed codes": "AB-".repeat(SIZE / 3),
  "at signs": "x@".repeat(SIZE / 2),
  "digit pairs": "12 ".repeat(SIZE / 3),
  "comma numbers": "1,".repeat(SIZE / 2),
};

const fields = parseSchemaSpec({ name: "string", total: "number", email: "string", order_id: "string" }) ?? [];
const CAPABILITIES: Record<string, (t: string) => unknown> = {
  spam: (t) => detectSpam(t, { detectToxicity: true }),
  moderation: (t) => moderate(t),
  entities: (t) => extractEntities(t),
  intent: (t) => detectIntent(t),
  summarize: (t) => summarize(t),
  keywords: (t) => extractKeywords(t, 10),
  "query-parse": (t) => parseSearchQuery(t),
  "json-extract": (t) => extractJson(t, fields),
};

describe.each(Object.entries(CAPABILITIES))("%s on 100 KB adversarial input", (_name, run) => {
  test.each(Object.entries(SHAPES))("%s", (_shape, text) => {
    const start = performance.now();
    run(text);
    expect(performance.now() - start).toBeLessThan(3000);
  });
});

describe("grammar on 100 KB", () => {
  // Harper itself needs about a second per 100 KB; the bound catches a return to quadratic folding
  test.each([
    ["prose full of errors", "I has a apple tomorow. ".repeat(SIZE / 23)],
    ["dotted letters", "a.".repeat(SIZE / 2)],
  ])(
    "%s",
    async (_shape, text) => {
      const start = performance.now();
      const r = await fixGrammar(text);
      expect(r.correctedText.length).toBeGreaterThan(0);
      // about 11 s alone on the 2-core machine and 18 s beside other work: the bound is for a
      // quadratic fold (many minutes), not a speed figure (those are in bench/)
      expect(performance.now() - start).toBeLessThan(60_000);
    },
    90_000,
  );
});
