/**
 * Comment moderation: accuracy of the allow / review / remove action, and how much harmful
 * content is let through (allowed although it needs review or removal). moderation.jsonl guided
 * the lexicon; moderation-holdout.jsonl was written afterwards and not tuned on (first run: 80%).
 */
import { join } from "node:path";
import { type ModerationAction, moderate } from "../../../src/offline-engine/moderation";
import { readJsonl } from "../metrics";
import { type EvalReport, type Evaluator, tuningAndHeldOut } from "../registry";

export interface ModerationItem {
  text: string;
  action: ModerationAction;
}

export const MODERATION_TARGETS = { dev: 0.85, holdout: 0.75, harmfulAllowed: 0.1 };

export function loadModerationFixture(file = "moderation.jsonl"): ModerationItem[] {
  return readJsonl(join(import.meta.dir, "../../fixtures/eval", file), (x) => x as ModerationItem);
}

const ACTIONS: ModerationAction[] = ["allow", "review", "remove"];

export function evaluateModeration(items: ModerationItem[], target: number, capability = "moderation"): EvalReport {
  const confusion = new Map<string, number>();
  const errors: string[] = [];
  let harmful = 0;
  let letThrough = 0;
  for (const it of items) {
    const r = moderate(it.text);
    confusion.set(`${it.action}|${r.action}`, (confusion.get(`${it.action}|${r.action}`) ?? 0) + 1);
    if (r.action !== it.action) errors.push(`${it.action} -> ${r.action} [${r.flaggedCategories.join(",")}]: ${it.text}`);
    if (it.action !== "allow") {
      harmful++;
      if (r.action === "allow") letThrough++;
    }
  }
  return {
    capability,
    items: items.length,
    metrics: [
      { name: "action accuracy", value: 1 - errors.length / items.length, target },
      // a "target" here is a floor, so the let-through rate is reported as its complement
      { name: "harmful caught", value: harmful ? 1 - letThrough / harmful : 1, target: 1 - MODERATION_TARGETS.harmfulAllowed },
    ],
    table: [
      ["gold \\ predicted", ...ACTIONS],
      ...ACTIONS.map((g) => [g, ...ACTIONS.map((p) => String(confusion.get(`${g}|${p}`) ?? 0))]),
    ],
    errors,
  };
}

const evaluator: Evaluator = {
  name: "moderation",
  run: () => {
    const dev = evaluateModeration(loadModerationFixture(), MODERATION_TARGETS.dev);
    const holdout = evaluateModeration(loadModerationFixture("moderation-holdout.jsonl"), MODERATION_TARGETS.holdout);
    return tuningAndHeldOut("comment moderation", dev, holdout, { table: holdout.table });
  },
};
export default evaluator;
