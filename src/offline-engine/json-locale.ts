/**
 * Numbers, dates and label words of other locales, for json-extract.ts (docs/offline-engine.md,
 * 2026-12-06). One reading per text: which character is the decimal separator and whether numeric
 * dates are day-first are decided once from the text's evidence, then applied to every number and
 * date in it. A value whose reading the evidence does not settle ("1.234" with nothing else to go
 * by, "03/04/2026" in a text with no cue) is doubtful: json-extract answers null and flags it.
 *
 *   conventionsOf(text): Conventions
 *   readAmount(raw, conv): { value, doubtful } | null (null: not a number of any locale)
 *   localeEntities(text, conv): money, number and numeric-date entities read this way
 */
import { checkCpuBudget } from "./budget";
import { type Entity, type ExtractOptions, extractEntities } from "./extract";
import { detectLanguage } from "./language";

export interface Conventions {
  /** the decimal separator, or null when the text does not say */
  decimal: "," | "." | null;
  /** numeric dates day-first (true), month-first (false), or null when the text does not say */
  dayFirst: boolean | null;
  /** ISO 639-1 code of the text, "und" when unknown */
  lang: string;
}

/** Languages that write a decimal point ("1,234.56"); every other detected language writes a decimal comma. */
const DOT_DECIMAL_LANGS = new Set(["en", "ja", "zh", "ko", "hi", "th", "he", "ms", "ta", "bn", "ur", "tl"]);
/** Languages whose numeric dates are month-first (US English); every other detected language is day-first. */
const MONTH_FIRST_LANGS = new Set(["en"]);

// a number with its grouping: "1.234,56", "1 234,56" (blank, no-break or thin space), "1'234.56", "1,25,000.00", "12,50"
const GROUP_BLANK = "[ \\u00a0\\u202f\\u2009'\\u2019]";
const NUM = `\\d{1,3}(?:${GROUP_BLANK}\\d{3})+(?:[.,]\\d{1,2})?(?![\\d.,])|\\d+(?:[.,]\\d+)*`;
const CUR_BEFORE = "US\\$|A\\$|C\\$|R\\$|CHF|EUR|USD|GBP|[$€£¥₹]";
const CUR_AFTER = "€|\\$|£|EUR|USD|GBP|CHF|SEK|NOK|DKK|PLN|MXN|BRL|euros?|dollars?|pesos|kr|zł|z\\u0142";
/** an amount with its currency before or after it, or both ("$1,250.00 MXN") */
const MONEY_RE = new RegExp(
  `(?<![\\p{L}\\d.,])(?:(${CUR_BEFORE})[ \\u00a0\\u202f]?)?(${NUM})(?:[ \\u00a0\\u202f]?(${CUR_AFTER})(?![\\p{L}]))?`,
  "giu",
);
const CURRENCY: Record<string, string> = {
  $: "USD",
  US$: "USD",
  A$: "AUD",
  C$: "CAD",
  R$: "BRL",
  "€": "EUR",
  "£": "GBP",
  "¥": "JPY",
  "₹": "INR",
  euro: "EUR",
  euros: "EUR",
  dollar: "USD",
  dollars: "USD",
  pesos: "MXN",
  kr: "SEK",
  zł: "PLN",
};
const COMMA_CURRENCY_AFTER = /^(?:€|EUR|euros?|zł|z\u0142|PLN|kr|SEK|NOK|DKK)$/i;
const currencyOf = (s: string | undefined) => (s ? (CURRENCY[s] ?? CURRENCY[s.toLowerCase()] ?? s.toUpperCase()) : undefined);

// 03.04.2026, 03/04/2026, 03-04-2026 (a four-digit year; ISO dates are read as they are)
const NUMERIC_DATE_RE = /(?<![\d./-])(\d{1,2})([./-])(\d{1,2})\2(\d{4})(?![\d/-]|\.\d)/g;

