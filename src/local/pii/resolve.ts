import type { PiiEntity } from "./types";

/**
 * Keeps a set of non-overlapping entities. Higher scores win; a longer span that contains the
 * spans it overlaps wins over them when its score is close (an address swallowing the given name
 * in "12 Jordan Street" is one address, not a name plus a fragment).
 */
export function resolveOverlaps(candidates: PiiEntity[]): PiiEntity[] {
  const sorted = [...candidates].sort((a, b) => b.score - a.score || b.end - b.start - (a.end - a.start) || a.start - b.start);
  let kept: PiiEntity[] = [];
  for (const c of sorted) {
    if (!kept.some((k) => k.start < c.end && c.start < k.end)) {
      kept.push(c);
      continue;
    }
    const clashes = kept.filter((k) => k.start < c.end && c.start < k.end);
    const containsAll = clashes.every((k) => c.start <= k.start && k.end <= c.end && c.end - c.start > k.end - k.start);
    if (containsAll && clashes.every((k) => c.score >= k.score - 0.1)) {
      kept = kept.filter((k) => !clashes.includes(k));
      kept.push(c);
    }
  }
  return kept.sort((a, b) => a.start - b.start);
}
