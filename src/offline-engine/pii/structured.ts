/**
 * Recognizers for PII with a checkable structure: emails, payment cards (Luhn), US Social
 * Security numbers (issuance rules), IPv4/IPv6 addresses. Each regex finds candidates cheaply;
 * a validator then rejects look-alikes (order numbers, version strings, clock times).
 */
import { category, codePointBefore, GROUP_SEPARATOR, LETTER, NUMBER } from "./chars";
import { DIGIT_RUN_MIN, digitRuns } from "./keywords";
import { columnHeader, orderNumberBefore, spacedWord } from "./phone";
import { entity, type PiiEntity } from "./types";

const EMAIL =
  /(?<![\p{L}\p{N}._%+-])[\p{L}\p{N}][\p{L}\p{N}._%+-]*@[\p{L}\p{N}](?:[\p{L}\p{N}-]*[\p{L}\p{N}])?(?:\.[\p{L}\p{N}](?:[\p{L}\p{N}-]*[\p{L}\p{N}])?)*\.\p{L}{2,24}(?![\p{L}\p{N}-])/gu;

/** EMAIL tried at one position only. */
const EMAIL_AT = new RegExp(EMAIL.source, "uy");

/** A character of the local part of an address: [\p{L}\p{N}._%+-]. */
function isLocalPartChar(cp: number): boolean {
  return cp === 46 || cp === 95 || cp === 37 || cp === 43 || cp === 45 || (category(cp) & (LETTER | NUMBER)) !== 0;
}

/**
 * Every match of EMAIL holds one "@" and starts where the run of local-part characters before it
 * starts (the lookbehind forbids starting inside the run, and "@" is not such a character). So
 * EMAIL is tried only there, once per "@", in text order, never inside the previous match: the
 * same matches as a scan of every position.
 */
/**
 * An address written so that a harvester misses it and a person does not: the "@" as "%40" (a URL's
 * query), "(at)", "[at]", "{at}", "<at>" or " at ", and dots as "(dot)", "[dot]" or " dot "
 * ("hans.peter(at)bluewin.ch", "chloe.dubois%40orange.fr", "maria dot lopez at gmail dot com").
 * With a bare " at " the domain's dots must be said too and it must end in a top-level domain of the
 * list below: "look at github.com" is no address.
 */
const OBFUSCATED_AT = String.raw`(?:%40|[ \t]?(?:\(at\)|\[at\]|\{at\}|<at>)[ \t]?|[ \t](?:at|arroba|chiocciola|@)[ \t])`;
const OBFUSCATED_DOT = String.raw`(?:\.|[ \t]?(?:\(dot\)|\[dot\]|\{dot\})[ \t]?|[ \t](?:dot|ponto|punto|punkt|point|\.)[ \t])`;
const OBFUSCATED_EMAIL = new RegExp(
  String.raw`(?<![\p{L}\p{N}._%+-])[\p{L}\p{N}][\p{L}\p{N}_+-]{0,40}(?:${OBFUSCATED_DOT}[\p{L}\p{N}_+-]{1,40}){0,3}(${OBFUSCATED_AT})[\p{L}\p{N}][\p{L}\p{N}-]{0,62}(?:${OBFUSCATED_DOT}[\p{L}\p{N}-]{1,63}){0,3}${OBFUSCATED_DOT}(\p{L}{2,24})(?![\p{L}\p{N}-])`,
  "giu",
);
/** where an address's "@" may stand, written for people ("%40", "(at)", " @ ", " at ", " arroba ") */
const AT_TOKEN = /%40|[([{<]at[)\]}>]| (?:at|arroba|chiocciola|@) /gi;
const AT_QUICK = /at|%40| @ |arroba|chiocciola/i;
const SAID_DOT = / (?:dot|ponto|punto|punkt|point) |\(dot\)|\[dot\]|\{dot\}/i;
const COMMON_TLDS = new Set(
  "com org net edu gov io co uk de fr es it nl be ch at se no dk fi pl cz sk hu ro bg gr pt ie ru ua tr il in cn jp kr au nz ca us br mx ar cl za ng ke info biz me".split(
    " ",
  ),
);

/**
 * The pattern runs only around each place an "@" may stand (a window of the local part's and the
 * domain's longest lengths), not over the whole text: " at " is common and most texts hold one; a
 * bare " at " or " arroba " counts only with a dot said after it.
 */
