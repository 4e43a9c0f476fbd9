/**
 * Person names and street addresses on public synthetic data: texts built by
 * build-pii-faker-fixture.ts from the locale data of @faker-js/faker (nine locales, names also in
 * ALL CAPS and lower case), a tuning set that guided the rules and a held-out set with its own
 * seed that did not. First run, before any change: name F1 0.683 / 0.733, address recall 0.429 /
 * 0.384 (tuning / held-out).
 */
import { join } from "node:path";
import { readJsonl } from "../metrics";
import type { EvalReport, Evaluator, Metric } from "../registry";
import { evaluatePii, type Gold } from "./pii";

type Items = Gold[];
const load = (file: string): Items => readJsonl(join(import.meta.dir, "../../fixtures/eval", file), (x) => x as Gold);

export const FAKER_TARGETS = { nameF1: 0.85, addressRecall: 0.7 };

export function evaluateFakerPii(): EvalReport {
  const metrics: Metric[] = [];
  const table = [["set", "type", "gold", "precision", "recall", "F1"]];
  const errors: string[] = [];
  for (const [split, file] of [
    ["tuning", "pii-faker.jsonl"],
    ["held-out", "pii-faker-holdout.jsonl"],
  ] as const) {
    const r = evaluatePii(load(file));
    const row = (type: string) => r.table?.find((t) => t[0] === type) ?? [];
    const name = row("name");
    const address = row("address");
    const held = split === "held-out";
    metrics.push(
      { name: `name F1, ${split}`, value: Number(name[4]), ...(held ? { target: FAKER_TARGETS.nameF1 } : {}) },
      { name: `address recall, ${split}`, value: Number(address[3]), ...(held ? { target: FAKER_TARGETS.addressRecall } : {}) },
    );
    for (const t of [name, address]) table.push([split, t[0], t[1], t[2], t[3], t[4]]);
    if (!held) errors.push(...(r.errors ?? []).filter((e) => /(name|address) "/.test(e)));
  }
  return {
    capability: "pii names and addresses, faker locale data (tuning + held-out)",
    items: 400,
    metrics,
    table: table.map((r) => r.map(String)),
    errors,
  };
}

const evaluator: Evaluator = { name: "pii-faker", run: evaluateFakerPii };
export default evaluator;
