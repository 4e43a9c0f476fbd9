/**
 * VADER-style valence scoring (Hutto & Gilbert 2014) over the lexicon shipped in the
 * `vader-sentiment` npm package: booster words, negation within three words, "but" shifting
 * weight to the second half, ALL-CAPS emphasis, "!" and "?" amplification. Returns raw sums so a
 * caller can add sentence scores together before normalising.
 */
import { readFileSync } from "node:fs";
import LEXICON_FILE from "../../../node_modules/vader-sentiment/vader_lexicon.txt" with { type: "file" };
import { tickCpuBudget } from "../budget";
import { slicedEngine } from "../engines";
import { eventCues } from "./events";
import { CONTRAST_WORDS, MULTILINGUAL_NEGATIONS, MULTILINGUAL_VALENCE } from "./multilingual";
import { DOMAIN_VALENCE, EMOJI_VALENCE } from "./supplement";

const B_INCR = 0.293;
const B_DECR = -0.293;
const C_INCR = 0.733;
const N_SCALAR = -0.74;

/**
 * The lexicon is read from its file on the first sentiment call: imported as text, its 427 KB
 * string sat in memory from start-up on (about 5 MB of resident memory), in every gateway.
 */
function* loadLexicon(): Generator<void, Map<string, number>, void> {
  const map = new Map<string, number>();
  let n = 0;
  for (const line of readFileSync(LEXICON_FILE, "utf8").split("\n")) {
    if ((++n & 511) === 0) yield;
    const tab = line.indexOf("\t");
    if (tab <= 0) continue;
    const second = line.indexOf("\t", tab + 1);
    const value = Number(line.slice(tab + 1, second < 0 ? undefined : second));
    if (Number.isFinite(value)) map.set(line.slice(0, tab), value);
  }
  for (const [word, value] of Object.entries(DOMAIN_VALENCE)) map.set(word, value);
  for (const [word, value] of Object.entries(MULTILINGUAL_VALENCE)) if (!map.has(word)) map.set(word, value);
  for (const [emoji, value] of Object.entries(EMOJI_VALENCE)) map.set(emoji, value);
  return map;
}

// 7,500 words: parsed by the first sentiment call
const lexicon = slicedEngine("sentiment-lexicon", loadLexicon);

const NEGATIONS = new Set(
  (
    "aint arent cannot cant couldnt darent didnt doesnt ain't aren't can't couldn't daren't didn't doesn't " +
    "dont hadnt hasnt havent isnt mightnt mustnt neither don't hadn't hasn't haven't isn't mightn't mustn't " +
    "neednt needn't never none nope nor not nothing nowhere oughtnt shant shouldnt uhuh wasnt werent " +
    "oughtn't shan't shouldn't uh-uh wasn't weren't without wont wouldnt won't wouldn't rarely seldom despite no nobody"
  )
    .split(" ")
    .concat(MULTILINGUAL_NEGATIONS),
);

const CONTRASTS = new Set(CONTRAST_WORDS);

const JUDGEMENT_VERBS = new Set(["call", "say", "describe", "consider", "rate", "think", "find"]);
/**
 * Verbs that put a fault right: a fault named as their object is a fault fixed ("replaced the
 * broken boiler", "refunded the fraudulent charge"), which counts for the writer, at half weight.
 */
const FIXES = new Set(["replaced", "repaired", "fixed", "mended", "refunded", "reversed", "resolved", "removed", "cleaned"]);

const BOOSTERS = new Map<string, number>();
for (const w of (
  "absolutely amazingly awfully completely considerable considerably decidedly deeply effing enormous " +
  "enormously entirely especially exceptional exceptionally extreme extremely fabulously flipping flippin " +
  "frackin fracking fricking frickin frigging friggin fully fuckin fucking fuggin fugging greatly hella highly " +
  "hugely incredible incredibly intensely major majorly more most particularly purely quite really remarkably " +
  "so substantially super thoroughly total totally tremendous tremendously uber unbelievably unusually utter utterly very " +
  // VADER rates these as praise (2.0, 1.9); in reviews they mark sincerity or emphasis: "honestly the worst"
  "honestly truly frankly"
).split(" "))
  BOOSTERS.set(w, B_INCR);
