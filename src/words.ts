/** Words as every page, CLI line and message writes them: counts and their nouns, and the name meant by a typo. */

/**
 * A noun's plural by English's regular rules: entry → entries, day → days, box → boxes, key → keys.
 * An irregular one is given to `counted` or `noun` as `many`.
 */
export const pluralOf = (one: string): string =>
  /[^aeiou]y$/i.test(one) ? `${one.slice(0, -1)}ies` : /(s|x|z|ch|sh)$/i.test(one) ? `${one}es` : `${one}s`;

/** The noun for a count: "credit" for 1, "credits" for any other (where the count is written apart from it). */
export const noun = (n: number, one: string, many = pluralOf(one)): string => (n === 1 ? one : many);

/** "1 account", "3 accounts", "1 entry", "2 entries": a count and its noun, never "account(s)" or "1 entries". */
export const counted = (n: number, one: string, many = pluralOf(one)): string => `${n} ${noun(n, one, many)}`;

/** The known name nearest to `name` by edit distance, when near enough to be a typo. */
export function closest(name: string, known: string[]): string | null {
  let best: string | null = null;
  let bestD = Number.POSITIVE_INFINITY;
  const lower = name.toLowerCase();
  for (const k of known) {
    const d = editDistance(lower, k.toLowerCase());
    if (d < bestD) {
      bestD = d;
      best = k;
    }
  }
  return best !== null && bestD <= Math.max(2, Math.floor(name.length / 3)) ? best : null;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 8) return Number.POSITIVE_INFINITY;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++)
      cur[j] = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length] ?? Number.POSITIVE_INFINITY;
}
