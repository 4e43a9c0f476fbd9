/**
 * Abuse lexicon shared by moderation and spam detection: weighted patterns per harm category,
 * applied to a normalized copy of the text so "1d10t", "f.u.c.k" and "STUPID!!!" still match.
 *
 *   scoreAbuse(text): AbuseScores   { categories: Record<AbuseCategory, number 0..1>, hits: AbuseHit[] }
 *   normalizeForMatching(text): string
 *   maskProfanity(text): string     replaces profane words with asterisks (first letter kept)
 */
import { checkCpuBudget, tickCpuBudget } from "./budget";

export type AbuseCategory =
  | "toxicity"
  | "profanity"
  | "insult"
  | "harassment"
  | "threat"
  | "hate"
  | "sexual"
  | "violence"
  | "self_harm";

export const ABUSE_CATEGORIES: readonly AbuseCategory[] = [
  "toxicity",
  "profanity",
  "insult",
  "harassment",
  "threat",
  "hate",
  "sexual",
  "violence",
  "self_harm",
];

export interface AbuseHit {
  category: AbuseCategory;
  /** the matched text (of the normalized copy) */
  match: string;
  weight: number;
}

export interface AbuseScores {
  categories: Record<AbuseCategory, number>;
  hits: AbuseHit[];
}

const PROFANE_WORDS =
  "fuck|fucking|fucked|fucker|motherfucker|shit|shitty|bullshit|bitch|bitches|bastard|asshole|arsehole|dick|dickhead|cunt|wanker|twat|bollocks|prick|slut|whore|douche|douchebag";
// Mild words most communities tolerate: noted, but not enough for review on their own.
const MILD_PROFANE = "damn|goddamn|crap|crappy|piss|pissed|hell|bloody|sucks";
const INSULT_WORDS =
  "idiot|idiots|idiotic|stupid|stupider|stupidest|moron|morons|moronic|dumb|dumber|dumbest|dumbass|imbecile|retard|retarded|loser|losers|pathetic|worthless|useless|clown|clowns|scum|trash|garbage person|jerk|fool|fools|ignorant|brainless|clueless|incompetent|pig|disgusting|freak|creep|ugly|fat|scumbag|lowlife|parasite";
const GROUPS =
  "(?:immigrants?|refugees?|muslims?|jews?|jewish people|christians?|blacks?|black people|whites?|white people|asians?|mexicans?|africans?|arabs?|gays?|gay people|lesbians?|trans people|transgender people|women|men|girls|foreigners|hindus?|indians?|chinese|latinos?|homosexuals?|disabled people)";

type Rule = [AbuseCategory, RegExp, number];

function targeted(re: RegExp): Rule[] {
  return [
    ["insult", re, 0.75],
    ["harassment", new RegExp(re.source, re.flags), 0.8],
  ];
}

