/**
 * Prints the offline engine's figures: `bun run eval [name...] [--errors] [--strict]`.
 * --errors lists misclassified items; --strict exits 1 when a figure is below its target.
 */
import { type EvalReport, loadEvaluators, shortfalls } from "./registry";

const args = process.argv.slice(2);
const names = args.filter((a) => !a.startsWith("--"));
const showErrors = args.includes("--errors");

function print(report: EvalReport, ms: number): void {
  console.log(`\n== ${report.capability} (${report.items} items, ${ms.toFixed(0)} ms)`);
  for (const m of report.metrics) {
    const target = m.target === undefined ? "" : `  (target ${m.target}${m.value >= m.target ? ", met" : ", NOT MET"})`;
    console.log(`  ${m.name.padEnd(24)} ${m.value.toFixed(3)}${target}`);
  }
  if (report.table) {
    const widths = report.table[0].map((_, c) => Math.max(...(report.table ?? []).map((r) => r[c].length)));
    for (const row of report.table) console.log(`  ${row.map((cell, c) => cell.padEnd(widths[c])).join("  ")}`);
  }
  if (showErrors && report.errors?.length) for (const e of report.errors) console.log(`    ${e}`);
}

const problems: string[] = [];
for (const evaluator of await loadEvaluators()) {
  if (names.length && !names.includes(evaluator.name)) continue;
  const t0 = performance.now();
  const report = await evaluator.run();
  print(report, performance.now() - t0);
  problems.push(...shortfalls(report));
}
if (problems.length) {
  console.log(`\nbelow target:\n  ${problems.join("\n  ")}`);
  if (args.includes("--strict")) process.exit(1);
}
