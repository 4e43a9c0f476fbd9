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
