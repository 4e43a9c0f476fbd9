/**
 * Calibrated confidence. Each analysis reports a raw confidence from its own rules; where the
 * raw figure did not mean what it said on a tuning set, a Platt fit (a logistic curve over the
 * raw value) maps it to the share of answers that were right. The fits are data, produced by
 * test/eval/fit-calibration.ts from the tuning splits only, never the held-out ones; an answer
 * with no fit keeps its raw confidence.
 */
import fits from "./calibration.json" with { type: "json" };

/** category: the built-in category of ticket and email triage (email-classification reports it) */
export const CALIBRATED = ["sentiment", "intent", "spam", "moderation", "category"] as const;
export type CalibratedAnswer = (typeof CALIBRATED)[number];

export interface PlattFit {
  /** confidence = 1 / (1 + exp(-(a * raw + b))) */
  a: number;
  b: number;
  /** the tuning set it was fitted on, and how many answers */
  fitted_on: string;
  items: number;
}

const FITS: Partial<Record<CalibratedAnswer, PlattFit>> = fits.fits as Partial<Record<CalibratedAnswer, PlattFit>>;

/** The calibrated confidence of an answer whose rules gave `raw` (0..1), rounded to three places. */
export function calibrated(answer: CalibratedAnswer, raw: number): number {
  const fit = FITS[answer];
  if (!fit) return raw;
  return Math.round(1000 / (1 + Math.exp(-(fit.a * raw + fit.b)))) / 1000;
}
