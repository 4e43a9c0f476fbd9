import { expect } from "bun:test";
import { type EvalReport, shortfalls } from "../eval/registry";

/** Prints an evaluator's figures and fails on any metric below its target. */
export function expectTargetsMet(report: EvalReport, minItems: number): void {
  console.log(
    `${report.capability}: ${report.metrics.map((m) => `${m.name} ${(m.value * 100).toFixed(1)}%`).join(", ")} on ${report.items}`,
  );
  const below = shortfalls(report);
  if (below.length) console.log(`  errors:\n  ${(report.errors ?? []).join("\n  ")}`);
  expect(report.items).toBeGreaterThanOrEqual(minItems);
  expect(below).toEqual([]);
}

/** Median wall time of `fn` in milliseconds, after a warm-up. */
export function medianMs(fn: () => unknown, runs = 101): number {
  for (let i = 0; i < 20; i++) fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const s = performance.now();
    fn();
    times.push(performance.now() - s);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(runs / 2)];
}
