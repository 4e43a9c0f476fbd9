/**
 * Fits faq-match's calibration (the logistic map from raw blend to confidence) on the tuning
 * set test/fixtures/knowledge/faq.json only: every query's three best FAQs by raw blend (what a
 * caller sees with top_n 3), labelled right when that FAQ answers the query, unrelated queries'
 * candidates all wrong. Maximum likelihood by gradient descent; prints the slope and midpoint
 * to copy into src/knowledge/faq-match.ts. `bun test/eval/fit-faq-calibration.ts`; `--dev` adds
 * faq-dev.json (tried 2026-11-25, not committed: see the README).
 */
import { FaqMatcher } from "../../src/knowledge/faq-match";
import fixture from "../fixtures/knowledge/faq.json";
import dev from "../fixtures/knowledge/faq-dev.json";

const matcher = new FaqMatcher(fixture.faqs.map((f, i) => ({ id: String(i), ...f })));
const points: { blend: number; margin: number; y: number }[] = [];
const add = (query: string, expected: number | null) => {
  const all = matcher.blends(query).sort((a, b) => b.blend - a.blend);
  const [first, second] = all.map((b) => b.blend);
  for (const { it, blend } of all.slice(0, 3)) {
    const margin = blend - (blend === first ? (second ?? 0) : (first ?? 0));
    points.push({ blend, margin, y: it.faq.id === String(expected) ? 1 : 0 });
  }
};
for (const c of [...fixture.paraphrases, ...fixture.typos, ...fixture.harder_paraphrases]) add(c.query, c.expected);
for (const q of [...fixture.unrelated, ...fixture.shop_adjacent]) add(q, null);
if (process.argv.includes("--dev")) {
  for (const c of dev.queries) add(c.query, c.expected);
  for (const q of dev.unanswerable) add(q, null);
}

const L2 = 0.0003;
const w = { blend: 10, margin: 0, bias: -4 };
for (let step = 0; step < 100_000; step++) {
  const g = { blend: 0, margin: 0, bias: 0 };
  for (const p of points) {
    const e = 1 / (1 + Math.exp(-(w.blend * p.blend + w.margin * p.margin + w.bias))) - p.y;
    g.blend += e * p.blend;
    g.margin += e * p.margin;
    g.bias += e;
  }
  // A little L2 on the slopes: the points, nearly separable, would otherwise push them without bound.
  g.blend += L2 * w.blend * points.length;
  g.margin += L2 * w.margin * points.length;
  for (const k of ["blend", "margin", "bias"] as const) w[k] -= (2 * g[k]) / points.length;
}
console.log(
  `${points.length} points (${points.filter((p) => p.y).length} right): blend ${w.blend.toFixed(2)}, margin ${w.margin.toFixed(2)}, bias ${w.bias.toFixed(2)}`,
);
