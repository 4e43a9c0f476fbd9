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

const KEYS = ["blend", "margin", "missed", "unasked"] as const;
const points: { x: number[]; y: number }[] = [];
const best: { f: Features; y: number }[] = [];

function addSet(
  faqs: { question: string; answer: string }[],
  answerable: { query: string; expected: number }[],
  unanswerable: string[],
) {
  const matcher = new FaqMatcher(faqs.map((f, i) => ({ id: i, ...f })));
  const add = (query: string, expected: number | null) => {
    const all = matcher.features(query).sort((a, b) => b.features.blend - a.features.blend);
    all.slice(0, 3).forEach(({ it, features }, rank) => {
      if (features.blend <= 0) return;
      const y = it.faq.id === expected ? 1 : 0;
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

const L2 = 0.001;
const w = [-4, 8, 5, 0, 0]; // bias, then KEYS
const z = (x: number[]) => (w[0] as number) + x.reduce((s, v, i) => s + (w[i + 1] as number) * v, 0);
for (let step = 0; step < 60_000; step++) {
  const g = w.map(() => 0);
  for (const p of points) {
    const e = 1 / (1 + Math.exp(-z(p.x))) - p.y;
    g[0] = (g[0] as number) + e;
    p.x.forEach((v, i) => {
      g[i + 1] = (g[i + 1] as number) + e * v;
    });
  }
  // L2 on the slopes: the points, nearly separable, would otherwise push them without bound.
  for (let i = 1; i < w.length; i++) g[i] = (g[i] as number) + L2 * (w[i] as number) * points.length;
  for (let i = 0; i < w.length; i++) w[i] = (w[i] as number) - (2 * (g[i] as number)) / points.length;
}
const round = (v: number) => Math.round(v * 100) / 100;
Object.assign(CALIBRATION, {
  bias: round(w[0] as number),
  ...Object.fromEntries(KEYS.map((k, i) => [k, round(w[i + 1] as number)])),
});

// Isotonic regression of right-or-wrong on the score of each query's best FAQ.
const scored = best.map((b) => ({ s: calibrationScore(b.f), y: b.y })).sort((a, b) => a.s - b.s);
let blocks: { n: number; right: number; sum: number }[] = [];
for (const p of scored) {
  blocks.push({ n: 1, right: p.y, sum: p.s });
  while (blocks.length > 1) {
    const b = blocks[blocks.length - 1] as { n: number; right: number; sum: number };
    const a = blocks[blocks.length - 2] as { n: number; right: number; sum: number };
    if (a.right / a.n < b.right / b.n) break;
    blocks = [...blocks.slice(0, -2), { n: a.n + b.n, right: a.right + b.right, sum: a.sum + b.sum }];
  }
}
let floor = 0;
const table = blocks.map((b) => {
  floor = Math.max(floor, (b.right + 1) / (b.n + 2));
  return [Math.round((b.sum / b.n) * 1000) / 1000, Math.round(floor * 1000) / 1000] as const;
});
console.log(
  `${points.length} points (${points.filter((p) => p.y).length} right); ${best.length} best matches in ${blocks.length} blocks`,
);
console.log(
  `export const CALIBRATION = ${JSON.stringify(CALIBRATION).replace(/"/g, "").replace(/:/g, ": ").replace(/,/g, ", ")};`,
);
console.log(`export const RELIABILITY: readonly (readonly [number, number])[] = ${JSON.stringify(table)};`);
for (const b of blocks) console.log(`  block n=${b.n} right=${b.right}`);
