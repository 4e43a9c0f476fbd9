import { checkCpuBudget, tickCpuBudget } from "../budget";
import type { PiiEntity } from "./types";

/**
 * Keeps a set of non-overlapping entities. Higher scores win; a longer span that contains the
 * spans it overlaps wins over them when its score is close (an address swallowing the given name
 * in "12 Jordan Street" is one address, not a name plus a fragment).
 *
 * The kept entities are held in text order: they do not overlap and none is empty, so their ends
 * rise with their starts and the ones a candidate overlaps are found by binary search (a long
 * text with thousands of entities costs n log n, not n²).
 */
export function resolveOverlaps(candidates: PiiEntity[]): PiiEntity[] {
  const sorted = [...candidates].sort((a, b) => b.score - a.score || b.end - b.start - (a.end - a.start) || a.start - b.start);
  checkCpuBudget();
  const kept: PiiEntity[] = [];
  for (const c of sorted) {
    tickCpuBudget();
    // first kept entity that ends after c starts; the clashes run from there while they start before c ends
    let lo = 0;
    let hi = kept.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (kept[mid].end > c.start) hi = mid;
      else lo = mid + 1;
    }
    let last = lo;
    while (last < kept.length && kept[last].start < c.end) last++;
    if (last === lo) {
      kept.splice(lo, 0, c);
      continue;
    }
    let wins = true;
    for (let i = lo; i < last && wins; i++) {
      const k = kept[i];
      const contained = c.start <= k.start && k.end <= c.end && c.end - c.start > k.end - k.start;
      wins = contained && c.score >= k.score - 0.1;
    }
    if (wins) kept.splice(lo, last - lo, c);
  }
  return kept;
}
