/**
 * Knowledge-base search and FAQ matching: recall@1 and MRR of the answering article or FAQ, and
 * how often a question nothing answers still gets a hit, at the default floors (what a caller
 * gets without min_score / min_confidence). Tuning sets: help-center.json and faq.json (their
 * queries, typos and unanswerable lists set the scoring and the floors). Held-out sets:
 * help-center-holdout.json and faq-holdout.json, written before the relevance changes and never
 * tuned on; help-center-holdout-2.json and faq-holdout-2.json, written on 2026-11-25 by someone
 * who saw only the documents and FAQs (not the engine, not the other queries): typos, British
 * wording, terse and chatty queries, near-miss questions. The targets apply to both held-out
 * sets pooled. help-center-dev.json and faq-dev.json (2026-11-25, written blind like held-out 2,
 * and larger) are tuning data: the old tuning sets had saturated (search 0.84 on them, 0.50 on
 * held-out 2), so a change is judged on the dev sets first. Only tuning and dev errors are listed
 * (`--errors`): held-out misses are counted, never shown, so the sets stay blind. Search runs the inline variant, which shares its ranking code
 * with stored bases.
 */
import {
  groundingConfidence,
  groundingFeatures,
  localChatAnswer,
  MIN_GROUNDING_CONFIDENCE,
  PASSAGES_PER_ANSWER,
} from "../../../src/functions/chatbot-answer";
import { FaqMatcher } from "../../../src/knowledge/faq-match";
import { searchInline } from "../../../src/knowledge/inline";
import { DEFAULT_MIN_SCORE, FORMER_MIN_SCORE } from "../../../src/knowledge/schemas";
import faqTuning from "../../fixtures/knowledge/faq.json";
import faqDev from "../../fixtures/knowledge/faq-dev.json";
import faqHoldout from "../../fixtures/knowledge/faq-holdout.json";
import faqHoldout2 from "../../fixtures/knowledge/faq-holdout-2.json";
import nearMissTuning from "../../fixtures/knowledge/faq-nearmiss.json";
import nearMissBlind from "../../fixtures/knowledge/faq-nearmiss-blind.json";
import helpCenter from "../../fixtures/knowledge/help-center.json";
import helpDev from "../../fixtures/knowledge/help-center-dev.json";
import helpHoldout from "../../fixtures/knowledge/help-center-holdout.json";
import helpHoldout2 from "../../fixtures/knowledge/help-center-holdout-2.json";
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
/** Each query's five best snippets with no floor, searched once: the floors and the chatbot below are read from them. */
const searched = new Map<string, ReturnType<typeof searchInline>>();
const searchOnce = (query: string) => {
  let hits = searched.get(query);
  if (!hits) {
    hits = searchInline(docs, query, 5, undefined, 0);
    searched.set(query, hits);
  }
  return hits;
};
export const searchRanker = (minScore?: number) => (query: string) =>
  searchOnce(query)
    .filter((s) => s.score >= (minScore ?? DEFAULT_MIN_SCORE))
    .map((s) => docs[s.document_index ?? -1]?.id ?? "?");

// entry ids are strings (a stored entry's is random); here each is its index in the fixture
const matcher = new FaqMatcher(faqTuning.faqs.map((f, i) => ({ id: String(i), ...f })));
export const faqRanker = (minConfidence?: number) => (query: string) =>
  matcher.match(query, { minConfidence, topN: 5 }).map((m) => Number(m.id));

export interface RelevanceReport {
  tuning: RelevanceFigures;
  /** the dev set: tuning data written blind, in held-out 2's style */
  dev: RelevanceFigures;
  /** the first held-out set */
  holdout: RelevanceFigures;
  /** the second, written blind to the engine */
  holdout2: RelevanceFigures;
  /** both held-out sets as one: what the targets apply to */
  pooled: RelevanceFigures;
}

interface HeldOut<T> {
  queries: Labelled<T>[];
  unanswerable: string[];
}

function heldOutFigures<T>(
  rank: (query: string) => T[],
  sets: [HeldOut<T>, HeldOut<T>],
  label?: (x: T) => string,
): Omit<RelevanceReport, "tuning" | "dev"> {
  const [a, b] = sets;
  return {
    holdout: relevanceFigures(rank, a.queries, a.unanswerable, label),
    holdout2: relevanceFigures(rank, b.queries, b.unanswerable, label),
    pooled: relevanceFigures(rank, [...a.queries, ...b.queries], [...a.unanswerable, ...b.unanswerable], label),
  };
}

/** Search at a floor: the default (none, recall-first) unless `minScore` is given (FORMER_MIN_SCORE: the default until 2026-11-26). */
export function searchReport(minScore?: number): RelevanceReport {
  const rank = searchRanker(minScore);
  return {
    tuning: relevanceFigures(rank, helpCenter.queries, helpCenter.unanswerable),
    dev: relevanceFigures(rank, helpDev.queries, helpDev.unanswerable),
    ...heldOutFigures(rank, [helpHoldout, helpHoldout2]),
  };
}

