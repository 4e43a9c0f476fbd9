/**
 * Grammar and spelling (Harper): share of faulty sentences corrected to exactly the expected
 * text, and share of correct sentences left untouched (false alarms). Its errors guided how a
 * suggestion is chosen; the remaining misses are errors Harper does not flag ("for you help",
 * "the results was"). grammar-holdout.jsonl was written afterwards and not tuned on (first run:
 * 10/12 faulty fixed exactly, 4/4 clean untouched; "accidently" became "accident's").
 */
import { join } from "node:path";
import { fixGrammar } from "../../../src/offline-engine/grammar";
import { readJsonl } from "../metrics";
import { type EvalReport, type Evaluator, tuningAndHeldOut } from "../registry";

export interface GrammarItem {
  text: string;
  expected: string;
}

export const GRAMMAR_TARGETS = { exact: 0.6, clean: 0.9 };

export function loadGrammarFixture(file = "grammar.jsonl"): GrammarItem[] {
  return readJsonl(join(import.meta.dir, "../../fixtures/eval", file), (x) => x as GrammarItem);
}

export async function evaluateGrammar(items: GrammarItem[], capability = "grammar"): Promise<EvalReport> {
  const faulty = items.filter((i) => i.text !== i.expected);
  const clean = items.filter((i) => i.text === i.expected);
  let exact = 0;
  let untouched = 0;
  const errors: string[] = [];
  for (const it of faulty) {
    const r = await fixGrammar(it.text);
    if (r.correctedText === it.expected) exact++;
    else errors.push(`${it.text} -> ${r.correctedText}`);
  }
  for (const it of clean) {
    const r = await fixGrammar(it.text);
    if (!r.changed) untouched++;
    else errors.push(`(false alarm) ${it.text} -> ${r.correctedText}`);
  }
  return {
    capability,
    items: items.length,
    metrics: [
      { name: "faulty fixed exactly", value: exact / faulty.length, target: GRAMMAR_TARGETS.exact },
      { name: "clean left alone", value: clean.length ? untouched / clean.length : 1, target: GRAMMAR_TARGETS.clean },
    ],
    errors,
  };
}

const evaluator: Evaluator = {
  name: "grammar",
  run: async () => {
    const dev = await evaluateGrammar(loadGrammarFixture());
    const holdout = await evaluateGrammar(loadGrammarFixture("grammar-holdout.jsonl"));
    return tuningAndHeldOut("grammar", dev, holdout);
  },
};
export default evaluator;