function findObfuscatedEmails(text: string, out: PiiEntity[]): void {
  if (!AT_QUICK.test(text)) return;
  let from = 0;
  // the end of the text a window has read: a token well inside it was read around already
  let readTo = 0;
  for (const t of text.matchAll(AT_TOKEN)) {
    const at = t.index as number;
    if (at + 220 < readTo) continue;
    const bareWord = t[0].length > 3 && t[0].startsWith(" ") && t[0] !== " @ ";
    if (bareWord && !SAID_DOT.test(text.slice(at, at + 90))) continue;
    const lo = Math.max(from, at - 200);
    if (lo > at) continue;
    readTo = Math.min(text.length, at + 420);
    for (const m of text.slice(lo, readTo).matchAll(OBFUSCATED_EMAIL)) {
      const start = lo + (m.index as number);
      if (start < from) continue;
      const e = obfuscatedEmail(text, start, m);
      if (e) {
        out.push(e);
        from = e.end;
      }
    }
  }
}

/** The email a match of OBFUSCATED_EMAIL at `start` is, or null (a bare " at " needs its dots said and a known domain). */
function obfuscatedEmail(text: string, start: number, m: RegExpMatchArray): PiiEntity | null {
  const bare = /^[ \t](?:at|arroba|chiocciola)[ \t]$/i.test(m[1] as string);
  // a bare " at " only in an address said aloud, its dots said too ("… at gmail dot com"; not "look at github.com")
  if (bare) {
    const said = / (?:dot|ponto|punto|punkt|point) /i;
    if (!COMMON_TLDS.has((m[2] as string).toLowerCase()) || !said.test(m[0].slice(m[0].search(/ (?:at|arroba|chiocciola) /i))))
      return null;
  }
  return entity("email", text, start, start + m[0].length, bare ? 0.9 : 0.97);
}

export function findEmails(text: string): PiiEntity[] {
  const out: PiiEntity[] = [];
  findObfuscatedEmails(text, out);
  let previousEnd = 0;
  for (let at = text.indexOf("@"); at >= 0; at = text.indexOf("@", at + 1)) {
    let start = at;
    while (start > 0) {
      const cp = codePointBefore(text, start);
      if (!isLocalPartChar(cp)) break;
      start -= cp > 0xffff ? 2 : 1;
    }
    if (start === at || start < previousEnd) continue;
    EMAIL_AT.lastIndex = start;
    const m = EMAIL_AT.exec(text);
    if (!m) {
      // a blank after the "@", as a scanner or a hurried hand puts one ("r.castillo@ telmex.com"): a domain of a known top level after it
      // (or a line break there: an address a PDF or a mail client wrapped after its "@")
      const gap = blankGapAt(text, at + 1);
      const spaced = gap > 0 ? blankAfterAt(text, start, at, gap) : null;
      if (spaced) {
        out.push(spaced);
        previousEnd = spaced.end;
      }
      continue;
    }
    previousEnd = start + m[0].length;
    if (m[0].includes("..")) continue;
    out.push(entity("email", text, text.charCodeAt(start - 1) === 61 ? rewrittenStart(text, start) : start, previousEnd, 0.99));
  }
  return out;
}

/** the run of a domain's characters right after the blank that follows an "@" */
const DOMAIN_RUN = /[\p{L}\p{N}.-]{1,253}/uy;
/** a domain's label ([\p{L}\p{N}], "-" inside) and its top level (letters) */
const DOMAIN_LABEL = /^[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?$/u;
const TOP_LEVEL = /^\p{L}{2,24}$/u;
/** a local part (EMAIL's), all of text[start, at) */
const LOCAL_PART = /^[\p{L}\p{N}][\p{L}\p{N}._%+-]*$/u;

/** How long the one blank or the line break ("\n", "\r\n") at `i` is; 0: neither. */
function blankGapAt(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === 32 || c === 10) return 1;
  return c === 13 && text.charCodeAt(i + 1) === 10 ? 2 : 0;
}

