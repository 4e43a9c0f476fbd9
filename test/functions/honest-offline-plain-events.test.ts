/**
 * sentiment-analysis through a real server: complaints and praise told as plain events (a smell,
 * a noise, a parcel thrown or left in the rain, a message not acknowledged, a kettle that lasted)
 * are read as such, and a neutral answer reached with no evidence carries the confidence such
 * answers have: high for a short plain statement, low for a long narrated one that no rule names.
 * The texts are not those of the eval sets.
 */
import { describe, expect, test } from "bun:test";
import { offlineGatewayFor } from "../helpers/gateway";

const call = offlineGatewayFor(10_000);
const show = (r: { status: number; json: unknown }) => `${r.status} ${JSON.stringify(r.json).slice(0, 700)}`;

describe("sentiment-analysis reads complaints and praise told as plain events", () => {
  test.each([
    ["The hotel room smelled of smoke and the air conditioning rattled all night.", "negative"],
    ["The courier threw the box over the fence and it landed in a puddle.", "negative"],
    ["The delivery guy left my parcel in the rain. Took support four days to even acknowledge the email.", "negative"],
    ["Our rental van arrived three hours late and the side door had a big dent.", "negative"],
    ["The new blinds came with two brackets missing.", "negative"],
    ["I bought this 20 euro kettle and it has boiled water twice a day for a year without a hiccup.", "positive"],
    ["The night porter even carried our bags to the taxi in the rain.", "positive"],
  ])("%s -> %s", async (text, label) => {
    const r = await call("/api/v1/ai/sentiment-analysis", { text });
    expect(r.status, show(r)).toBe(200);
    expect(r.json.data.result.label, show(r)).toBe(label);
  });

  test("a neutral answer with no evidence is not as sure of a long narrated event as of a plain fact", async () => {
    const fact = await call("/api/v1/ai/sentiment-analysis", { text: "We moved to the new office on Monday." });
    const story = await call("/api/v1/ai/sentiment-analysis", {
      text: "The technician came on Tuesday, looked at the boiler for five minutes and said someone else would come next week.",
    });
    expect(fact.json.data.result, show(fact)).toMatchObject({ label: "neutral" });
    expect(story.json.data.result, show(story)).toMatchObject({ label: "neutral" });
    expect(fact.json.data.result.confidence, show(fact)).toBeGreaterThanOrEqual(0.8);
    // before: both 0.818, the calibrated confidence of any statement without evidence
    expect(story.json.data.result.confidence, show(story)).toBeLessThan(0.5);
  });
});
