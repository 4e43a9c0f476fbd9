import { describe, expect, test } from "bun:test";
import { detectSpam, SPAM_THRESHOLDS } from "../../src/local/spam";
import { loadJsonl, medianMs } from "./helpers";

interface Item {
  text: string;
  spam: boolean;
}

const items = loadJsonl<Item>("spam.jsonl");

describe("detectSpam on labeled examples (strictness medium)", () => {
  test("accuracy, precision and recall", () => {
    let tp = 0;
    let fp = 0;
    let fn = 0;
    const misses: string[] = [];
    for (const it of items) {
      const r = detectSpam(it.text, { contentType: "comment" });
      if (r.isSpam && it.spam) tp++;
      else if (r.isSpam) fp++;
      else if (it.spam) fn++;
      if (r.isSpam !== it.spam) misses.push(`${it.text.slice(0, 70)} -> ${r.spamScore} ${r.signals.map((s) => s.name).join(",")}`);
    }
    const accuracy = 1 - misses.length / items.length;
    const precision = tp / Math.max(1, tp + fp);
    const recall = tp / Math.max(1, tp + fn);
    console.log(
      `spam accuracy ${(accuracy * 100).toFixed(1)}% precision ${(precision * 100).toFixed(1)}% recall ${(recall * 100).toFixed(1)}% on ${items.length}`,
      misses.length ? `\n  ${misses.join("\n  ")}` : "",
    );
    expect(items.length).toBeGreaterThanOrEqual(40);
    expect(accuracy).toBeGreaterThanOrEqual(0.85);
    expect(precision).toBeGreaterThanOrEqual(0.9);
  });
});

describe("detectSpam options", () => {
  const borderline = "Check out my page for more tips, link in bio";

  test("strictness moves the label, never the score", () => {
    const low = detectSpam(borderline, { strictness: "low" });
    const high = detectSpam(borderline, { strictness: "high" });
    expect(low.spamScore).toBe(high.spamScore);
    const rank = { not_spam: 0, suspicious: 1, spam: 2 };
    expect(rank[high.label]).toBeGreaterThan(rank[low.label]);
    expect(SPAM_THRESHOLDS.high[0]).toBeLessThan(SPAM_THRESHOLDS.low[0]);
  });

  test("every signal names its evidence", () => {
    const r = detectSpam("You have won a prize! Click here: bit.ly/x");
    expect(r.signals.length).toBeGreaterThan(1);
    for (const s of r.signals) {
      expect(s.weight).toBeGreaterThan(0);
      expect(s.detail.length).toBeGreaterThan(0);
    }
  });

  test("toxicity, PII and sanitized text only when asked", () => {
    const text = "You idiot, email me at jo@example.com, this shit is a scam";
    expect(detectSpam(text).toxicity).toBeUndefined();
    const r = detectSpam(text, { detectToxicity: true, detectPii: true, returnSanitized: true });
    expect(r.toxicity?.isToxic).toBe(true);
    expect(r.pii?.map((p) => p.type)).toContain("email");
    expect(r.sanitizedText).not.toContain("jo@example.com");
    expect(r.sanitizedText).toContain("s***");
  });

  test("sanitizing removes links of spam, keeps links of legitimate text", () => {
    expect(detectSpam("Claim your free prize now at bit.ly/x!!!", { returnSanitized: true }).sanitizedText).toContain("[link removed]");
    expect(detectSpam("The doc is at https://docs.example.com/a", { returnSanitized: true }).sanitizedText).toContain("https://docs.example.com/a");
  });

  test("leetspeak and spacing tricks are seen and flagged as obfuscation", () => {
    const r = detectSpam("Buy ch3ap v1agra n0w");
    expect(r.signals.map((s) => s.name)).toContain("pharma");
    expect(r.signals.map((s) => s.name)).toContain("obfuscated_text");
  });
});

test("speed: 1 KB median well under 1 ms", () => {
  const text = items
    .map((i) => i.text)
    .join(" ")
    .slice(0, 1024);
  expect(medianMs(() => detectSpam(text, { detectToxicity: true }))).toBeLessThan(1);
});

test("held-out examples (never tuned on) stay accurate", () => {
  const holdout = loadJsonl<Item>("spam-holdout.jsonl");
  const hits = holdout.filter((it) => detectSpam(it.text, { contentType: "comment" }).isSpam === it.spam).length;
  const falsePositives = holdout.filter((it) => !it.spam && detectSpam(it.text, { contentType: "comment" }).isSpam).length;
  console.log(`spam holdout accuracy ${((hits / holdout.length) * 100).toFixed(1)}% on ${holdout.length}, false positives ${falsePositives}`);
  expect(hits / holdout.length).toBeGreaterThanOrEqual(0.85);
  expect(falsePositives).toBe(0);
});