for (const w of (
  "almost barely hardly kinda kindof kind-of less little marginal marginally occasional occasionally partly " +
  "scarce scarcely slight slightly somewhat sorta sortof sort-of"
).split(" "))
  BOOSTERS.set(w, B_DECR);

/** "outstanding balance", "still outstanding", "invoice is outstanding": owed, not excellent (valence 0). */
function outstandingDebts(): [string, number][] {
  const owed =
    "balance balances amount amounts invoice invoices payment payments debt debts bill bills fee fees charge charges sum sums issue issues item items order orders ticket tickets request requests question questions".split(
      " ",
    );
  return [
    ...owed.map((w): [string, number] => [`outstanding ${w}`, 0]),
    ...["remains", "remain", "remained", "still", "currently"].map((w): [string, number] => [`${w} outstanding`, 0]),
    ...["payment", "invoice", "balance", "amount", "bill", "sum"].flatMap((w) =>
      ["is", "was", "are", "were"].map((v): [string, number] => [`${w} ${v} outstanding`, 0]),
    ),
  ];
}

/** Multi-word expressions whose meaning is not the sum of their words. */
const IDIOMS = new Map<string, number>([
  ["the shit", 3],
  ["the bomb", 3],
  ["bad ass", 1.5],
  ["badass", 1.5],
  ["yeah right", -2],
  ["kiss of death", -1.5],
  ["to die for", 3],
  ["beating heart", 3.1],
  ["broken heart", -2.9],
  ["waste of money", -2.5],
  ["waste of time", -2.5],
  ["stopped working", -2],
  ["does the job", 1.5],
  ["does the trick", 1.5],
  ["fell apart", -2],
  // parts that fail, said plainly: "the sole came off", "the strap gave out"
  ["came off", -1.5],
  ["came apart", -2],
  ["fell off", -1.5],
  ["gave out", -1.8],
  ["wore out", -1.5],
  ["peeled off", -1.5],
  ["nothing special", -1.2],
  ["falls apart", -2],
  ["not worth", -2],
  ["worth every penny", 2.8],
  ["highly recommend", 2.8],
  ["would not recommend", -2.4],
  ["wouldn't recommend", -2.4],
  ["do not buy", -2.5],
  ["don't buy", -2.5],
  ["never again", -2],
  ["five stars", 2.5],
  ["5 stars", 2.5],
  ["one star", -2],
  ["1 star", -2],
  // disappointment said without a negative word: "I expected more", "not as described"
  ["expected more", -1.5],
  ["expected better", -1.5],
  ["hoped for more", -1.5],
  ["hoped for better", -1.5],
  ["not what i expected", -1.5],
  ["not as described", -1.8],
  ["not as advertised", -1.8],
  // failures that recur or end a service: "the app keeps logging me out", "the line went dead"
  ["logs me out", -1.3],
  ["logging me out", -1.3],
  ["logged me out", -1.3],
  ["kicks me out", -1.3],
  ["shuts down", -1.3],
  ["went dead", -1.5],
  ["went flat", -1.2],
  ["went missing", -1.5],
  ["went down", -1],
  ["hung up on", -1.5],
  // the fault found is no fault of the service: "the mechanic found the problem in ten minutes"
  ["found the problem", 0],
  ["found the issue", 0],
  ["fixed the problem", 1.5],
  ["fixed the issue", 1.5],
  ["solved the problem", 1.5],
  ["sorted the problem", 1.5],
  // a refund received is the happy end of a complaint: "my refund arrived the next day"
  ["refund arrived", 1.5],
  ["refund came", 1.5],
  ["refunded me", 1],
  ["twice as fast", 1.5],
  // a request's politeness, not a liking: "I'd like to change my plan"
  ["i'd like to", 0],
  ["we'd like to", 0],
  ["would like to", 0],
  ["buy again", 2],
  ["order again", 2],
  // service names, not praise: "customer support hung up on me"
  ["customer support", 0],
  ["customer service", 0],
  ["tech support", 0],
  // "outstanding" in billing is unpaid, not excellent: "the balance remains outstanding"
  ...outstandingDebts(),
]);