/**
 * A support chatbot over the help center, offline (the extractive engine over the passages
 * search gives it, as POST /api/v1/chatbots/:id/chat does): its answer's source as the ranking,
 * empty when it declines. Recall@1 is answered from the right article; "unanswerable left
 * empty" is declined. Since search is recall-first (2026-11-26), this is where "nothing answers
 * this" is decided and measured.
 */
/** The bot's passages: search's best four, no floor (functions.ts, chatbot-chat). */
const botPassages = (query: string) =>
  searchOnce(query)
    .slice(0, PASSAGES_PER_ANSWER)
    .map((s) => ({
      document_id: docs[s.document_index ?? -1]?.id ?? "?",
      knowledge_base_id: "inline",
      title: s.title,
      content: s.content,
      score: s.score,
    }));

export const chatbotRanker = (query: string) => {
  const passages = botPassages(query);
  const r = localChatAnswer({ message: query, chatbot: { name: "eval", mode: "support" }, passages });
  return r?.answered ? r.sources.map((x) => x.document_id) : [];
};

/**
 * The bot's grounding confidence on a set: calibration of "the best passage answers" (0 for a
 * passage sharing fewer than two words, never taken), and how often an answer it gives is right.
 */
export function chatbotCalibration(set: { queries: Labelled<string>[]; unanswerable: string[] }): CalibrationFigures & {
  answered: number;
  precision: number;
} {
  const rows = [...set.queries, ...set.unanswerable.map((query) => ({ query, expected: null }))].map(({ query, expected }) => {
    const passages = botPassages(query);
    return { confidence: groundingConfidence(groundingFeatures(query, passages)), right: passages[0]?.document_id === expected };
  });
  const given = rows.filter((r) => r.confidence >= MIN_GROUNDING_CONFIDENCE);
  return {
    ...calibrationFigures(rows),
    answered: given.length,
    precision: given.length ? given.filter((r) => r.right).length / given.length : 1,
  };
}

export const chatbotSets = { tuning: helpCenter, dev: helpDev, "held-out 1": helpHoldout, "held-out 2": helpHoldout2 };

export function chatbotReport(): RelevanceReport {
  return {
    tuning: relevanceFigures(chatbotRanker, helpCenter.queries, helpCenter.unanswerable),
    dev: relevanceFigures(chatbotRanker, helpDev.queries, helpDev.unanswerable),
    ...heldOutFigures(chatbotRanker, [helpHoldout, helpHoldout2]),
  };
}

