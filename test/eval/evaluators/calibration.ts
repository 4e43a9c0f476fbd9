/**
 * Calibration of every analysis that reports a confidence (or whose answer stands on one): for
 * the tuning split and the held-out split, accuracy, expected calibration error over ten bins,
 * and how often answers with confidence >= 0.8 are right, through the committed fits of
 * src/offline-engine/calibration.json (fitted on the tuning splits only, see fit-calibration.ts).
 */
import { calibrated, sentimentConfidence } from "../../../src/offline-engine/calibration";
import { type Answer, type CalibrationSet, calibrationSets } from "../calibration-sets";
import { calibrationFigures, fmt } from "../metrics";
import type { EvalReport, Evaluator, Metric } from "../registry";

export const CONFIDENT_TARGET = 0.85;

export interface CalibrationRow {
  name: string;
  split: "tuning" | "held-out";
  items: number;
  accuracy: number;
  ece: number;
  confident: number;
  confidentAccuracy: number;
}

function row(set: CalibrationSet, split: CalibrationRow["split"], answers: Answer[]): CalibrationRow {
  const scored = answers.map((x) => ({
    confidence:
      set.answer === "sentiment"
        ? sentimentConfidence(x.raw, x.words ?? null)
        : set.answer
          ? calibrated(set.answer, x.raw)
          : x.raw,
    right: x.right,
  }));
  const c = calibrationFigures(scored);
  return {
    name: set.name,
    split,
    items: answers.length,
    accuracy: answers.filter((x) => x.right).length / answers.length,
    ece: c.ece,
    confident: c.high,
    confidentAccuracy: c.highAccuracy,
  };
}

export async function calibrationRows(): Promise<CalibrationRow[]> {
  return (await calibrationSets()).flatMap((s) => [row(s, "tuning", s.tuning.answers), row(s, "held-out", s.heldOut.answers)]);
}

export async function evaluateCalibration(): Promise<EvalReport> {
  const sets = await calibrationSets();
  const rows = await calibrationRows();
  const metrics: Metric[] = rows
    .filter((r) => r.split === "held-out")
    .map((r) => ({
      name: `${r.name} right when >= 0.8, held-out (${r.confident})`,
      value: r.confidentAccuracy,
      target: CONFIDENT_TARGET,
    }));
  const table = [
    ["answer", "split", "items", "accuracy", "ECE", "conf >= 0.8", "right when >= 0.8", "calibration"],
    ...rows.map((r) => {
      const set = sets.find((s) => s.name === r.name);
      const how = set?.answer ? (calibrated(set.answer, 0.5) === 0.5 ? "raw" : `fit ${set.answer}`) : "raw (not reported)";
      return [r.name, r.split, String(r.items), fmt(r.accuracy), fmt(r.ece), String(r.confident), fmt(r.confidentAccuracy), how];
    }),
  ];
  const errors = sets.flatMap((s) =>
    s.heldOut.answers
      .filter((x) => !x.right && (s.answer ? calibrated(s.answer, x.raw) : x.raw) >= 0.8)
      .map((x) => `${s.name}: confident and wrong (${fmt(s.answer ? calibrated(s.answer, x.raw) : x.raw)}): ${x.note}`),
  );
  return {
    capability: "calibration of every analysis (fits from tuning splits; held-out never fitted on)",
    items: rows.reduce((n, r) => n + r.items, 0),
    metrics,
    table,
    errors,
  };
}

const evaluator: Evaluator = { name: "calibration", run: evaluateCalibration };
export default evaluator;
