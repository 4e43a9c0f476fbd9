/**
 * PII with a checkable structure (emails, US SSNs, payment cards, IPv4/IPv6 addresses, phone numbers)
 * in what systems and people paste into a gateway: CSV rows, JSON and key=value logs, vCards, iCal,
 * mail headers, chat exports, OCR'd forms, statements, receipts, server logs, URLs, institutional
 * documents; and look-alikes (order, tracking and invoice numbers, versions, ISBNs, timestamps,
 * amounts, masked cards) that must not be taken for one. pii-structured-dev.txt is the dev part
 * (tuned on; --errors lists its misses); pii-structured-blind.txt was written at the same time,
 * committed before the recognizer changed, and is run only when PII_STRUCTURED_BLIND=1 names it
 * (its misses are never printed). Its one run, after the round's last change (2026-12-06, 20:20 UTC):
 * 3 values left verbatim, recall 0.972 of 108 (docs/pii.md); it is spent.
 *
 * Figures: values left verbatim in the redacted text (the promise: none), values left in part (four
 * digits or more of a number, or four characters of an address, uncovered by any span), recall per kind
 * (a span of the same kind overlapping half of the union), and false positives: structured spans on
 * the look-alike texts (texts with one, and spans), and structured spans matching no value elsewhere.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { detectPii, type PiiType, redactPii } from "../../../src/offline-engine/pii";
import type { EvalReport, Evaluator, Metric } from "../registry";
import type { Gold } from "./pii";
import { parseLocaleSet } from "./pii-locale";

const KINDS: PiiType[] = ["email", "ssn", "credit_card", "ip_address", "phone_number"];
const STRUCTURED = new Set<PiiType>(KINDS);

const load = (file: string): Gold[] => parseLocaleSet(readFileSync(join(import.meta.dir, "../../fixtures/eval", file), "utf8"));
export const loadStructuredDev = (): Gold[] => load("pii-structured-dev.txt");
export const loadStructuredBlind = (): Gold[] => load("pii-structured-blind.txt");

const overlap = (a: { start: number; end: number }, b: { start: number; end: number }): number => {
  const inter = Math.min(a.end, b.end) - Math.max(a.start, b.start);
  return inter <= 0 ? 0 : inter / (Math.max(a.end, b.end) - Math.min(a.start, b.start));
};

const isDigit = (c: string): boolean => c >= "0" && c <= "9";
const isWordChar = (c: string): boolean => /[\p{L}\p{N}]/u.test(c);

export interface StructuredFigures {
  items: number;
  lookalikes: number;
  leaks: number;
  partial: number;
  recall: Record<string, [number, number]>;
  lookalikeTexts: number;
  lookalikeSpans: number;
  spurious: number;
  errors: string[];
}

export function structuredFigures(items: Gold[]): StructuredFigures {
  const f: StructuredFigures = {
    items: items.length,
    lookalikes: 0,
    leaks: 0,
    partial: 0,
    recall: Object.fromEntries(KINDS.map((k) => [k, [0, 0]])),
    lookalikeTexts: 0,
    lookalikeSpans: 0,
    spurious: 0,
    errors: [],
  };
  for (const item of items) {
    const gold = item.entities.filter((e) => STRUCTURED.has(e.type));
    const found = detectPii(item.text);
    const { redacted_text } = redactPii(item.text);
    const oneLine = (s: string) => s.replace(/\n/g, " ⏎ ");
    if (gold.length === 0) {
      f.lookalikes++;
      const spans = found.filter((e) => STRUCTURED.has(e.type));
      if (spans.length) {
        f.lookalikeTexts++;
        f.lookalikeSpans += spans.length;
        f.errors.push(`look-alike taken: ${spans.map((e) => `${e.type} "${e.text}"`).join(", ")} in: ${oneLine(item.text)}`);
      }
      continue;
    }
    const covered = new Uint8Array(item.text.length);
    for (const e of found) covered.fill(1, e.start, e.end);
    const used = new Set<number>();
    for (const g of gold) {
      const r = f.recall[g.type] as [number, number];
      r[1]++;
      const k = found.findIndex((p, i) => !used.has(i) && p.type === g.type && overlap(p, g) >= 0.5);
      if (k >= 0) {
        used.add(k);
        r[0]++;
      } else f.errors.push(`missed ${g.type} "${g.text}" in: ${oneLine(item.text)}`);
      if (redacted_text.includes(g.text)) {
        f.leaks++;
        f.errors.push(`LEFT VERBATIM ${g.type} "${g.text}" in: ${oneLine(redacted_text)}`);
        continue;
      }
      // the longest run of the value that no span covers: four digits of a number, four characters of an address
      let run = 0;
      let most = 0;
      for (let i = g.start; i < g.end; i++) {
        const c = item.text[i] as string;
        if (covered[i]) run = 0;
        else if (g.type === "email" ? isWordChar(c) : isDigit(c)) most = Math.max(most, ++run);
      }
      if (most >= 4) {
        f.partial++;
        f.errors.push(`left in part ${g.type} "${g.text}" in: ${oneLine(redacted_text)}`);
      }
    }
    found.forEach((p, i) => {
      if (used.has(i) || !STRUCTURED.has(p.type)) return;
      // a span of another structured kind on a value still protects it: only one over no value is spurious
      if (gold.some((g) => overlap(p, g) > 0)) return;
      f.spurious++;
      f.errors.push(`spurious ${p.type} "${p.text}" in: ${oneLine(item.text)}`);
    });
  }
  return f;
}

export function evaluateStructured(blind = process.env.PII_STRUCTURED_BLIND === "1"): EvalReport {
  const parts: [string, Gold[]][] = [["dev", loadStructuredDev()]];
  if (blind) parts.push(["blind", loadStructuredBlind()]);
  const metrics: Metric[] = [];
  const table = [["part", "kind", "gold", "recall"]];
  const errors: string[] = [];
  let items = 0;
  for (const [part, data] of parts) {
    const f = structuredFigures(data);
    items += f.items;
    metrics.push(
      { name: `structured values left verbatim, ${part}`, value: f.leaks },
      { name: `structured values left in part, ${part}`, value: f.partial },
      { name: `look-alike texts with a structured span (of ${f.lookalikes}), ${part}`, value: f.lookalikeTexts },
      { name: `structured spans on look-alikes, ${part}`, value: f.lookalikeSpans },
      { name: `spurious structured spans in texts with values, ${part}`, value: f.spurious },
    );
    let tp = 0;
    let all = 0;
    for (const k of KINDS) {
      const [hit, n] = f.recall[k] as [number, number];
      tp += hit;
      all += n;
      metrics.push({ name: `${k} recall, ${part}`, value: n ? hit / n : 1 });
      table.push([part, k, String(n), n ? (hit / n).toFixed(3) : "-"]);
    }
    table.push([part, "all", String(all), all ? (tp / all).toFixed(3) : "-"]);
    // the blind part's misses are never printed: reading them would be tuning on it
    if (part === "dev") errors.push(...f.errors);
  }
  return {
    capability: "pii structured values in pasted logs, records and documents (dev; PII_STRUCTURED_BLIND=1 adds the blind part)",
    items,
    metrics,
    table,
    errors,
  };
}

const evaluator: Evaluator = { name: "pii-structured", run: () => evaluateStructured() };
export default evaluator;
