/**
 * Sentiment analysis of the offline engine: VADER-style scores per sentence, an overall label
 * (with "mixed" when clearly positive and clearly negative sentences meet), and per-aspect
 * scores taken from the clause around each mention of the aspect.
 */

import { checkCpuBudget, tickCpuBudget } from "./budget";
import { foldedSameLength, isLetterOrNumberAt, isSpace } from "./phrase-scan";
import { type Evidence, evidenceOf, withoutSarcasm } from "./sentiment/evidence";
import { normalize, valenceSum } from "./sentiment/vader";
import { round3, splitSentences, type TextSpan } from "./text";

export type SentimentLabel = "positive" | "negative" | "neutral" | "mixed";

export interface SentenceSentiment {
  text: string;
  label: SentimentLabel;
  score: number;
}

export interface AspectSentiment {
  aspect: string;
  label: SentimentLabel;
  score: number;
  mentions: number;
}

export interface SentimentResult {
  label: SentimentLabel;
  /** -1 (most negative) .. 1 (most positive) */
  score: number;
  /** 0..1 */
  confidence: number;
  sentences: SentenceSentiment[];
  aspects: AspectSentiment[];
}

/** |score| below this is neutral (VADER's published threshold). */
export const NEUTRAL_BAND = 0.05;
/** a sentence at least this strong in each direction makes a text "mixed" */
const MIXED_STRENGTH = 0.3;

export function labelFor(score: number): Exclude<SentimentLabel, "mixed"> {
  if (score >= NEUTRAL_BAND) return "positive";
  if (score <= -NEUTRAL_BAND) return "negative";
  return "neutral";
}

export function analyzeSentiment(text: string, opts: { aspects?: string[] } = {}): SentimentResult {
  const spans = splitSentences(text);
  let reading = readSentences(spans, (s) => s.text);
  let score = round3(normalize(reading.total));
  const ev = evidenceOf(spans.map((s) => s.text));
  let ironic = false;
  let sarcasmOnly = false;
  if (ev.sarcasm && score > 0) {
    // Praise in a sarcasm cue ("oh great", "amazing, it lasts all morning") is not praise: what
    // the rest says decides, and a cue beside any criticism is at least mixed. The cues are read
    // out of the sentences they sit in, so the sentences and the whole tell the same story.
    const blanked = withoutSarcasm(text) ?? text;
    const reread = readSentences(spans, (s) => blanked.slice(s.start, s.end));
    const rest = normalize(reread.total);
    if (rest < NEUTRAL_BAND) {
      reading = reread;
      score = round3(rest);
      ironic = true;
      // nothing but the cue praises: sincere or ironic, the words cannot tell
      sarcasmOnly = rest > -NEUTRAL_BAND;
    }
  }
  const label = labelOf({ score, strongestPos: reading.strongestPos, strongestNeg: reading.strongestNeg, ev, ironic });
  // Each sentence is labelled by the same rule, as a text of that one sentence in this reading would
  // be (its own clauses, its score): a one-sentence text's label and its sentence's are one and the same.
  const sentences = reading.sentences.map((s, i) => {
    const own = evidenceOf([spans[i]?.text ?? s.text]);
    return { ...s, label: labelOf({ score: s.score, strongestPos: s.score, strongestNeg: s.score, ev: own, ironic }) };
  });
  return {
    label,
    score,
    confidence: round3(
      sarcasmOnly
        ? SARCASM_ONLY_CONFIDENCE
        : unjudged(label, score, ev, text)
          ? UNJUDGED_CONFIDENCE
          : confidenceFor(label, score, reading.strongestPos, reading.strongestNeg, ev),
    ),
    sentences,
    aspects: (opts.aspects ?? []).map((aspect) => aspectSentiment(reading.scored, aspect)),
  };
}

/**
 * The one labelling rule, for a whole text and for each of its sentences: "mixed" when clearly
 * positive and clearly negative sentences meet, or clauses that praise and criticise, unless one
 * side clearly wins; a sarcasm cue beside criticism is at least mixed; read ironically (the cues
 * blanked), what the rest says; else the score's band.
 */
function labelOf(r: {
  score: number;
  strongestPos: number;
  strongestNeg: number;
  ev: Evidence;
  ironic: boolean;
}): SentimentLabel {
  if (r.ironic) return labelFor(r.score);
  const { score, ev } = r;
  const mixed =
    (r.strongestPos >= MIXED_STRENGTH && -r.strongestNeg >= MIXED_STRENGTH && Math.abs(score) < 0.5) ||
    (ev.praise >= MIXED_STRENGTH && ev.criticism >= MIXED_STRENGTH && Math.abs(score) < CLAUSE_MIXED_LIMIT) ||
    (ev.sarcasm && score > 0 && ev.criticism >= 0.2);
  return mixed ? "mixed" : labelFor(score);
}

/** One reading of a text, sentence by sentence: the whole is the sum of its sentences' valence. */
interface Reading {
  sentences: SentenceSentiment[];
  scored: ScoredSentence[];
  total: number;
  strongestPos: number;
  strongestNeg: number;
}

