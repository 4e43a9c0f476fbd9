/**
 * Sentiment: three-class accuracy on short hand-labeled texts (tweets, product and service
 * snippets) in test/fixtures/eval/sentiment.tsv. A "mixed" answer counts as the side its score
 * leans to, or neutral inside the neutral band, since the labels have three classes.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { analyzeSentiment, labelFor } from "../../../src/local/sentiment";
import type { EvalReport, Evaluator } from "../registry";

type Three = "positive" | "negative" | "neutral";
const CLASSES: Three[] = ["positive", "negative", "neutral"];

export function loadSentimentFixture(): { text: string; label: Three }[] {
  return readFileSync(join(import.meta.dir, "../../fixtures/eval/sentiment.tsv"), "utf8")
    .split("\n")
    .slice(1)
    .filter((l) => l.includes("\t"))
    .map((l) => {
      const [label, text] = l.split("\t");
      if (!CLASSES.includes(label as Three)) throw new Error(`bad label ${label}`);
      return { text, label: label as Three };
    });
}

export function threeClass(text: string): Three {
  const r = analyzeSentiment(text);
  return r.label === "mixed" ? labelFor(r.score) : r.label;
}

export function evaluateSentiment(items = loadSentimentFixture()): EvalReport {
  let correct = 0;
  const confusion = new Map<string, number>();
  const errors: string[] = [];
  for (const item of items) {
    const got = threeClass(item.text);
    if (got === item.label) correct++;
    else errors.push(`${item.label} -> ${got}: ${item.text}`);
    const key = `${item.label}|${got}`;
    confusion.set(key, (confusion.get(key) ?? 0) + 1);
  }
  const table = [
    ["gold \\ predicted", ...CLASSES],
    ...CLASSES.map((g) => [g, ...CLASSES.map((p) => String(confusion.get(`${g}|${p}`) ?? 0))]),
  ];
  const accuracy = correct / items.length;
  return {
    capability: "sentiment",
    items: items.length,
    metrics: [{ name: "three-class accuracy", value: accuracy, target: 0.75 }],
    table,
    errors,
  };
}

const evaluator: Evaluator = { name: "sentiment", run: () => evaluateSentiment() };
export default evaluator;
