/**
 * Extractive summarization for the offline engine: sentences scored by content-word
 * frequency, position and cue phrases, picked in document order.
 *
 * Exported API (stable; other modules compose it):
 *   summarize(text: string, opts?: SummarizeOptions): SummaryResult
 *     opts.length: "short" | "medium" | "long" | number (sentences) | "3 sentences" | "100 words"; default "medium"
 *     opts.format: "paragraph" | "bullets" | "bullet_points" | "tldr" | "numbered" | "key_points" | "headline"
 *     opts.targetAudience: free text; "executive"/"children"/"technical"/... bias sentence choice
 *     -> { summary, sentences (picked, document order), keyPoints, format, sentenceCount,
 *          originalSentenceCount, wordCount, originalWordCount, compressionRatio }
 *   isSupportedFormat(format), isSupportedLength(length): whether the engine can honour them
 */

import { checkCpuBudget, tickCpuBudget } from "./budget";
import { lowerWords, STOPWORDS } from "./keywords";
import { splitSentences, type TextSpan } from "./text";

export type SummaryLength = "short" | "medium" | "long" | number | string;

export interface SummarizeOptions {
  length?: SummaryLength;
  format?: string;
  targetAudience?: string;
}

export interface SummaryResult {
  summary: string;
  sentences: string[];
  keyPoints: string[];
  format: string;
  sentenceCount: number;
  originalSentenceCount: number;
  wordCount: number;
  originalWordCount: number;
  /** summary words / original words */
  compressionRatio: number;
}

const FORMATS: Record<string, "paragraph" | "bullets" | "tldr" | "numbered" | "headline"> = {
  paragraph: "paragraph",
  prose: "paragraph",
  text: "paragraph",
  bullets: "bullets",
  bullet: "bullets",
  bullet_points: "bullets",
  "bullet-points": "bullets",
  key_points: "bullets",
  "key-points": "bullets",
  list: "bullets",
  tldr: "tldr",
  "tl;dr": "tldr",
  numbered: "numbered",
  numbered_list: "numbered",
  headline: "headline",
  title: "headline",
  one_line: "headline",
  "one-line": "headline",
};

export function isSupportedFormat(format: string | undefined): boolean {
  return !format || format.toLowerCase().trim() in FORMATS;
}

/** Sentences of the text (shared splitter), with list markers ("- ", "1. ") taken off. */
function sentencesOf(text: string): TextSpan[] {
  return splitSentences(text)
    .map((s) => ({ ...s, text: s.text.replace(/^(?:[-*•·]|\d+[.)])\s+/, "").replace(/\s+/g, " ") }))
    .filter((s) => /[\p{L}\p{N}]/u.test(s.text));
}

type LengthSpec = { sentences: number } | { words: number } | { preset: "short" | "medium" | "long" };

/** "short", "3", 3, "3 sentences", "5 bullet points", "100 words"; null when not understood. */
function parseLength(length: SummaryLength | undefined): LengthSpec | null {
  if (length === undefined) return { preset: "medium" };
  if (typeof length === "number") return Number.isFinite(length) && length >= 1 ? { sentences: Math.floor(length) } : null;
  const l = length.trim().toLowerCase();
  const count = /^(\d+)\s*(?:sentences?|bullets?|bullet points?|points?|lines?)?$/.exec(l);
  if (count) return Number(count[1]) >= 1 ? { sentences: Number(count[1]) } : null;
  const words = /^(?:about |around |max(?:imum)? |up to )?(\d+)\s*words?$/.exec(l);
  if (words) return Number(words[1]) >= 1 ? { words: Number(words[1]) } : null;
  if (/^(?:short|shorter|brief|concise|very short)$/.test(l)) return { preset: "short" };
  if (/^(?:medium|moderate|normal|standard|default)$/.test(l)) return { preset: "medium" };
  if (/^(?:long|longer|detailed|comprehensive|extended)$/.test(l)) return { preset: "long" };
  return null;
}

/** Whether the engine understands a request's length. */
export function isSupportedLength(length: SummaryLength | undefined): boolean {
  return parseLength(length) !== null;
}

function targetCount(spec: LengthSpec, n: number): number {
  if ("sentences" in spec) return Math.max(1, Math.min(n, spec.sentences));
  if ("words" in spec) return n;
  if (spec.preset === "short") return Math.min(n, n <= 4 ? 1 : 2);
  if (spec.preset === "long") return Math.min(n, Math.max(4, Math.ceil(n * 0.5)));
  return Math.min(n, Math.max(2, Math.min(5, Math.ceil(n * 0.3))));
}

const CUE =
  /\b(?:in summary|in conclusion|overall|importantly|the main|key|result(?:s|ed)?|found|shows?|decided|agreed|announced|will|must|need to|deadline|because|therefore|recommend\w*)\b/i;
const FILLER = /^(?:hi|hello|dear|thanks|thank you|regards|best|cheers|sincerely)\b/i;

interface AudienceBias {
  /** preference for short sentences (positive) or long ones (negative) */
  brevity: number;
  numbers: number;
}

/** Whether the summarizer has a bias for this audience (otherwise the option changes nothing). */
export function isKnownAudience(audience: string | undefined): boolean {
  const b = audienceBias(audience);
  return b.brevity !== 0 || b.numbers !== 0;
}