/** The address written with one blank or a line break (`gap` long) after its "@" at `at`, its local part from `start`, or null (the domain's top level must be a known one). */
function blankAfterAt(text: string, start: number, at: number, gap: number): PiiEntity | null {
  DOMAIN_RUN.lastIndex = at + 1 + gap;
  const run = DOMAIN_RUN.exec(text);
  if (!run || /[\p{L}\p{N}]/u.test(text.charAt(at + 1 + gap + run[0].length))) return null;
  // (a sentence's full stop after it is no part of it)
  let cut = run[0].length;
  while (cut > 0 && run[0].charCodeAt(cut - 1) === 46) cut--;
  const domain = run[0].slice(0, cut);
  const labels = domain.split(".");
  const top = labels[labels.length - 1] as string;
  if (labels.length < 2 || !TOP_LEVEL.test(top) || !COMMON_TLDS.has(top.toLowerCase())) return null;
  if (!labels.every((l) => DOMAIN_LABEL.test(l))) return null;
  const local = text.slice(start, at);
  if (!LOCAL_PART.test(local) || local.includes("..")) return null;
  return entity("email", text, start, at + 1 + gap + domain.length, 0.9);
}

/** a sender rewritten by a forwarder (SRS): "SRS0=" or "SRS1=" */
const SRS = /^srs[01]=/i;

/**
 * Where an address whose local part holds "=" starts, as bounce and forwarding addresses write the
 * recipient's into theirs ("bounces+jane=example.com@sendgrid.net", "SRS0=HHH=TT=example.com=jane@fwd.net"):
 * back over local-part characters and "=" (128 at most) when the run begins with "SRS0=" or holds a "+"
 * before its first "=". Else `start` ("email=jane@example.com" is a key and its value).
 */
function rewrittenStart(text: string, start: number): number {
  let k = start;
  while (k > 0 && start - k < 128) {
    const cp = codePointBefore(text, k);
    if (cp !== 61 && !isLocalPartChar(cp)) break;
    k -= cp > 0xffff ? 2 : 1;
  }
  while (k < start && !isWordCode(text.charCodeAt(k))) k++;
  const run = text.slice(k, start);
  const plus = run.indexOf("+");
  return SRS.test(run) || (plus >= 0 && plus < run.indexOf("=")) ? k : start;
}

const isWordCode = (c: number): boolean => (c >= 48 && c <= 57) || ((c | 32) >= 97 && (c | 32) <= 122) || c >= 0xc0;

// 13-19 digits, in groups split by GROUP_SEPARATOR ("4111 1111 1111 1111", "3782-822463-10005", "4111/1111/1111/1111")
const CARD = new RegExp(String.raw`(?<![\d-])\d(?:${GROUP_SEPARATOR}?\d){12,18}(?![\d])`, "g");

/**
 * The stretches of `text` that a number in groups (a card's, an SSN's) can lie in: maximal runs of
 * digits each apart by nothing or by what GROUP_SEPARATOR reads through, of `min` digits or more
 * (DIGIT_RUN_MIN at least), as [start, end) pairs, from the keyword pass (keywords.ts). A pattern
 * whose digits are split by GROUP_SEPARATOR (or less) matches within one of them only, so it is
 * run over those alone, not over the whole text.
 */
function digitStretches(text: string, min: number): number[] {
  if (min < DIGIT_RUN_MIN) throw new Error(`digit stretches of ${min} digits: the keyword pass keeps ${DIGIT_RUN_MIN} or more`);
  const runs = digitRuns(text);
  const out: number[] = [];
  for (let k = 0; k < runs.length; k += 3) if ((runs[k + 2] as number) >= min) out.push(runs[k] as number, runs[k + 1] as number);
  return out;
}

/**
 * Every match of `pattern` (global; a lookbehind of `back` UTF-16 units, a lookahead of two at most) in
 * `text`, looked for only in its digit stretches of `min` digits or more: the same matches, in
 * text order, as matchAll over the whole text, for a pattern that only matches within a stretch.
 * (`back` 2 for a Unicode pattern's lookbehind of one character: a character beyond U+FFFF is two units;
 * `keep`: whether a stretch [start, end) can hold a match at all, when a look at its characters tells.)
 */
export function inStretches(
  text: string,
  pattern: RegExp,
  min: number,
  back = 1,
  keep?: (start: number, end: number) => boolean,
): RegExpExecArray[] {
  const out: RegExpExecArray[] = [];
  const stretches = digitStretches(text, min);
  for (let k = 0; k < stretches.length; k += 2) {
    if (keep && !keep(stretches[k] as number, stretches[k + 1] as number)) continue;
    const from = Math.max(0, (stretches[k] as number) - back);
    const part = text.slice(from, (stretches[k + 1] as number) + 2);
    // exec on the pattern itself (none matches the empty string): matchAll would copy it and run an iterator
    pattern.lastIndex = 0;
    for (let m = pattern.exec(part); m !== null; m = pattern.exec(part)) {
      m.index += from;
      out.push(m);
    }
  }
  return out;
}

