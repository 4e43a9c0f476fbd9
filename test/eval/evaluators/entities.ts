/**
 * Entity extraction: precision and recall over exact (type, text) pairs. extract.jsonl guided
 * the recognizers; extract-holdout.jsonl was written afterwards (first run: P 0.929, R 0.897;
 * the two bugs it showed, a date keeping "on" and an organization spanning a line break, were fixed).
 * Measured on what the functions report (json-locale.ts textEntities: extract.ts's entities with
 * amounts and numeric dates read by the text's locale), since 2026-12-06.
 */
import { join } from "node:path";
import type { EntityType } from "../../../src/offline-engine/extract";
import { textEntities } from "../../../src/offline-engine/json-locale";
import { type Counts, prf, readJsonl } from "../metrics";
import { type EvalReport, type Evaluator, tuningAndHeldOut } from "../registry";

export interface EntityItem {
  text: string;
  entities: Partial<Record<EntityType, string[]>>;
}

export const ENTITY_TARGETS = { precision: 0.85, recall: 0.85 };
/** relative dates in the fixtures are written for this day */
export const ENTITY_REFERENCE_DATE = new Date("2026-11-21T12:00:00Z");

export function loadEntityFixture(file = "extract.jsonl"): EntityItem[] {
  return readJsonl(join(import.meta.dir, "../../fixtures/eval", file), (x) => x as EntityItem);
}

export function evaluateEntities(items: EntityItem[], capability = "entities"): EvalReport {
  const byType = new Map<string, Counts>();
  const errors: string[] = [];
  const count = (t: string) => byType.get(t) ?? (byType.set(t, { tp: 0, fp: 0, fn: 0 }).get(t) as Counts);
  for (const it of items) {
    const got = new Set(textEntities(it.text, { referenceDate: ENTITY_REFERENCE_DATE }).map((e) => `${e.type}|${e.text}`));
    const want = new Set(Object.entries(it.entities).flatMap(([t, xs]) => (xs ?? []).map((x) => `${t}|${x}`)));
    for (const g of got) {
      const type = g.split("|")[0];
      if (want.has(g)) count(type).tp++;
      else {
        count(type).fp++;
        errors.push(`extra ${g}: ${it.text}`);
      }
    }
    for (const w of want) {
      if (got.has(w)) continue;
      count(w.split("|")[0]).fn++;
      errors.push(`missing ${w}: ${it.text}`);
    }
  }
  const total = [...byType.values()].reduce((a, c) => ({ tp: a.tp + c.tp, fp: a.fp + c.fp, fn: a.fn + c.fn }), {
    tp: 0,
    fp: 0,
    fn: 0,
  });
  const all = prf(total);
  return {
    capability,
    items: items.length,
    metrics: [
      { name: "precision", value: all.precision, target: ENTITY_TARGETS.precision },
      { name: "recall", value: all.recall, target: ENTITY_TARGETS.recall },
    ],
    table: [
      ["type", "tp", "fp", "fn"],
      ...[...byType.entries()].sort().map(([t, c]) => [t, String(c.tp), String(c.fp), String(c.fn)]),
    ],
    errors,
  };
}

const evaluator: Evaluator = {
  name: "entities",
  run: () => {
    const dev = evaluateEntities(loadEntityFixture());
    const holdout = evaluateEntities(loadEntityFixture("extract-holdout.jsonl"));
    return tuningAndHeldOut("entity extraction", dev, holdout, { table: dev.table });
  },
};
export default evaluator;