const COMPARATIVES = new Set(["better", "worse", "nicer", "finer", "happier", "sadder", "bigger", "tastier"]);

const IDIOM_STARTS = new Set([...IDIOMS.keys()].map((k) => k.split(" ")[0]));

/** "like" is a verb of liking after these words; elsewhere it is mostly a preposition ("looks like"). */
const LIKE_SUBJECTS = new Set(
  "i you we they he she really do did does would 'd also totally actually definitely just still kinda don't didn't doesn't i'd we'd".split(
    " ",
  ),
);

/**
 * What a customer expects to happen: negated, it is a complaint ("support never replied", "the
 * parcel hasn't arrived", "nobody called back", "it doesn't work"), though VADER rates these
 * verbs neutral. Only a negation right before (one or two words) turns them, so "no problem, it
 * arrived" stays as it was. Valued as mild praise, which the negation flips (-0.74 x).
 */
const EXPECTED = new Map<string, number>(
  (
    "reply replied replies respond responded responds answer answered answers arrive arrived arrives came " +
    "show showed shown work worked works working fix fixed fixes refund refunded refunds " +
    "deliver delivered ship shipped call called acknowledge acknowledged resolve resolved " +
    // what a device is expected to do: "won't connect", "doesn't load", "can't sync"
    "connect connects load loads start starts boot boots sync syncs print prints unlock unlocks shows " +
    "replying responding answering helped sorted"
  )
    .split(" ")
    .map((w) => [w, 1.5]),
);
const EXPECTATION_NEGATIONS = new Set(["nobody", "noone"]);

const PUNCT_EDGES = /^[^\p{L}\p{N}]+|(?<![^\p{L}\p{N}])[^\p{L}\p{N}]+$/gu;
const HAS_LETTER = /\p{L}/u;

export interface VaderTokens {
  words: string[];
  lower: string[];
  capDiff: boolean;
}

export function vaderTokens(text: string): VaderTokens {
  const words: string[] = [];
  const lex = lexicon();
  for (const raw of text.split(/\s+/)) {
    tickCpuBudget();
    if (!raw) continue;
    // keep emoticons and emoji that the lexicon knows; otherwise strip edge punctuation
    if (lex.has(raw.toLowerCase()) && !HAS_LETTER.test(raw)) {
      words.push(raw);
      continue;
    }
    const stripped = raw.replace(PUNCT_EDGES, "");
    // a lone digit is kept: "waiting 3 days", "5 stars"
    if (stripped.length > 1 || (stripped.length === 1 && /[\p{L}\p{N}]/u.test(stripped))) words.push(stripped);
    else if (stripped.length === 0) {
      for (const ch of raw) {
        tickCpuBudget();
        if (lex.has(ch)) words.push(ch);
      }
    }
  }
  const lower = words.map((w) => {
    tickCpuBudget();
    return w.toLowerCase();
  });
  let upper = 0;
  for (const w of words) {
    tickCpuBudget();
    if (isShouted(w)) upper++;
  }
  return { words, lower, capDiff: upper > 0 && upper < words.length };
}

function isShouted(word: string): boolean {
  return word.length > 1 && HAS_LETTER.test(word) && word === word.toUpperCase() && word !== word.toLowerCase();
}

function isNegation(word: string): boolean {
  return NEGATIONS.has(word) || word.endsWith("n't");
}

/** What valenceSum finds in a text. */
export interface Valence {
  readonly sum: number;
  readonly pos: number;
  readonly neg: number;
  readonly hits: number;
}

