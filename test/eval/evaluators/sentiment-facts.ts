/**
 * Sentiment of complaints and praise stated as facts ("I waited 3 hours on hold and nobody picked
 * up", "the app crashes every time I open it", "my refund arrived the next day"), sarcasm, and
 * neutral statements that carry a complaint's words. sentiment-facts-dev.tsv is the dev part
 * (tuned on; --errors lists its misses); sentiment-facts-blind.tsv was written first, committed
 * before any change, in other registers (forum posts, tweets, letters, non-native English), and is
 * run only with SENTIMENT_BLIND=1: once on the engine before the change, once at the end; its misses
 * are never printed. Figures: three-class accuracy and macro-F1 ("mixed" counts as the side its
 * score leans to), and the calibration of the confidence sentiment-analysis answers with (the
 * committed fit over the raw confidence): expected calibration error, how often answers at 0.8 or
 * more are right, and per confidence band how often an answer is right.
 */
import { sentimentConfidence } from "../../../src/offline-engine/calibration";
import { analyzeSentiment, labelFor, noEvidenceWords } from "../../../src/offline-engine/sentiment";
import { calibrationFigures, fmt, prf } from "../metrics";
import type { EvalReport, Evaluator } from "../registry";
import { loadSentimentFixture } from "./sentiment";

type Three = "positive" | "negative" | "neutral";
const CLASSES: Three[] = ["positive", "negative", "neutral"];
/** confidence bands of the reliability table: [from, to) */
const BANDS: [number, number][] = [
  [0, 0.6],
  [0.6, 0.7],
  [0.7, 0.8],
  [0.8, 0.9],
  [0.9, 1.01],
];

export const loadFactsDev = () => loadSentimentFixture("sentiment-facts-dev.tsv");
export const loadFactsBlind = () => loadSentimentFixture("sentiment-facts-blind.tsv");

export interface FactsAnswer {
  gold: Three;
  got: Three;
  /** the calibrated confidence sentiment-analysis reports */
  confidence: number;
  text: string;
}

export function factsAnswers(items: { text: string; label: Three }[]): FactsAnswer[] {
  return items.map((it) => {
    const r = analyzeSentiment(it.text);
    const got = r.label === "mixed" ? labelFor(r.score) : r.label;
    return { gold: it.label, got, confidence: sentimentConfidence(r.confidence, noEvidenceWords(it.text, r)), text: it.text };
  });
}

export interface FactsFigures {
  items: number;
  accuracy: number;
  macroF1: number;
  ece: number;
  confident: number;
  confidentAccuracy: number;
  /** per band: label, answers, mean confidence, share right */
  bands: { band: string; n: number; confidence: number; right: number }[];
}

export function factsFigures(answers: FactsAnswer[]): FactsFigures {
  const f1s = CLASSES.map(
    (c) =>
      prf({
        tp: answers.filter((a) => a.gold === c && a.got === c).length,
        fp: answers.filter((a) => a.gold !== c && a.got === c).length,
        fn: answers.filter((a) => a.gold === c && a.got !== c).length,
      }).f1,
  );
  const cal = calibrationFigures(answers.map((a) => ({ confidence: a.confidence, right: a.gold === a.got })));
  const bands = BANDS.map(([lo, hi]) => {
    const inBand = answers.filter((a) => a.confidence >= lo && a.confidence < hi);
    const n = inBand.length;
    return {
      band: `${lo.toFixed(1)}-${Math.min(hi, 1).toFixed(1)}`,
      n,
      confidence: n ? inBand.reduce((s, a) => s + a.confidence, 0) / n : 0,
      right: n ? inBand.filter((a) => a.gold === a.got).length / n : 0,
    };
  });
  return {
    items: answers.length,
    accuracy: answers.filter((a) => a.gold === a.got).length / answers.length,
    macroF1: f1s.reduce((s, f) => s + f, 0) / f1s.length,
    ece: cal.ece,
    confident: cal.high,
    confidentAccuracy: cal.highAccuracy,
    bands,
  };
}

function part(name: string, answers: FactsAnswer[], printMisses: boolean) {
  const f = factsFigures(answers);
  const metrics = [
    { name: `accuracy, ${name}`, value: f.accuracy },
    { name: `macro-F1, ${name}`, value: f.macroF1 },
    { name: `calibration error, ${name}`, value: f.ece },
    { name: `right when >= 0.8, ${name} (${f.confident})`, value: f.confidentAccuracy },
  ];
  const rows = f.bands.map((b) => [name, b.band, String(b.n), b.n ? fmt(b.confidence) : "-", b.n ? fmt(b.right) : "-"]);
  const errors = printMisses
    ? answers.filter((a) => a.gold !== a.got).map((a) => `${a.gold} -> ${a.got} (${fmt(a.confidence)}): ${a.text}`)
    : [];
  return { metrics, rows, errors, items: f.items };
}

const evaluator: Evaluator = {
  name: "sentiment-facts",
  run: (): EvalReport => {
    const parts = [part("dev", factsAnswers(loadFactsDev()), true)];
    if (process.env.SENTIMENT_BLIND === "1") parts.push(part("blind", factsAnswers(loadFactsBlind()), false));
    return {
      capability: `sentiment of facts: complaints, praise, sarcasm, neutral statements (dev${parts.length > 1 ? " + blind" : ""})`,
      items: parts.reduce((n, p) => n + p.items, 0),
      metrics: parts.flatMap((p) => p.metrics),
      table: [["part", "confidence", "answers", "mean confidence", "right"], ...parts.flatMap((p) => p.rows)],
      errors: parts.flatMap((p) => p.errors),
    };
  },
};
export default evaluator;
