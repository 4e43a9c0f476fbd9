/**
 * Entity extraction for the offline engine: pattern recognizers plus chrono-node for dates.
 *
 * Exported API (stable; other modules compose it):
 *   extractEntities(text: string, opts?: ExtractOptions): Entity[]
 *     -> non-overlapping entities sorted by start offset:
 *        { type, text, start, end, value?, currency?, score }
 *        type: email | phone | url | date | money | percentage | number | person | organization | id
 *        value: normalized form (ISO date "YYYY-MM-DD", number for money/percent/number,
 *               lower-cased email, digits-only phone with leading "+" kept)
 *   entitiesByType(entities): Partial<Record<EntityType, Entity[]>>
 *
 * Offsets are UTF-16 code units, like String.prototype.slice.
 */
import { checkCpuBudget, tickCpuBudget } from "./budget";
import { parseDates } from "./dates";
import { detectPii } from "./pii";

export type EntityType =
  | "email"
  | "phone"
  | "url"
  | "date"
  | "money"
  | "percentage"
  | "number"
  | "person"
  | "organization"
  | "id";

export interface Entity {
  type: EntityType;
  text: string;
  start: number;
  end: number;
  value?: string | number;
  /** ISO 4217 code, money only */
  currency?: string;
  /** how sure the recognizer is, 0..1 */
  score: number;
}

export interface ExtractOptions {
  types?: readonly EntityType[];
  /** resolves relative dates ("next Friday"); default now */
  referenceDate?: Date;
}

const EMAIL_RE = /\b[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}\b/gi;
const URL_RE = /\b(?:https?:\/\/|www\.)[^\s<>"')\]]+[^\s<>"')\].,;:!?]/gi;
const BARE_DOMAIN_RE =
  /\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|org|net|io|co|ai|dev|app|uk|de|fr|edu|gov)(?:\/[^\s<>"')\]]*[^\s<>"')\].,;:!?])?\b/gi;
const PHONE_RE =
  /(?<![\w/.-])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{1,4}\)[\s.-]?)?\d{2,5}(?:[\s.-]\d{2,6}){1,4}(?![\w/-])|(?<![\w/.-])\+\d{8,14}(?!\w)/g;
