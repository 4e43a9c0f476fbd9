import { describe, expect, test } from "bun:test";
import { calibrated } from "../../src/offline-engine/calibration";
import { detectIntent } from "../../src/offline-engine/intent";
import { moderate } from "../../src/offline-engine/moderation";
import { analyzeSentiment } from "../../src/offline-engine/sentiment";
import { offlineGatewayFor } from "../helpers/gateway";

/**
 * Issue #16 on a gateway with no model: confidences are the calibrated ones, a review that
 * praises and then concedes a fault is mixed, and names in ALL CAPS or lower case are redacted.
 * Every text here was written for this test after the rules changed and was never tuned on.
 */
const call = offlineGatewayFor(10_000);
const show = (r: { status: number; json: unknown }) => `${r.status} ${JSON.stringify(r.json).slice(0, 700)}`;

describe("confidence is the calibrated one", () => {
  test("sentiment-analysis", async () => {
    const text = "The checkout was quick and the staff were friendly.";
    const r = await call("/api/v1/ai/sentiment-analysis", { text });
    expect(r.status, show(r)).toBe(200);
    expect(r.json.data.result.confidence, show(r)).toBe(calibrated("sentiment", analyzeSentiment(text).confidence));
  });
  test("intent-detection", async () => {
    const text = "I was charged twice for my order, I want my money back.";
    const r = await call("/api/v1/ai/intent-detection", { text });
    expect(r.status, show(r)).toBe(200);
    expect(r.json.data.result.confidence, show(r)).toBe(calibrated("intent", detectIntent(text).confidence));
    for (const a of r.json.data.result.alternatives) expect(a.confidence).toBeLessThanOrEqual(r.json.data.result.confidence);
  });
  test("comment-moderate", async () => {
    const comment = "Thanks for the quick reply, that fixed it.";
    const r = await call("/api/v1/ai/comment-moderate", { comment });
    expect(r.status, show(r)).toBe(200);
    expect(r.json.data.result.confidence, show(r)).toBe(calibrated("moderation", moderate(comment).confidence));
  });
});

describe("review-analyze: praise, then a contrast word and a fault the lexicon has no word for, is mixed", () => {
  test.each([
    "Beautiful watch, but the clasp came loose within a month.",
    "The staff were wonderful, however the lift was out of order for our whole stay.",
    "Schöne Jacke, aber der Reißverschluss klemmt nach einer Woche.",
    "Excelente sabor, pero el envase llegó medio vacío.",
  ])("%s", async (review) => {
    const r = await call("/api/v1/ai/review-analyze", { review });
    expect(r.status, show(r)).toBe(200);
    expect(r.json.data.result.sentiment, show(r)).toBe("mixed");
    expect(r.json.data.result.needs_response, show(r)).toBe(true);
  });

  test("plain praise without a concession stays positive", async () => {
    const r = await call("/api/v1/ai/review-analyze", { review: "Beautiful watch, keeps perfect time and looks great." });
    expect(r.status, show(r)).toBe(200);
    expect(r.json.data.result.sentiment, show(r)).toBe("positive");
  });
});

describe('sentiment-analysis: praise after "too" is a fault', () => {
  test.each(["The dessert was far too sweet.", "The speaker is way too bright in the treble."])("%s", async (text) => {
    const r = await call("/api/v1/ai/sentiment-analysis", { text });
    expect(r.status, show(r)).toBe(200);
    expect(r.json.data.result.label, show(r)).toBe("negative");
  });
  test('a negated "too" stays what it was', async () => {
    const r = await call("/api/v1/ai/sentiment-analysis", { text: "Not too bad for the price." });
    expect(r.json.data.result.label, show(r)).toBe("positive");
  });
});

describe("pii-redaction: names as people type them", () => {
  test.each([
    ["Customer: MARGARET OKONKWO\nOrder 5531 is missing.", "MARGARET OKONKWO"],
    ["hi, this is daniel fischer, my parcel never came", "daniel fischer"],
    ["Spoke to Rosalind Achterberg today about the refund.", "Rosalind Achterberg"],
  ])("%s", async (text, name) => {
    const r = await call("/api/v1/ai/pii-redaction", { text });
    expect(r.status, show(r)).toBe(200);
    expect(r.json.data.result.redacted_text, show(r)).not.toContain(name);
  });

  test("a shouted sentence with no given name in it keeps its words", async () => {
    const r = await call("/api/v1/ai/pii-redaction", { text: "PLEASE CALL BACK ASAP, THE ORDER IS LATE" });
    expect(r.status, show(r)).toBe(200);
    expect(r.json.data.result.redacted_text, show(r)).toBe("PLEASE CALL BACK ASAP, THE ORDER IS LATE");
  });
});
