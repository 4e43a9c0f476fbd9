import { readFileSync } from "node:fs";
import { join } from "node:path";

const FIXTURES = join(import.meta.dir, "..", "fixtures", "eval");

/** One JSON object per non-empty line of a labeled fixture file. */
export function loadJsonl<T>(name: string): T[] {
  return readFileSync(join(FIXTURES, name), "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as T);
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