export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/** Issuer prefixes (IIN ranges) of the networks people actually paste. */
export function knownIssuer(d: string): boolean {
  const p2 = Number(d.slice(0, 2));
  const p4 = Number(d.slice(0, 4));
  if (d[0] === "4") return d.length === 13 || d.length === 16 || d.length === 19; // Visa
  if (p2 >= 51 && p2 <= 55) return d.length === 16; // Mastercard
  if (p4 >= 2221 && p4 <= 2720) return d.length === 16; // Mastercard 2-series
  if (p2 === 34 || p2 === 37) return d.length === 15; // Amex
  if (d.startsWith("6011") || d.startsWith("65") || (p4 >= 6440 && p4 <= 6499)) return d.length >= 16; // Discover
  if (p2 === 35) return d.length >= 16; // JCB
  if (p2 === 36 || p2 === 38 || p2 === 30) return d.length >= 14; // Diners
  if (p2 === 62) return d.length >= 16; // UnionPay
  // Maestro's and Solo's UK and Irish ranges ("6767 7042 1983 0558")
  if (p4 === 6304 || p4 === 6759 || p4 === 6761 || p4 === 6763 || p4 === 6767 || p4 === 6771) return d.length >= 16;
  return false;
}

/**
 * Twelve digits (Maestro's shortest numbers), alone or in three groups of four, right after a
 * word that says it is a card ("card", "cc", "Maestro", "kort", "Karte"...): without the word a
 * twelve-digit number is as often an order or account reference.
 */
