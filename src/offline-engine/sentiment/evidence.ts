/**
 * Conflicting evidence in one text, for an honest label and confidence: the strongest praise and
 * the strongest criticism among its clauses (a sentence cut at commas, semicolons and contrast
 * words in seven languages), sarcasm cues, and whether the text is English at all (the lexicon
 * is English with a small supplement for six other languages, so elsewhere it is guessing).
 */
import { checkCpuBudget, tickCpuBudget } from "../budget";
import { CONTRAST_WORDS } from "./multilingual";
import { normalize, valenceSum } from "./vader";

export interface Evidence {
  /** strongest positive clause score, 0..1 */
  praise: number;
  /** strongest negative clause score, as a positive number 0..1 */
  criticism: number;
  /** a sarcasm cue ("oh great", "just what I needed", "love how it...") was found */
  sarcasm: boolean;
  /** the text reads as English (most of its function words are English ones) */
  english: boolean;
}

const CLAUSE_BREAK = new RegExp(
  `[,;:]|\\s[-–—]\\s|(?<!\\p{L})(?:${[...CONTRAST_WORDS, "although", "though", "while", "whereas"].join("|")})(?!\\p{L})`,
  "giu",
);

/**
 * Phrases people use ironically far more often than sincerely, in product and service feedback.
 * Each needs negative evidence elsewhere in the text before it turns a label (see sentiment.ts).
 */
const SARCASM =
  /\b(?:oh,? (?:great|perfect|wonderful|joy|fantastic|brilliant|lovely|good|nice)|(?:just|exactly) what i (?:needed|wanted)|thanks for nothing|yeah,? right|(?:i )?love (?:how|that) (?:it|this|the|my|they|you)\b|so much for|what a (?:joke|surprise)|(?:great|fantastic|amazing|wonderful|excellent|brilliant|perfect|impressive|incredible)\W+(?:\w+\W+){0,4}?(?:lasts?|lasted|takes?|took) (?:all|a whole|an entire|only|just) (?:morning|afternoon|day|hour|minute|week)s?)/i;

const SARCASM_G = new RegExp(SARCASM.source, "gi");

/**
 * Praise said as an interjection that opens a sentence ("Great, another update...", "Perfect, the
 * replacement is the wrong size too", "Thanks a lot, the fix deleted..."): sincere before good
 * news or plain news ("Great, the package arrived today", "Thanks a lot, that fixed it"), ironic
 * before a failure: a sarcasm cue only when what follows it reads negative.
 */
const INTERJECTION_G =
  /(?:^|(?<=[.!?]\s))\s*(?:oh,? )?(?:just )?(?:great|perfect|amazing|wonderful|fantastic|brilliant|lovely|nice|awesome|excellent|super|cool|thanks a lot|thanks a bunch|thanks so much|nice job|good job|well done|nice one)(?: guys| folks| team| everyone)?[,!.]/gi;

const blank = (cue: string) => " ".repeat(cue.length);

/**
 * The text with its sarcasm cues blanked (each character a space, so offsets stay those of the
 * text), or null when it has none: what is left says what the writer meant.
 */
export function withoutSarcasm(text: string): string | null {
  SARCASM_G.lastIndex = 0;
  INTERJECTION_G.lastIndex = 0;
  if (!SARCASM_G.test(text) && !INTERJECTION_G.test(text)) return null;
  return text.replace(SARCASM_G, blank).replace(INTERJECTION_G, blank);
}

/** An opening interjection of praise before news that is not praise once it is blanked. */
function ironicInterjection(text: string): boolean {
  INTERJECTION_G.lastIndex = 0;
  if (!INTERJECTION_G.test(text)) return false;
  const rest = text.replace(INTERJECTION_G, blank);
  return normalize(valenceSum(rest).sum) < -0.05;
}

const ENGLISH_FUNCTION_WORDS = new Set(
  (
    "the a an and or but is are was were be been it its this that to of in on for with my your our i you we they he she not no have has had do does did will would can could at by from so very just " +
    // contractions split at the apostrophe ("hasn't" -> "hasn", "t") and time words of a complaint
    "hasn haven isn wasn doesn didn don won couldn wouldn after before still again"
  ).split(" "),
);

/** Share of a text's words that are English function words: about 0.3-0.5 in English prose, under 0.1 in most other languages. */
export function englishShare(words: string[]): number {
  if (words.length === 0) return 1;
  let n = 0;
  for (const w of words) {
    tickCpuBudget();
    if (ENGLISH_FUNCTION_WORDS.has(w)) n++;
  }
  return n / words.length;
}

/**
 * A concession ("great sound, but the cushions started peeling", "tolles Design, aber der Akku
 * hält nur einen halben Tag") criticises even when the lexicon knows none of its words: after
 * clear praise, a contrast word announces the other side. Such a clause of at least this many
 * words that is not itself praise counts as criticism of this strength.
 */
const CONCESSION_WORDS = 3;
const CONCESSION_CRITICISM = 0.3;
const CONTRAST = new Set([...CONTRAST_WORDS, "although", "though", "whereas"]);

export function evidenceOf(sentences: string[]): Evidence {
  let praise = 0;
  let criticism = 0;
  for (const sentence of sentences) {
    checkCpuBudget();
    let start = 0;
    let praisedBefore = 0;
    let conceding = false;
    const cut = (end: number) => {
      const clause = sentence.slice(start, end);
      if (clause.trim()) {
        const score = normalize(valenceSum(clause).sum);
        if (score > praise) praise = score;
        if (-score > criticism) criticism = -score;
        const words = clause.match(/\p{L}+/gu)?.length ?? 0;
        if (conceding && praisedBefore >= CONCESSION_CRITICISM && score < 0.05 && words >= CONCESSION_WORDS)
          criticism = Math.max(criticism, CONCESSION_CRITICISM);
        if (score > praisedBefore) praisedBefore = score;
      }
    };
    for (const m of sentence.matchAll(CLAUSE_BREAK)) {
      tickCpuBudget();
      cut(m.index);
      start = m.index + m[0].length;
      conceding = CONTRAST.has(m[0].toLowerCase());
    }
    cut(sentence.length);
  }
  checkCpuBudget();
  const text = sentences.join(" ");
  const words = text.toLowerCase().match(/\p{L}+/gu) ?? [];
  checkCpuBudget();
  const sarcasm = SARCASM.test(text) || ironicInterjection(text);
  return { praise, criticism, sarcasm, english: readsAsEnglish(words) };
}

/** Whether lower-cased words read as English: too few to tell, or enough English function words among them. */
export function readsAsEnglish(words: string[]): boolean {
  return words.length < 4 || englishShare(words) >= 0.12;
}