/** The best match of every query at min_confidence 0, right when it is the expected FAQ (never, for unanswerable ones). */
export function faqCalibration(answerable: Labelled<number>[], unanswerable: string[], by = matcher): CalibrationFigures {
  const best = (query: string) => by.match(query, { minConfidence: 0, topN: 1 })[0];
  const answers: { confidence: number; right: boolean }[] = [];
  for (const { query, expected } of answerable) {
    const b = best(query);
    if (b) answers.push({ confidence: b.confidence, right: Number(b.id) === expected });
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

export function faqReport(): RelevanceReport {
  const faqLabel = (i: number) => faqTuning.faqs[i]?.question ?? String(i);
  return {
    tuning: relevanceFigures(faqRanker(), faqTuningAnswerable, faqTuningUnanswerable, faqLabel),
    dev: relevanceFigures(faqRanker(), faqDev.queries, faqDev.unanswerable, faqLabel),
    ...heldOutFigures(faqRanker(), [faqHoldout, faqHoldout2], faqLabel),
  };
}

export const faqDevItems = faqDev.queries.length + faqDev.unanswerable.length;

/**
 * The near-miss sets (issue 24.15): a gym's 16 FAQs with exact questions, typos, paraphrases,
 * paraphrases sharing no word, near misses (sharing words, answered by no FAQ) and off-topic
 * questions, written on 2026-11-26 before faq-match's matching code was read. faq-nearmiss.json is
 * tuning data (the calibration is fitted on it); faq-nearmiss-blind.json, written at the same
 * sitting, is never tuned on and its misses are never printed.
 */
const gym = new FaqMatcher(nearMissTuning.faqs.map((f, i) => ({ id: String(i), ...f })));
const nearMissParts = { tuning: nearMissTuning, blind: nearMissBlind };
export const faqNearMissItems = [nearMissTuning, nearMissBlind].reduce((n, s) => n + s.queries.length + s.unanswerable.length, 0);

export interface NearMissFigures extends CalibrationFigures {
  /** recall@1 and unanswerable left empty at the default min_confidence */
  relevance: RelevanceFigures;
  /** per kind of query: how many got a best match, their mean confidence, the share right */
  kinds: { kind: string; n: number; confidence: number; right: number }[];
  /** five equal-width confidence bins: answers, mean confidence, accuracy */
  bins: { n: number; confidence: number; accuracy: number }[];
}

export function faqNearMiss(part: "tuning" | "blind"): NearMissFigures {
  const set = nearMissParts[part];
  const unanswerable = set.unanswerable.map((u) => u.query);
  const answers: { confidence: number; right: boolean; kind: string }[] = [];
  for (const q of [...set.queries, ...set.unanswerable.map((u) => ({ ...u, expected: -1 }))]) {
    const b = gym.match(q.query, { minConfidence: 0, topN: 1 })[0];
    if (b) answers.push({ confidence: b.confidence, right: Number(b.id) === q.expected, kind: q.kind });
  }
  const kinds = [...new Set([...set.queries, ...set.unanswerable].map((q) => q.kind))].map((kind) => {
    const a = answers.filter((x) => x.kind === kind);
    const mean = (f: (x: (typeof a)[number]) => number) => (a.length ? a.reduce((t, x) => t + f(x), 0) / a.length : 0);
    return { kind, n: a.length, confidence: mean((x) => x.confidence), right: mean((x) => (x.right ? 1 : 0)) };
  });
  const bins = Array.from({ length: 5 }, (_, i) => {
    const a = answers.filter((x) => Math.min(4, Math.floor(x.confidence * 5)) === i);
    return {
      n: a.length,
      confidence: a.length ? a.reduce((t, x) => t + x.confidence, 0) / a.length : 0,
      accuracy: a.length ? a.filter((x) => x.right).length / a.length : 0,
    };
  });
  const rank = (query: string) => gym.match(query).map((m) => Number(m.id));
  return {
    ...calibrationFigures(answers),
    relevance: relevanceFigures(rank, set.queries, unanswerable, (i) => nearMissTuning.faqs[i]?.question ?? String(i)),
    kinds,
    bins,
  };
}

/** Both FAQ held-out sets as one. */
export const faqHeldOut = {
  queries: [...faqHoldout.queries, ...faqHoldout2.queries],
  unanswerable: [...faqHoldout.unanswerable, ...faqHoldout2.unanswerable],
};

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

export function relevanceReport(capability: string, r: RelevanceReport, items: number): EvalReport {
  return {
    capability,
    items,
    metrics: [
      ...metrics("tuning", r.tuning, false),
      ...metrics("dev (tuning data)", r.dev, false),
      ...metrics("held-out 1", r.holdout, false),
      ...metrics("held-out 2", r.holdout2, false),
      ...metrics("held-out, both", r.pooled, true),
    ],
    // held-out misses are not shown: the sets stay blind
    errors: [...r.tuning.errors, ...r.dev.errors.map((e) => `dev: ${e}`)],
  };
}

const searchItems = [helpCenter, helpDev, helpHoldout, helpHoldout2].reduce(
  (n, s) => n + s.queries.length + s.unanswerable.length,
  0,
);

const evaluator: Evaluator = {
  name: "knowledge-search",
  run: () => {
    // Recall-first by default: "unanswerable left empty" is not search's job at its default, and
    // is printed at the former floor (min_score 0.3) and for the support chatbot that decides it.
    const plain = relevanceReport("knowledge-base search, default (no floor)", searchReport(), searchItems);
    const floored = relevanceReport(`min_score ${FORMER_MIN_SCORE}`, searchReport(FORMER_MIN_SCORE), searchItems);
    const bot = relevanceReport("support chatbot, offline", chatbotReport(), searchItems);
    const tagged = (prefix: string, r: EvalReport) => r.metrics.map((m) => ({ ...m, name: `${prefix}: ${m.name}` }));
    return {
      capability:
        "knowledge-base search at its default (recall-first) and at min_score 0.3; the support chatbot's answer or refusal over it (tuning and dev sets + two held-out sets)",
      items: searchItems,
      metrics: [
        ...plain.metrics.filter((m) => !m.name.startsWith("unanswerable")).map(({ target: _t, ...m }) => m),
        ...tagged(`min_score ${FORMER_MIN_SCORE}`, floored).map(({ target: _t, ...m }) => m),
        ...tagged("support chatbot", bot),
        ...Object.entries(chatbotSets).flatMap(([name, set]) => {
          const c = chatbotCalibration(set);
          return [
            { name: `support chatbot: calibration error, ${name}`, value: c.ece },
            { name: `support chatbot: answers right, ${name} (${c.answered} answers)`, value: c.precision },
          ];
        }),
      ],
      errors: [...(plain.errors ?? []), ...(bot.errors ?? []).map((e) => `chatbot: ${e}`)],
    };
  },
};
export default evaluator;