const CARD_12 = new RegExp(String.raw`(?<![\d-])\d{4}(${GROUP_SEPARATOR}?)\d{4}\1\d{4}(?![\d]|-\d)`, "g");
// the word may open a compound ("Kortnummer", "kártyaszám", "Kartennr") and up to three short words
// may stand between it and the number ("card on file", "card ending in", "karta nr")
const CARD_CUE =
  /(?:(?:^|[^\p{L}])(?:card|cc|maestro|debit|kort|karte|karten|carte|tarjeta|cartão|carta|karta|kártya|kortti|карт[аыу]|卡号|visa|mastercard|amex|diners|discover|jcb|unionpay|verve|troy|rupay|elo|mir)|卡|银联|카드|カード)\p{L}{0,8}(?:[\s:#.-]{1,3}[\p{L}\p{N}]{1,8}){0,3}[\s:#.-]*$/iu;
/** Maestro's issuer ranges: 50, 56 to 69 */
const MAESTRO_PREFIX = /^(?:50|5[6-9]|6\d)/;

/** A word of CARD_CUE somewhere in the text: one native scan before the digits are looked at. */
const CARD_WORD =
  /card|cc|maestro|debit|kort|karte|carte|tarjeta|cartão|carta|karta|kártya|kortti|карт|卡|银联|카드|カード|visa|mastercard|amex|diners|discover|jcb|unionpay|verve|troy|rupay|elo|mir/i;

function findShortCards(text: string, out: PiiEntity[]): void {
  // (the stretches first: most texts hold no twelve digits in a row, and are then not scanned for a word;
  // nor is a text whose twelve digits are no Maestro number: the word is looked for once one is)
  let word: boolean | null = null;
  for (const m of inStretches(text, CARD_12, 12)) {
    const digits = m[0].replace(/\D/g, "");
    if (!MAESTRO_PREFIX.test(digits) || !luhnValid(digits)) continue;
    word ??= CARD_WORD.test(text);
    if (!word) return;
    if (!CARD_CUE.test(text.slice(Math.max(0, m.index - 32), m.index))) continue;
    out.push(entity("credit_card", text, m.index, m.index + m[0].length, 0.95));
  }
}

/**
 * Groups of four or more with a last group of one to three digits ("4222 2222 2222 2",
 * "6212874450193876 24"), or a first group of two or three before groups of four ("36 2276 4182 3916").
 */
function raggedTail(groups: number[]): "last" | "first" | null {
  if (groups.length < 2) return null;
  const last = groups.length - 1;
  if (groups.every((g, k) => (k === last ? g >= 1 && g <= 3 : g >= 4))) return "last";
  return groups.every((g, k) => (k === 0 ? g >= 2 && g <= 3 : g === 4)) ? "first" : null;
}

/** A card word (CARD_CUE) in the 32 characters before `at`. */
function cardCueBefore(text: string, at: number): boolean {
  return CARD_WORD.test(text) && CARD_CUE.test(text.slice(Math.max(0, at - 32), at));
}

/** The kinds of a card's separators that are no line break, as bits. */
const BLANKS = 1;
const DASH = 2;
const SLASH = 4;
const UNDERSCORE = 8;
const COMMA = 16;
const DOT = 32;

/** The kind of a separator by its punctuation mark (0: blanks alone). */
function separatorKind(mark: number): number {
  if (mark === 45) return DASH;
  if (mark === 47) return SLASH;
  if (mark === 95) return UNDERSCORE;
  if (mark === 44) return COMMA;
  if (mark === 46) return DOT;
  return BLANKS;
}

export function findCreditCards(text: string): PiiEntity[] {
  const out: PiiEntity[] = [];
  findShortCards(text, out);
  for (const m of inStretches(text, CARD, 13)) {
    // a column after the number in a table ("3530 1842 7765 9020\t08/27") is no part of it: the
    // number is tried once more without its last group
    let found = cardAt(text, m.index, m[0]);
    // (or a date after it: "6011 4482 2917 6305 / 07/30"; dropped group by group while 13 digits are left)
    for (let raw = m[0], k = 0; !found && k < 3; k++) {
      const cut = lastSeparator(raw);
      if (cut <= 0) break;
      raw = raw.slice(0, cut);
      if (raw.replace(/\D/g, "").length < 13) break;
      found = cardAt(text, m.index, raw);
    }
    if (found) out.push(found);
  }
  return out;
}

/** Where the last run of separators of `raw` starts (0 when there is none). */
function lastSeparator(raw: string): number {
  let k = raw.length;
  while (k > 0 && isDigitCode(raw.charCodeAt(k - 1))) k--;
  while (k > 0 && !isDigitCode(raw.charCodeAt(k - 1))) k--;
  return k;
}

const isDigitCode = (c: number): boolean => c >= 48 && c <= 57;

/** The card that `raw` at `start` is, or null (its groups, separators, Luhn and issuer judged). */
function cardAt(text: string, start: number, raw: string): PiiEntity | null {
  // the groups of digits and what separates them, each separator reduced to its kind: a line
  // break, or (a bit of `kinds`) its punctuation or blanks alone (what CARD reads through
  // between two digits: blanks, and a line break or one punctuation mark)
  const groups: number[] = [];
  let kinds = 0;
  let lineBreaks = 0;
  let group = 0;
  let inSeparator = false;
  let lineBreak = false;
  let mark = 0;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (inSeparator) {
        groups.push(group);
        if (lineBreak) lineBreaks++;
        else kinds |= separatorKind(mark);
        group = 0;
        inSeparator = false;
        lineBreak = false;
        mark = 0;
      }
      group++;
    } else {
      inSeparator = true;
      if (c === 10) lineBreak = true;
      else if (c !== 32 && c !== 9 && c !== 13) mark = c;
    }
  }
  groups.push(group);
  // mixed separators, or line breaks among other separators more than once: phone or reference numbers, not cards
  if ((kinds & (kinds - 1)) !== 0 || (lineBreaks > 1 && kinds !== 0)) return null;
  const digits = groups.length > 1 ? raw.replace(/\D/g, "") : raw;
  if (digits.length < 13 || !luhnValid(digits)) return null;
  // ragged groups are phone or reference numbers: a card's groups are of three digits or more, and
  // read through "/", "_" or ",", of four or more (a number's thousands are groups of three)
  // (a card written group per line too)
  // (the last group may be of three: "4195_9744_2632_6925_644", a 19-digit number's 4-4-4-4-3)
  const least = (kinds & (SLASH | UNDERSCORE | COMMA)) !== 0 || lineBreaks > 1 ? 4 : 3;
  const issuer = knownIssuer(digits);
  // a shorter last group only after groups of four, and of a known issuer or after a card word:
  // "4222 2222 2222 2" (Visa's 13), "3056 9309 0259 04" (Diners' 14), "Verve card 5061 0401 4418 2273 53"
  const ragged = groups.some((g, k) => g < (k === groups.length - 1 ? 3 : least));
  const tail = ragged ? raggedTail(groups) : null;
  // (a short first group only after a card word: a reference is written so too)
  // (or any grouping of a known issuer's number right after a card word: "card 4024 007 1193 87", a 13-digit Visa as typed)
  if (
    groups.length > 1 &&
    ragged &&
    !(tail && ((tail === "last" && issuer) || cardCueBefore(text, start))) &&
    !(issuer && cardCueBefore(text, start))
  )
    return null;
  // dots split thousands and versions as often as cards: only a known issuer's number, in groups
  if ((kinds & DOT) !== 0 && (!issuer || groups.length < 3)) return null;
  // no issuer's, after a word for an order or a shipment: that number ("주문번호 20251106-00231")
  if (!issuer && orderNumberBefore(text, start)) return null;
  return entity("credit_card", text, start, start + raw.length, issuer ? 0.97 : 0.75);
}

