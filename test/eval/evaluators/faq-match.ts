/**
 * FAQ matching at the default min_confidence, and the calibration of its confidence (best match
 * of every query at min_confidence 0: expected calibration error, accuracy of answers >= 0.8).
 * The data and the relevance figures are described in knowledge-search.ts.
 */
import type { Evaluator } from "../registry";
import {
  faqCalibration,
  faqDevItems,
  faqHeldOut,
  faqNearMiss,
  faqNearMissItems,
  faqReport,
  faqTuningAnswerable,
  faqTuningUnanswerable,
  relevanceReport,
} from "./knowledge-search";

export const FAQ_HIGH_CONFIDENCE_TARGET = 0.85;

const evaluator: Evaluator = {
  name: "faq-match",
  run: () => {
    const report = relevanceReport(
      "faq-match, default min_confidence (tuning and dev sets + two held-out sets)",
      faqReport(),
      faqTuningAnswerable.length +
        faqTuningUnanswerable.length +
        faqDevItems +
        faqHeldOut.queries.length +
        faqHeldOut.unanswerable.length +
        faqNearMissItems,
    );
    const tuning = faqCalibration(faqTuningAnswerable, faqTuningUnanswerable);
    const holdout = faqCalibration(faqHeldOut.queries, faqHeldOut.unanswerable);
    report.metrics.push(
      { name: "calibration error, tuning", value: tuning.ece },
      { name: "calibration error, held-out, both", value: holdout.ece },
      { name: `right when >= 0.8, tuning (${tuning.high})`, value: tuning.highAccuracy },
      {
        name: `right when >= 0.8, held-out, both (${holdout.high})`,
        value: holdout.highAccuracy,
        target: FAQ_HIGH_CONFIDENCE_TARGET,
      },
    );
    // The near-miss sets (issue 24.15): calibration and reliability; the blind part's misses are never printed.
    for (const part of ["tuning", "blind"] as const) {
      const f = faqNearMiss(part);
      report.metrics.push(
        { name: `near misses ${part}: recall@1`, value: f.relevance.recallAt1 },
        { name: `near misses ${part}: unanswerable left empty`, value: 1 - f.relevance.irrelevantHits },
        { name: `near misses ${part}: calibration error`, value: f.ece },
        { name: `near misses ${part}: right when >= 0.8 (${f.high})`, value: f.highAccuracy },
      );
      for (const k of f.kinds) {
        report.metrics.push(
          { name: `near misses ${part}, ${k.kind} (${k.n}): mean confidence`, value: k.confidence },
          { name: `near misses ${part}, ${k.kind} (${k.n}): right`, value: k.right },
        );
      }
      f.bins.forEach((b, i) => {
        const range = `${(i / 5).toFixed(1)}-${((i + 1) / 5).toFixed(1)}`;
        if (b.n)
          report.metrics.push({
            name: `near misses ${part}, confidence ${range} (${b.n}, mean ${b.confidence.toFixed(3)}): accuracy`,
            value: b.accuracy,
          });
      });
      if (part === "tuning") report.errors = [...(report.errors ?? []), ...f.relevance.errors.map((e) => `near misses: ${e}`)];
    }
    return report;
  },
};
export default evaluator;