/**
 * valenceSum's answers to texts it read lately. A review is read sentence by sentence for its
 * label, again clause by clause for its evidence, and again for each theme it mentions: the same
 * strings many times over (a 100 KB review summary read each sentence 3 to 6 times). The answer
 * depends on the text alone, so it is kept: texts of a sentence's length (up to MEMO_TEXT
 * characters; a longer one is read each time, looking at the CPU budget as it goes), up to
 * MEMO_CHARS characters in all, then the memo starts afresh.
 */
const memo = new Map<string, Valence>();
const MEMO_TEXT = 2_000;
const MEMO_CHARS = 1_000_000;
let memoChars = 0;

/** Sum of word valences of one sentence or clause plus punctuation emphasis (not normalised). */
export function valenceSum(text: string): Valence {
  if (text.length > MEMO_TEXT) return computeValence(text);
  const known = memo.get(text);
  if (known !== undefined) return known;
  const v = computeValence(text);
  if (memoChars + text.length > MEMO_CHARS) {
    memo.clear();
    memoChars = 0;
  }
  memo.set(text, v);
  memoChars += text.length;
  return v;
}

function computeValence(text: string): Valence {
  const t = vaderTokens(text);
  const { words, lower, capDiff } = t;
  const lex = lexicon();
  const vals = new Array<number>(words.length).fill(0);
  let hits = 0;
  const n = words.length;
  const consumed = new Uint8Array(n);
  // idioms first: they replace the valence of the words they cover
  for (let i = 0; i < n; i++) {
    tickCpuBudget();
    if (!IDIOM_STARTS.has(lower[i])) continue;
    for (let len = 4; len >= 2; len--) {
      if (i + len > n) continue;
      const phrase = lower.slice(i, i + len).join(" ");
      const v = IDIOMS.get(phrase);
      if (v === undefined) continue;
      let value = v;
      // "not worth" already carries its negation; other idioms flip after a negation
      if (i > 0 && isNegation(lower[i - 1]) && !phrase.startsWith("not") && !phrase.startsWith("would")) value *= N_SCALAR;
      vals[i] = value;
      hits++;
      for (let k = i; k < i + len; k++) consumed[k] = 1;
      break;
    }
  }
  for (let i = 0; i < n; i++) {
    tickCpuBudget();
    if (consumed[i]) continue;
    const w = lower[i];
    if (BOOSTERS.has(w)) continue;
    if (w === "kind" && lower[i + 1] === "of") continue;
    if (w === "like" && i > 0 && !LIKE_SUBJECTS.has(lower[i - 1])) continue;
    let valence = lex.get(w);
    if (valence === undefined) {
      const expected = EXPECTED.get(w);
      if (expected === undefined || !expectationDenied(lower, i)) continue;
      valence = expected * N_SCALAR;
      vals[i] = valence;
      hits++;
      continue;
    }
    hits++;
    if (capDiff && isShouted(words[i])) valence += valence > 0 ? C_INCR : -C_INCR;
    for (let back = 1; back <= 3; back++) {
      const j = i - back;
      if (j < 0) break;
      if (!lex.has(lower[j])) {
        let s = scalar(lower[j], words[j], valence, capDiff);
        if (back === 2) s *= 0.95;
        else if (back === 3) s *= 0.9;
        valence += s;
      }
      // "can't believe how good" is emphasis, not negation
      if (lower[j + 1] === "believe" && isNegation(lower[j])) continue;
      // "never had a worse day" means this one was the worst: "never" + comparative keeps polarity
      if (lower[j] === "never" && COMPARATIVES.has(w)) continue;
      valence = negated(lower, i, back, valence);
    }
    if (i > 0 && lower[i - 1] === "least" && !(i > 1 && (lower[i - 2] === "at" || lower[i - 2] === "very"))) valence *= N_SCALAR;
    // "too" before praise is a fault: "scratches far too easily", "too bright", "too sweet"
    if (valence > 0 && i > 0 && lower[i - 1] === "too" && !(i > 1 && isNegation(lower[i - 2]))) valence *= N_SCALAR;
    // "replaced the broken boiler": a fault a fix verb takes as object, the verb not negated
    if (valence < 0) {
      for (let back = 1; back <= 3 && i - back >= 0; back++) {
        const j = i - back;
        if (!FIXES.has(lower[j])) continue;
        if (!(j > 0 && isNegation(lower[j - 1])) && !(j > 1 && isNegation(lower[j - 2]))) valence = -0.5 * valence;
        break;
      }
    }
    vals[i] = valence;
  }
  // events that judge without a judging word: "on hold for an hour", "fixed the same day" (events.ts)
  for (const { word, cue } of eventCues(lower.join(" "))) {
    vals[word] += cue.negatable && expectationDenied(lower, word) ? cue.value * N_SCALAR : cue.value;
    hits++;
  }
  // "wouldn't call it good", "can't say the food was great": the judgement verb carries the
  // negation past VADER's three-word window, to the praise that ends the clause
  // negation (from word 5 after "wouldn't call" to the next contrast word) in one sweep: a loop
  // per pair was quadratic on "wouldn't call wouldn't call ...", and a flipped word stays flipped
  let judged = false;
  for (let j = 5; j < n; j++) {
    tickCpuBudget();
    if (isNegation(lower[j - 5]) && JUDGEMENT_VERBS.has(lower[j - 4])) judged = true;
    if (CONTRASTS.has(lower[j])) judged = false;
    else if (judged && vals[j] > 0) vals[j] *= N_SCALAR;
  }
  // "but" (and "mais", "aber", "pero"...): what follows matters more than what precedes
  const butAt = lower.findIndex((w) => CONTRASTS.has(w) || w === "although" || w === "though");
  if (butAt >= 0) {
    for (let i = 0; i < n; i++) {
      if (i < butAt) vals[i] *= lower[butAt] === "although" || lower[butAt] === "though" ? 1.5 : 0.5;
      else if (i > butAt) vals[i] *= lower[butAt] === "although" || lower[butAt] === "though" ? 0.5 : 1.5;
    }
  }
  let sum = 0;
  let pos = 0;
  let neg = 0;
  for (const v of vals) {
    sum += v;
    if (v > 0) pos += v + 1;
    else if (v < 0) neg += v - 1;
  }
  if (sum !== 0) {
    const emphasis = punctuationEmphasis(text);
    sum += sum > 0 ? emphasis : -emphasis;
  }
  return { sum, pos, neg, hits };
}

