/**
 * Spam detection for the offline engine.
 *
 * Exported API (stable; other modules compose it):
 *   detectSpam(text: string, opts?: SpamOptions): SpamResult
 *     opts: { contentType?, strictness?: "low"|"medium"|"high" (default medium),
 *             detectToxicity?, detectPii?, returnSanitized? }
 *     -> { isSpam, label: "spam"|"suspicious"|"not_spam", spamScore 0..1, confidence 0..1,
 *          signals: {name, weight, detail, category}[], categories: SpamCategory[],
 *          toxicity?: { score, isToxic, categories }, pii?: PiiEntity[], sanitizedText? }
 *
 * The score does not depend on strictness; strictness moves the thresholds, so callers can
 * compare scores across settings.
 */

import { maskProfanity, scoreAbuse } from "./abuse";
import { checkCpuBudget, tickCpuBudget } from "./budget";
import type { PiiEntity } from "./pii";
import { detectPii } from "./pii";
import { combineSignals, type SpamCategory, type SpamSignal, spamSignals } from "./spam-signals";

export type Strictness = "low" | "medium" | "high";

export interface SpamOptions {
  contentType?: string;
  strictness?: Strictness;
  detectToxicity?: boolean;
  detectPii?: boolean;
  returnSanitized?: boolean;
}

export interface ToxicityReport {
  score: number;
  isToxic: boolean;
  /** abuse categories at or above 0.4 */
  categories: string[];
}

export interface SpamResult {
  isSpam: boolean;
  label: "spam" | "suspicious" | "not_spam";
  spamScore: number;
  confidence: number;
  signals: SpamSignal[];
  categories: SpamCategory[];
  toxicity?: ToxicityReport;
  pii?: PiiEntity[];
  sanitizedText?: string;
}

/** [spam at, suspicious at] per strictness */
export const SPAM_THRESHOLDS: Record<Strictness, [number, number]> = {
  low: [0.75, 0.5],
  medium: [0.55, 0.35],
  high: [0.4, 0.22],
};

const LINK = /\b(?:https?:\/\/|www\.)\S+|\b(?:bit\.ly|tinyurl\.com|goo\.gl|t\.co|is\.gd|ow\.ly|cutt\.ly|rb\.gy)\/\S+/gi;

function sanitize(text: string, removeLinks: boolean, pii: readonly PiiEntity[]): string {
  // pieces joined once: rebuilding the string per entity is quadratic in a text full of them
  const parts: string[] = [];
  let at = 0;
  for (const e of [...pii].sort((a, b) => a.start - b.start)) {
    tickCpuBudget();
    if (e.start < at) continue;
    parts.push(text.slice(at, e.start), `[${e.type.toUpperCase()}]`);
    at = e.end;
  }
  parts.push(text.slice(at));
  let out = parts.join("");
  checkCpuBudget();
  if (removeLinks) out = out.replace(LINK, "[link removed]");
  checkCpuBudget();
  return maskProfanity(out);
}

/** Spam score, label and the signals behind them for `text`. */
export function detectSpam(text: string, opts: SpamOptions = {}): SpamResult {
  const strictness = opts.strictness ?? "medium";
  const signals = spamSignals(text, opts.contentType ?? "text").sort((a, b) => b.weight - a.weight);
  const score = Math.round(combineSignals(signals) * 1000) / 1000;
  const [spamAt, suspiciousAt] = SPAM_THRESHOLDS[strictness];
  const label = score >= spamAt ? "spam" : score >= suspiciousAt ? "suspicious" : "not_spam";
  // distance to the nearest threshold, scaled: a score right at a boundary is a coin flip
  const nearest = Math.min(Math.abs(score - spamAt), Math.abs(score - suspiciousAt));
  const confidence = Math.round(Math.min(0.99, 0.55 + nearest * 1.5) * 100) / 100;
  const result: SpamResult = {
    isSpam: label === "spam",
    label,
    spamScore: score,
    confidence,
    signals,
    // kinds of spam: none for a text that is not spam, whatever weak signals it shows (a shipping
    // notice's tracking link is no "promotional" spam); the signals stay, as the evidence
    categories: label === "not_spam" ? [] : [...new Set(signals.map((s) => s.category))],
  };
  if (opts.detectToxicity) {
    const abuse = scoreAbuse(text);
    const categories = Object.entries(abuse.categories)
      .filter(([c, s]) => c !== "toxicity" && s >= 0.4)
      .map(([c]) => c);
    result.toxicity = { score: abuse.categories.toxicity, isToxic: abuse.categories.toxicity >= 0.5, categories };
  }
  const pii = opts.detectPii || opts.returnSanitized ? detectPii(text) : [];
  if (opts.detectPii) result.pii = pii;
  if (opts.returnSanitized)
    result.sanitizedText = sanitize(text, label !== "not_spam" || signals.some((s) => s.category === "malicious_link"), pii);
  return result;
}
