/** The help-center fixture and the ranking figures the search tests assert on. */
import corpus from "../fixtures/knowledge/help-center.json";

export interface FixtureDoc {
  id: string;
  title: string;
  content: string;
  metadata: Record<string, string>;
}

export const HELP_CENTER = corpus as {
  documents: FixtureDoc[];
  queries: { query: string; expected: string }[];
  filters: { query: string; filter_metadata: Record<string, string>; expected: string }[];
};

/** Recall@1 and mean reciprocal rank of the expected document, ranking documents by their best chunk. */
export function rankingFigures(rankings: { expected: string; ranked: string[] }[]): {
  recallAt1: number;
  mrr: number;
  misses: string[];
} {
  let top = 0;
  let rr = 0;
  const misses: string[] = [];
  for (const { expected, ranked } of rankings) {
    const docs = [...new Set(ranked)];
    const at = docs.indexOf(expected);
    if (at === 0) top++;
    else misses.push(`${expected} -> ${docs.slice(0, 3).join(", ") || "(nothing)"}`);
    if (at >= 0) rr += 1 / (at + 1);
  }
  return { recallAt1: top / rankings.length, mrr: rr / rankings.length, misses };
}