/** `read` gives the words each sentence is judged by (the sentence, or the sentence with its sarcasm cues blanked). */
function readSentences(spans: TextSpan[], read: (span: TextSpan) => string): Reading {
  const out: Reading = { sentences: [], scored: [], total: 0, strongestPos: 0, strongestNeg: 0 };
  for (const span of spans) {
    checkCpuBudget();
    const words = read(span);
    const { sum } = valenceSum(words);
    const raw = normalize(sum);
    const score = round3(raw);
    out.total += sum;
    if (score > out.strongestPos) out.strongestPos = score;
    if (score < out.strongestNeg) out.strongestNeg = score;
    out.scored.push({ text: words, score: raw });
    out.sentences.push({ text: span.text, label: labelFor(score), score });
  }
  return out;
}

/** Mixed also when one clause praises and another criticises, unless one side clearly wins overall. */
const CLAUSE_MIXED_LIMIT = 0.8;
/** A lexicon never knows for certain. */
const MAX_CONFIDENCE = 0.95;
/** Outside English the lexicon knows only a few hundred review words: a guess, said as one. */
const NON_ENGLISH_CONFIDENCE = 0.6;
/** Sarcasm reads both ways. */
const SARCASM_CONFIDENCE = 0.6;
/** A sarcasm cue with nothing else to go on: a coin toss between sincere and ironic. */
const SARCASM_ONLY_CONFIDENCE = 0.5;

/**
 * A statement that neither praises nor blames in any word the rules know ("the vet stayed late to
 * see our cat", "the meeting moved to 3 pm") is neutral for want of evidence, not by evidence: in
 * customer messages many such statements are complaints or praise stated as facts that no rule
 * names (one in five on the sets, one in three on the fact-stated dev set), so the answer is a
 * guess of that standing. A question ("is the pool open in winter?") asks, and stays confident.
 */
const UNJUDGED_CONFIDENCE = 0.65;

function unjudged(label: SentimentLabel, score: number, ev: Evidence, text: string): boolean {
  return label === "neutral" && score === 0 && ev.praise === 0 && ev.criticism === 0 && !text.includes("?");
}

/**
 * The number of words of a text whose answer was reached with no evidence (neutral for want of
 * any word, cue or clause either way, not a question), else null. How often such an answer is
 * right depends on how much the text tells without judging: a short statement is mostly a plain
 * fact ("The store opens at 9 am"), a long narrated one mostly a complaint or praise no rule names
 * ("the receptionist kept us standing at the counter for forty minutes before anyone looked at the
 * booking"); the confidence answered is fitted on the word count (calibration.ts).
 */
export function noEvidenceWords(text: string, r: SentimentResult): number | null {
  if (r.confidence !== round3(UNJUDGED_CONFIDENCE)) return null;
  const ev = evidenceOf(splitSentences(text).map((s) => s.text));
  if (!unjudged(r.label, r.score, ev, text)) return null;
  let words = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    if (i % 256 === 0) tickCpuBudget();
    const space = isSpace(text.charCodeAt(i));
    if (!space && !inWord) words++;
    inWord = !space;
  }
  return words;
}

function confidenceFor(label: SentimentLabel, score: number, pos: number, neg: number, ev: Evidence): number {
  const a = Math.abs(score);
  let c: number;
  if (label === "mixed") c = 0.5 + 0.5 * Math.max(Math.min(pos, -neg), Math.min(ev.praise, ev.criticism));
  else if (label === "neutral") c = 0.5 + 0.5 * (1 - Math.min(1, a / NEUTRAL_BAND)) * (1 - Math.max(ev.praise, ev.criticism));
  else {
    // scores just past the band are barely more than a coin toss
    c = 0.55 + 0.45 * Math.min(1, a / 0.6);
    // evidence the other way (a clause of criticism in a positive text) lowers it
    const against = label === "positive" ? ev.criticism : ev.praise;
    const forIt = label === "positive" ? ev.praise : ev.criticism;
    if (against > 0) c *= 1 - 0.5 * Math.min(1, against / Math.max(forIt, 0.05));
  }
  c = Math.min(MAX_CONFIDENCE, c);
  if (ev.sarcasm) c = Math.min(c, SARCASM_CONFIDENCE);
  if (!ev.english) c = Math.min(c, NON_ENGLISH_CONFIDENCE);
  return Math.max(0.3, c);
}

/** A clause of a sentence and, per aspect asked about, its score without the aspect's own words. */
interface Clause {
  start: number;
  end: number;
  scores?: Map<string, number>;
}

/** A sentence with its score and, once an aspect needs them, its clauses with cached scores. */
interface ScoredSentence {
  text: string;
  score: number;
  clauses?: Clause[];
}

// Clause boundaries inside a sentence: the aspect's sentiment is the one expressed next to it.
const CLAUSE_BREAK_G = /[,;:]|\s(?:but|however|although|though|while|whereas|yet|except)\s|\s[-–—]\s/gi;

