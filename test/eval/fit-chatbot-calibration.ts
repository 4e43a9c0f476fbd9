/**
 * Fits the offline support chatbot's grounding confidence (src/functions/chatbot-answer.ts:
 * GROUNDING, a logistic score of the best passage's features, and GROUNDING_RELIABILITY, the
 * accuracy observed at each score) on the help-center tuning and dev sets only
 * (test/fixtures/knowledge/help-center.json, help-center-dev.json): each question's passages as
 * the bot gets them (search's best four, no floor) when the best shares two of its words (the
 * rule that stays), right when the best is the expected article,
 * an unanswerable question's always wrong. Prints both to copy into chatbot-answer.ts. Never
 * reads the held-out sets. `bun test/eval/fit-chatbot-calibration.ts`
 */
import {
  GROUNDING,
  type GroundingFeatures,
  groundingFeatures,
  groundingScore,
  PASSAGES_PER_ANSWER,
} from "../../src/functions/chatbot-answer";
import { searchInline } from "../../src/knowledge/inline";
import helpCenter from "../fixtures/knowledge/help-center.json";
import helpDev from "../fixtures/knowledge/help-center-dev.json";
import { fitLogistic, isotonicTable } from "./logistic-isotonic";

const docs = helpCenter.documents;
const KEYS = ["score", "margin", "shared"] as const;
const seen: { f: GroundingFeatures; y: number }[] = [];

function add(query: string, expected: string | null) {
  const hits = searchInline(docs, query, PASSAGES_PER_ANSWER, undefined, 0);
  const passages = hits.map((h) => ({
    document_id: docs[h.document_index ?? -1]?.id ?? "?",
    knowledge_base_id: "inline",
    title: h.title,
    content: h.content,
    score: h.score,
  }));
  const f = groundingFeatures(query, passages);
  // a passage sharing fewer than two of the question's words is never taken: the fit is over the rest
  if (f?.two) seen.push({ f, y: passages[0]?.document_id === expected ? 1 : 0 });
}

for (const set of [helpCenter, helpDev]) {
  for (const q of set.queries) add(q.query, q.expected);
  for (const q of set.unanswerable) add(q, null);
}

const w = fitLogistic(
  seen.map((p) => ({ x: KEYS.map((k) => p.f[k]), y: p.y })),
  [-3, 5, 2, 1],
);
Object.assign(GROUNDING, { bias: w[0], ...Object.fromEntries(KEYS.map((k, i) => [k, w[i + 1]])) });
const { table, blocks } = isotonicTable(seen.map((p) => ({ s: groundingScore(p.f), y: p.y })));
console.log(
  `${seen.length} questions (${seen.filter((p) => p.y).length} with the right passage first) in ${blocks.length} blocks`,
);
console.log(`export const GROUNDING = ${JSON.stringify(GROUNDING).replace(/"/g, "").replace(/:/g, ": ").replace(/,/g, ", ")};`);
console.log(`export const GROUNDING_RELIABILITY: readonly (readonly [number, number])[] = ${JSON.stringify(table)};`);
for (const b of blocks) console.log(`  block n=${b.n} right=${b.right}`);
