/**
 * Fits src/offline-engine/calibration.json: for each analysis that reports a confidence, a Platt curve
 * (confidence = 1 / (1 + exp(-(a * raw + b)))) over the raw confidence of its answers on the
 * TUNING split only (calibration-sets.ts names the files); the held-out splits are never read
 * here. Targets are Platt's smoothed ones ((right + 1) / (n_right + 2), 1 / (n_wrong + 2)), so a
 * small tuning set where every answer was right does not promise certainty. One fit per answer
 * kind: ticket and email categories share one (both come from the built-in intent), review
 * sentiment is the sentiment engine's. A fit is kept only when it rises with the raw confidence
 * and lowers the calibration error, cross-validated within the tuning set (five folds), below
 * the raw confidence's, and the tuning set has at least MIN_EVENTS wrong (and right) answers;
 * otherwise the raw confidence stays. Answers no function reports
 * (language confidence) get no fit.
 * Run: bun test/eval/fit-calibration.ts
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { CALIBRATED, type CalibratedAnswer, type PlattFit } from "../../src/offline-engine/calibration";
import { type Answer, calibrationSets } from "./calibration-sets";
import { calibrationFigures } from "./metrics";

/**
 * A logistic fit of two parameters needs about five events per parameter in its rarer class
 * (Vittinghoff and McCulloch, 2007): a tuning set with fewer wrong answers than this says too
 * little about when the rules err, and a fit from it would promise the tuning set's accuracy.
 */
const MIN_EVENTS = 10;
/** word counts are fitted divided by this, so Newton's steps stay on the scale of a 0-1 confidence */
const NO_EVIDENCE_SCALE = 20;

export function fitPlatt(answers: Answer[]): { a: number; b: number } {
  const pos = answers.filter((x) => x.right).length;
  const neg = answers.length - pos;
  const hi = (pos + 1) / (pos + 2);
  const lo = 1 / (neg + 2);
  let a = 1;
  let b = 0;
  // Newton's method on the log loss, with a small ridge so a separable set stays finite
  const ridge = 1e-3;
  for (let iter = 0; iter < 100; iter++) {
    let ga = ridge * a;
    let gb = 0;
    let haa = ridge;
    let hab = 0;
    let hbb = 1e-9;
    for (const x of answers) {
      const t = x.right ? hi : lo;
      const p = 1 / (1 + Math.exp(-(a * x.raw + b)));
      const d = p - t;
      const w = p * (1 - p);
      ga += d * x.raw;
      gb += d;
      haa += w * x.raw * x.raw;
      hab += w * x.raw;
      hbb += w;
    }
    const det = haa * hbb - hab * hab;
    if (Math.abs(det) < 1e-12) break;
    const da = (hbb * ga - hab * gb) / det;
    const db = (haa * gb - hab * ga) / det;
    a -= da;
    b -= db;
    if (Math.abs(da) + Math.abs(db) < 1e-9) break;
  }
  return { a, b };
}

const apply = (f: { a: number; b: number }, raw: number) => 1 / (1 + Math.exp(-(f.a * raw + f.b)));

/**
 * Calibration error of the fit on answers it was not fitted on: five folds of the tuning set
 * (every fifth answer), each scored by a fit on the other four. A fit that only lowers the error
 * on the answers it saw would not lower it on new ones.
 */
export function crossValidatedError(answers: Answer[], folds = 5): number {
  const scored: { confidence: number; right: boolean }[] = [];
  for (let k = 0; k < folds; k++) {
    const f = fitPlatt(answers.filter((_, i) => i % folds !== k));
    for (const x of answers.filter((_, i) => i % folds === k)) scored.push({ confidence: apply(f, x.raw), right: x.right });
  }
  return calibrationFigures(scored).ece;
}