// (a form's dashes with a blank either side too: "449 - 31 - 2208", as typed into a box or read by a scanner;
// and "_" or "/" between the groups, as a record's field or an OCR'd form writes them: "512_38_4471", "512/38/4471")
const SSN = /(?<![\d.-])(\d{3})( - |[- ._/]?)(\d{2})\2(\d{4})(?![\d-]|\.\d)/g;
const SSN_CONTEXT = /\b(?:ssns?|s\.s\.n|ss#|social(?:\s+security)?|soc\.?\s*sec|tax\s*id|tin)\b/i;

/** Rules of issuance: area 000, 666 and 900-999, group 00 and serial 0000 are never assigned. */
export function ssnValid(area: string, group: string, serial: string): boolean {
  const a = Number(area);
  return a !== 0 && a !== 666 && a < 900 && group !== "00" && serial !== "0000";
}

/** An SSN spelled digit by digit: nine digits each apart by a blank, the groups perhaps by a dash (not inside a longer run). */
const SSN_SPELLED = /(?<![\d-]|\d )(\d (?:\d )\d)(?: ?- ?| )(\d \d)(?: ?- ?| )(\d(?: \d){3})(?![\d-]| \d)/g;

/** Whether a table's header names the column of `start` an SSN's ("ssn", "Social Security No", "tax_id"). */
function ssnColumn(text: string, start: number): boolean {
  const header = columnHeader(text, start);
  return header !== null && SSN_CONTEXT.test(header.replace(/_/g, " "));
}

/** An SSN's word spaced out by a scanner right before `start`, past blanks, ":" and "#" ("S S N : ", "S . S . N"). */
function spacedSsn(text: string, start: number): boolean {
  let k = start;
  while (
    k > 0 &&
    start - k < 4 &&
    (text.charCodeAt(k - 1) === 32 || text.charCodeAt(k - 1) === 58 || text.charCodeAt(k - 1) === 35)
  )
    k--;
  if (k === start || (text.charCodeAt(k - 1) | 32) !== 110) return false; // ends in "n"
  const word = spacedWord(text, k);
  return word !== null && (word === "ssn" || word.endsWith("ssn"));
}

/** Whether a group of digits stands before `start` or after `end` with `sep` between. */
function groupGoesOn(text: string, start: number, end: number, sep: string): boolean {
  return (
    (text[start - 1] === sep && isDigitCode(text.charCodeAt(start - 2))) ||
    (text[end] === sep && isDigitCode(text.charCodeAt(end + 1)))
  );
}

export function findSsns(text: string): PiiEntity[] {
  const out: PiiEntity[] = [];
  for (const m of inStretches(text, SSN_SPELLED, 9)) {
    const [area, group, serial] = [m[1], m[2], m[3]].map((g) => g.replace(/ /g, ""));
    if (!ssnValid(area, group, serial)) continue;
    const context = SSN_CONTEXT.test(text.slice(Math.max(0, m.index - 40), m.index));
    out.push(entity("ssn", text, m.index, m.index + m[0].length, context ? 0.97 : 0.85));
  }
  for (const m of inStretches(text, SSN, 9)) {
    if (!ssnValid(m[1], m[3], m[4])) continue;
    // (or the column of a table whose header says so, however many rows above: "name,ssn\n…\nEva Fors,345678912")
    // (or a scanner's spaced-out word: "S S N : 512384471")
    const context =
      SSN_CONTEXT.test(text.slice(Math.max(0, m.index - 40), m.index)) || ssnColumn(text, m.index) || spacedSsn(text, m.index);
    // a bare nine-digit run is an SSN only when the text says so
    if (m[2] === "" && !context) continue;
    // (dots, "601.34.2297", are how some forms write it, and how versions and amounts are written too)
    // (and so are blanks around the dashes: "pages 120 - 45 - 2000")
    if ((m[2] === "." || m[2] === " - ") && !context) continue;
    // ("_" and "/" not inside a longer run of groups: "2026/512/38/4471", "512_38_4471_2"; "scan_512_38_4471.pdf" is one)
    if ((m[2] === "_" || m[2] === "/") && groupGoesOn(text, m.index, m.index + m[0].length, m[2])) continue;
    // (and without an SSN word, not after a word for an order or a shipment: "ZAMÓWIENIE NR 024/11/0871")
    if ((m[2] === "_" || m[2] === "/") && !context && orderNumberBefore(text, m.index)) continue;
    const score = context ? 0.97 : m[2] === "-" ? 0.9 : 0.7;
    out.push(entity("ssn", text, m.index, m.index + m[0].length, score));
  }
  return out;
}

const OCTET = "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)";
// (an octet zero-padded to three digits too, as logs and Windows tools print them: "192.168.001.010"; see paddedOk)
const IPV4_OCTET = "(?:25[0-5]|2[0-4]\\d|1\\d\\d|0\\d\\d|[1-9]?\\d)";
const IPV4 = new RegExp(`(?<![\\d.])${IPV4_OCTET}(?:\\.${IPV4_OCTET}){3}(?:/\\d{1,2})?(?![\\d]|\\.\\d)`, "g");
// candidates for IPv6: hex groups and colons, optionally ending in an embedded IPv4, with a zone;
// after a label such as "ip:" (a letter that is no hex digit, then a colon) too; and a port written after it
// without brackets, as some servers log it ("2001:db8::1a2f:51920", "…:7334:8080": a ninth group, or one of five digits)
const IPV6 =
  /(?:(?<![\p{L}\p{N}:])|(?<=[g-zG-Z]:))(?:[0-9A-Fa-f]{0,4}:){2,8}(?:(?:\d{1,3}\.){3}\d{1,3}|[0-9A-Fa-f]{1,4}|\d{5})?(?:%[\p{L}\p{N}]+)?(?![\p{L}\p{N}:]|\.\d)/gu;
/** a port after an address: a colon and one to five digits at the end */
const PORT_AFTER = /:\d{1,5}$/;

/** a word for a version right before a number, nothing but blanks or a colon between ("v1.2.3.4", "firmware: 2.4.10.3") */
const VERSION_BEFORE =
  /(?:^|[^\p{L}])(?:version|versión|versione|versão|ver\.?|v|firmware|build|release|rev|revision)[ \t]{0,2}:?[ \t]{0,2}$/iu;

/** what stands between a version and the next one: " to ", " -> ", " → " */
const VERSION_STEP = /^[ \t]*(?:to|->|→|=>)[ \t]*$/;
/** a word for a version or a change of one earlier in the line, no digit between, then "from" ("Firmware updated from ") */
const VERSION_LINE =
  /(?:^|[^\p{L}])(?:version|versions|firmware|fw|build|release|rev|revision|updated?|upgraded?|downgraded?|bumped?|patched?)(?:[^\p{L}\d\n][^\d\n]{0,30})?[ \t](?:from[ \t]+)?$/iu;

/** Whether IPv4-shaped `a` and `b` are one version and the next ("from 2.4.10.3 to 2.4.11.0", "v-word … 1.2.3.4 -> 1.2.3.5"). */
function versionPair(text: string, a: RegExpExecArray, b: RegExpExecArray): boolean {
  const end = a.index + a[0].length;
  if (b.index - end > 6 || !VERSION_STEP.test(text.slice(end, b.index))) return false;
  // (a version's numbers are small: a private network's or a loopback address, or an octet of 100 or more, is an address's)
  if (!versionLike(a[0]) || !versionLike(b[0])) return false;
  return VERSION_LINE.test(text.slice(Math.max(0, a.index - 48), a.index));
}

/** four numbers under 100, the first not 10 or 127 */
const versionLike = (s: string): boolean => /^(?!10\.|127\.)\d{1,2}\.\d{1,2}\.\d{1,2}\.\d{1,2}$/.test(s);

/** IPV4 tried at one position only */
const IPV4_AT = new RegExp(IPV4.source, "y");

/**
 * The matches of IPV4 in `text`, as matchAll gives them, IPV4 tried only where one can start: a
 * match starts a run of one to three digits (no digit or "." before it: the lookbehind) that a "."
 * ends, so each "." after a digit names the one place to try (a scan of the text's dots instead of
 * the pattern's scan of every character, about 1 µs a KB).
 */
function ipv4Matches(text: string): RegExpExecArray[] {
  const out: RegExpExecArray[] = [];
  let end = 0;
  for (let dot = text.indexOf(".", 1); dot >= 0; dot = text.indexOf(".", dot + 1)) {
    let start = dot;
    while (start > 0 && dot - start < 4 && isDigitCode(text.charCodeAt(start - 1))) start--;
    if (start === dot || dot - start > 3 || start < end || !isDigitCode(text.charCodeAt(dot + 1))) continue;
    IPV4_AT.lastIndex = start;
    const m = IPV4_AT.exec(text);
    if (m === null) continue;
    end = start + m[0].length;
    out.push(m);
  }
  return out;
}

/**
 * Whether an IPv4 match is written evenly: an octet zero-padded ("001") only in an address whose four
 * octets are all of three digits ("010.001.002.003", a log's fixed width), not "1.02.3.004" (a version or a list).
 */
function paddedOk(address: string): boolean {
  // (a padded octet is "0" and a digit at the start or after a "."; most addresses have none)
  let padded = address.charCodeAt(0) === 48 && isDigitCode(address.charCodeAt(1));
  for (let k = address.indexOf(".0"); !padded && k >= 0; k = address.indexOf(".0", k + 1))
    padded = isDigitCode(address.charCodeAt(k + 2));
  return !padded || PADDED_IPV4.test(address);
}
/** four octets of three digits each (a prefix length after them perhaps) */
const PADDED_IPV4 = /^\d{3}\.\d{3}\.\d{3}\.\d{3}(?:\/\d{1,2})?$/;

/** an IPv4 address and nothing else (the tail of an IPv6 address that embeds one) */
const IPV4_WHOLE = new RegExp(`^${OCTET}(?:\\.${OCTET}){3}$`);

export function ipv6Valid(candidate: string): boolean {
  const zone = candidate.indexOf("%");
  let s = zone < 0 ? candidate : candidate.slice(0, zone);
  const v4 = s.match(/(\d{1,3}(?:\.\d{1,3}){3})$/);
  if (v4) {
    if (!IPV4_WHOLE.test(v4[1])) return false;
    // an embedded IPv4 stands for the last two 16-bit groups
    s = `${s.slice(0, -v4[1].length)}0:0`;
  }
  const halves = s.split("::");
  if (halves.length > 2) return false;
  const parse = (part: string): string[] | null => {
    if (part === "") return [];
    const groups = part.split(":");
    return groups.every((g) => /^[0-9A-Fa-f]{1,4}$/.test(g)) ? groups : null;
  };
  const left = parse(halves[0]);
  const right = halves.length === 2 ? parse(halves[1]) : [];
  if (!left || !right) return false;
  const count = left.length + right.length;
  return halves.length === 2 ? count <= 7 : count === 8;
}

export function findIpAddresses(text: string): PiiEntity[] {
  const out: PiiEntity[] = [];
  // (a subnet mask, "255.255.255.0", is no host's address; nor is a version right after its word: "Version 1.2.3.4")
  const v4 = ipv4Matches(text);
  for (let k = 0; k < v4.length; k++) {
    const m = v4[k] as RegExpExecArray;
    if (m[0].startsWith("255.") || !paddedOk(m[0]) || VERSION_BEFORE.test(text.slice(Math.max(0, m.index - 12), m.index)))
      continue;
    // (nor two versions, one to the other, after a word for one: "Firmware updated from 2.4.10.3 to 2.4.11.0")
    if (k + 1 < v4.length && versionPair(text, m, v4[k + 1] as RegExpExecArray)) {
      k++;
      continue;
    }
    out.push(entity("ip_address", text, m.index, m.index + m[0].length, 0.95));
  }
  // an IPv6 address has "::" or eight groups (seven colons)
  if (!text.includes("::") && !hasColons(text, 7)) return out;
  for (const m of text.matchAll(IPV6)) {
    let address = m[0];
    // no address as written: the address before a port ("2001:db8:3c4d:15::1a2f:1a2b:51920")
    if (!ipv6Valid(address) && !address.includes("%") && PORT_AFTER.test(address)) address = address.replace(PORT_AFTER, "");
    if (!address.includes("::") && address.split(":").length < 8) continue;
    if (ipv6Valid(address)) out.push(entity("ip_address", text, m.index, m.index + address.length, 0.95));
  }
  return out;
}

function hasColons(text: string, count: number): boolean {
  let at = -1;
  for (let seen = 0; seen < count; seen++) {
    at = text.indexOf(":", at + 1);
    if (at < 0) return false;
  }
  return true;
}
