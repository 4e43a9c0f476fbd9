import { Type as T } from "@sinclair/typebox";
import { defineFunction } from "../../src/functions/define";

/**
 * A minimal function for core tests: counts words locally (an honest offline computation), so the
 * pipeline can be exercised without the catalog. `calls` counts real executions (cache misses).
 */
export const calls = { count: 0 };

export const wordCount = defineFunction({
  name: "word-count",
  path: "/api/v1/ai/word-count",
  summary: "Counts words",
  request: T.Object({
    text: T.String({ minLength: 1 }),
    delay_ms: T.Optional(T.Integer({ minimum: 0, maximum: 5000 })),
    model: T.Optional(T.String()),
  }),
  result: T.Object({ words: T.Integer({ minimum: 0 }) }),
  cost: 1,
  rateClass: "standard",
  promptVersion: 1,
  prompt: (req) => [{ role: "user", content: `Count the words: ${req.text}` }],
  preferLocal: true,
  local: async (req) => {
    calls.count++;
    if (req.delay_ms) await Bun.sleep(req.delay_ms);
    return { words: req.text.split(/\s+/).filter(Boolean).length };
  },
  example: { request: { text: "hello world" }, result: { words: 2 } },
});

export const heavyCount = defineFunction({
  ...wordCount,
  name: "email-analyze-test",
  path: "/api/v1/ai/heavy-count",
  rateClass: "heavy",
  cost: 2,
});
