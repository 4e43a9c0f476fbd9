/**
 * Language identification: accuracy on single sentences of the Universal Declaration of Human
 * Rights in 20 of the most spoken languages (test/fixtures/eval/language.jsonl, built by
 * build-language-fixture.ts) plus everyday sentences (language-chat.jsonl). "und" counts as wrong.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { detectLanguage } from "../../../src/offline-engine/language";
import { fmt, readJsonl } from "../metrics";
import type { EvalReport, Evaluator } from "../registry";

interface Item {
  text: string;
  lang: string;
}

const FILES = ["language.jsonl", "language-chat.jsonl"];

export function loadLanguageFixture(): Item[] {
  return FILES.map((f) => join(import.meta.dir, "../../fixtures/eval", f))
    .filter((p) => existsSync(p))
    .flatMap((p) => readJsonl(p, (x) => x as Item));
}

export function evaluateLanguage(items = loadLanguageFixture()): EvalReport {
  const perLang = new Map<string, { n: number; ok: number }>();
  const errors: string[] = [];
  let ok = 0;
  for (const item of items) {
    const got = detectLanguage(item.text).code;
    const s = perLang.get(item.lang) ?? { n: 0, ok: 0 };
    s.n++;
    if (got === item.lang) {
      s.ok++;
      ok++;
    } else errors.push(`${item.lang} -> ${got}: ${item.text.slice(0, 90)}`);
    perLang.set(item.lang, s);
  }
  const table = [["language", "items", "accuracy"], ...[...perLang].sort().map(([l, s]) => [l, String(s.n), fmt(s.ok / s.n)])];
  return {
    capability: "language",
    items: items.length,
    metrics: [{ name: "accuracy", value: ok / items.length, target: 0.95 }],
    table,
    errors,
  };
}

const evaluator: Evaluator = { name: "language", run: () => evaluateLanguage() };
export default evaluator;
