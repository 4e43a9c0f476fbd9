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
        faqHeldOut.unanswerable.length,
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
    return report;
  },
};
export default evaluator;