function audienceBias(audience: string | undefined): AudienceBias {
  const a = (audience ?? "").toLowerCase();
  if (/exec|manag|leader|board|c-?suite|stakeholder|investor|business/.test(a)) return { brevity: 0.3, numbers: 0.6 };
  if (/child|kid|student|beginner|novice|general|lay|public|non-?technical|customer/.test(a))
    return { brevity: 0.6, numbers: -0.3 };
  if (/tech|engineer|developer|expert|scien|research|academ|specialist|doctor|legal|lawyer/.test(a))
    return { brevity: -0.2, numbers: 0.3 };
  return { brevity: 0, numbers: 0 };
}

function render(picked: string[], format: "paragraph" | "bullets" | "tldr" | "numbered" | "headline"): string {
  switch (format) {
    case "bullets":
      return picked.map((s) => `- ${s}`).join("\n");
    case "numbered":
      return picked.map((s, i) => `${i + 1}. ${s}`).join("\n");
    case "tldr":
      return `TL;DR: ${picked.join(" ")}`;
    case "headline":
      return picked[0].replace(/(?<![.!?])[.!?]+$/, "");
    default:
      return picked.join(" ");
  }
}

const countWords = (s: string) => (s.match(/[\p{L}\p{N}]+/gu) ?? []).length;

/** Extractive summary of `text`. */
export function summarize(text: string, opts: SummarizeOptions = {}): SummaryResult {
  const sentences = sentencesOf(text);
  const format = FORMATS[(opts.format ?? "paragraph").toLowerCase().trim()] ?? "paragraph";
  const originalWordCount = countWords(text);
  if (!sentences.length) {
    return {
      summary: "",
      sentences: [],
      keyPoints: [],
      format,
      sentenceCount: 0,
      originalSentenceCount: 0,
      wordCount: 0,
      originalWordCount,
      compressionRatio: 0,
    };
  }
  const toks = sentences.map((s) => {
    checkCpuBudget();
    return lowerWords(s.text).filter((t) => !STOPWORDS.has(t) && t.length > 2);
  });
  const freq = new Map<string, number>();
  let maxF = 1;
  for (const ts of toks)
    for (const t of new Set(ts)) {
      tickCpuBudget();
      const f = (freq.get(t) ?? 0) + 1;
      freq.set(t, f);
      // a loop, not Math.max(...values): tens of thousands of arguments
      if (f > maxF) maxF = f;
    }
  const bias = audienceBias(opts.targetAudience);
  const n = sentences.length;
  const scored = sentences.map((s, i) => {
    checkCpuBudget();
    const ts = toks[i];
    // sum damped by length^0.7: long sentences hold more content words but must not win by length alone
    let score = ts.length ? ts.reduce((a, t) => a + (freq.get(t) ?? 0) / maxF, 0) / ts.length ** 0.7 : 0;
    if (i === 0) score *= 1.35;
    else if (i === n - 1) score *= 1.1;
    if (CUE.test(s.text)) score *= 1.2;
    if (FILLER.test(s.text) && ts.length < 6) score *= 0.2;
    if (/\?\s*$/.test(s.text)) score *= 0.8;
    const words = countWords(s.text);
    if (words < 4) score *= 0.5;
    const plain = score;
    score *= 1 + bias.brevity * (words <= 18 ? 0.5 : -0.5);
    // figures are what executives act on and what beginners stumble over
    if (/\d/.test(s.text)) score *= 1 + bias.numbers;
    return { i, score, plain };
  });
  // the main point is the best sentence for any reader: an audience changes what goes with it, never drops it
  const main = scored.reduce((a, b) => (b.plain > a.plain ? b : a));
  const spec = parseLength(opts.length ?? (format === "headline" || format === "tldr" ? "short" : "medium")) ?? {
    preset: "medium",
  };
  const k = format === "headline" ? 1 : format === "tldr" ? Math.min(targetCount(spec, n), 2) : targetCount(spec, n);
  checkCpuBudget();
  const ranked = [...scored].sort((a, b) => b.score - a.score || a.i - b.i);
  let picked = ranked.slice(0, k);
  if ("words" in spec && format !== "headline") {
    // best sentences while they fit the word budget; always at least the best one
    picked = [];
    let used = 0;
    for (const r of ranked) {
      checkCpuBudget();
      const w = countWords(sentences[r.i].text);
      if (picked.length && used + w > spec.words) continue;
      picked.push(r);
      used += w;
    }
  }
  if (!picked.includes(main)) picked = [...picked.slice(0, Math.max(0, picked.length - 1)), main];
  const chosen = [...picked].sort((a, b) => a.i - b.i).map((x) => sentences[x.i].text);
  const keyPoints = [main, ...ranked.filter((r) => r !== main)]
    .slice(0, Math.min(n, Math.max(3, picked.length)))
    .sort((a, b) => a.i - b.i)
    .map((x) => sentences[x.i].text);
  const summary = render(chosen, format);
  const wordCount = countWords(chosen.join(" "));
  return {
    summary,
    sentences: chosen,
    keyPoints,
    format,
    sentenceCount: chosen.length,
    originalSentenceCount: n,
    wordCount,
    originalWordCount,
    compressionRatio: originalWordCount ? Math.round((wordCount / originalWordCount) * 100) / 100 : 0,
  };
}
