import { describe, expect, test } from "bun:test";
import { analyzeSentiment } from "../../src/offline-engine/sentiment";
import { loadSentimentFixture } from "../eval/evaluators/sentiment";
import { offlineGatewayFor } from "../helpers/gateway";

/**
 * Issue 24.23: the overall sentiment and the per-sentence results come from one reading of the
 * text. A sarcasm cue is read out of the sentence it sits in, and the overall score is the
 * aggregate of the sentences (VADER's: the sentences' valence summed, then normalised), so the
 * overall label can be explained from the sentences. The sarcastic texts were written for this test.
 */
const call = offlineGatewayFor(10_000);
const show = (r: { status: number; json: unknown }) => `${r.status} ${JSON.stringify(r.json).slice(0, 700)}`;

/** VADER's normalisation x / sqrt(x² + 15), and its inverse for a sentence's (rounded) score. */
const normalize = (x: number) => x / Math.sqrt(x * x + 15);
const valenceOf = (score: number) => {
  const s = Math.max(-0.9995, Math.min(0.9995, score));
  return s * Math.sqrt(15 / (1 - s * s));
};
const aggregate = (sentences: { score: number }[]) => normalize(sentences.reduce((sum, s) => sum + valenceOf(s.score), 0));

interface Result {
  label: string;
  score: number;
  sentences: { text: string; label: string; score: number }[];
}

function explained(r: Result): string[] {
  const problems: string[] = [];
  if (Math.abs(aggregate(r.sentences) - r.score) > 0.002)
    problems.push(`overall ${r.score} but the sentences add up to ${aggregate(r.sentences).toFixed(3)}`);
  if (r.label === "negative" && !r.sentences.some((s) => s.label === "negative"))
    problems.push("negative with no negative sentence");
  if (r.label === "positive" && !r.sentences.some((s) => s.label === "positive"))
    problems.push("positive with no positive sentence");
  return problems;
}

describe("sentiment-analysis: one reading for the whole and its sentences", () => {
  test("'Oh great, another update that breaks everything. Just what I needed.' is negative, and so is its first sentence", async () => {
    const text = "Oh great, another update that breaks everything. Just what I needed.";
    const r = await call("/api/v1/ai/sentiment-analysis", { text });
    expect(r.status, show(r)).toBe(200);
    const result = r.json.data.result as Result;
    expect(result.label, show(r)).toBe("negative");
    expect(
      result.sentences.map((s) => s.label),
      show(r),
    ).toEqual(["negative", "neutral"]);
    expect(explained(result), show(r)).toEqual([]);
  });

  test("sarcastic texts: the overall score is the aggregate of the sentence scores", async () => {
    const texts = [
      "Amazing, the new battery lasts all morning. I guess I will buy another one.",
      "Oh wonderful, the package arrived soaked. Thanks for nothing.",
      "Oh perfect. The app logged me out again and deleted my notes.",
      "Just what I wanted for my birthday. A cracked screen.",
      "Yeah, right, best support ever. They hung up on me twice.",
    ];
    for (const text of texts) {
      const r = await call("/api/v1/ai/sentiment-analysis", { text });
      expect(r.status, show(r)).toBe(200);
      expect(explained(r.json.data.result as Result), `${text}\n${show(r)}`).toEqual([]);
    }
  });

  test("a cue across a sentence boundary is read out of both sentences", () => {
    const r = analyzeSentiment("Great battery. It lasts all morning. Terrible.");
    expect(r.sentences.map((s) => s.label)).toEqual(["neutral", "neutral", "negative"]);
    expect(r.label).toBe("negative");
    expect(explained(r)).toEqual([]);
  });

  test("every text of the evaluation sets (inputs only) is explained by its sentences", () => {
    const problems: string[] = [];
    for (const file of ["sentiment.tsv", "sentiment-holdout.tsv"])
      for (const { text } of loadSentimentFixture(file)) {
        const found = explained(analyzeSentiment(text));
        if (found.length) problems.push(`${text}: ${found.join("; ")}`);
      }
    expect(problems).toEqual([]);
  });
});
