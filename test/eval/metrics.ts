/** Counting helpers shared by evaluators. */
import { readFileSync } from "node:fs";

export interface Counts {
  tp: number;
  fp: number;
  fn: number;
}

export function prf(c: Counts): { precision: number; recall: number; f1: number } {
  const precision = c.tp + c.fp === 0 ? 1 : c.tp / (c.tp + c.fp);
  const recall = c.tp + c.fn === 0 ? 1 : c.tp / (c.tp + c.fn);
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { precision, recall, f1 };
}

export function readJsonl<T>(path: string, parse: (x: unknown) => T): T[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => parse(JSON.parse(l)));
}

export const fmt = (x: number): string => x.toFixed(3);

export interface CalibrationFigures {
  /** expected calibration error over 10 equal-width confidence bins */
  ece: number;
  /** accuracy of the answers with confidence >= 0.8, and how many there were */
  highAccuracy: number;
  high: number;
}

/** Calibration of (confidence, right?) pairs. */
export function calibrationFigures(answers: { confidence: number; right: boolean }[]): CalibrationFigures {
  const bins = Array.from({ length: 10 }, () => ({ n: 0, conf: 0, right: 0 }));
  for (const a of answers) {
    const b = bins[Math.min(9, Math.floor(a.confidence * 10))] as { n: number; conf: number; right: number };
    b.n++;
    b.conf += a.confidence;
    b.right += a.right ? 1 : 0;
  }
  let ece = 0;
  for (const b of bins) if (b.n) ece += (b.n / answers.length) * Math.abs(b.conf / b.n - b.right / b.n);
  const high = answers.filter((a) => a.confidence >= 0.8);
  return { ece, highAccuracy: high.length ? high.filter((a) => a.right).length / high.length : 1, high: high.length };
}
