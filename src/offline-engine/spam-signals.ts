/**
 * Spam evidence: weighted, named signals over the raw and normalized text. Pure and PII-free,
 * so moderation can use it too; `spam.ts` adds strictness, toxicity, PII and sanitizing.
 *
 *   spamSignals(text, contentType?): SpamSignal[]   each { name, weight 0..1, detail, category }
 *   combineSignals(signals): number                  noisy-or of the weights, 0..1
 */
import { normalizeForMatching } from "./abuse";
import { checkCpuBudget, tickCpuBudget } from "./budget";
import { maskLongRuns } from "./extract";

export type SpamCategory =
  | "phishing"
  | "scam"
  | "promotional"
  | "adult"
  | "pharma"
  | "seo"
  | "malicious_link"
  | "bulk"
  | "obfuscation";

export interface SpamSignal {
  name: string;
  weight: number;
  /** what fired, for humans */
  detail: string;
  category: SpamCategory;
}

type Rule = {
  name: string;
  re: RegExp;
  weight: number;
  category: SpamCategory /** extra weight per additional hit */;
  each?: number;
};

const RULES: Rule[] = [
  {
    name: "prize_or_easy_money",
    category: "scam",
    weight: 0.5,
    each: 0.15,
    re: /\b(?:you(?:'ve| have)? (?:won|been selected)|winner|won (?:a|an|the)\b|prize|lottery|jackpot|cash prize|free money|make money (?:fast|online|from home)|(?:earn|earned|made|make) (?:up to )?[$€£]?\d[\d,]*\+? ?(?:k )?(?:per|a|an|every) (?:day|week|hour|month)|double your (?:money|bitcoin|investment)|guaranteed (?:income|returns|profit)|get rich|financial freedom|work from home and earn)\b/g,
  },
  {
    name: "advance_fee",
    category: "scam",
    weight: 0.55,
    each: 0.1,
    re: /\b(?:inheritance|next of kin|beneficiary|wire transfer|western union|moneygram|transfer fee|processing fee|unclaimed funds|diplomat|barrister|million (?:us )?dollars|pay (?:with|in) gift ?cards?|gift ?cards? as payment|bank details to receive)\b/g,
  },
  {
    name: "phishing_language",
    category: "phishing",
    weight: 0.6,
    each: 0.15,
    re: /\b(?:verify your (?:account|identity|details|information)|account (?:has been |will be |is )?(?:suspended|locked|limited|compromised|deactivated|closed)|confirm your (?:password|details|identity|bank|card)|update your (?:payment|billing|account) (?:info|information|details)|unusual (?:sign-?in|login|activity)|security alert|(?:click|tap|log ?in) (?:here|below|the link|now) to (?:verify|restore|confirm|claim|unlock|reactivate|avoid)|your password (?:expires|has expired)|failure to (?:verify|comply|respond) will)\b/g,
  },
  {
    name: "urgency",
    category: "promotional",
    weight: 0.2,
    each: 0.1,
    re: /\b(?:act now|limited time|urgent(?:ly)?|expires? (?:today|soon|in \d+)|last chance|immediately|within 24 hours|don'?t miss (?:out|this)|hurry|only \d+ (?:left|spots)|offer ends|final notice|respond now)\b/g,
  },
  {
    name: "call_to_action",
    category: "promotional",
    weight: 0.25,
    each: 0.1,
    re: /\b(?:click (?:here|the link|this link|below|now)|buy now|order now|shop now|sign up (?:now|today|here)|register now|claim (?:your|now|it)|visit (?:my|our) (?:site|website|page|profile|channel)|check (?:out )?my (?:channel|profile|page|bio|link)|link in (?:my )?bio|subscribe to my|follow me|dm me|message me on|contact me on|(?:add|text) me on (?:whatsapp|telegram|kik|snap)|whatsapp|telegram)\b/g,
  },
  {
    name: "free_offer",
    category: "promotional",
    weight: 0.3,
    each: 0.1,
    re: /\b(?:100% free|totally free|absolutely free|free (?:gift|trial|iphone|ipad|gift ?card|followers|likes|vbucks|robux|giveaway|access)|no cost to you|risk[- ]free|no credit card (?:required|needed)|giveaway|claim your (?:free|reward|gift|bonus)|bonus|promo code|discount code|\d{2}% off)\b/g,
  },
  {
    name: "crypto_investment",
    category: "scam",
    weight: 0.35,
    each: 0.1,
    re: /\b(?:bitcoin|btc|crypto(?:currency)?|forex|binary options|investment (?:opportunity|plan|platform)|passive income|nft drop|airdrop|trading signals|usdt|ethereum|(?:my|an?) (?:account )?manager (?:helped|made)|roi of \d+)\b/g,
  },
  {
    name: "pharma",
    category: "pharma",
    weight: 0.6,
    each: 0.1,
    re: /\b(?:viagra|cialis|levitra|pharmacy|weight loss pills|diet pills|male enhancement|enlargement|no prescription|cheap meds|xanax|oxycodone)\b/g,
  },
  {
    name: "adult_content",
    category: "adult",
    weight: 0.5,
    each: 0.1,
    re: /\b(?:porn|xxx|nudes|sexy (?:girls|singles|pics)|hot (?:singles|girls) (?:in|near)|onlyfans|adult (?:dating|content)|hookup|webcam girls|escort)\b/g,
  },
  {
    name: "seo_self_promotion",
    category: "seo",
    weight: 0.55,
    each: 0.1,
    re: /\b(?:seo services|backlinks?|rank (?:your|on) (?:website|google)|(?:buy|cheap) (?:(?:instagram|insta|ig|tiktok|youtube|yt|twitter|facebook|fb|spotify) )?(?:followers|likes|views|subscribers|reviews|streams)|sub ?4 ?sub|follow ?4 ?follow|f4f|l4l|grow your (?:instagram|channel|followers)|guest post)\b/g,
  },
  {
    name: "generic_salutation",
    category: "scam",
    weight: 0.2,
    re: /^\s*(?:dear (?:friend|customer|user|beneficiary|sir\/madam|sir or madam|winner|account holder|valued customer)|attention(?: please)?[:!])/g,
  },
];

const SHORTENER =
  /\b(?:bit\.ly|tinyurl\.com|goo\.gl|t\.co|is\.gd|ow\.ly|cutt\.ly|rb\.gy|shorturl\.at|tiny\.cc|buff\.ly|rebrand\.ly|t\.ly)\/\S+/gi;
const BAD_TLD =
  /(?<![a-z0-9-])[a-z0-9-]+\.(?:xyz|top|click|loan|work|win|bid|review|country|kim|gq|tk|ml|cf|ga|zip|mov|icu|buzz|rest|cam)\b/gi;
const IP_URL = /\bhttps?:\/\/\d{1,3}(?:\.\d{1,3}){3}/gi;
const URL = /\b(?:https?:\/\/|www\.)\S+|(?<![a-z0-9-])[a-z0-9-]+\.(?:com|net|org|io|co|xyz|top|click|info|biz|ru|cn)\/\S*/gi;
const EMOJI = /\p{Extended_Pictographic}/gu;
const MONEY_SIGNS = /[$€£]{2,}|\$\d[\d,]{3,}/g;

function count(re: RegExp, s: string): number {
  re.lastIndex = 0;
  return s.match(re)?.length ?? 0;
}

/** Named spam signals that fire on `text`. */
export function spamSignals(raw: string, contentType = "text"): SpamSignal[] {
  // link patterns backtrack over long runs; a 300-character "word" is noise in any case
  const text = maskLongRuns(raw);
  checkCpuBudget();
  const norm = normalizeForMatching(text);
  const lower = text.toLowerCase();
  const out: SpamSignal[] = [];
  for (const rule of RULES) {
    checkCpuBudget();
    rule.re.lastIndex = 0;
    // leet-normalizing can also hide a pattern that itself has digits ("sub4sub"): try both
    const found = norm.match(rule.re) ?? lower.match(rule.re);
    if (!found) continue;
    const uniq = [...new Set(found)];
    const weight = Math.min(0.9, rule.weight + (uniq.length - 1) * (rule.each ?? 0));
    out.push({ name: rule.name, weight, detail: uniq.slice(0, 3).join(", "), category: rule.category });
    // normalizing was needed to see it: someone disguised the words on purpose
    rule.re.lastIndex = 0;
    if (!rule.re.test(lower) && !out.some((s) => s.name === "obfuscated_text"))
      out.push({ name: "obfuscated_text", weight: 0.35, detail: uniq[0], category: "obfuscation" });
  }
  // every pass below reads the whole text (up to a millisecond or two on 100 KB): a safe point before each
  checkCpuBudget();
  if (/[\u200b-\u200d\ufeff]/.test(text))
    out.push({ name: "hidden_characters", weight: 0.35, detail: "zero-width characters", category: "obfuscation" });

  checkCpuBudget();
  const urls = count(URL, text);
  const ct = contentType.toLowerCase();
  // links are normal in email but unusual in comments, reviews and chat messages
  const linkWeight = /comment|review|post|social|chat|message|sms|forum/.test(ct) ? 0.3 : 0.12;
  if (urls >= 1)
    out.push({
      name: urls >= 3 ? "many_links" : "contains_link",
      weight: Math.min(0.6, linkWeight + (urls - 1) * 0.12),
      detail: `${urls} link(s)`,
      category: "promotional",
    });
  checkCpuBudget();
  const short = count(SHORTENER, text);
  if (short) out.push({ name: "shortened_link", weight: 0.35, detail: `${short} shortened link(s)`, category: "malicious_link" });
  checkCpuBudget();
  const bad = count(BAD_TLD, text);
  if (bad)
    out.push({ name: "suspicious_domain", weight: 0.3, detail: `${bad} suspicious domain(s)`, category: "malicious_link" });
  checkCpuBudget();
  if (count(IP_URL, text))
    out.push({ name: "ip_address_link", weight: 0.45, detail: "link to a bare IP address", category: "malicious_link" });

  checkCpuBudget();
  const letters = text.replace(/[^A-Za-z]/g, "");
  checkCpuBudget();
  const caps = letters.replace(/[^A-Z]/g, "").length;
  if (letters.length >= 20 && caps / letters.length > 0.6)
    out.push({
      name: "excessive_caps",
      weight: 0.2,
      detail: `${Math.round((caps / letters.length) * 100)}% capitals`,
      category: "bulk",
    });
  checkCpuBudget();
  const bangs = text.match(/!{2,}|\?{3,}/g)?.length ?? 0;
  checkCpuBudget();
  if (bangs >= 2 || /!{3,}/.test(text))
    out.push({ name: "excessive_punctuation", weight: 0.12, detail: `${bangs} run(s) of !!/???`, category: "bulk" });
  checkCpuBudget();
  if (count(MONEY_SIGNS, text)) out.push({ name: "money_emphasis", weight: 0.15, detail: "$$$ or large sums", category: "scam" });
  checkCpuBudget();
  const emoji = text.match(EMOJI)?.length ?? 0;
  checkCpuBudget();
  const words = norm.match(/[a-z0-9']+/g) ?? [];
  if (emoji >= 6 && emoji / Math.max(1, words.length) > 0.3)
    out.push({ name: "emoji_flood", weight: 0.15, detail: `${emoji} emoji`, category: "bulk" });
  if (words.length >= 12) {
    const freq = new Map<string, number>();
    for (const w of words) {
      tickCpuBudget();
      if (w.length > 3) freq.set(w, (freq.get(w) ?? 0) + 1);
    }
    const top = Math.max(0, ...freq.values());
    if (top / words.length > 0.2 && top >= 4)
      out.push({ name: "repetition", weight: 0.3, detail: `a word repeated ${top} times`, category: "bulk" });
  }
  const lines = text
    .split(/\n+/)
    .map((l) => l.trim())
    .filter((l) => l.length > 10);
  if (lines.length >= 3 && new Set(lines).size <= lines.length / 2)
    out.push({ name: "repeated_lines", weight: 0.35, detail: "the same line several times", category: "bulk" });
  return out;
}

/** Noisy-or of the signal weights: independent pieces of evidence add up, never past 1. */
export function combineSignals(signals: readonly SpamSignal[]): number {
  return 1 - signals.reduce((p, s) => p * (1 - s.weight), 1);
}