export interface Reading {
  value: number;
  /** the text does not settle which separator is the decimal one */
  doubtful: boolean;
}

/**
 * A number as written in any locale, its separators read by its own shape first: both "." and ","
 * (the last one is decimal), blanks or apostrophes between groups of three, a separator used
 * twice (grouping), one followed by other than three digits (decimal). Only a single "." or ","
 * followed by exactly three digits ("1.234", "1,234") takes the text's convention, and is doubtful
 * without one. null when the shape is no number ("03.04.2026", "1.23.4").
 */
export function readAmount(raw: string, conv: Conventions): Reading | null {
  let s = raw.replace(/[ \u00a0\u202f\u2009'\u2019](?=\d{3}(?!\d))/g, "");
  if (!/^\d+(?:[.,]\d+)*$/.test(s)) return null;
  const dots = s.split(".").length - 1;
  const commas = s.split(",").length - 1;
  const groupsOk = (sep: string, rest: string) =>
    rest
      .split(sep)
      .slice(1)
      .every((g) => g.length === 3) || /^\d{1,2}(?:,\d{2})*,\d{3}$/.test(rest); // Indian lakh grouping
  if (dots && commas) {
    const dec = s.lastIndexOf(".") > s.lastIndexOf(",") ? "." : ",";
    const grp = dec === "." ? "," : ".";
    const [int, frac, ...more] = s.split(dec);
    if (more.length || !groupsOk(grp, int as string)) return null;
    return { value: Number(`${(int as string).split(grp).join("")}.${frac}`), doubtful: false };
  }
  if (!dots && !commas) return { value: Number(s), doubtful: false };
  const sep = dots ? "." : ",";
  const parts = s.split(sep);
  if (parts.length > 2) return groupsOk(sep, s) ? { value: Number(parts.join("")), doubtful: false } : null;
  const [int, frac] = parts as [string, string];
  // "0,234" is never grouped; "12,50", "1.5" have no group of three
  if (frac.length !== 3 || /^0+$/.test(int) || int.length > 3) {
    s = `${int}.${frac}`;
    return { value: Number(s), doubtful: false };
  }
  if (conv.decimal === null) return { value: Number.NaN, doubtful: true };
  return { value: conv.decimal === sep ? Number(`${int}.${frac}`) : Number(int + frac), doubtful: false };
}

/** What the shape of one number says about the decimal separator, if anything. */
function decimalEvidence(tok: string): "," | "." | null {
  const t = tok.replace(/[ \u00a0\u202f\u2009]/g, "");
  if (/^\d{1,3}(?:['\u2019]\d{3})+(?:\.\d+)?$/.test(t)) return t.includes(".") ? "." : null;
  const lastDot = t.lastIndexOf(".");
  const lastComma = t.lastIndexOf(",");
  if (lastDot >= 0 && lastComma >= 0) return lastDot > lastComma ? "." : ",";
  const sep = lastDot >= 0 ? "." : lastComma >= 0 ? "," : null;
  if (!sep) return null;
  const parts = t.split(sep);
  if (parts.length > 2) return parts.slice(1).every((g) => g.length === 3) ? (sep === "." ? "," : ".") : null;
  return (parts[1] as string).length === 3 ? null : sep;
}

const EVIDENCE_NUM_RE = /(?<![\d.,/-])\d+(?:[.,'\u2019 \u00a0\u202f\u2009]\d+)+(?![\d/-]|[.,]\d)/g;
const DAY_FIRST_CURRENCY_RE = /[€£]|\b(?:EUR|GBP|CHF|SEK|NOK|DKK|PLN|BRL)\b|R\$|zł/;
const MONTH_FIRST_CURRENCY_RE = /(?<![A-Z])(?:US)?\$(?!\s?\d[\d.,]*\s?(?:MXN|CAD|AUD|BRL))/;

/**
 * The text's conventions: the decimal separator from numbers whose shape settles it (all that do
 * agree), else from the language; the order of numeric dates from a date with a part over 12, else
 * a date written with dots (day-first), else the language (German, French, Spanish... day-first;
 * English month-first) with the currency as a cue in English ("£" or "€": day-first; "$": month-first).
 */
export function conventionsOf(text: string): Conventions {
  const lang = detectLanguage(text).code;
  const seen = new Set<string>();
  for (const m of text.matchAll(EVIDENCE_NUM_RE)) {
    checkCpuBudget();
    // a numeric date is no number
    if (/^\d{1,2}[./-]\d{1,2}[./-]\d{2,4}$/.test(m[0])) continue;
    const e = decimalEvidence(m[0]);
    if (e) seen.add(e);
  }
  let decimal: Conventions["decimal"] = seen.size === 1 ? ([...seen][0] as "," | ".") : null;
  if (!decimal && seen.size === 0 && lang !== "und") decimal = DOT_DECIMAL_LANGS.has(lang) ? "." : ",";
  return { decimal, dayFirst: dateOrder(text, lang), lang };
}

function dateOrder(text: string, lang: string): boolean | null {
  let dayFirst = false;
  let monthFirst = false;
  let dotted = false;
  for (const m of text.matchAll(NUMERIC_DATE_RE)) {
    checkCpuBudget();
    if (Number(m[1]) > 12) dayFirst = true;
    if (Number(m[3]) > 12) monthFirst = true;
    if (m[2] === ".") dotted = true;
  }
  if (dayFirst !== monthFirst) return dayFirst;
  if (dayFirst) return null; // "13/04/2026" and "04/13/2026" in one text: no rule holds
  if (dotted) return true;
  if (lang === "und" || MONTH_FIRST_LANGS.has(lang)) {
    if (DAY_FIRST_CURRENCY_RE.test(text)) return true;
    if (MONTH_FIRST_CURRENCY_RE.test(text)) return false;
    return lang === "und" ? null : false;
  }
  return true;
}

/** A locale entity: an Entity whose value json-extract must not trust when `doubtful`. */
export interface LocaleEntity extends Entity {
  doubtful?: boolean;
}

const pad = (n: number) => String(n).padStart(2, "0");

/**
 * Amounts with a currency, plain numbers with a decimal comma or grouping, and numeric dates,
 * read by the text's conventions. Spans of a date are never read as numbers.
 */
export function localeEntities(text: string, conv: Conventions): LocaleEntity[] {
  const out: LocaleEntity[] = [];
  const dates: [number, number][] = [];
  for (const m of text.matchAll(NUMERIC_DATE_RE)) {
    checkCpuBudget();
    const [a, b, y] = [Number(m[1]), Number(m[3]), Number(m[4])];
    const start = m.index ?? 0;
    dates.push([start, start + m[0].length]);
    const [day, month] = a > 12 ? [a, b] : b > 12 ? [b, a] : conv.dayFirst === null ? [0, 0] : conv.dayFirst ? [a, b] : [b, a];
    const doubtful = day === 0;
    const valid = doubtful || (month >= 1 && month <= 12 && day >= 1 && day <= 31);
    if (!valid) continue;
    const value = doubtful ? "" : `${y}-${pad(month)}-${pad(day)}`;
    out.push({ type: "date", text: m[0], start, end: start + m[0].length, value, score: doubtful ? 0.3 : 0.9, doubtful });
  }
  // amounts come in text order: the dates before one are never looked at again
  let d = 0;
  const inDate = (s: number, e: number) => {
    while (d < dates.length && (dates[d] as [number, number])[1] <= s) d++;
    return d < dates.length && (dates[d] as [number, number])[0] < e;
  };
  for (const m of text.matchAll(MONEY_RE)) {
    checkCpuBudget();
    const [, before, num, after] = m;
    const start = m.index ?? 0;
    const numAt = start + m[0].indexOf(num as string);
    if (inDate(numAt, numAt + (num as string).length)) continue;
    const currency = currencyOf(after && before === "$" ? after : (before ?? after));
    // a currency written after the amount the continental way ("1.234 €", "1.234 zł") says a decimal comma
    const r = readAmount(
      num as string,
      after && !before && COMMA_CURRENCY_AFTER.test(after) && conv.decimal === null ? { ...conv, decimal: "," } : conv,
    );
    if (!r) continue;
    // a plain number only when "." or "," needed this reading ("12,50", "1.234"); blanks between digits
    // without a currency are more often a phone number ("+1 415 555 0134"), and extract.ts reads the rest
    if (!currency && !/[.,]/.test(num as string)) continue;
    const trimmed = m[0];
    out.push({
      type: currency ? "money" : "number",
      text: trimmed,
      start,
      end: start + trimmed.length,
      value: r.value,
      currency,
      score: r.doubtful ? 0.3 : 0.9,
      doubtful: r.doubtful,
    });
  }
  return out;
}

/** The entities of `sorted` (sorted by start, none overlapping another) that overlap `x`: a binary search, not a scan. */
function overlapping<T extends Entity>(sorted: readonly T[], x: Entity): T[] {
  let lo = 0;
  let hi = sorted.length;
  // none overlapping and sorted by start: their ends are sorted too
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((sorted[mid] as T).end <= x.start) lo = mid + 1;
    else hi = mid;
  }
  const out: T[] = [];
  for (let i = lo; i < sorted.length && (sorted[i] as T).start < x.end; i++) out.push(sorted[i] as T);
  return out;
}

/**
 * The entities of extract.ts with the locale readings in place of the money, number and date
 * entities they overlap (extract.ts reads "1.234,56 EUR" as 234.56 and "03.04.2026" month-first).
 * Other entities (an email, a phone, an identifier) overlapping a locale number keep it out.
 */
export function withLocaleEntities(entities: readonly Entity[], local: readonly LocaleEntity[]): LocaleEntity[] {
  // a date replaces whatever overlaps it, an amount also a phone shape ("1 234,56 kr"), a plain number only a number
  const replaceable = (e: Entity, l: Entity) =>
    l.type === "date" ||
    e.type === "number" ||
    (l.type === "money" && (e.type === "money" || e.type === "phone" || e.type === "date"));
  // "$4.2 million", "€2.3m": extract.ts's amount with its scale word stays
  const scaled = (e: Entity, l: Entity) =>
    e.type === "money" &&
    e.start <= l.start &&
    e.end > l.end &&
    (e.value === l.value || SCALE_AFTER.test(e.text.slice(l.end - e.start)));
  const kept: LocaleEntity[] = [];
  const usable = [...local]
    .sort((a, b) => a.start - b.start)
    .filter(
      (l) =>
        !overlapping(entities, l).some((e) => !replaceable(e, l) || scaled(e, l) || (e.type === "money" && e.end > l.end + 1)),
    )
    .map((l) => {
      // "12/05/2025 at 3 PM": extract.ts's date with its time keeps its span, the value read by the locale
      if (l.type !== "date") return l;
      const e = overlapping(entities, l).find((x) => x.type === "date" && x.start <= l.start && x.end >= l.end);
      return e && (e.start < l.start || e.end > l.end) ? { ...l, text: e.text, start: e.start, end: e.end } : l;
    });
  for (const e of entities) if (!overlapping(usable, e).some((l) => replaceable(e, l))) kept.push(e);
  return [...kept, ...usable].sort((a, b) => a.start - b.start);
}

/** A scale word right after an amount ("2.3m", "4.2 million", "5k", "1.2 bn"). */
const SCALE_AFTER = /^\s?(?:k|m|bn|thousand|million|billion)\b/i;

// ---- label words of other languages (data: add a language by adding its words) ----

/**
 * The words that label a document's number in German, French, Spanish, Italian, Dutch, Portuguese,
 * Swedish and Polish, by the English word of a field's name ("invoice_number": "Rechnung Nr.",
 * "Facture n°", "Factura nº", "Fattura n.", "Factuurnummer"). English labels are read by extract.ts.
 */
export const ID_LABELS: Record<string, readonly string[]> = {
  invoice: ["rechnungsnummer", "rechnung", "facture", "factura", "fattura", "factuurnummer", "factuur", "fatura", "faktura"],
  order: [
    "bestellnummer",
    "bestellung",
    "auftragsnummer",
    "auftrag",
    "commande",
    "pedido",
    "ordine",
    "bestelling",
    "encomenda",
    "zamówienie",
  ],
  booking: [
    "buchungsnummer",
    "buchung",
    "buchungsbestätigung",
    "reservierung",
    "réservation",
    "reserva confirmada",
    "reserva",
    "prenotazione",
    "boeking",
    "reservering",
    "rezerwacja",
  ],
  receipt: ["quittung", "beleg", "kassenbon", "reçu", "recibo", "ricevuta", "scontrino", "kassabon", "kvitto", "paragon"],
  quote: ["angebot", "devis", "presupuesto", "preventivo", "offerte", "orçamento", "oferta"],
};
/** "Nr.", "n°", "nº", "n.º", "n.", "núm.", "número", "numéro", "numero", "nummer", "no." between the label and the number */
const ID_TAIL = "(?:nr|no|n|nº|n°|n\\.º|núm|num|número|numéro|numero|nummer)\\.?(?![\\p{L}])";
const ID_LABEL_KEYS = Object.keys(ID_LABELS);
/**
 * One pattern for every label: group k + 1 is the k-th key of ID_LABELS, the last group the
 * number (letters, "/" and "-", a digit, then letters, digits, "/" and "-"). Each run of blanks is
 * read by one quantifier only, so a failed attempt costs the blanks after one label.
 */
const ID_LABEL_RE = new RegExp(
  `(?<![\\p{L}\\d])(?:${Object.values(ID_LABELS)
    .map((ws) => `(${ws.join("|")})`)
    .join("|")})[ \\t]*(?:${ID_TAIL}[ \\t]*)?(?:[:#][ \\t]*)?([\\p{L}/-]*\\d[\\p{L}\\d/-]*)`,
  "giu",
);

/** The document number a foreign label gives for a field named with `fieldWords`, with its span; null when none. */
export function foreignIdValue(
  text: string,
  fieldWords: readonly string[],
): { value: string; start: number; end: number } | null {
  // a reservation is labelled as a booking is
  const wanted = new Set(fieldWords.map((w) => (w === "reservation" ? "booking" : w)));
  for (const m of text.matchAll(ID_LABEL_RE)) {
    checkCpuBudget();
    const key = ID_LABEL_KEYS.find((_, k) => m[k + 1] !== undefined);
    if (!key || !wanted.has(key)) continue;
    const raw = m[ID_LABEL_KEYS.length + 1] as string;
    let n = raw.length;
    while (n > 0 && (raw[n - 1] === "/" || raw[n - 1] === "-")) n--;
    const v = raw.slice(0, n);
    // a date after the label is not its number ("Facture 02/03/2026"); nor a run starting with "/" or "-"
    if (/^\d{1,2}[./-]\d{1,2}[./-]\d{2,4}$/.test(v) || !/^[\p{L}\d]/u.test(v)) continue;
    const start = (m.index ?? 0) + m[0].length - raw.length;
    return { value: v, start, end: start + v.length };
  }
  return null;
}

/**
 * Label words of other languages for amount fields, by the English word of a field's name: the
 * amount nearest after one of them is the field's ("Gesamtbetrag: 1.234,56 EUR" for `total`).
 */
export const AMOUNT_LABELS: Record<string, readonly string[]> = {
  total: [
    "gesamtbetrag",
    "gesamtsumme",
    "gesamt",
    "summe",
    "total ttc",
    "montant ttc",
    "ttc",
    "totale",
    "totaal",
    "totaalprijs",
    "importe total",
    "valor total",
    "att betala",
    "razem",
    "do zapłaty",
  ],
  amount: ["betrag", "montant", "importe", "importo", "bedrag", "valor", "belopp", "kwota"],
  price: ["preis", "prix", "precio", "prezzo", "prijs", "preço", "pris", "cena"],
  deposit: [
    "kaution",
    "anzahlung",
    "acompte",
    "caution",
    "depósito",
    "fianza",
    "caparra",
    "deposito",
    "aanbetaling",
    "borg",
    "sinal",
    "kaucja",
  ],
  tax: ["mwst", "ust", "tva", "iva", "btw", "moms", "vat"],
  subtotal: ["zwischensumme", "nettobetrag", "sous-total", "montant ht", "base imponible", "imponibile", "subtotaal", "netto"],
  value: ["wert", "valeur", "valor", "valore", "waarde"],
  rent: ["miete", "loyer", "alquiler", "affitto", "huur", "aluguel", "renda", "czynsz"],
  fee: ["gebühr", "frais", "tarifa", "tariffa", "kosten", "taxa", "opłata"],
  balance: ["saldo", "solde", "restbetrag"],
};

/**
 * Cue words of other languages said before a date, by its role (json-extract's DATE_ROLE_CUES has
 * the English ones): "zahlbar bis", "à régler avant", "vencimiento", "scadenza" say a due date.
 */
export const DATE_ROLE_WORDS: Record<"due" | "issue" | "delivery" | "start" | "end", readonly string[]> = {
  due: [
    "fällig",
    "zahlbar bis",
    "zahlbar",
    "zahlungsziel",
    "bis zum",
    "échéance",
    "à régler avant",
    "payable au",
    "avant le",
    "vencimiento",
    "vence",
    "antes del",
    "scadenza",
    "scade",
    "entro il",
    "vervaldatum",
    "betalen vóór",
    "betalen voor",
    "förfallodatum",
    "termin płatności",
  ],
  issue: [
    "rechnungsdatum",
    "ausgestellt",
    "date de facture",
    "émise le",
    "fecha de emisión",
    "data di emissione",
    "factuurdatum",
    "data de emissão",
    "fakturadatum",
    "z dnia",
    "bestelldatum",
    "date de commande",
  ],
  delivery: [
    "lieferung",
    "geliefert",
    "liefertermin",
    "versandt",
    "versand",
    "livraison",
    "livré",
    "expédié",
    "entrega",
    "enviado",
    "enviada",
    "llegará",
    "consegna",
    "spedito",
    "levering",
    "bezorgd",
    "geleverd",
    "verzonden",
    "leveringsdatum",
  ],
  start: [
    "anreise",
    "mietbeginn",
    "beginn",
    "ab dem",
    "arrivée",
    "début",
    "entrada",
    "llegada",
    "inicio",
    "arrivo",
    "inizio",
    "aankomst",
    "ingang",
    "chegada",
    "início",
    "ankomst",
  ],
  end: ["abreise", "ende", "départ", "fin", "salida", "partenza", "vertrek", "saída", "avresa"],
};

/**
 * The entities of a text as every offline function reports them: extract.ts's, with amounts,
 * numbers and numeric dates read by the text's own conventions ("1.234,56 €", "CHF 1'234.50",
 * "₹1,23,456.00", "03.04.2026"), one reading for every caller.
 */
export function textEntities(text: string, opts: ExtractOptions = {}): LocaleEntity[] {
  const entities = extractEntities(text, opts);
  // digits apart from one another by a separator are what a locale reads differently ("12,50",
  // "1.234", "03/04/2026", "1 234"): without any, the language is not looked for
  if (!SEPARATED_DIGITS.test(text)) return entities;
  return withLocaleEntities(entities, localeEntities(text, conventionsOf(text)));
}
const SEPARATED_DIGITS = /\d[.,'\u2019/\- \u00a0\u202f\u2009]\d/;
