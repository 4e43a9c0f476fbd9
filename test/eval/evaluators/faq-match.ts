/**
 * FAQ matching at the default min_confidence, and the calibration of its confidence (best match
 * of every query at min_confidence 0: expected calibration error, accuracy of answers >= 0.8).
 * The data and the relevance figures are described in knowledge-search.ts.
 */
import faqHoldout from "../../fixtures/knowledge/faq-holdout.json";
import type { Evaluator } from "../registry";
import { faqCalibration, faqReport, faqTuningAnswerable, faqTuningUnanswerable, relevanceReport } from "./knowledge-search";

export const FAQ_HIGH_CONFIDENCE_TARGET = 0.85;

const evaluator: Evaluator = {
  name: "faq-match",
  run: () => {
    const report = relevanceReport(
      "faq-match, default min_confidence (tuning set + held-out set)",
      faqReport(),
      faqTuningAnswerable.length + faqTuningUnanswerable.length + faqHoldout.queries.length + faqHoldout.unanswerable.length,
    );
    const tuning = faqCalibration(faqTuningAnswerable, faqTuningUnanswerable);
    const holdout = faqCalibration(faqHoldout.queries, faqHoldout.unanswerable);
    report.metrics.push(
      { name: "calibration error, tuning", value: tuning.ece },
      { name: "calibration error, held-out", value: holdout.ece },
      { name: `right when >= 0.8, tuning (${tuning.high})`, value: tuning.highAccuracy },
      {
        name: `right when >= 0.8, held-out (${holdout.high})`,
        value: holdout.highAccuracy,
        target: FAQ_HIGH_CONFIDENCE_TARGET,
      },
    );
    return report;
  },
};
export default evaluator;