const CURRENCY_SYMBOL: Record<string, string> = {
  $: "USD",
  "€": "EUR",
  "£": "GBP",
  "¥": "JPY",
  "₹": "INR",
  "₩": "KRW",
  "₽": "RUB",
  "₺": "TRY",
  "₪": "ILS",
  "₦": "NGN",
  "₱": "PHP",
  A$: "AUD",
  C$: "CAD",
  US$: "USD",
  R$: "BRL",
};
const CURRENCY_WORD: Record<string, string> = {
  usd: "USD",
  eur: "EUR",
  gbp: "GBP",
  jpy: "JPY",
  inr: "INR",
  cad: "CAD",
  aud: "AUD",
  chf: "CHF",
  cny: "CNY",
  sek: "SEK",
  nok: "NOK",
  dkk: "DKK",
  pln: "PLN",
  brl: "BRL",
  mxn: "MXN",
  dollar: "USD",
  dollars: "USD",
  bucks: "USD",
  euro: "EUR",
  euros: "EUR",
  pound: "GBP",
  pounds: "GBP",
  yen: "JPY",
  rupee: "INR",
  rupees: "INR",
};
const NUM = String.raw`\d{1,3}(?:[,\s]\d{3})+(?:\.\d+)?|\d+(?:[.,]\d+)?`;
const MONEY_RE = new RegExp(
  String.raw`(?:(US\$|A\$|C\$|R\$|[$€£¥₹₩₽₺₪₦₱])\s?(${NUM})(\s?(?:k|m|bn|million|billion|thousand)\b)?)` +
    String.raw`|(?:\b(${NUM})(\s?(?:k|m|million|billion|thousand))?\s?(usd|eur|gbp|jpy|inr|cad|aud|chf|cny|sek|nok|dkk|pln|brl|mxn|dollars?|bucks|euros?|pounds?|yen|rupees?)\b)` +
    String.raw`|(?:\b(usd|eur|gbp|cad|aud|chf|inr|jpy)\s?(${NUM})\b)`,
  "gi",
);
const PERCENT_RE = /(?<![\w.])[-+]?\d+(?:[.,]\d+)?\s?(?:%|percent\b|per cent\b)/gi;
const NUMBER_RE =
  /(?<![\w.,$€£¥#-])[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w%])|(?<![\w.,$€£¥#-])[-+]?\d+(?:\.\d+)?(?![\w%]|[.,]\d)/g;
// Order numbers, tickets, invoices, tracking codes: letters and digits mixed, or # followed by digits.
const ID_RE =
  /#\s?[A-Z0-9][A-Z0-9-]{2,}\b|\b(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9]{1,6}(?:-[A-Z0-9]{2,})+\b|\b(?=[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[A-Z])[A-Z][A-Za-z0-9]*\d[A-Za-z0-9]{2,}\b|\b(?:order|ticket|invoice|case|account|tracking|reference|ref|confirmation|booking|customer|member|policy|claim)(?:\s*(?:no\.?|number|num|id|#))?(?:\s*[:#])?\s*([A-Z0-9-]*\d[A-Z0-9-]{3,})\b/gi;

// Short prefixed codes ("INV-7", "PO-12"); case-sensitive so "top-10" stays a phrase.
const ID_SHORT_RE = /\b[A-Z]{2,6}-\d+\b/g;

const HONORIFIC = String.raw`(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Sir|Madam|Mme|Herr|Frau)\.?`;
// "Anna", "Jean-Luc", "O'Neil", "McDonald"
const CAP_WORD = "(?:[A-Z]'|Mc|Mac)?[A-Z][a-z]+(?:[-'][A-Z][a-z]+)?";
const PERSON_RES: [RegExp, number][] = [
  [new RegExp(String.raw`\b${HONORIFIC}\s+(${CAP_WORD}(?:[ \t]+${CAP_WORD}){0,2})`, "g"), 0.9],
  [
    new RegExp(String.raw`\b(?:my name is|I am|I'm|this is|name:|signed,?)\s+(${CAP_WORD}(?:[ \t]+${CAP_WORD}){0,2})`, "gi"),
    0.75,
  ],
  // sign-off lines: "Thanks,\nJane Doe"
  [
    new RegExp(
      String.raw`(?:regards|thanks|thank you|cheers|sincerely|best|br),?\s*\n\s*(${CAP_WORD}(?:[ \t]+${CAP_WORD}){0,2})\s*(?:\n|$)`,
      "gi",
    ),
    0.8,
  ],
  // greetings: "Hi Jane," "Dear John Smith"
  // [^\S\n]: from each line start only to the end of that line's indent; \s* would rescan every later blank line (quadratic)
  [new RegExp(String.raw`(?:^|\n)[^\S\n]*(?:hi|hello|dear|hey)\s+(${CAP_WORD}(?:[ \t]+${CAP_WORD}){0,2})\s*[,!\n]`, "gi"), 0.75],
  // form-like labels: "Bill to: Jane Doe", "Customer: John Smith", "From: Ana Lopez <ana@x.com>"
  [
    new RegExp(
      String.raw`\b(?:bill to|ship to|sold to|deliver to|attn|attention|customer|client|from|to|contact|passenger|guest|patient|employee|applicant|author|signed by|prepared by|requested by)\s*:\s*(${CAP_WORD}(?:[ \t]+${CAP_WORD}){1,2})`,
      "gi",
    ),
    0.7,
  ],
  [
    new RegExp(
      String.raw`\b(?:spoke (?:to|with)|talked to|agent|representative|manager|contact|ask for|assigned to|cc:?|(?:requested|submitted|written|signed|approved|reported|created|sent|placed) by)\s+(${CAP_WORD}(?:[ \t]+${CAP_WORD}){0,1})`,
      "gi",
    ),
    0.65,
  ],
];
const ORG_SUFFIX = String.raw`(?:Inc|LLC|Ltd|Limited|Corp|Corporation|Co|Company|GmbH|AG|SA|S\.A|PLC|plc|LLP|BV|NV|Pty|Group|Holdings|Bank|University|College|Institute|Foundation|Labs|Technologies|Systems|Airlines|Airways|Hotels?|Hospital|Agency|Partners|Solutions|Services|Software|Studios?|Media|Motors|Pharmaceuticals|Insurance)\b\.?`;
const ORG_RES: [RegExp, number][] = [
  // [ \t] not \s: a signature's name line must not run into the company line below it
  [new RegExp(String.raw`\b((?:[A-Z][\w&'-]*[ \t]+){0,3}[A-Z][\w&'-]*,?[ \t]+${ORG_SUFFIX})`, "g"), 0.85],
  [/\b((?:University|Bank|Department|Ministry|Institute) of (?:[A-Z][a-z]+\s?){1,3})/g, 0.8],
  [
    /\b(?:work(?:s|ed|ing)? (?:at|for)|employed by|on behalf of|company|from the team at|customer of|account with)\s+((?:[A-Z][\w&'-]+)(?:\s+[A-Z][\w&'-]+){0,2})/g,
    0.6,
  ],
];
const NOT_A_NAME = new Set(
  "Mr Mrs Ms Mx Dr Prof I The A An This That Thanks Thank Hi Hello Dear Hey Regards Best Please Sorry Yes No Ok Okay Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June July August September October November December Team Support Customer Sir Madam All Everyone Guys There Again Here Just Not Also Still Really Very Writing Looking Contacting Happy Sure Glad So".split(
    " ",
  ),
);

function* matches(re: RegExp, text: string): Generator<RegExpExecArray> {
  // a pattern that finds nothing still reads the whole text: a safe point before each pass too
  checkCpuBudget();
  re.lastIndex = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    checkCpuBudget();
    if (m[0].length === 0) re.lastIndex++;
    yield m;
  }
}

function parseAmount(raw: string): number {
  let s = raw.replace(/\s/g, "");
  // "1.234,56" and "12,50" are European decimals; "1,234.56" and "1,234" are thousands
  if (/^\d{1,3}(\.\d{3})+(,\d+)?$/.test(s) || /^\d+,\d{1,2}$/.test(s)) s = s.replace(/\./g, "").replace(",", ".");
  else s = s.replace(/,/g, "");
  return Number(s);
}

const SCALE: Record<string, number> = { k: 1e3, thousand: 1e3, m: 1e6, million: 1e6, bn: 1e9, billion: 1e9 };

function scaled(n: number, word: string | undefined): number {
  return word ? n * (SCALE[word.trim().toLowerCase()] ?? 1) : n;
}

function isoDay(d: Date): string {
  const p = (x: number) => String(x).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}

type Found = Entity;

function recognize(text: string, want: (t: EntityType) => boolean, ref: Date): Found[] {
  const out: Found[] = [];
  const add = (type: EntityType, start: number, raw: string, score: number, extra: Partial<Entity> = {}) => {
    const trimmed = raw.replace(/(?<![\s,.])[\s,.]+$/, "");
    out.push({ type, text: trimmed, start, end: start + trimmed.length, score, ...extra });
  };
  if (want("email")) for (const m of matches(EMAIL_RE, text)) add("email", m.index, m[0], 0.99, { value: m[0].toLowerCase() });
  if (want("url")) {
    for (const m of matches(URL_RE, text)) add("url", m.index, m[0], 0.97, { value: m[0] });
    for (const m of matches(BARE_DOMAIN_RE, text)) {
      if (text[m.index - 1] === "@" || text[m.index - 1] === ".") continue;
      add("url", m.index, m[0], 0.8, { value: m[0] });
    }
  }
  if (want("money")) {
    for (const m of matches(MONEY_RE, text)) {
      const [, sym, n1, sc1, n2, sc2, word, code3, n3] = m;
      const cur = sym
        ? (CURRENCY_SYMBOL[sym.toUpperCase()] ?? CURRENCY_SYMBOL[sym])
        : word
          ? CURRENCY_WORD[word.toLowerCase()]
          : CURRENCY_WORD[(code3 ?? "").toLowerCase()];
      const amount = n1 ? scaled(parseAmount(n1), sc1) : n2 ? scaled(parseAmount(n2), sc2) : parseAmount(n3 ?? "");
      if (Number.isFinite(amount)) add("money", m.index, m[0], 0.95, { value: amount, currency: cur });
    }
  }
  if (want("percentage"))
    for (const m of matches(PERCENT_RE, text))
      add("percentage", m.index, m[0], 0.97, { value: parseAmount(m[0].replace(/[^\d.,+-]/g, "")) });
  if (want("id")) {
    for (const m of matches(ID_RE, text)) {
      if (m[1]) {
        const at = m.index + m[0].lastIndexOf(m[1]);
        add("id", at, m[1], 0.9, { value: m[1] });
      } else {
        const v = m[0].replace(/^#\s?/, "");
        // "COVID19"-style words and plain years are not identifiers
        if (!/\d/.test(v) || /^\d{4}$/.test(v)) continue;
        add("id", m.index, m[0], m[0].startsWith("#") ? 0.9 : 0.75, { value: v });
      }
    }
  }
  if (want("id")) for (const m of matches(ID_SHORT_RE, text)) add("id", m.index, m[0], 0.7, { value: m[0] });
  if (want("phone")) {
    for (const m of matches(PHONE_RE, text)) {
      const digits = m[0].replace(/\D/g, "");
      // 7-15 digits (E.164); a bare "2024 2025" or a date is not a phone
      if (digits.length < 7 || digits.length > 15) continue;
      if (/^\d{1,4}[./-]\d{1,2}[./-]\d{1,4}$/.test(m[0].trim())) continue;
      // "2023 2024" is two years
      if (/^(?:(?:19|20)\d{2}[\s,-]*)+$/.test(m[0].trim())) continue;
      add("phone", m.index, m[0], m[0].startsWith("+") || m[0].includes("(") ? 0.9 : 0.75, {
        value: (m[0].trim().startsWith("+") ? "+" : "") + digits,
      });
    }
  }
  if (want("date")) {
    for (const r of parseDates(text, ref)) {
      // a lone number ("at 5") is too weak to call a date; a bare clock time ("9am") or a
      // duration ("for 12 years") is not a date either
      if (/^\d{1,2}$/.test(r.text.trim()) || /^for\b/i.test(r.text)) continue;
      const c = r.start;
      if (!(c.isCertain("day") || c.isCertain("weekday") || c.isCertain("month") || c.isCertain("year"))) continue;
      const value = isoDay(r.start.date()) + (r.end ? `/${isoDay(r.end.date())}` : "");
      // chrono keeps a leading "on"/"at" ("on 3 March 2025"); the date is what follows
      const lead = /^(?:on|at|in|by)\s+/i.exec(r.text)?.[0].length ?? 0;
      add("date", r.index + lead, r.text.slice(lead), 0.9, { value });
    }
  }
  if (want("date")) {
    // a year on its own after a preposition: "up 8% from 2023"
    for (const m of matches(/\b(?:in|from|since|until|by|during|before|after|of)\s+((?:19|20)\d{2})\b(?![/.-]\d)/gi, text)) {
      add("date", m.index + m[0].length - m[1].length, m[1], 0.7, { value: m[1] });
    }
  }
  if (want("person")) {
    for (const [re, score] of PERSON_RES) {
      for (const m of matches(re, text)) {
        const name = m[1];
        const words = name.split(/\s+/);
        // triggers are case-insensitive, so the capitalisation of the name itself is checked here
        while (words.length && (NOT_A_NAME.has(words[words.length - 1]) || !/^[A-Z]/.test(words[words.length - 1]))) words.pop();
        if (!words.length || NOT_A_NAME.has(words[0])) continue;
        const clean = words.join(" ");
        add("person", m.index + m[0].indexOf(name), clean, score, { value: clean });
      }
    }
    // and the names the PII recognizer finds (pii/: given and family names of many locales, cues in
    // 40 languages, contact cards, mail and chat threads), where the patterns above know a few
    // English cues: person recall on realistic text was 0.08 to 0.15 with them alone (docs/offline-engine.md)
    // (a single word in lower case only from a text with no capital at all: in "Interest rose from
    // 3.5 percent", which redaction reads as written in lower case, "rose" is a verb; "yo this is
    // natália nunes" keeps its two names)
    const anyCapital = /\p{Lu}/u.test(text);
    for (const e of detectPii(text, { types: ["name"] }))
      if (!(anyCapital && /^\p{Ll}[^\s]*$/u.test(e.text)))
        add("person", e.start, e.text, Math.min(0.85, e.score), { value: e.text });
  }
  if (want("organization")) {
    for (const [re, score] of ORG_RES) {
      for (const m of matches(re, text)) {
        const org = m[1].replace(/^(?:The|At|From|With|And)\s+/, "");
        if (NOT_A_NAME.has(org) || !/^[A-Z]/.test(org)) continue;
        add("organization", m.index + m[0].indexOf(org), org, score, { value: org.replace(/(?<![,.])[,.]+$/, "") });
      }
    }
  }
  if (want("number")) for (const m of matches(NUMBER_RE, text)) add("number", m.index, m[0], 0.6, { value: parseAmount(m[0]) });
  return out;
}

// When spans overlap, the more specific recognizer wins (a "$12" is money, not a number).
const PRIORITY: Record<EntityType, number> = {
  email: 10,
  url: 9,
  money: 8,
  percentage: 8,
  phone: 7,
  id: 6,
  date: 5,
  organization: 4,
  person: 4,
  number: 1,
};

// A labelled identifier ("account number 4455-8812-0093", "#88213") is surer than the phone shape it also has.
const rank = (e: Entity) => (e.type === "id" && e.score >= 0.9 ? 7.5 : PRIORITY[e.type]);

const LONG_RUN = /(?<!\S)\S{257,}/g;

/**
 * Blanks out runs of more than 256 non-space characters, keeping every offset. Several
 * recognizers backtrack over a run of word characters, which is quadratic in its length; no
 * entity is that long, and a 100 KB run of "a.a.a." must not cost seconds.
 */
export function maskLongRuns(text: string): string {
  return text.length > 256 ? text.replace(LONG_RUN, (m) => " ".repeat(m.length)) : text;
}

/** Non-overlapping entities of `text`, sorted by offset. */
export function extractEntities(text: string, opts: ExtractOptions = {}): Entity[] {
  const types = opts.types ? new Set(opts.types) : null;
  const want = (t: EntityType) => !types || types.has(t) || (t !== "number" && types.has("number"));
  const found = recognize(maskLongRuns(text), want, opts.referenceDate ?? new Date());
  checkCpuBudget();
  found.sort((a, b) => rank(b) - rank(a) || b.end - b.start - (a.end - a.start) || b.score - a.score);
  // occupancy per character: linear in the text, where comparing every pair of spans would not be
  const taken = new Uint8Array(text.length + 1);
  const kept: Entity[] = [];
  for (const e of found) {
    tickCpuBudget();
    if (e.end <= e.start) continue;
    let free = true;
    for (let i = e.start; i < e.end && free; i++) if (taken[i]) free = false;
    if (!free) continue;
    taken.fill(1, e.start, e.end);
    kept.push(e);
  }
  return kept.filter((e) => !types || types.has(e.type)).sort((a, b) => a.start - b.start);
}

/** Groups entities by type, keeping document order inside each group. */
export function entitiesByType(entities: readonly Entity[]): Partial<Record<EntityType, Entity[]>> {
  const out: Partial<Record<EntityType, Entity[]>> = {};
  for (const e of entities) {
    const list = out[e.type] ?? [];
    list.push(e);
    out[e.type] = list;
  }
  return out;
}
