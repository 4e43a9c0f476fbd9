import { type Static, Type } from "@sinclair/typebox";
import { sentimentConfidence } from "../offline-engine/calibration";
import { languageName } from "../offline-engine/language";
import { analyzeSentiment, noEvidenceWords } from "../offline-engine/sentiment";
import { beyondSentimentLexicons, SENTIMENT_LANGUAGES } from "../offline-engine/sentiment/reach";
import { defineFunction } from "./define";
import { decline } from "./offline-reach";
import { Confidence, Model, Result, Sentiment, Text } from "./schemas";

const request = Type.Object({
  text: Text("the text to analyze"),
  aspects: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
      maxItems: 50,
      uniqueItems: true,
      description: "aspects to rate separately, e.g. battery, price, delivery",
    }),
  ),
  model: Model(),
});
type Req = Static<typeof request>;

const Score = (description: string) => Type.Number({ minimum: -1, maximum: 1, description });

const SentenceResult = Type.Object(
  {
    text: Type.String({ description: "the sentence as written" }),
    label: Sentiment("sentiment of this sentence"),
    score: Score("-1 most negative .. 1 most positive"),
  },
  { additionalProperties: false },
);

const AspectResult = Type.Object(
  {
    aspect: Type.String({ description: "the aspect as the caller named it" }),
    label: Sentiment("sentiment expressed about this aspect; neutral when it is not mentioned"),
    score: Score("-1 .. 1; 0 when not mentioned"),
    mentions: Type.Integer({ minimum: 0, description: "how many times the text mentions the aspect" }),
  },
  { additionalProperties: false },
);

const result = Result(
  {
    label: Sentiment("overall sentiment; mixed when clearly positive and clearly negative parts meet"),
    score: Score("overall polarity: -1 most negative .. 1 most positive"),
    confidence: Confidence(),
    sentences: Type.Array(SentenceResult, { description: "one entry per sentence, in order" }),
    aspects: Type.Array(AspectResult, { description: "one entry per requested aspect, in the order asked; empty when none" }),
  },
  "overall sentiment with per-sentence and per-aspect results",
);

function clamp(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, x));
}

/** A score in -1..1 whose sign does not contradict a positive or negative label. */
function agreeing(label: string, score: number): number {
  const s = clamp(score, -1, 1);
  if (label === "positive") return Math.abs(s);
  if (label === "negative") return -Math.abs(s);
  return s;
}

export default defineFunction({
  name: "sentiment-analysis",
  summary: "Sentiment of a text: overall label and score, per sentence, and per requested aspect",
  request,
  result,
  role: "You analyze the sentiment of texts such as reviews, comments, messages and posts.",
  brief: (req) => ({
    rules: [
      "label: positive, negative or neutral; mixed when the text holds clearly positive and clearly negative opinions.",
      "score: from -1 (most negative) to 1 (most positive), 0 for neutral; confidence from 0 to 1.",
      "Handle negation (not good = negative), intensifiers (very, extremely), sarcasm and emoji.",
      "sentences: every sentence of the text in order, each with its own label and score.",
      req.aspects && req.aspects.length > 0
        ? `aspects: exactly these, in this order: ${req.aspects.map((a) => JSON.stringify(a)).join(", ")}. For each, the sentiment the text expresses about it and how often it is mentioned; neutral, score 0 and mentions 0 when it is not mentioned.`
        : "aspects: an empty list.",
    ],
    inputs: [["text", req.text]],
  }),
  // Keeps a provider's answer coherent for clients: the aspects asked for, in order, and a score
  // whose sign agrees with the label (the label is the primary answer).
  postprocess: (req, res) => {
    const given = new Map(res.aspects.map((a) => [a.aspect.trim().toLowerCase(), a]));
    const aspects = (req.aspects ?? []).map((aspect) => {
      const a = given.get(aspect.trim().toLowerCase());
      if (!a || a.mentions <= 0) return { aspect, label: "neutral" as const, score: 0, mentions: 0 };
      return { ...a, aspect, score: agreeing(a.label, a.score) };
    });
    const sentences = res.sentences.map((s) => ({ ...s, score: agreeing(s.label, s.score) }));
    return { ...res, score: agreeing(res.label, res.score), confidence: clamp(res.confidence, 0, 1), sentences, aspects };
  },
  check: (req: Req, res) => {
    const problems: string[] = [];
    const asked = req.aspects ?? [];
    if (res.aspects.length !== asked.length || res.aspects.some((a, i) => a.aspect !== asked[i]))
      problems.push("aspects do not list exactly the requested aspects in order");
    for (const a of res.aspects) {
      if (a.mentions === 0 && a.label !== "neutral") problems.push(`aspect "${a.aspect}" has a label but no mention`);
    }
    if (res.label === "positive" && res.score < 0) problems.push("label positive with a negative score");
    if (res.label === "negative" && res.score > 0) problems.push("label negative with a positive score");
    return problems;
  },
  local: (req) => {
    const beyond = beyondSentimentLexicons(req.text);
    if (beyond)
      return decline(
        req,
        "language",
        `${beyond}; the offline sentiment lexicons cover ${SENTIMENT_LANGUAGES.map(languageName).join(", ")}`,
      );
    const r = analyzeSentiment(req.text, { aspects: req.aspects });
    return { ...r, confidence: sentimentConfidence(r.confidence, noEvidenceWords(req.text, r)) };
  },
  // A lexicon misses sarcasm and domain words a model gets; it serves when no model is configured.
  preferLocal: false,
  example: {
    request: { text: "The screen is gorgeous. Battery life is disappointing, though.", aspects: ["screen", "battery"] },
    result: {
      label: "mixed",
      score: -0.077,
      confidence: 0.806,
      sentences: [
        { text: "The screen is gorgeous.", label: "positive", score: 0.612 },
        { text: "Battery life is disappointing, though.", label: "negative", score: -0.649 },
      ],
      aspects: [
        { aspect: "screen", label: "positive", score: 0.612, mentions: 1 },
        { aspect: "battery", label: "negative", score: -0.494, mentions: 1 },
      ],
    },
  },
});
