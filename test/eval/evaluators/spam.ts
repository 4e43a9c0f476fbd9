/**
 * Spam: binary accuracy, precision and recall at strictness medium on comments, emails and
 * messages. spam.jsonl guided the signal weights; spam-holdout.jsonl was written afterwards and
 * not tuned on (first run: 90%, no false positive).
 */
import { join } from "node:path";
import { detectSpam } from "../../../src/offline-engine/spam";
import { prf, readJsonl } from "../metrics";
import { type EvalReport, type Evaluator, tuningAndHeldOut } from "../registry";

export interface SpamItem {
  text: string;
  spam: boolean;
}

export const SPAM_TARGETS = { accuracy: 0.85, precision: 0.9 };

export function loadSpamFixture(file = "spam.jsonl"): SpamItem[] {
  return readJsonl(join(import.meta.dir, "../../fixtures/eval", file), (x) => x as SpamItem);
}

export function evaluateSpam(items: SpamItem[], capability = "spam"): EvalReport {
  const c = { tp: 0, fp: 0, fn: 0 };
  const errors: string[] = [];
  for (const it of items) {
    const r = detectSpam(it.text, { contentType: "comment" });
    if (r.isSpam && it.spam) c.tp++;
    else if (r.isSpam) c.fp++;
    else if (it.spam) c.fn++;
    if (r.isSpam !== it.spam)
      errors.push(`${it.spam ? "spam" : "ham"} scored ${r.spamScore} [${r.signals.map((s) => s.name).join(",")}]: ${it.text}`);
  }
  const { precision, recall } = prf(c);
  return {
    capability,
    items: items.length,
    metrics: [
      { name: "accuracy", value: 1 - errors.length / items.length, target: SPAM_TARGETS.accuracy },
      { name: "precision", value: precision, target: SPAM_TARGETS.precision },
      { name: "recall", value: recall },
    ],
    errors,
  };
}

const evaluator: Evaluator = {
  name: "spam",
  run: () => {
    const dev = evaluateSpam(loadSpamFixture());
    const holdout = evaluateSpam(loadSpamFixture("spam-holdout.jsonl"));
    return tuningAndHeldOut("spam, strictness medium", dev, holdout, { labels: ["tuning set", "held-out set"] });
  },
};
export default evaluator;
