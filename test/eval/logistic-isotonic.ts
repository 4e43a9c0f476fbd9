/**
 * The two-step calibration fit shared by fit-faq-calibration.ts and fit-chatbot-calibration.ts:
 * a logistic score of some features by maximum likelihood (gradient descent, a little L2 on the
 * slopes: nearly separable points would otherwise push them without bound), then the accuracy
 * observed at that score by isotonic regression (pool adjacent violators), each block's accuracy
 * smoothed as (right + 1) / (n + 2) so no confidence says more than the data shows, and blocks
 * pooled again where smoothing broke their order.
 */

/** Coefficients (bias first, then one per feature, rounded to 0.01). */
export function fitLogistic(points: { x: number[]; y: number }[], start: number[], l2 = 0.001, steps = 60_000): number[] {
  const w = [...start];
  const z = (x: number[]) => (w[0] as number) + x.reduce((s, v, i) => s + (w[i + 1] as number) * v, 0);
  for (let step = 0; step < steps; step++) {
    const g = w.map(() => 0);
    for (const p of points) {
      const e = 1 / (1 + Math.exp(-z(p.x))) - p.y;
      g[0] = (g[0] as number) + e;
      p.x.forEach((v, i) => {
        g[i + 1] = (g[i + 1] as number) + e * v;
      });
    }
    for (let i = 1; i < w.length; i++) g[i] = (g[i] as number) + l2 * (w[i] as number) * points.length;
    for (let i = 0; i < w.length; i++) w[i] = (w[i] as number) - (2 * (g[i] as number)) / points.length;
  }
  return w.map((v) => Math.round(v * 100) / 100);
}

/** (mean score, smoothed accuracy) per isotonic block, ascending and non-decreasing. */
export function isotonicTable(
  scored: { s: number; y: number }[],
  /** how the smoothed table stays non-decreasing: each block at least the one before it (the FAQ
   * fit of 2026-11-26), or blocks pooled again (right when a small first block would lift the rest) */
  order: "carry" | "pool" = "pool",
): { table: [number, number][]; blocks: { n: number; right: number }[] } {
  let blocks: { n: number; right: number; sum: number }[] = [];
  for (const p of [...scored].sort((a, b) => a.s - b.s)) {
    blocks.push({ n: 1, right: p.y, sum: p.s });
    while (blocks.length > 1) {
      const b = blocks[blocks.length - 1] as { n: number; right: number; sum: number };
      const a = blocks[blocks.length - 2] as { n: number; right: number; sum: number };
      if (a.right / a.n < b.right / b.n) break;
      blocks = [...blocks.slice(0, -2), { n: a.n + b.n, right: a.right + b.right, sum: a.sum + b.sum }];
    }
  }
  const smoothed = (b: { n: number; right: number }) => (b.right + 1) / (b.n + 2);
  if (order === "carry") {
    let floor = 0;
    const table = blocks.map((b): [number, number] => {
      floor = Math.max(floor, smoothed(b));
      return [Math.round((b.sum / b.n) * 1000) / 1000, Math.round(floor * 1000) / 1000];
    });
    return { table, blocks };
  }
  // Smoothing can break the order a small block had (1 wrong of 1 -> 0.333): pool again on the smoothed values.
  let pooled: typeof blocks = [];
  for (const b of blocks) {
    pooled.push(b);
    while (pooled.length > 1) {
      const y = pooled[pooled.length - 1] as (typeof blocks)[number];
      const x = pooled[pooled.length - 2] as (typeof blocks)[number];
      if (smoothed(x) <= smoothed(y)) break;
      pooled = [...pooled.slice(0, -2), { n: x.n + y.n, right: x.right + y.right, sum: x.sum + y.sum }];
    }
  }
  blocks = pooled;
  const table = blocks.map((b): [number, number] => [
    Math.round((b.sum / b.n) * 1000) / 1000,
    Math.round(smoothed(b) * 1000) / 1000,
  ]);
  return { table, blocks };
}
