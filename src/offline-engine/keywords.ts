/**
 * Keyword extraction for the offline engine.
 *
 * Exported API (stable; other modules compose it):
 *   extractKeywords(text: string, n = 10): Keyword[]
 *     -> up to n keywords/keyphrases, best first: { keyword, score 0..1, count }
 *   lowerWords(text: string): string[]          lower-cased word tokens
 *   STOPWORDS: ReadonlySet<string>            English function words
 *
 * Method: RAKE-style candidate phrases (runs of content words between stopwords and
 * punctuation), each word scored by frequency and co-occurrence degree, phrases by the
 * sum of their words; short phrases of 1-3 words only, since longer ones read as fragments.
 */

import { checkCpuBudget, tickCpuBudget } from "./budget";
import { slicedEngine } from "./engines";
import { readStopwordLists } from "./stopwords";

export interface Keyword {
  keyword: string;
  /** relative score: the best keyword is 1 */
  score: number;
  /** occurrences of the phrase in the text */
  count: number;
}

export const STOPWORDS: ReadonlySet<string> = new Set(
  (
    "a about above after again against all also am an and any are aren't as at be because been before being below " +
    "between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each " +
    "few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself " +
    "him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more most mustn't " +
    "my myself no nor not of off on once only or other ought our ours ourselves out over own same shan't she she'd " +
    "she'll she's should shouldn't so some such than that that's the their theirs them themselves then there " +
    "there's these they they'd they'll they're they've this those through to too under until up very was wasn't we " +
    "we'd we'll we're we've were weren't what what's when when's where where's which while who who's whom why why's " +
    "with won't would wouldn't you you'd you'll you're you've your yours yourself yourselves " +
    "just will shall may might must also really still even get got getting gets please thanks thank hi hello hey dear " +
    "regards best yes ok okay well like want wanted need needs would could one two lot much many via etc per im ive " +
    "dont cant wont didnt doesnt isnt wasnt thats its us able anyone anything everything something nothing since " +
    "though although however yet already always never ever every back today tomorrow yesterday now soon new " +
    "within without across among upon around along onto toward towards whether uses used using " +
    "three four five six seven eight nine ten hundred thousand " +
    // chat shorthand: said in passing, never what a comment is about
    "lol lmao lmfao rofl omg btw imo imho tbh idk smh ngl thx ty pls plz"
  ).split(" "),
);

// Verbs that are rarely nouns, in base, -s and -ed form: they end a key phrase ("pricing page
// explains" -> "pricing page"). Verbs that double as nouns (support, report, update) are left out.
const VERB_BASES =
  "explain include add allow apply approve arrive ask become begin believe blend bring buy consider continue create decide deliver describe drain drive fall feel find fix follow get give go grow handle happen help hold increase keep know learn leave let live look lose love make mean meet move need provide put reach receive reduce remain require say see seem sell send serve show stay suggest take tell think try understand wait want warn welcome worry write seems says makes goes gets gives takes comes runs warns feels fuel blink stop fail forget prefer refuse seem tend wonder";

function verbForms(base: string): string[] {
  const stem = base.endsWith("e") ? base.slice(0, -1) : base;
  const s = /(?:s|sh|ch|x|z)$/.test(base) ? `${base}es` : /[^aeiou]y$/.test(base) ? `${base.slice(0, -1)}ies` : `${base}s`;
  const ed = /[^aeiou]y$/.test(base) ? `${base.slice(0, -1)}ied` : `${stem}ed`;
  return [base, s, ed];
}

const VERBS: ReadonlySet<string> = new Set(VERB_BASES.split(" ").flatMap(verbForms));

