/**
 * The evaluation registry. An evaluator is a file in test/eval/evaluators/ whose default export
 * is an `Evaluator`; `bun run eval` discovers and runs them all, so adding a capability's figures
 * touches one new file and nothing shared.
 */

import { join } from "node:path";
import { Glob } from "bun";

export interface Metric {
  /** e.g. "email F1", "accuracy" */
  name: string;
  value: number;
  /** the figure the capability is held to; tests fail below it */
  target?: number;
}

export interface EvalReport {
  capability: string;
  items: number;
  metrics: Metric[];
  /** optional detail rows (first row = header) printed under the metrics */
  table?: string[][];
  /** a few misclassified items, for whoever improves the capability */
  errors?: string[];
}

export interface Evaluator {
  name: string;
  run: () => EvalReport | Promise<EvalReport>;
}

function isEvaluator(x: unknown): x is Evaluator {
  return typeof x === "object" && x !== null && "name" in x && "run" in x && typeof x.run === "function";
}

export async function loadEvaluators(dir = join(import.meta.dir, "evaluators")): Promise<Evaluator[]> {
  const found: Evaluator[] = [];
  for (const file of [...new Glob("*.ts").scanSync(dir)].sort()) {
    const mod: { default?: unknown } = await import(join(dir, file));
    if (isEvaluator(mod.default)) found.push(mod.default);
  }
  return found;
}

/** Metrics below their target, as readable lines (empty when all targets are met). */
export function shortfalls(report: EvalReport): string[] {
  return report.metrics
    .filter((m) => m.target !== undefined && m.value < m.target)
    .map((m) => `${report.capability}: ${m.name} ${m.value.toFixed(3)} < target ${m.target}`);
}

/**
 * One report from a tuning set and a held-out set: items add up, every metric appears twice with
 * the set named after it (", tuning" and ", held-out" unless `labels` says otherwise).
 */
export function tuningAndHeldOut(
  capability: string,
  dev: EvalReport,
  holdout: EvalReport,
  opts: { labels?: [string, string]; table?: EvalReport["table"] } = {},
): EvalReport {
  const [tuning, heldOut] = opts.labels ?? ["tuning", "held-out"];
  const report: EvalReport = {
    capability: `${capability} (tuning set + held-out set)`,
    items: dev.items + holdout.items,
    metrics: [
      ...dev.metrics.map((m) => ({ ...m, name: `${m.name}, ${tuning}` })),
      ...holdout.metrics.map((m) => ({ ...m, name: `${m.name}, ${heldOut}` })),
    ],
    errors: [...(dev.errors ?? []), ...(holdout.errors ?? [])],
  };
  if (opts.table) report.table = opts.table;
  return report;
}
