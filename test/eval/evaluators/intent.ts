/**
 * Intent: accuracy on short customer messages, built-in taxonomy and caller labels.
 * intent.jsonl was written before tuning and its errors guided cue rules; intent-holdout.jsonl
 * was written afterwards and not tuned on (first run: 93.3%).
 */
import { join } from "node:path";
import { detectIntent } from "../../../src/offline-engine/intent";
import { readJsonl } from "../metrics";
import type { EvalReport, Evaluator } from "../registry";

export interface IntentItem {
  text: string;
  intent: string;
  intent_types?: string[];
}

export const INTENT_TARGETS = { dev: 0.9, holdout: 0.85 };

export function loadIntentFixture(file = "intent.jsonl"): IntentItem[] {
  return readJsonl(join(import.meta.dir, "../../fixtures/eval", file), (x) => x as IntentItem);
}

export function evaluateIntent(items: IntentItem[], target: number, capability = "intent"): EvalReport {
  const errors: string[] = [];
  for (const it of items) {
    const got = detectIntent(it.text, it.intent_types).intent;
    if (got !== it.intent) errors.push(`${it.intent} -> ${got}: ${it.text}`);
  }
  return {
    capability,
    items: items.length,
    metrics: [{ name: "accuracy", value: 1 - errors.length / items.length, target }],
    errors,
  };
}

const evaluator: Evaluator = {
  name: "intent",
  run: () => {
    const dev = evaluateIntent(loadIntentFixture(), INTENT_TARGETS.dev);
    const holdout = evaluateIntent(loadIntentFixture("intent-holdout.jsonl"), INTENT_TARGETS.holdout);
    return {
      capability: "intent (tuning set + held-out set)",
      items: dev.items + holdout.items,
      metrics: [
        { ...dev.metrics[0], name: "accuracy, tuning set" },
        { ...holdout.metrics[0], name: "accuracy, held-out set" },
      ],
      errors: [...(dev.errors ?? []), ...(holdout.errors ?? [])],
    };
  },
};
export default evaluator;