const RULES: Rule[] = [
  ["profanity", new RegExp(`\\b(?:${PROFANE_WORDS})\\b`, "g"), 0.55],
  ["profanity", /\b(?:wtf|stfu|gtfo|fml|af)\b/g, 0.35],
  ["profanity", new RegExp(`\\b(?:${MILD_PROFANE})\\b`, "g"), 0.15],
  ["insult", new RegExp(`\\b(?:${INSULT_WORDS})\\b`, "g"), 0.35],
  // insults aimed at someone weigh far more than the word alone, and are harassment too
  // at most 4 intensifiers: an unbounded chain is rescanned from every "such a" in "such a such a …"
  ...targeted(
    new RegExp(
      `\\b(?:you(?:'re| are|r)?|u r|ur|such an?|what an?|bunch of|you)\\s+(?:an?\\s+|so\\s+|such\\s+|complete\\s+|total\\s+|fucking\\s+|absolute\\s+){0,4}(?:${INSULT_WORDS}|${PROFANE_WORDS})\\b`,
      "g",
    ),
  ),
  // "..., idiot." addressed at the reader
  ...targeted(new RegExp(`,\\s*(?:you\\s+)?(?:${INSULT_WORDS})\\s*(?:[.!?]+\\s*)?$`, "gm")),
  ...targeted(new RegExp(`\\b(?:${INSULT_WORDS})\\s+(?:\\w+\\s+)?like you\\b`, "g")),
  // about a third party: an insult, not harassment of the reader
  [
    "insult",
    new RegExp(
      `\\b(?:is|are|was|were)\\s+(?:an?\\s+|such\\s+an?\\s+|a\\s+(?:total|complete)\\s+|(?:so|total|complete)\\s+)?(?:${INSULT_WORDS})\\b`,
      "g",
    ),
    0.5,
  ],
  ["harassment", /\b(?:kill yourself|kys|go die|drink bleach|hope you die|you should die)\b/g, 0.92],
  [
    "harassment",
    /\b(?:shut up|shut your (?:mouth|face)|nobody (?:likes|cares about|wants) you|go away|get lost|kill yourself|kys|no one asked|you should be ashamed|i know where you live|you deserve (?:it|to suffer)|everyone hates you|delete your account|go cry)\b/g,
    0.7,
  ],
  ["harassment", /\b(?:you|u|ur|your)\b[^.!?]{0,20}\b(?:ugly|fat|disgusting|pathetic|worthless|loser|idiot|stupid)\b/g, 0.45],
  [
    "threat",
    /\b(?:i(?:'ll| will|'m going to| am going to|'m gonna| am gonna| gonna)|we(?:'ll| will| are going to)|someone should|somebody should|i want to|i'd like to)\s+(?:\w+\s+){0,2}(?:kill|murder|shoot|stab|hurt|beat|punch|strangle|rape|burn|destroy|find|hunt down|end)\s+(?:you|u|him|her|them|your|ya|that|this|all)\b/g,
    0.9,
  ],
  // the harm joined to another act ("I will find where you live and hurt you", 2026-12-06: scored 0)
  [
    "threat",
    /\b(?:i(?:'ll| will|'m going to| am going to|'m gonna| am gonna| gonna)|we(?:'ll| will| are going to))\s+(?:\w+\s+){1,6}?(?:and|then)\s+(?:kill|murder|shoot|stab|hurt|beat|punch|strangle|rape|burn)\s+(?:you|u|him|her|them|ya)\b/g,
    0.9,
  ],
  [
    "threat",
    /\b(?:you(?:'re| are) (?:dead|going to die|gonna die)|watch your back|you will (?:die|pay|regret)|i know where you live|i(?:'ll| will) find (?:out )?where you live|better watch out|you'?ll be sorry)\b/g,
    0.8,
  ],
  [
    "violence",
    /\b(?:kill|killing|murder|murdering|shoot|shooting|stab|stabbing|bomb|bombing|massacre|slaughter|behead|torture|assault|beat (?:him|her|them|you) up|blow up)\b/g,
    0.3,
  ],
  [
    "violence",
    /\b(?:deserve[sd]? to (?:die|be shot|be killed|be hanged)|should (?:be|all be) (?:shot|killed|hanged|executed|burned)|(?:kill|shoot|hang|gas) (?:them|all of them|every one of them))\b/g,
    0.85,
  ],
  [
    "hate",
    new RegExp(
      `\\b(?:all|these|those|the|filthy|dirty|stupid|bloody)\\s+${GROUPS}\\s+(?:are|should|must|need to|deserve|ruin|ruined|destroy|belong)\\b`,
      "g",
    ),
    0.55,
  ],
  [
    "hate",
    new RegExp(
      `\\b${GROUPS}\\s+(?:are|is)\\s+(?:(?:all|just|nothing but|such)\\s+){0,4}(?:animals|vermin|subhuman|parasites|scum|savages|inferior|disgusting|a disease|a plague|cockroaches|rats|criminals|terrorists|trash|evil)\\b`,
      "g",
    ),
    0.9,
  ],
  [
    "hate",
    new RegExp(`\\b(?:ban|deport|exterminate|get rid of|kick out|gas)\\s+(?:all\\s+)?(?:the\\s+)?${GROUPS}\\b`, "g"),
    0.85,
  ],
  [
    "hate",
    /\b(?:go back to (?:your|where you came from)(?: country)?|white power|heil hitler|14 ?88|subhuman|master race|race traitor|ethnic cleansing)\b/g,
    0.85,
  ],
  ["sexual", /\b(?:send (?:me )?(?:nudes|pics|noods)|show me your (?:body|boobs|tits)|wanna (?:fuck|hook ?up))\b/g, 0.85],
  [
    "sexual",
    /\b(?:porn|porno|pornography|xxx|nudes?|naked pics?|sexy pics|onlyfans|send nudes|horny|blowjob|handjob|cum|cumshot|dildo|orgasm|masturbat\w*|pussy|cock|tits|boobs|milf|hentai|escort service|hookup|sext\w*)\b/g,
    0.6,
  ],
  ["sexual", /\b(?:sex|sexual|erotic|nsfw|strip(?:per|tease)|lingerie)\b/g, 0.3],
  [
    "self_harm",
    /\b(?:kill(?:ing)? myself|end(?:ing)? my (?:life|own life)|suicid\w*|want(?:ed)? to die|wanna die|cut(?:ting)? myself|hurt(?:ing)? myself|self[- ]harm|no reason to live|better off dead|take my (?:own )?life|overdose)\b/g,
    0.85,
  ],
];

// Leetspeak and separator tricks seen in evasive abuse and spam.
const LEET: Record<string, string> = { "0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", $: "s", "!": "i" };

const LEET_CHARS = /[0-9@$!]/;

function deLeet(w: string): string {
  // no real word is this long; a long run is noise, and leaving it alone keeps this linear
  if (w.length > 40 || !LEET_CHARS.test(w) || !/[a-z]/.test(w) || /^\d+[a-z]{1,2}$/.test(w)) return w;
  let last = w.length - 1;
  while (last >= 0 && !LEET_CHARS.test(w[last])) last--;
  // a symbol must have a letter after it: "wow!" and "$100" stay as they are
  if (!/[a-z]/.test(w.slice(last + 1))) return w;
  return w.replace(/[0-9@$!]/g, (c) => LEET[c] ?? c);
}

export function normalizeForMatching(text: string): string {
  // each step is one pass over the whole text (about a millisecond on 100 KB): a safe point between them
  let s = text.normalize("NFKC").toLowerCase();
  checkCpuBudget();
  s = s.replace(/[\u200b-\u200d\ufeff]/g, "").replace(/[’‘`]/g, "'");
  checkCpuBudget();
  // "f.u.c.k" / "f u c k" -> "fuck"; spaced runs need 4+ letters so "u r a" stays words
  s = s.replace(/\b(?:[a-z][.\-_*]){2,}[a-z]\b/g, (m) => m.replace(/[.\-_*]/g, ""));
  checkCpuBudget();
  s = s.replace(/\b(?:[a-z] ){3,}[a-z]\b/g, (m) => m.replace(/ /g, ""));
  checkCpuBudget();
  // digits/symbols inside words: "1d10t" -> "idiot", "sh!t" -> "shit" (token by token: linear time)
  s = s.replace(/[a-z0-9@$!]+/g, (w) => {
    tickCpuBudget();
    return deLeet(w);
  });
  checkCpuBudget();
  // "stuuupid" -> "stupid": letters repeated 3+ times collapse to one ("xxx" is a word of its own)
  return s.replace(/([a-wyz])\1{2,}/g, "$1");
}

/** Per-category scores (0..1, noisy-or of the weights that fired) and the hits behind them. */
export function scoreAbuse(text: string): AbuseScores {
  const norm = normalizeForMatching(text);
  const categories = Object.fromEntries(ABUSE_CATEGORIES.map((c) => [c, 0])) as Record<AbuseCategory, number>;
  const hits: AbuseHit[] = [];
  for (const [category, re, weight] of RULES) {
    checkCpuBudget();
    re.lastIndex = 0;
    for (const m of norm.matchAll(re)) {
      tickCpuBudget();
      hits.push({ category, match: m[0], weight });
      categories[category] = 1 - (1 - categories[category]) * (1 - weight);
    }
  }
  // Shouting makes abuse read harsher but is not abuse by itself.
  checkCpuBudget();
  const letters = text.replace(/[^A-Za-z]/g, "");
  const shouting = letters.length >= 12 && letters.replace(/[^A-Z]/g, "").length / letters.length > 0.7;
  const harms = [
    categories.insult,
    categories.harassment,
    categories.threat,
    categories.hate,
    categories.profanity * 0.7,
    categories.violence * 0.6,
  ];
  let tox = 1 - harms.reduce((p, s) => p * (1 - s), 1);
  if (shouting && tox > 0) tox = Math.min(1, tox * 1.15);
  categories.toxicity = tox;
  for (const c of ABUSE_CATEGORIES) categories[c] = Math.round(categories[c] * 1000) / 1000;
  return { categories, hits };
}

const PROFANE_RE = new RegExp(`\\b(?:${PROFANE_WORDS}|${MILD_PROFANE})\\b`, "gi");

/** Masks profane words, keeping the first letter: "shit" -> "s***". */
export function maskProfanity(text: string): string {
  return text.replace(PROFANE_RE, (w) => w[0] + "*".repeat(w.length - 1));
}
