import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CALIBRATED } from "../../src/local/calibration";
import { calibrationSets } from "./calibration-sets";
import { CONFIDENT_TARGET, calibrationRows } from "./evaluators/calibration";
import { evaluatePii, type Gold } from "./evaluators/pii";
import { fitPlatt } from "./fit-calibration";
import { readJsonl } from "./metrics";

/**
 * The #16 figures `bun run eval` prints, held here so the printed figure and the tested one are
 * the same computation.
 */

test("confident answers (>= 0.8) are right at least 85 % of the time on every held-out set", async () => {
  const rows = (await calibrationRows()).filter((r) => r.split === "held-out");
  expect(rows.map((r) => r.name).sort()).toEqual(
    ["email category", "intent", "language", "moderation", "review sentiment", "sentiment", "spam", "ticket category"].sort(),
  );
  for (const r of rows) {
    expect(r.confidentAccuracy, `${r.name}: ${JSON.stringify(r)}`).toBeGreaterThanOrEqual(CONFIDENT_TARGET);
    expect(r.ece, `${r.name}: ${JSON.stringify(r)}`).toBeLessThan(0.35);
  }
});

test("the committed calibration fits are what fit-calibration.ts gives on the tuning splits alone", async () => {
  const committed = JSON.parse(readFileSync(join(import.meta.dir, "../../src/local/calibration.json"), "utf8")).fits as Record<
    string,
    { a: number; b: number; fitted_on: string }
  >;
  const sets = await calibrationSets();
  for (const [answer, fit] of Object.entries(committed)) {
    expect(CALIBRATED as readonly string[]).toContain(answer);
    expect(fit.fitted_on).not.toMatch(/holdout/);
    const pooled = sets.filter((s) => s.answer === answer && (answer !== "sentiment" || s.name === "sentiment"));
    const again = fitPlatt(pooled.flatMap((s) => s.tuning.answers));
    expect(again.a).toBeCloseTo(fit.a, 3);
    expect(again.b).toBeCloseTo(fit.b, 3);
  }
});

test("names and street addresses on the held-out faker set: name F1 >= 0.85, address recall >= 0.7", () => {
  const items = readJsonl(join(import.meta.dir, "../fixtures/eval/pii-faker-holdout.jsonl"), (x) => x as Gold);
  expect(items.length).toBe(200);
  const r = evaluatePii(items);
  const row = (type: string) => r.table?.find((t) => t[0] === type) ?? [];
  const nameF1 = Number(row("name")[4]);
  const addressRecall = Number(row("address")[3]);
  expect(nameF1, JSON.stringify(row("name"))).toBeGreaterThanOrEqual(0.85);
  expect(addressRecall, JSON.stringify(row("address"))).toBeGreaterThanOrEqual(0.7);
});