function aspectSentiment(sentences: ScoredSentence[], aspect: string): AspectSentiment {
  const term = aspect.trim();
  if (!term) return { aspect, label: "neutral", score: 0, mentions: 0 };
  const pattern = aspectPattern(term);
  let mentions = 0;
  let sum = 0;
  for (const sentence of sentences) {
    checkCpuBudget();
    const folded = foldedSameLength(sentence.text);
    for (const m of mentionsOf(folded, pattern)) {
      mentions++;
      const clause = clauseAt(sentence, m.start);
      clause.scores ??= new Map();
      let score = clause.scores.get(term);
      if (score === undefined) {
        // the aspect's own words are what is judged, not a judgement: "support" (VADER: +1.7) in
        // "support was useless", "value" in "the value is poor"
        const text = withoutMentions(sentence.text, folded, clause, pattern);
        score = normalize(valenceSum(text).sum);
        clause.scores.set(term, score);
      }
      // a clause without opinion words ("the battery, sadly.") borrows half the sentence's tone
      sum += score !== 0 ? score : sentence.score * 0.5;
    }
  }
  const score = mentions ? round3(sum / mentions) : 0;
  return { aspect, label: labelFor(score), score, mentions };
}

/**
 * An aspect as it is looked for: its words in lower case, any blanks between them; the last may
 * be plural ("battery" -> "batteries") or possessive ("battery's"). Found by scanning, never by a
 * regex built from the words (the aspects are the caller's; phrase-scan.ts).
 */
interface AspectTerm {
  words: string[];
  /** endings the last word may take, in the order tried */
  endings: string[];
  /** the last word without the "y" that "ies" replaces */
  stem: string;
}

function aspectPattern(term: string): AspectTerm {
  const words = term.toLowerCase().split(/\s+/).filter(Boolean);
  const last = words[words.length - 1] ?? "";
  return last.endsWith("y")
    ? { words, stem: last.slice(0, -1), endings: ["y", "ies"] }
    : { words, stem: last, endings: ["es", "s", ""] };
}

const POSSESSIVES = ["'s", "’s", ""];

/** The end of the aspect when it starts at `at` in `text` (folded), else -1. */
function mentionEnd(text: string, at: number, t: AspectTerm): number {
  if (at > 0 && isLetterOrNumberAt(text, at - 1)) return -1;
  let i = at;
  for (let k = 0; k < t.words.length - 1; k++) {
    const w = t.words[k] as string;
    if (!text.startsWith(w, i)) return -1;
    i += w.length;
    const blank = i;
    while (i < text.length && isSpace(text.charCodeAt(i))) i++;
    if (i === blank) return -1;
  }
  if (!text.startsWith(t.stem, i)) return -1;
  i += t.stem.length;
  for (const ending of t.endings) {
    if (!text.startsWith(ending, i)) continue;
    for (const p of POSSESSIVES) {
      const end = i + ending.length + p.length;
      if (text.startsWith(p, i + ending.length) && (end >= text.length || !isLetterOrNumberAt(text, end))) return end;
    }
  }
  return -1;
}

/** The aspect's mentions in `text` (folded), left to right, not overlapping. */
function* mentionsOf(text: string, t: AspectTerm): Generator<{ start: number; end: number }> {
  if (!t.words.length) return;
  // where a mention can start: its first word, or the last word's stem when it is the only one
  const key = (t.words.length > 1 ? t.words[0] : t.stem) as string;
  const next = (from: number) => (key ? text.indexOf(key, from) : from < text.length ? from : -1);
  for (let i = next(0); i >= 0; i = next(i + 1)) {
    tickCpuBudget();
    const end = mentionEnd(text, i, t);
    if (end < 0) continue;
    yield { start: i, end };
    i = end - 1;
  }
}

/** The clause's text with the aspect's own mentions blanked out. */
function withoutMentions(text: string, folded: string, clause: Clause, t: AspectTerm): string {
  const part = folded.slice(clause.start, clause.end);
  let out = "";
  let at = 0;
  for (const m of mentionsOf(part, t)) {
    out += `${text.slice(clause.start + at, clause.start + m.start)} `;
    at = m.end;
  }
  return out + text.slice(clause.start + at, clause.end);
}

/** The clause of `sentence` holding offset `at`; clauses are computed once per sentence. */
function clauseAt(sentence: ScoredSentence, at: number): Clause {
  if (!sentence.clauses) {
    const clauses: Clause[] = [];
    let start = 0;
    for (const m of sentence.text.matchAll(CLAUSE_BREAK_G)) {
      tickCpuBudget();
      clauses.push({ start, end: m.index });
      start = m.index + m[0].length;
    }
    clauses.push({ start, end: sentence.text.length });
    sentence.clauses = clauses;
  }
  const clauses = sentence.clauses;
  // binary search: the last clause starting at or before `at`
  let lo = 0;
  let hi = clauses.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (clauses[mid].start <= at) lo = mid;
    else hi = mid - 1;
  }
  return clauses[lo];
}
