import { describe, expect, test } from "bun:test";
import { analyzeSentiment } from "../../src/offline-engine/sentiment";
import { loadSentimentFixture } from "../eval/evaluators/sentiment";
import { offlineGatewayFor } from "../helpers/gateway";

/**
 * Issue 36.8: one labelling rule for a text and for each of its sentences. A one-sentence text
 * that praises in one clause and criticises in another was "mixed" overall and "negative" for its
 * only sentence, with the same score; a sentence is now labelled as a text of that one sentence is.
 */
const call = offlineGatewayFor(10_000);

type Result = { label: string; score: number; sentences: { text: string; label: string; score: number }[] };

describe("sentiment-analysis: a sentence is labelled by the same rule as the whole text", () => {
  test("a one-sentence text: its label and score are its only sentence's (contrast, sarcasm, plain)", async () => {
    const texts = [
      "The food was great but the service was terrible.",
      "Great screen, terrible battery.",
      "The staff were lovely although the room was dirty and noisy.",
      "I love the camera, but the battery is awful and support ignored me.",
      "Oh great, another update that breaks everything.",
      "Oh wonderful, the package arrived soaked, but the box itself is lovely.",
      "This is the best phone I have ever owned!",
      "The delivery came on Tuesday.",
    ];
    const labels = new Set<string>();
    for (const text of texts) {
      const r = await call("/api/v1/ai/sentiment-analysis", { text });
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      const result = r.json.data.result as Result;
      expect(result.sentences.length, text).toBe(1);
      expect(result.sentences[0]?.label, text).toBe(result.label);
      expect(result.sentences[0]?.score, text).toBe(result.score);
      labels.add(result.label);
    }
    // the set covers the rule's branches: mixed from clauses, the band either way
    expect([...labels].sort()).toEqual(["mixed", "negative", "neutral", "positive"]);
  });

  test("every text of the evaluation sets: each sentence is labelled as that sentence alone would be (texts without sarcasm)", () => {
    const problems: string[] = [];
    let sentences = 0;
    for (const file of ["sentiment.tsv", "sentiment-holdout.tsv"])
      for (const { text } of loadSentimentFixture(file)) {
        const whole = analyzeSentiment(text);
        if (whole.sentences.length === 1 && whole.sentences[0]?.label !== whole.label)
          problems.push(`${text}: ${whole.label} overall, ${whole.sentences[0]?.label} for its one sentence`);
        for (const s of whole.sentences) {
          const alone = analyzeSentiment(s.text);
          // a sarcasm cue is read with the rest of the text (the ironic reading is the whole's): compared alone only without one
          if (alone.sentences.length !== 1 || alone.score !== s.score) continue;
          sentences++;
          if (alone.label !== s.label)
            problems.push(`${JSON.stringify(s.text)} in ${JSON.stringify(text)}: ${s.label}, alone ${alone.label}`);
        }
      }
    expect(sentences).toBeGreaterThan(100);
    expect(problems).toEqual([]);
  });
});
