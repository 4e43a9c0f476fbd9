/**
 * PII false alarms on text that holds none: the language sets (Universal Declaration of Human
 * Rights sentences and everyday requests in 20 languages), written for another purpose.
 */
import { detectPii } from "../../../src/offline-engine/pii";
import type { Evaluator } from "../registry";
import { loadLanguageFixture } from "./language";

const evaluator: Evaluator = {
  name: "pii-false-positives",
  run: () => {
    const items = loadLanguageFixture();
    const errors: string[] = [];
    for (const item of items) {
      const found = detectPii(item.text);
      if (found.length) errors.push(`${found.map((e) => `${e.type} "${e.text}"`).join(", ")} in: ${item.text.slice(0, 90)}`);
    }
    return {
      capability: "pii false alarms on PII-free text",
      items: items.length,
      metrics: [{ name: "texts with no detection", value: 1 - errors.length / items.length, target: 0.95 }],
      errors,
    };
  },
};
export default evaluator;