if (import.meta.main) {
  const fits: Partial<Record<CalibratedAnswer | "sentiment_no_evidence", PlattFit>> = {};
  const sets = await calibrationSets();
  for (const answer of CALIBRATED) {
    const pooled = sets.filter((s) => s.answer === answer && (answer !== "sentiment" || s.name === "sentiment"));
    // a sentiment answer reached with no evidence has its own fit, over its text's length (below)
    const answers = pooled.flatMap((s) => s.tuning.answers).filter((x) => x.words === undefined);
    const files = [...new Set(pooled.map((s) => s.tuning.file))].join(", ");
    const before = calibrationFigures(answers.map((x) => ({ confidence: x.raw, right: x.right }))).ece;
    const wrong = answers.filter((x) => !x.right).length;
    const f = fitPlatt(answers);
    const after = crossValidatedError(answers);
    const keep = Math.min(wrong, answers.length - wrong) >= MIN_EVENTS && f.a > 0 && after < before;
    console.log(
      `${answer}: ${answers.length} tuning answers (${files}), ${wrong} wrong; ECE ${before.toFixed(3)} raw, ${after.toFixed(3)} fitted (5-fold cross-validated; a ${f.a.toFixed(3)}, b ${f.b.toFixed(3)}) -> ${keep ? "fit kept" : "raw kept"}`,
    );
    if (keep)
      fits[answer] = { a: Math.round(f.a * 1e4) / 1e4, b: Math.round(f.b * 1e4) / 1e4, fitted_on: files, items: answers.length };
  }
  // No-evidence sentiment answers (sentiment.ts noEvidenceWords): right as often as statements of
  // their length were, a logistic over the word count / 20 (a short statement is mostly a plain
  // fact, a long narrated one mostly a complaint or praise no rule names). Kept when it falls with
  // length, has MIN_EVENTS wrong answers, and lowers the cross-validated log loss below one share
  // for them all (a single share has no calibration error on its own data, so the error cannot tell).
  {
    const sentimentSets = sets.filter((s) => s.name === "sentiment");
    const unjudged = sentimentSets
      .flatMap((s) => s.tuning.answers)
      .filter((x) => x.words !== undefined)
      .map((x) => ({ ...x, raw: (x.words as number) / NO_EVIDENCE_SCALE }));
    const files = [...new Set(sentimentSets.map((s) => s.tuning.file))].join(", ");
    const wrong = unjudged.filter((x) => !x.right).length;
    const loss = (p: number, right: boolean) => -Math.log(Math.min(1 - 1e-6, Math.max(1e-6, right ? p : 1 - p)));
    let byShare = 0;
    let byLength = 0;
    for (let k = 0; k < 5; k++) {
      const train = unjudged.filter((_, i) => i % 5 !== k);
      const test = unjudged.filter((_, i) => i % 5 === k);
      const share = (train.filter((x) => x.right).length + 1) / (train.length + 2);
      const f = fitPlatt(train);
      for (const x of test) {
        byShare += loss(share, x.right) / unjudged.length;
        byLength += loss(apply(f, x.raw), x.right) / unjudged.length;
      }
    }
    const f = fitPlatt(unjudged);
    const keep = Math.min(wrong, unjudged.length - wrong) >= MIN_EVENTS && f.a < 0 && byLength < byShare;
    console.log(
      `sentiment with no evidence: ${unjudged.length} tuning answers (${files}), ${wrong} wrong; log loss ${byShare.toFixed(3)} as one share, ${byLength.toFixed(3)} by length (5-fold cross-validated; a ${f.a.toFixed(3)}, b ${f.b.toFixed(3)} over words / ${NO_EVIDENCE_SCALE}) -> ${keep ? "fit kept" : "sentiment fit kept"}`,
    );
    if (keep)
      fits.sentiment_no_evidence = {
        a: Math.round((f.a / NO_EVIDENCE_SCALE) * 1e4) / 1e4,
        b: Math.round(f.b * 1e4) / 1e4,
        fitted_on: files,
        items: unjudged.length,
      };
  }
  const file = join(import.meta.dir, "../../src/offline-engine/calibration.json");
  writeFileSync(file, `${JSON.stringify({ produced_by: "test/eval/fit-calibration.ts", fits }, null, 2)}\n`);
  console.log(`wrote ${file}`);
}
