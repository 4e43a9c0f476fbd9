/**
 * Word handling shared by search and FAQ matching: tokens, a light English stemmer and a small
 * synonym table. The stemmer only has to map a word and its usual inflections to one key; FTS5's
 * porter tokenizer does the real stemming inside SQLite, and the two never compare keys with each other.
 */
import { STOPWORDS, tokenize } from "../local/keywords";

export { tokenize };

/**
 * Content words of a text: lower-cased tokens minus stop words, apostrophes and accents dropped
 * (as FTS5's unicode61 tokenizer drops them, so a passage FTS5 finds for "Canada" also covers
 * "Canadá" when it is scored).
 */
export function contentWords(text: string): string[] {
  return tokenize(text)
    .map((w) => w.replace(/'s$/, "").replace(/'/g, ""))
    .map((w) => (/[^a-z0-9]/.test(w) ? w.normalize("NFD").replace(/\p{M}/gu, "") : w))
    .filter((w) => w.length > 1 && !STOPWORDS.has(w));
}

const SUFFIXES: [RegExp, string][] = [
  [/ies$/, "y"],
  [/ied$/, "y"],
  [/(ss)es$/, "$1"],
  [/([sxz]|ch|sh)es$/, "$1"],
  [/ational$/, "ate"],
  [/ization$/, "ize"],
  [/isation$/, "ize"],
  [/fulness$/, "ful"],
  [/iveness$/, "ive"],
  [/ments?$/, ""],
  [/ings?$/, ""],
  [/ations?$/, "ate"],
  [/ions?$/, ""],
  [/ers?$/, ""],
  [/edly$/, ""],
  [/ed$/, ""],
  [/ly$/, ""],
  [/([^s])s$/, "$1"],
];

/**
 * Light suffix stripping: "refunds", "refunded", "refunding" -> "refund". Repeated to a fixed
 * point so "internationally" and "international" meet.
 */
export function stem(word: string): string {
  let cur = word;
  for (let i = 0; i < 3; i++) {
    const next = stemOnce(cur);
    if (next === cur) break;
    cur = next;
  }
  return cur;
}

function stemOnce(word: string): string {
  if (word.length <= 3 || /\d/.test(word)) return word;
  for (const [re, rep] of SUFFIXES) {
    if (!re.test(word)) continue;
    const out = word.replace(re, rep);
    // Keep stems from collapsing to one letter.
    if (out.length < 2) return word;
    return finish(out);
  }
  return finish(word);
}

/** Final "e" and doubled consonants go, so "use"/"used" and "call"/"called"/"calling" meet. */
function finish(s: string): string {
  const t = s.length > 3 ? s.replace(/e$/, "") : s;
  return /([b-df-hj-np-rt-z])\1$/.test(t) ? t.slice(0, -1) : t;
}

/**
 * Groups of words users swap for each other in support questions. Cheap, and it covers the
 * paraphrases BM25 and n-grams cannot ("money back" for refund, "parcel" for package).
 */
const SYNONYM_SOURCE = [
  "refund reimburse reimbursement repay money-back moneyback",
  "return send-back",
  "cancel cancellation terminate stop end unsubscribe",
  "ship shipping shipment deliver delivery dispatch send post mail arrive arrival",
  "package parcel order",
  "price cost fee charge pricing",
  "pay payment paid billing bill invoice",
  "buy purchase",
  "account profile login",
  "password passcode pin",
  "reset change recover forgot forgotten",
  "contact reach call email phone",
  "support help assistance service",
  "hour time schedule open",
  "broken damaged defective faulty",
  "track tracking trace status",
  "address location",
  "discount coupon promo voucher code",
  "international abroad overseas worldwide",
  "subscription plan membership",
  "upgrade",
  "delete remove erase close",
  "warranty guarantee cover",
  "decline reject refuse deny",
  "perk benefit reward advantage",
  "store shop outlet",
  "notify alert remind",
  "exchange swap replace replacement",
  "size fit",
  "fast quick express expedite",
  "long duration take",
  "error problem issue trouble bug",
  "car vehicle automobile",
  "job career vacancy position",
  "secure security safe privacy",
  "card credit debit",
  "free complimentary",
  "combine stack multiple",
];
const SYNONYM_GROUPS = SYNONYM_SOURCE.map((g) => g.split(" ").map((w) => stem(w.replace(/-/g, ""))));

const SYNONYMS = new Map<string, string>();
for (const group of SYNONYM_GROUPS) for (const w of group) if (!SYNONYMS.has(w)) SYNONYMS.set(w, group[0] as string);

/** The canonical key of a stemmed word: its synonym group's head, else the stem itself. */
export function canonical(stemmed: string): string {
  return SYNONYMS.get(stemmed) ?? stemmed;
}

/** Multi-word paraphrases folded into one word before tokenizing. */
const PHRASES: [RegExp, string][] = [
  [/\bmoney back\b/gi, "refund"],
  [/\b(send|bring|take|give|ship|mail)( \w+){0,3} back\b/gi, "return"],
  [/\bdrop(ped)? off\b/gi, "delivered"],
  [/\bsign[ -]?in\b|\blog[ -]?in\b/gi, "login"],
  [/\bsign[ -]?up\b/gi, "register"],
  [/\bhow long\b/gi, "duration"],
  [/\bhow much\b/gi, "price"],
  [/\bget in touch\b/gi, "contact"],
  [/\bcustomer service\b/gi, "support"],
  [/\bmore than one\b/gi, "multiple"],
];

export function foldPhrases(text: string): string {
  let out = text;
  for (const [re, rep] of PHRASES) out = out.replace(re, rep);
  return out;
}

/** Canonical keys of a text's content words, in order. */
export function termKeys(text: string): string[] {
  return contentWords(foldPhrases(text)).map((w) => canonical(stem(w)));
}

/** Surface words of the synonym group of `word` (the word alone when it has none), for FTS queries. */
export function expandWord(word: string): string[] {
  const head = SYNONYMS.get(stem(word));
  if (!head) return [word];
  const group = SURFACE_GROUPS.get(head) ?? [];
  return [word, ...group.filter((w) => w !== word)];
}

const SURFACE_GROUPS = new Map<string, string[]>();
for (const [i, group] of SYNONYM_SOURCE.entries()) {
  const words = group.split(" ").filter((w) => !w.includes("-"));
  const head = SYNONYM_GROUPS[i]?.[0];
  if (head && !SURFACE_GROUPS.has(head)) SURFACE_GROUPS.set(head, words);
}
