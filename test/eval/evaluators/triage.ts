/**
 * Triage categories: the category ticket-analyze and email-analyze file a message under (the
 * built-in taxonomy: billing, technical, account, shipping...), and the sentiment review-analyze
 * gives a review (positive, negative, mixed, neutral), answered offline by each function's own
 * `local` implementation. triage-holdout.jsonl was written for this set after the rules it
 * measures, and has not been tuned on (triage.jsonl is its tuning split, written before the
 * tuning it guided). Confidence: tickets and emails take the category from the built-in intent,
 * so its confidence is the intent's; reviews report the sentiment's; both calibrated.
 */
import { join } from "node:path";
import type { AnyFunctionDef } from "../../../src/functions/define";
import emailAnalyze from "../../../src/functions/email-analyze";
import { builtinIntent, withSubject } from "../../../src/functions/offline/signals";
import reviewAnalyze from "../../../src/functions/review-analyze";
import ticketAnalyze from "../../../src/functions/ticket-analyze";
import { calibrated, sentimentConfidence } from "../../../src/offline-engine/calibration";
import { analyzeSentiment, noEvidenceWords } from "../../../src/offline-engine/sentiment";
import { calibrationFigures, readJsonl } from "../metrics";
import type { EvalReport, Evaluator, Metric } from "../registry";

export interface TriageItem {
  fn: "ticket" | "email" | "review";
  text: string;
  label: string;
}

export function loadTriageFixture(file = "triage-holdout.jsonl"): TriageItem[] {
  return readJsonl(join(import.meta.dir, "../../fixtures/eval", file), (x) => x as TriageItem);
}

const ctx = { accountId: "acct_eval" };

async function local(def: AnyFunctionDef, req: Record<string, unknown>): Promise<Record<string, unknown> | null> {
  return ((await def.local?.(req, ctx)) ?? null) as Record<string, unknown> | null;
}

/** What a triage function answers for an item, and the raw confidence that answer carries. */
export async function triageAnswer(it: TriageItem): Promise<{ got: string; raw: number; words?: number }> {
  if (it.fn === "review") {
    const r = await local(reviewAnalyze, { review: it.text });
    const s = analyzeSentiment(it.text);
    const words = noEvidenceWords(it.text, s);
    return { got: String(r?.sentiment ?? "declined"), raw: s.confidence, ...(words === null ? {} : { words }) };
  }
  const r =
    it.fn === "ticket" ? await local(ticketAnalyze, { ticket: it.text }) : await local(emailAnalyze, { email_content: it.text });
  const category = String(r?.category ?? "declined");
  // a category the engine says it does not know ("general") is an answer with no confidence
  return { got: category, raw: category === "general" ? 0 : builtinIntent(withSubject(it.text)).confidence };
}

/** The function's answer for the item and its calibrated confidence (see calibration-sets.ts). */
async function read(it: TriageItem): Promise<{ got: string; confidence: number }> {
  const { got, raw, words } = await triageAnswer(it);
  return { got, confidence: it.fn === "review" ? sentimentConfidence(raw, words ?? null) : calibrated("category", raw) };
}

export const TRIAGE_NAMES: Record<TriageItem["fn"], string> = {
  ticket: "ticket-analyze category",
  email: "email-analyze category",
  review: "review-analyze sentiment",
};

export async function evaluateTriage(items = loadTriageFixture()): Promise<EvalReport> {
  const metrics: Metric[] = [];
  const errors: string[] = [];
  const table = [["function", "items", "accuracy", "calibration error", "confident (>= 0.8)", "right when confident"]];
  for (const fn of ["ticket", "email", "review"] as const) {
    const set = items.filter((i) => i.fn === fn);
    const answers: { confidence: number; right: boolean }[] = [];
    for (const it of set) {
      const { got, confidence } = await read(it);
      const right = got === it.label;
      if (!right) errors.push(`${fn}: ${it.label} -> ${got} (${confidence.toFixed(2)}): ${it.text}`);
      answers.push({ confidence, right });
    }
    const accuracy = answers.filter((a) => a.right).length / set.length;
    const cal = calibrationFigures(answers);
    metrics.push(
      { name: `${TRIAGE_NAMES[fn]} accuracy, held-out`, value: accuracy, target: 0.8 },
      { name: `${TRIAGE_NAMES[fn]} calibration error, held-out`, value: cal.ece },
      { name: `${TRIAGE_NAMES[fn]} right when >= 0.8, held-out (${cal.high})`, value: cal.highAccuracy, target: 0.85 },
    );
    table.push([fn, String(set.length), accuracy.toFixed(3), cal.ece.toFixed(3), String(cal.high), cal.highAccuracy.toFixed(3)]);
  }
  return { capability: "triage categories (held-out set)", items: items.length, metrics, table, errors };
}

const evaluator: Evaluator = { name: "triage", run: () => evaluateTriage() };
export default evaluator;
