/**
 * PII: precision, recall and F1 per entity type on test/fixtures/eval/pii.jsonl. A prediction
 * matches a gold span of the same type when they overlap by at least half of their union
 * (boundary slips such as a trailing period still count; a different entity does not).
 * "exact" counts only identical offsets.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { detectPii, PII_TYPES, type PiiEntity, type PiiType } from "../../../src/offline-engine/pii";
import { type Counts, fmt, prf, readJsonl } from "../metrics";
import type { EvalReport, Evaluator } from "../registry";

export interface Gold {
  text: string;
  entities: { type: PiiType; start: number; end: number; text: string }[];
}

export const PII_TARGETS: Partial<Record<PiiType, number>> = {
  email: 0.95,
  credit_card: 0.95,
  ssn: 0.95,
  ip_address: 0.95,
  phone_number: 0.9,
  name: 0.8,
  address: 0.8,
};

/** Generated set: template texts with seeded values (build-pii-fixture.ts). */
export function loadPiiFixture(): Gold[] {
  return readJsonl(join(import.meta.dir, "../../fixtures/eval/pii.jsonl"), (x) => x as Gold);
}

/**
 * Hand-written sets: one text a line, `[[type|span]]` marks PII, a backslash-n is a line break.
 * pii-handwritten.txt guided the rules; pii-holdout.txt was written afterwards (see its header).
 */
export function loadHandwrittenPii(files = ["pii-handwritten.txt", "pii-holdout.txt"]): Gold[] {
  return files.flatMap((file) =>
    readFileSync(join(import.meta.dir, "../../fixtures/eval", file), "utf8")
      .split("\n")
      .filter((l) => l.trim() && !l.startsWith("#"))
      .map(parseMarked),
  );
}

function parseMarked(line: string): Gold {
  const entities: Gold["entities"] = [];
  let text = "";
  let at = 0;
  const src = line.replace(/\\n/g, "\n");
  for (const m of src.matchAll(/\[\[(\w+)\|(.+?)\]\]/g)) {
    text += src.slice(at, m.index);
    entities.push({ type: m[1] as PiiType, start: text.length, end: text.length + m[2].length, text: m[2] });
    text += m[2];
    at = m.index + m[0].length;
  }
  return { text: text + src.slice(at), entities };
}

function overlapRatio(a: { start: number; end: number }, b: { start: number; end: number }): number {
  const inter = Math.min(a.end, b.end) - Math.max(a.start, b.start);
  if (inter <= 0) return 0;
  return inter / (Math.max(a.end, b.end) - Math.min(a.start, b.start));
}

export function evaluatePii(items: Gold[] = loadPiiFixture(), capability = "pii"): EvalReport {
  const counts = new Map<PiiType, Counts>(PII_TYPES.map((t) => [t, { tp: 0, fp: 0, fn: 0 }]));
  const exact = new Map<PiiType, number>(PII_TYPES.map((t) => [t, 0]));
  const errors: string[] = [];
  for (const item of items) {
    const predicted: PiiEntity[] = detectPii(item.text);
    const used = new Set<number>();
    for (const g of item.entities) {
      const c = counts.get(g.type) as Counts;
      const k = predicted.findIndex((p, i) => !used.has(i) && p.type === g.type && overlapRatio(p, g) >= 0.5);
      if (k >= 0) {
        used.add(k);
        c.tp++;
        if (predicted[k].start === g.start && predicted[k].end === g.end) exact.set(g.type, (exact.get(g.type) ?? 0) + 1);
      } else {
        c.fn++;
        errors.push(`missed ${g.type} "${g.text}" in: ${item.text.replace(/\n/g, " ")}`);
      }
    }
    predicted.forEach((p, i) => {
      if (used.has(i)) return;
      (counts.get(p.type) as Counts).fp++;
      errors.push(`spurious ${p.type} "${p.text}" in: ${item.text.replace(/\n/g, " ")}`);
    });
  }
  const table: string[][] = [["type", "gold", "precision", "recall", "F1", "exact"]];
  const metrics = [];
  const all: Counts = { tp: 0, fp: 0, fn: 0 };
  for (const t of PII_TYPES) {
    const c = counts.get(t) as Counts;
    all.tp += c.tp;
    all.fp += c.fp;
    all.fn += c.fn;
    const gold = c.tp + c.fn;
    const { precision, recall, f1 } = prf(c);
    table.push([t, String(gold), fmt(precision), fmt(recall), fmt(f1), gold ? fmt((exact.get(t) ?? 0) / gold) : "-"]);
    metrics.push({ name: `${t} F1`, value: f1, target: PII_TARGETS[t] });
  }
  const micro = prf(all);
  metrics.push({ name: "micro F1", value: micro.f1 });
  return { capability, items: items.length, metrics, table, errors };
}

const evaluator: Evaluator = {
  name: "pii",
  run: () => evaluatePii([...loadPiiFixture(), ...loadHandwrittenPii()], "pii (all sets: generated, hand-written, held-out)"),
};
export default evaluator;