/** A negation one or two words before word `i` ("never replied", "didn't even reply", "no one answered"). */
function expectationDenied(lower: string[], i: number): boolean {
  for (let back = 1; back <= 2 && i - back >= 0; back++) {
    const w = lower[i - back];
    if (isNegation(w) || EXPECTATION_NEGATIONS.has(w)) return true;
  }
  return false;
}

function scalar(lowerWord: string, word: string, valence: number, capDiff: boolean): number {
  let s = BOOSTERS.get(lowerWord);
  if (s === undefined) return 0;
  if (valence < 0) s = -s;
  if (capDiff && isShouted(word)) s += valence > 0 ? C_INCR : -C_INCR;
  return s;
}

function negated(lower: string[], i: number, back: number, valence: number): number {
  const w = lower[i - back];
  if (back === 1) return isNegation(w) ? valence * N_SCALAR : valence;
  const between = lower[i - back + 1];
  if (w === "never" && (between === "so" || between === "this")) return valence * 1.25;
  if (w === "without" && between === "doubt") return valence;
  return isNegation(w) ? valence * N_SCALAR : valence;
}

function punctuationEmphasis(text: string): number {
  let excl = 0;
  let qm = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 33) excl++;
    else if (c === 63) qm++;
  }
  const ep = Math.min(excl, 4) * 0.292;
  const qp = qm > 1 ? (qm <= 3 ? qm * 0.18 : 0.96) : 0;
  return ep + qp;
}

/** VADER's normalisation of a raw sum into -1..1. */
export function normalize(sum: number, alpha = 15): number {
  const x = sum / Math.sqrt(sum * sum + alpha);
  return Math.min(1, Math.max(-1, x));
}