const WORD_RE = /[\p{L}\p{N}][\p{L}\p{N}'’_-]*/gu;

/** Lower-cased word tokens (letters, digits, inner apostrophes and hyphens). */
export function lowerWords(text: string): string[] {
  const out: string[] = [];
  for (const m of text.toLowerCase().matchAll(WORD_RE)) {
    tickCpuBudget();
    out.push(m[0].replace(/’/g, "'").replace(/(?<!['-])['-]+$/, ""));
  }
  return out;
}

// Phrase boundaries: punctuation that ends a clause.
const CLAUSE_SPLIT = /[.,;:!?()[\]{}"“”\n\r\t|/\\<>]+|\s[-–—]\s/;

/**
 * Stop words of the other languages the engine reads (German, French, Spanish, Italian, Portuguese,
 * Dutch), from the `stopword` package (MIT; lists after Ranks NL and stopwords-iso), loaded on the
 * first keyword extraction in one of them: "das Zelt ist" is no key phrase.
 */
const OTHER_STOPWORDS = slicedEngine("keyword-stopwords", function* () {
  const codes: [string, string][] = [
    ["de", "deu"],
    ["fr", "fra"],
    ["es", "spa"],
    ["it", "ita"],
    ["pt", "por"],
    ["nl", "nld"],
  ];
  const lists = yield* readStopwordLists(codes.map(([, list]) => list));
  return new Map(codes.map(([code, list]) => [code, new Set((lists[list] ?? []).map((w) => w.toLowerCase()))]));
});

function candidatePhrases(text: string, language?: string): string[][] {
  const extra = language && language.slice(0, 2) !== "en" ? OTHER_STOPWORDS().get(language.slice(0, 2)) : undefined;
  const phrases: string[][] = [];
  for (const clause of text.split(CLAUSE_SPLIT)) {
    checkCpuBudget();
    let cur: string[] = [];
    for (const tok of lowerWords(clause)) {
      tickCpuBudget();
      const isContent = !STOPWORDS.has(tok) && !extra?.has(tok) && !VERBS.has(tok) && tok.length > 1 && !/^\d+$/.test(tok);
      if (isContent) {
        cur.push(tok);
        continue;
      }
      if (cur.length) phrases.push(cur);
      cur = [];
    }
    if (cur.length) phrases.push(cur);
  }
  // Split over-long runs into trigrams: a 6-word run is rarely one key phrase.
  const out: string[][] = [];
  for (const p of phrases) {
    tickCpuBudget();
    for (let i = 0; i < p.length; i += 3) {
      const chunk = trimWeakEdges(p.slice(i, i + 3));
      if (chunk.length) out.push(chunk);
    }
  }
  return out;
}

// Past-tense verbs and adverbs at a phrase's edge ("headphones stopped", "quickly shipped")
// are almost never part of the topic; a cheap suffix test avoids a POS tagger.
const WEAK_EDGE = /^(?:\p{L}{3,}ed|\p{L}{3,}ly)$/u;

function trimWeakEdges(p: string[]): string[] {
  let a = 0;
  let b = p.length;
  while (a < b && WEAK_EDGE.test(p[a])) a++;
  while (b > a && WEAK_EDGE.test(p[b - 1])) b--;
  return a === 0 && b === p.length ? p : p.slice(a, b);
}

/** Up to `n` key words and phrases of `text`, best first. */
/** `language`: an ISO code; in German, French, Spanish, Italian, Portuguese or Dutch its stop words count too. */
export function extractKeywords(text: string, n = 10, language?: string): Keyword[] {
  const phrases = candidatePhrases(text, language);
  if (!phrases.length || n <= 0) return [];
  const freq = new Map<string, number>();
  const degree = new Map<string, number>();
  for (const p of phrases) {
    tickCpuBudget();
    for (const w of p) {
      freq.set(w, (freq.get(w) ?? 0) + 1);
      degree.set(w, (degree.get(w) ?? 0) + p.length);
    }
  }
  const wordScore = (w: string) => {
    const f = freq.get(w) ?? 1;
    // degree/freq favours words inside phrases; + f favours repeated topic words
    return (degree.get(w) ?? 1) / f + f;
  };
  const phraseStats = new Map<string, { score: number; count: number }>();
  for (const p of phrases) {
    tickCpuBudget();
    const key = p.join(" ");
    const prev = phraseStats.get(key);
    if (prev) {
      prev.count++;
      continue;
    }
    let s = 0;
    for (const w of p) s += wordScore(w);
    phraseStats.set(key, { score: s, count: 1 });
  }
  checkCpuBudget();
  const ranked = [...phraseStats.entries()]
    .map(([keyword, st]) => ({ keyword, raw: st.score * (1 + 0.5 * (st.count - 1)), count: st.count }))
    .sort((a, b) => b.raw - a.raw || a.keyword.localeCompare(b.keyword));
  checkCpuBudget();
  const picked: typeof ranked = [];
  for (const r of ranked) {
    tickCpuBudget();
    // skip a phrase whose words are all covered by a better-ranked phrase
    if (picked.some((p) => ` ${p.keyword} `.includes(` ${r.keyword} `))) continue;
    picked.push(r);
    if (picked.length >= n) break;
  }
  const top = picked[0]?.raw ?? 1;
  return picked.map((p) => ({ keyword: p.keyword, score: Math.round((p.raw / top) * 1000) / 1000, count: p.count }));
}
