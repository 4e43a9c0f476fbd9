/**
 * Offline reading of reviews shared by review-analyze, review-summary and review-insights:
 * splitting a text of reviews, and themes (what reviewers talk about, and how they feel about it)
 * from the sentiment engine's per-aspect scores.
 */

import { checkCpuBudget, tickCpuBudget } from "../../offline-engine/budget";
import { extractKeywords } from "../../offline-engine/keywords";
import { analyzeSentiment, labelFor } from "../../offline-engine/sentiment";
import type { SENTIMENTS } from "../schemas";

export type Sentiment = (typeof SENTIMENTS)[number];

/** One review per item; a text is split on blank lines, else on lines, list markers removed. */
export function splitReviews(reviews: string | string[]): string[] {
  const paragraphs = Array.isArray(reviews) ? reviews : reviews.split(/\n\s*\n/);
  const parts = Array.isArray(reviews) || paragraphs.length > 1 ? paragraphs : reviews.split(/\n/);
  checkCpuBudget();
  return parts
    .map((r) => {
      tickCpuBudget();
      return r.replace(/^\s*(?:[-*•]|\d+[.)])\s+/, "").trim();
    })
    .filter((r) => r.length > 0);
}

/** What reviews of shops, restaurants, hotels, apps and products usually talk about. */
const COMMON_ASPECTS = [
  "food",
  "service",
  "staff",
  "price",
  "value",
  "quality",
  "delivery",
  "shipping",
  "packaging",
  "location",
  "room",
  "cleanliness",
  "wait",
  "size",
  "fit",
  "battery",
  "support",
  "app",
  "design",
  "comfort",
  "taste",
  "breakfast",
  "wifi",
  "parking",
  "checkout",
  "customer service",
  "durability",
  "material",
  "installation",
  "performance",
  "screen",
  "sound",
];

/** Words of time and quantity that reviews share without talking about them ("after 3 months", "within a week"). */
const NOT_THEMES = new Set(
  "day days week weeks month months year years hour hours minute minutes time times today yesterday night nights morning weekend lot bit thing things way ones one two three first second".split(
    " ",
  ),
);

/**
 * Candidate themes of a set of reviews: the common aspects, plus one-word keywords that at least
 * two reviews use (a word only one reviewer uses is noise, not a theme).
 */
export function themeCandidates(reviews: string[]): string[] {
  const shared = extractKeywords(reviews.join("\n"), 20)
    .map((k) => k.keyword.toLowerCase())
    .filter((k) => !k.includes(" ") && k.length > 2 && !NOT_THEMES.has(k))
    .filter(
      (k) =>
        reviews.filter((r) => {
          tickCpuBudget();
          return r.toLowerCase().includes(k);
        }).length >= 2,
    );
  return [...new Set([...COMMON_ASPECTS, ...shared])];
}

/** Aspects the sentiment engine scores in one review: the common ones it mentions. */
export function reviewAspects(review: string): { aspect: string; sentiment: Sentiment }[] {
  return analyzeSentiment(review, { aspects: COMMON_ASPECTS })
    .aspects.filter((a) => a.mentions > 0)
    .map((a) => ({ aspect: a.aspect, sentiment: a.label }));
}

export interface Theme {
  theme: string;
  sentiment: Sentiment;
  mentions: number;
  score: number;
  example?: string;
}

/** Themes across `reviews`, most mentioned first; a theme counts once per review that mentions it. */
export function themesOf(reviews: string[], limit = 10): Theme[] {
  const candidates = themeCandidates(reviews);
  const themes: Theme[] = [];
  for (const theme of candidates) {
    let mentions = 0;
    let sum = 0;
    let pos = 0;
    let neg = 0;
    let example: string | undefined;
    for (const review of reviews) {
      checkCpuBudget();
      const [aspect] = analyzeSentiment(review, { aspects: [theme] }).aspects;
      if (!aspect || aspect.mentions === 0) continue;
      mentions++;
      sum += aspect.score;
      if (aspect.label === "positive") pos++;
      if (aspect.label === "negative") neg++;
      if (example === undefined || (aspect.label !== "neutral" && review.length < example.length)) example = review;
    }
    if (mentions === 0) continue;
    const score = Math.round((sum / mentions) * 1000) / 1000;
    const sentiment: Sentiment = pos > 0 && neg > 0 ? "mixed" : labelFor(score);
    themes.push({ theme, sentiment, mentions, score, example: example && example.length <= 200 ? example : undefined });
  }
  return themes.sort((a, b) => b.mentions - a.mentions || Math.abs(b.score) - Math.abs(a.score)).slice(0, limit);
}

/** Overall label of a set of per-review labels: the majority, or mixed when praise and criticism are both common. */
export function overallSentiment(counts: Record<Sentiment, number>): Sentiment {
  const total = counts.positive + counts.negative + counts.neutral + counts.mixed;
  if (total === 0) return "neutral";
  const pos = counts.positive / total;
  const neg = counts.negative / total;
  if (pos >= 0.3 && neg >= 0.3) return "mixed";
  if (counts.mixed / total >= 0.5) return "mixed";
  const ranked = (Object.entries(counts) as [Sentiment, number][]).sort((a, b) => b[1] - a[1]);
  return ranked[0][0];
}

export function countSentiments(reviews: string[]): Record<Sentiment, number> {
  const counts: Record<Sentiment, number> = { positive: 0, neutral: 0, negative: 0, mixed: 0 };
  for (const r of reviews) {
    checkCpuBudget();
    counts[analyzeSentiment(r).label]++;
  }
  return counts;
}

/** "a", "a and b", "a, b and c" */
export function andList(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

/** "3 reviews: 2 positive, 1 negative." */
export function countLine(total: number, counts: Record<Sentiment, number>): string {
  const parts = (Object.entries(counts) as [Sentiment, number][]).filter(([, n]) => n > 0).map(([label, n]) => `${n} ${label}`);
  return `${total} review${total === 1 ? "" : "s"}: ${parts.join(", ")}.`;
}
