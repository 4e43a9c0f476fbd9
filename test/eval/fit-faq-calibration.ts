/**
 * Fits faq-match's calibration (src/knowledge/faq-match.ts: CALIBRATION, a logistic score of a
 * FAQ's features, and RELIABILITY, the accuracy observed at each score) on the tuning data only:
 * test/fixtures/knowledge/faq.json (every list), faq-dev.json and faq-nearmiss.json (its own 16
 * FAQs). The logistic: every query's three best FAQs by blend (what a caller sees with top_n 3),
 * labelled right when that FAQ answers the query, an unanswerable query's all wrong; maximum
 * likelihood by gradient descent with a little L2 on the slopes. The reliability table: each
 * query's best FAQ, its score and whether it is right; isotonic regression (pool adjacent
 * violators), each block's accuracy smoothed as (right + 1) / (n + 2). Prints both to copy into
 * faq-match.ts. Never reads the held-out sets (faq-holdout*.json, faq-nearmiss-blind.json).
 * `bun test/eval/fit-faq-calibration.ts`
 */
import { CALIBRATION, calibrationScore, FaqMatcher, type Features } from "../../src/knowledge/faq-match";
import shop from "../fixtures/knowledge/faq.json";
import dev from "../fixtures/knowledge/faq-dev.json";
import nearMiss from "../fixtures/knowledge/faq-nearmiss.json";
import { fitLogistic, isotonicTable } from "./logistic-isotonic";

const KEYS = ["blend", "margin", "missed", "unasked"] as const;
const points: { x: number[]; y: number }[] = [];
const best: { f: Features; y: number }[] = [];

function addSet(
  faqs: { question: string; answer: string }[],
  answerable: { query: string; expected: number }[],
  unanswerable: string[],
) {
  const matcher = new FaqMatcher(faqs.map((f, i) => ({ id: String(i), ...f })));
  const add = (query: string, expected: number | null) => {
    const all = matcher.features(query).sort((a, b) => b.features.blend - a.features.blend);
    all.slice(0, 3).forEach(({ it, features }, rank) => {
      if (features.blend <= 0) return;
      const y = expected !== null && it.faq.id === String(expected) ? 1 : 0;
      points.push({ x: KEYS.map((k) => features[k]), y });
      if (rank === 0) best.push({ f: features, y });
    });
  };
  for (const c of answerable) add(c.query, c.expected);
  for (const q of unanswerable) add(q, null);
}

addSet(shop.faqs, [...shop.paraphrases, ...shop.typos, ...shop.harder_paraphrases], [...shop.unrelated, ...shop.shop_adjacent]);
addSet(shop.faqs, dev.queries, dev.unanswerable);
addSet(
  nearMiss.faqs,
  nearMiss.queries,
  nearMiss.unanswerable.map((u) => u.query),
);

const w = fitLogistic(points, [-4, 8, 5, 0, 0]);
Object.assign(CALIBRATION, { bias: w[0], ...Object.fromEntries(KEYS.map((k, i) => [k, w[i + 1]])) });
const { table, blocks } = isotonicTable(
  best.map((b) => ({ s: calibrationScore(b.f), y: b.y })),
  "carry",
);
console.log(
  `${points.length} points (${points.filter((p) => p.y).length} right); ${best.length} best matches in ${blocks.length} blocks`,
);
console.log(
  `export const CALIBRATION = ${JSON.stringify(CALIBRATION).replace(/"/g, "").replace(/:/g, ": ").replace(/,/g, ", ")};`,
);
console.log(`export const RELIABILITY: readonly (readonly [number, number])[] = ${JSON.stringify(table)};`);
for (const b of blocks) console.log(`  block n=${b.n} right=${b.right}`);
