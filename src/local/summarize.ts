/**
 * Extractive summarization for the offline engine: sentences scored by content-word
 * frequency, position and cue phrases, picked in document order.
 *
 * Exported API (stable; other modules compose it):
 *   summarize(text: string, opts?: SummarizeOptions): SummaryResult
 *     opts.length: "short" | "medium" | "long" | number (sentences) | numeric string; default "medium"
 *     opts.format: "paragraph" | "bullets" | "bullet_points" | "tldr" | "numbered" | "key_points" | "headline"
 *     opts.targetAudience: free text; "executive"/"children"/"technical"/... bias sentence choice
 *     -> { summary, sentences (picked, document order), keyPoints, format, sentenceCount,
 *          originalSentenceCount, wordCount, originalWordCount, compressionRatio }
 *   splitSentences(text: string): Sentence[]   { text, start, end }
 *   isSupportedFormat(format): boolean          whether the engine can render that format
 */
import { STOPWORDS, tokenize } from "./keywords";

export type SummaryLength = "short" | "medium" | "long" | number | string;

export interface SummarizeOptions {
  length?: SummaryLength;
  format?: string;
  targetAudience?: string;
}

export interface Sentence {
  text: string;
  start: number;
  end: number;
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

// Abbreviations whose period does not end a sentence.
const ABBREV =
  /(?:\b(?:mr|mrs|ms|dr|prof|sr|jr|st|vs|etc|inc|ltd|co|corp|e\.g|i\.e|approx|no|fig|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|u\.s)|\b[A-Z])\.$/i;

/** Sentences with offsets; line breaks that start bullets or paragraphs also split. */
export function splitSentences(text: string): Sentence[] {
  const out: Sentence[] = [];
  const re = /[^.!?\n]+(?:[.!?]+["')\]]*|\n+|$)/g;
  let pending: { start: number; end: number } | null = null;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (!m[0]) {
      re.lastIndex++;
      continue;
    }
    const start: number = pending ? pending.start : m.index;
    const end = m.index + m[0].length;
    const chunk = text.slice(start, end).trimEnd();
    const next = text.slice(end, end + 2);
    // "Dr. Smith", "3.5", "e.g. this": keep going
    if (ABBREV.test(chunk) || (/\d\.$/.test(chunk) && /^\d/.test(next))) {
      pending = { start, end };
      continue;
    }
    pending = null;
    const raw = text.slice(start, end);
    const lead = raw.length - raw.trimStart().length;
    const body = raw.trim().replace(/^[-*•·]\s+|^\d+[.)]\s+/, "");
    if (/[\p{L}\p{N}]/u.test(body))
      out.push({ text: body.replace(/\s+/g, " "), start: start + lead, end: start + raw.trimEnd().length });
  }
  if (pending) {
    const raw = text.slice(pending.start);
    if (raw.trim()) out.push({ text: raw.trim().replace(/\s+/g, " "), start: pending.start, end: text.length });
  }
  return out;
}

function targetCount(length: SummaryLength | undefined, n: number): number {
  const asNum =
    typeof length === "number" ? length : typeof length === "string" && /^\d+$/.test(length.trim()) ? Number(length) : null;
  if (asNum !== null) return Math.max(1, Math.min(n, Math.floor(asNum)));
  const l = String(length ?? "medium").toLowerCase();
  if (l.startsWith("short") || l === "brief") return Math.min(n, n <= 4 ? 1 : 2);
  if (l.startsWith("long") || l === "detailed") return Math.min(n, Math.max(4, Math.ceil(n * 0.5)));
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
      return picked[0].replace(/[.!?]+$/, "");
    default:
      return picked.join(" ");
  }
}

const countWords = (s: string) => (s.match(/[\p{L}\p{N}]+/gu) ?? []).length;

/** Extractive summary of `text`. */
export function summarize(text: string, opts: SummarizeOptions = {}): SummaryResult {
  const sentences = splitSentences(text);
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
  const toks = sentences.map((s) => tokenize(s.text).filter((t) => !STOPWORDS.has(t) && t.length > 2));
  const freq = new Map<string, number>();
  for (const ts of toks) for (const t of new Set(ts)) freq.set(t, (freq.get(t) ?? 0) + 1);
  const maxF = Math.max(1, ...freq.values());
  const bias = audienceBias(opts.targetAudience);
  const n = sentences.length;
  const scored = sentences.map((s, i) => {
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
    score *= 1 + bias.brevity * (words <= 18 ? 0.5 : -0.5);
    // figures are what executives act on and what beginners stumble over
    if (/\d/.test(s.text)) score *= 1 + bias.numbers;
    return { i, score };
  });
  const k =
    format === "headline" || format === "tldr"
      ? Math.min(targetCount(opts.length ?? "short", n), format === "headline" ? 1 : 2)
      : targetCount(opts.length, n);
  const chosen = [...scored]
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .slice(0, k)
    .sort((a, b) => a.i - b.i)
    .map((x) => sentences[x.i].text);
  const keyPoints = [...scored]
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .slice(0, Math.min(n, Math.max(3, k)))
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
