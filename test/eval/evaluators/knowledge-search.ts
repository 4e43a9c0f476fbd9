/**
 * Knowledge-base search and FAQ matching: recall@1 and MRR of the answering article or FAQ, and
 * how often a question nothing answers still gets a hit, at the default floors (what a caller
 * gets without min_score / min_confidence). Tuning sets: help-center.json and faq.json (their
 * queries, typos and unanswerable lists set the scoring and the floors). Held-out sets:
 * help-center-holdout.json and faq-holdout.json, written before the relevance changes and never
 * tuned on. Search runs the inline variant, which shares its ranking code with stored bases.
 */
import { FaqMatcher } from "../../../src/knowledge/faq-match";
import { searchInline } from "../../../src/knowledge/inline";
import faqTuning from "../../fixtures/knowledge/faq.json";
import faqHoldout from "../../fixtures/knowledge/faq-holdout.json";
import helpCenter from "../../fixtures/knowledge/help-center.json";
import helpHoldout from "../../fixtures/knowledge/help-center-holdout.json";
import { type CalibrationFigures, calibrationFigures } from "../metrics";
import type { EvalReport, Evaluator } from "../registry";

export const RELEVANCE_TARGETS = { recallAt1: 0.85, unanswerableEmpty: 0.9 };

interface Labelled<T> {
  query: string;
  expected: T;
}

export interface RelevanceFigures {
  recallAt1: number;
  mrr: number;
  /** share of unanswerable queries that still got at least one hit */
  irrelevantHits: number;
  errors: string[];
}

/** Figures for a ranker that returns ids best first (empty: nothing relevant). */
export function relevanceFigures<T>(
  rank: (query: string) => T[],
  answerable: Labelled<T>[],
  unanswerable: string[],
  label = (x: T) => String(x),
): RelevanceFigures {
  let top = 0;
  let rr = 0;
  const errors: string[] = [];
  for (const { query, expected } of answerable) {
    const ranked = [...new Set(rank(query))];
    const at = ranked.indexOf(expected);
    if (at === 0) top++;
    else errors.push(`${label(expected)} -> ${ranked.slice(0, 2).map(label).join(", ") || "(nothing)"}: ${query}`);
    if (at >= 0) rr += 1 / (at + 1);
  }
  let hits = 0;
  for (const query of unanswerable) {
    const ranked = rank(query);
    if (ranked.length > 0) {
      hits++;
      errors.push(`(unanswerable) -> ${label(ranked[0] as T)}: ${query}`);
    }
  }
  return {
    recallAt1: top / answerable.length,
    mrr: rr / answerable.length,
    irrelevantHits: unanswerable.length ? hits / unanswerable.length : 0,
    errors,
  };
}

const docs = helpCenter.documents;
export const searchRanker = (minScore?: number) => (query: string) =>
  searchInline(docs, query, 5, undefined, minScore).map((s) => docs[s.document_index ?? -1]?.id ?? "?");

const matcher = new FaqMatcher(faqTuning.faqs.map((f, i) => ({ id: i, ...f })));
export const faqRanker = (minConfidence?: number) => (query: string) =>
  matcher.match(query, { minConfidence, topN: 5 }).map((m) => m.id);

export function searchReport(): { tuning: RelevanceFigures; holdout: RelevanceFigures } {
  return {
    tuning: relevanceFigures(searchRanker(), helpCenter.queries, helpCenter.unanswerable),
    holdout: relevanceFigures(searchRanker(), helpHoldout.queries, helpHoldout.unanswerable),
  };
}

/** The best match of every query at min_confidence 0, right when it is the expected FAQ (never, for unanswerable ones). */
export function faqCalibration(answerable: Labelled<number>[], unanswerable: string[]): CalibrationFigures {
  const best = (query: string) => matcher.match(query, { minConfidence: 0, topN: 1 })[0];
  const answers: { confidence: number; right: boolean }[] = [];
  for (const { query, expected } of answerable) {
    const b = best(query);
    if (b) answers.push({ confidence: b.confidence, right: b.id === expected });
  }
  for (const query of unanswerable) {
    const b = best(query);
    if (b) answers.push({ confidence: b.confidence, right: false });
  }
  return calibrationFigures(answers);
}

/** The FAQ tuning set: paraphrases, typos and harder paraphrases; off-topic and shop-adjacent questions. */
export const faqTuningAnswerable = [...faqTuning.paraphrases, ...faqTuning.typos, ...faqTuning.harder_paraphrases];
export const faqTuningUnanswerable = [...faqTuning.unrelated, ...faqTuning.shop_adjacent];

export function faqReport(): { tuning: RelevanceFigures; holdout: RelevanceFigures } {
  const faqLabel = (i: number) => faqTuning.faqs[i]?.question ?? String(i);
  return {
    tuning: relevanceFigures(faqRanker(), faqTuningAnswerable, faqTuningUnanswerable, faqLabel),
    holdout: relevanceFigures(faqRanker(), faqHoldout.queries, faqHoldout.unanswerable, faqLabel),
  };
}

function metrics(kind: string, f: RelevanceFigures, targets: boolean): EvalReport["metrics"] {
  return [
    { name: `recall@1, ${kind}`, value: f.recallAt1, ...(targets ? { target: RELEVANCE_TARGETS.recallAt1 } : {}) },
    { name: `MRR, ${kind}`, value: f.mrr },
    {
      name: `unanswerable left empty, ${kind}`,
      value: 1 - f.irrelevantHits,
      ...(targets ? { target: RELEVANCE_TARGETS.unanswerableEmpty } : {}),
    },
  ];
}

export function relevanceReport(
  capability: string,
  r: { tuning: RelevanceFigures; holdout: RelevanceFigures },
  items: number,
): EvalReport {
  return {
    capability,
    items,
    metrics: [...metrics("tuning", r.tuning, false), ...metrics("held-out", r.holdout, true)],
    errors: [...r.tuning.errors, ...r.holdout.errors.map((e) => `held-out: ${e}`)],
  };
}

const evaluator: Evaluator = {
  name: "knowledge-search",
  run: () =>
    relevanceReport(
      "knowledge-base search, default floor (tuning set + held-out set)",
      searchReport(),
      helpCenter.queries.length + helpCenter.unanswerable.length + helpHoldout.queries.length + helpHoldout.unanswerable.length,
    ),
};
export default evaluator;
