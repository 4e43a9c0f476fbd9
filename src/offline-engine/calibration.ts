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

/**
 * A sentiment answer reached with no evidence (sentiment.ts `noEvidenceWords`) is right as often as
 * statements of its length were on the tuning data: confidence = 1 / (1 + exp(-(a * words + b))).
 */
const NO_EVIDENCE = (fits.fits as { sentiment_no_evidence?: PlattFit }).sentiment_no_evidence;

/** A label's chance among positive, neutral and negative with nothing to go on. */
const NO_BETTER_THAN_A_GUESS = 0.334;

/** The confidence sentiment-analysis answers: a no-evidence answer by its length, any other through the sentiment fit. */
export function sentimentConfidence(raw: number, noEvidenceWords: number | null): number {
  if (noEvidenceWords === null || !NO_EVIDENCE) return calibrated("sentiment", raw);
  // a lexicon never knows for certain: at most 0.95, as its raw confidence (a plain statement of a few words fits 0.98);
  // and the label answered is never said to be less likely than a guess among the three (a long narrated
  // text fits under 0.01: that says "not neutral", which the engine cannot say which way)
  const fitted = Math.round(1000 / (1 + Math.exp(-(NO_EVIDENCE.a * noEvidenceWords + NO_EVIDENCE.b)))) / 1000;
  return Math.max(NO_BETTER_THAN_A_GUESS, Math.min(0.95, fitted));
}

/** The calibrated confidence of an answer whose rules gave `raw` (0..1), rounded to three places. */
export function calibrated(answer: CalibratedAnswer, raw: number): number {
  const fit = FITS[answer];
  if (!fit) return raw;
  return Math.round(1000 / (1 + Math.exp(-(fit.a * raw + fit.b)))) / 1000;
}
