/**
 * Keywords: share of editor-chosen topic words that appear in the top 5 keywords or phrases.
 * The texts were written before tuning; their misses led to verbs ending key phrases.
 */
import { join } from "node:path";
import { extractKeywords } from "../../../src/offline-engine/keywords";
import { readJsonl } from "../metrics";
import type { EvalReport, Evaluator } from "../registry";

export interface KeywordItem {
  text: string;
  topics: string[];
}

export const KEYWORD_TARGET = 0.75;

export function loadKeywordFixture(file = "keywords.jsonl"): KeywordItem[] {
  return readJsonl(join(import.meta.dir, "../../fixtures/eval", file), (x) => x as KeywordItem);
}

export function evaluateKeywords(items: KeywordItem[], capability = "keywords"): EvalReport {
  let covered = 0;
  let total = 0;
  const errors: string[] = [];
  for (const it of items) {
    const top = extractKeywords(it.text, 5).map((k) => k.keyword);
    for (const t of it.topics) {
      total++;
      if (top.some((k) => k.split(" ").includes(t))) covered++;
      else errors.push(`${t} not in [${top.join(" | ")}]`);
    }
  }
  return {
    capability,
    items: items.length,
    metrics: [{ name: "topic coverage, top 5", value: covered / total, target: KEYWORD_TARGET }],
    errors,
  };
}

const evaluator: Evaluator = { name: "keywords", run: () => evaluateKeywords(loadKeywordFixture()) };
export default evaluator;
