/**
 * Word handling shared by search and FAQ matching: tokens, a light English stemmer and a small
 * synonym table. The stemmer only has to map a word and its usual inflections to one key; FTS5's
 * porter tokenizer does the real stemming inside SQLite, and the two never compare keys with each other.
 */
import { lowerWords, STOPWORDS } from "../offline-engine/keywords";
import { wordRank } from "./specificity";

/**
 * Content words of a text: lower-cased tokens minus stop words, apostrophes and accents dropped
 * (as FTS5's unicode61 tokenizer drops them, so a passage FTS5 finds for "Canada" also covers
 * "Canadá" when it is scored).
 */
export function contentWords(text: string): string[] {
  return lowerWords(text)
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

/**
 * Porter's measure: the number of vowel-consonant sequences in a stem ("tr" 0, "lett" 1,
 * "comput" 2). Endings that are often part of the word itself ("letter", "order", "mention",
 * "bring", "need") come off only when enough of a word remains, as Porter's rules require.
 */
function measure(stemmed: string): number {
  return (
    stemmed
      .replace(/[^aeiouy]+/g, "C")
      .replace(/[aeiouy]+/g, "V")
      .replace(/^C/, "")
      .match(/VC/g) ?? []
  ).length;
}

/** A word of everyday English: among the 20,000 most frequent in SUBTLEX-US (specificity.ts). */
const isWord = (w: string) => w.length >= 3 && (wordRank(w) ?? Number.POSITIVE_INFINITY) <= 20_000;

/**
 * Whether an ending may come off, leaving `rest`. "-er" comes off short words only, and only when
 * what remains is a word ("fast-er", "larg(e)-er", "lat(e)-er"): longer "-er" words name someone
 * or something ("customer", "retailer", "computer") and keep it. Other endings come off when
 * enough of the word remains (Porter's measure of 2) or what remains is itself a word, maybe with
 * its final "e" or without a doubled consonant ("siz(e)-ing", "shipp-ed"). So "letters",
 * "orders", "customers", "mention", "bring" and "need" keep their endings.
 */
function mayStrip(rest: string, ending: string): boolean {
  if (!/[aeiouy]/.test(rest)) return false;
  const isWordOrE = isWord(rest) || (/[^aeiouy]$/.test(rest) && isWord(`${rest}e`));
  if (ending.startsWith("er")) return measure(rest) === 1 && isWordOrE;
  if (measure(rest) >= 2 || isWordOrE) return true;
  return /^(ed|ing)/.test(ending) && /([b-df-hj-np-tv-z])\1$/.test(rest) && isWord(rest.slice(0, -1));
}

const GUARDED_ENDINGS = /^(ers?|ments?|ions?|ings?|ed|edly)$/;

function stemOnce(word: string): string {
  if (word.length <= 3 || /\d/.test(word)) return word;
  for (const [re, rep] of SUFFIXES) {
    const m = re.exec(word);
    if (!m) continue;
    // an ending that belongs to the word ("lett-ers") is skipped: a later, smaller one may apply ("letter-s")
    if (GUARDED_ENDINGS.test(m[0]) && !mayStrip(word.slice(0, m.index), m[0])) continue;
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
  "pay payment paid billing bill invoice receipt",
  "buy purchase",
  "account profile login",
  "password passcode pin",
  "reset change recover forgot forgotten",
  "contact reach call email phone",
  "support help assistance service",
  "hour schedule open",
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
  "store shop outlet retailer",
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
  "clean wash launder",
  "tear torn rip hole",
  "rent rental borrow lease",
  "review feedback rating testimonial",
  "mistake wrong incorrect",
  "cheap inexpensive affordable",
  "missing lost stolen",
  "late delay delayed overdue",
  "stock inventory availability restock",
  "item product goods merchandise",
  "gift present",
  "instruction manual guide directions",
  "assemble assembly install setup",
  "customer client shopper buyer",
  "company business organization organisation corporate",
  "bulk wholesale",
  "newsletter marketing promotional",
  "website site online web",
  "checkout basket cart",
  "tax vat duty customs",
  "repair fix mend",
  "clothing clothes apparel garment",
  "shoe boot footwear sneaker",
  "jacket coat",
  "bike bicycle cycle",
  "course class lesson workshop training",
  "recycle recyclable sustainable eco",
  "twice double duplicate",
  "courier carrier",
  "box carton packaging",
  "nonprofit charity",
  "instalment installment",
  "data information info",
  "advertising ads advertiser",
  "accessibility accessible disability",
  "expire expiry expiration validity",
  "child children kid kids",
  "big large bigger",
  "small little tiny",
  "question inquiry enquiry",
  "complain complaint",
  "photo picture image",
  "hazardous dangerous flammable",
  "hire hiring recruit recruitment employment",
  // American and British spellings
  "color colour",
  "center centre",
  "neighbor neighbour",
  "favorite favourite",
  "catalog catalogue",
  "mold mould",
  "jewelry jewellery",
  "tire tyre",
  "program programme",
  "license licence",
  "aluminum aluminium",
  "gray grey",
  "fiber fibre",
  "meter metre",
  "liter litre",
  "pajamas pyjamas",
];
/**
 * Stemmed word -> its group's head, and head -> the group's surface words. Built on first use:
 * stemming reads the word-frequency list, which is not loaded at start-up.
 */
let synonymTables: { heads: Map<string, string>; surfaces: Map<string, string[]>; own: Map<string, string> } | null = null;
function synonyms() {
  if (synonymTables) return synonymTables;
  const heads = new Map<string, string>();
  const surfaces = new Map<string, string[]>();
  const own = new Map<string, string>();
  for (const source of SYNONYM_SOURCE) {
    const words = source.split(" ").map((w) => w.replace(/-/g, ""));
    const group = words.map(stem);
    // a group whose first stem another group holds ("instalment" is stemmed as "install") is keyed by its first word
    const first = group[0] as string;
    const head = heads.has(first) ? (words[0] as string) : first;
    group.forEach((w, i) => {
      if (!heads.has(w)) heads.set(w, head);
      // a word whose stem another group holds keeps its own group: spelling is not meaning
      // ("instalment" is not "install", "career" not "car", "packaging" not "package")
      else if (heads.get(w) !== head) own.set(words[i] as string, head);
    });
    if (!surfaces.has(head))
      surfaces.set(
        head,
        source.split(" ").filter((w) => !w.includes("-")),
      );
  }
  synonymTables = { heads, surfaces, own };
  return synonymTables;
}

/** The canonical key of a stemmed word: its synonym group's head, else the stem itself. */
export function canonical(stemmed: string): string {
  return synonyms().heads.get(stemmed) ?? stemmed;
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
  [/\bshow(s|ed|ing)? up\b/gi, "appear"],
  [/\b(get|gets|got|getting) (here|there|to (me|you|us))\b/gi, "arrive"],
  [/\b(tell|let) me know when\b|\btell me when\b/gi, "notify when"],
  [/\bfor less\b|\bless expensive\b/gi, "cheaper"],
  [/\bout of stock\b|\bsold out\b/gi, "unavailable stock"],
  [/\bin stock\b|\bback in stock\b/gi, "available stock"],
  [/\bset up\b/gi, "setup"],
  [/\bpick(ed|ing)? up\b/gi, "collect"],
];

export function foldPhrases(text: string): string {
  let out = text;
  for (const [re, rep] of PHRASES) out = out.replace(re, rep);
  return out;
}

/** Canonical keys of a text's content words, in order (search's keys: see `wordKey` for FAQ matching's). */
export function termKeys(text: string): string[] {
  return contentWords(foldPhrases(text)).map((w) => canonical(stem(w)));
}

/**
 * FAQ matching's key of one content word: its synonym group's head, or its stem, except that a
 * word of the synonym table (or its plural) whose stem another group holds keys to its own group,
 * not to the other's: "instalments" is not "install", "careers" not "cars", "packaging" not
 * "package". Search keeps `termKeys` (its stored chunk keys, TERMS_VERSION; on its sets this
 * moved held-out MRR by -0.001 and dev recall by +0.010, so it was left as it was).
 */
export function wordKey(word: string): string {
  const { own } = synonyms();
  return own.get(word) ?? own.get(word.replace(/e?s$/, "")) ?? canonical(stem(word));
}

/** FAQ matching's keys of a text's content words, in order. */
export function faqKeys(text: string): string[] {
  return contentWords(foldPhrases(text)).map(wordKey);
}

/** Surface words of the synonym group of `word` (the word alone when it has none), for FTS queries. */
export function expandWord(word: string): string[] {
  const { heads, surfaces } = synonyms();
  const head = heads.get(stem(word));
  if (!head) return [word];
  const group = surfaces.get(head) ?? [];
  return [word, ...group.filter((w) => w !== word)];
}
