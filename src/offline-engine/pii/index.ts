/**
 * PII detection and redaction of the offline engine. Offsets are JavaScript string indices
 * (UTF-16 code units, end exclusive): `text.slice(e.start, e.end) === e.text` always holds.
 */

import { checkCpuBudget, tickCpuBudget } from "../budget";
import { findAddresses } from "./address";
import { findAddressBlocks } from "./address-block";
import { findAddressChains } from "./address-chain";
import { findAddressFields } from "./address-field";
import { findScriptAddresses } from "./address-script";
import { extended, findWorldAddresses } from "./address-world";
import { forgetNonAscii } from "./chars";
import { findDatesOfBirth } from "./dates";
import { endBeforeInvisible, fold } from "./fold";
import { forgetText, ocrPair } from "./keywords";
import { findNames } from "./names";
import { findCasedNames } from "./names-cased";
import { cardScheme, falseName, findMoreNames, forgetFalseNames, trimName } from "./names-extra";
import { joinNames } from "./names-join";
import { findScriptNames } from "./names-script";
import { slotNames } from "./names-slot";
import { coverNameRepeats, findThreadNames } from "./names-thread";
import { findPhoneNumbers } from "./phone";
import { applyRedactions, type RedactionStyle } from "./redact";
import { resolveOverlaps } from "./resolve";
import { findSpelledNumbers } from "./spelled";
import { findCreditCards, findEmails, findIpAddresses, findSsns } from "./structured";
import type { PiiEntity, PiiType, Recognizer } from "./types";

export { accountHashKey, PII_HASH_SECRET } from "./keyed-hash";
export { applyRedactions, type RedactionStyle } from "./redact";
export { PII_TYPES, type PiiEntity, type PiiType } from "./types";

/**
 * Which entity types each recognizer can produce, so a `types` filter skips the others.
 * `digits`: the ASCII digits a text needs for the recognizer to find anything (a card is 12 to 19
 * of them, an SSN nine, a phone number's score needs seven); a text with fewer is not scanned.
 * `checked`: its names are checked against falseName already.
 * `ocr`: it reads the numbers' view too, where letters a scanner mistakes for digits are digits (ocrDigits).
 */
const RECOGNIZERS: { types: PiiType[]; find: Recognizer; digits?: number; checked?: boolean; ocr?: boolean }[] = [
  { types: ["email"], find: findEmails },
  { types: ["credit_card"], find: findCreditCards, digits: 12, ocr: true },
  { types: ["ssn"], find: findSsns, digits: 9, ocr: true },
  { types: ["ip_address"], find: findIpAddresses },
  { types: ["phone_number"], find: findPhoneNumbers, digits: 7, ocr: true },
  // digits one by one or said as words ("six one seven, five five five, …"): spelled.ts
  { types: ["credit_card", "ssn", "phone_number"], find: findSpelledNumbers },
  // (every date pattern needs four digits or more: a day, a month and a year, or a year)
  { types: ["date_of_birth"], find: findDatesOfBirth, digits: 4 },
  // the English and Romance patterns' streets take in the unit, postcode, town and country lines that follow
  { types: ["address"], find: (text) => findAddresses(text).map((e) => extended(text, e.start, e.end, e.score)) },
  { types: ["address"], find: findWorldAddresses },
  { types: ["address"], find: findAddressBlocks },
  { types: ["address"], find: findAddressChains },
  { types: ["address"], find: findAddressFields },
  { types: ["address"], find: findScriptAddresses },
  { types: ["name"], find: findNames },
  { types: ["name"], find: findCasedNames },
  { types: ["name"], find: findMoreNames, checked: true },
  { types: ["name"], find: findScriptNames, checked: true },
  // writers, speakers, agents, attendees and signers of mails, chats, tickets and minutes (names-thread.ts)
  { types: ["name"], find: findThreadNames, checked: true },
];

/**
 * Every PII entity in `text`, non-overlapping, sorted by start. With `types`, only those kinds
 * are reported, but all kinds still compete for a span: a card number is never reported as a
 * phone number because phone numbers alone were asked for.
 */
export function detectPii(text: string, opts: { types?: PiiType[] } = {}): PiiEntity[] {
  // the recognizers read the text folded (fold.ts); spans are mapped back onto the text as written
  const folded = fold(text);
  if (folded === null) return detectRead(text, opts.types);
  const { at } = folded;
  return detectRead(folded.view, opts.types).map((e) => {
    const start = at[e.start] as number;
    const end = endBeforeInvisible(text, start, at[e.end] as number);
    return { ...e, start, end, text: text.slice(start, end) };
  });
}

/** detectPii on the text as the recognizers read it. */
function detectRead(text: string, wanted: PiiType[] | undefined): PiiEntity[] {
  const candidates: PiiEntity[] = [];
  const digits = asciiDigits(text, 13);
  try {
    // (inside: the keyword pass it asks is forgotten below)
    const ocr = ocrDigits(text);
    for (const r of RECOGNIZERS) {
      checkCpuBudget();
      if (r.ocr && ocr !== text)
        for (const found of r.find(ocr)) candidates.push({ ...found, text: text.slice(found.start, found.end) });
      if (r.digits !== undefined && digits < r.digits) continue;
      // a name before a street, square or organisation word is none (names-extra.ts; its own finds are checked already)
      for (const found of r.find(text)) {
        if (found.type !== "name") {
          candidates.push(found);
          continue;
        }
        // a greeting before a name or an honorific after it is no part of it ("Chào Linh", "Elif Hanım")
        const e = trimName(text, found);
        // (nor is a card scheme's name beside a card: "Troy kart 9792 …", names-extra.ts)
        if (e && (r.checked || !falseName(text, e.start, e.end)) && !cardScheme(text, e.start, e.end)) candidates.push(e);
      }
    }
  } finally {
    forgetText();
    forgetNonAscii();
    forgetFalseNames();
  }
  checkCpuBudget();
  // names found in parts, or one part only, joined: a nickname, a surname first, "… and …" (names-join.ts),
  // and the names of labelled fields whose lists know one part only (names-slot.ts)
  // and the later mentions of a name found whole (names-thread.ts)
  // (each stage a step of its own under the CPU budget: on a long text each is tens of ms, and the
  // budget is only as fine as its longest step, test/core/loop-probe.test.ts)
  const stages: ((found: PiiEntity[]) => PiiEntity[])[] = [
    resolveOverlaps,
    (found) => joinNames(text, found),
    (found) => slotNames(text, found),
    (found) => coverNameRepeats(text, found),
    (found) => coverRepeats(text, found),
  ];
  let resolved = candidates;
  for (const stage of stages) {
    resolved = stage(resolved);
    checkCpuBudget();
  }
  return wanted && wanted.length > 0 ? resolved.filter((e) => wanted.includes(e.type)) : resolved;
}

const isOcrChar = (c: number): boolean => (c >= 48 && c <= 57) || c === 79 || c === 111 || c === 73 || c === 108;
const isLetterCode = (c: number): boolean =>
  (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 0xc0 && c !== 0xd7 && c !== 0xf7);

/**
 * The text with "O"/"o" read as 0 and "I"/"l" as 1 inside runs of digits and those letters that no
 * other letter touches ("Tel: O1451 8 2O 347", "+7 9I7 266", "CARD NO 4268 O731 …"), as a scanned
 * or hand-typed number is read: same length, so the spans found in it hold for the text. The text
 * itself when there is no such run.
 */
function ocrDigits(text: string): string {
  // (a digit beside such a letter: the keyword pass notes it, so most texts are not read again here)
  if (!ocrPair(text)) return text;
  let out: string[] | null = null;
  for (let i = 0; i < text.length; ) {
    if (!isOcrChar(text.charCodeAt(i))) {
      i++;
      continue;
    }
    const from = i;
    let digits = 0;
    let letters = 0;
    for (; i < text.length && isOcrChar(text.charCodeAt(i)); i++) {
      const c = text.charCodeAt(i);
      if (c >= 48 && c <= 57) digits++;
      else letters++;
    }
    if (digits === 0 || letters === 0 || i - from < 2) continue;
    if ((from > 0 && isLetterCode(text.charCodeAt(from - 1))) || (i < text.length && isLetterCode(text.charCodeAt(i)))) continue;
    out ??= [...text];
    for (let k = from; k < i; k++) {
      const c = text.charCodeAt(k);
      if (c === 79 || c === 111) out[k] = "0";
      else if (c === 73 || c === 108) out[k] = "1";
    }
  }
  return out ? out.join("") : text;
}

/** How many of 0-9 `text` holds, counted up to `enough`. */
function asciiDigits(text: string, enough: number): number {
  let n = 0;
  for (let i = 0; i < text.length && n < enough; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) n++;
  }
  return n;
}

/** Up to this many distinct values, each is looked for with indexOf. */
const FEW_VALUES = 16;
/** coverRepeats' first characters of the values looked for (cleared after each call) */
const FIRST_CHARS = new Uint8Array(0x10000);

/** Kinds whose values are never left in a redacted text, wherever else they occur. */
const STRUCTURED: ReadonlySet<PiiType> = new Set<PiiType>(["email", "ssn", "credit_card", "ip_address", "phone_number"]);

/**
 * Every other occurrence of a structured value that was found, whatever surrounds it: "card
 * 4111 1111 1111 1111" is found, and the same digits glued to a word elsewhere ("ref4111 1111
 * 1111 1111") must not survive redaction. An occurrence that overlaps an entity is left to it.
 */
function coverRepeats(text: string, entities: PiiEntity[]): PiiEntity[] {
  const values: PiiEntity[] = [];
  // distinct texts: compared one by one while they are few, by a set once they are many
  let seen: Set<string> | null = null;
  for (const e of entities) {
    if (!STRUCTURED.has(e.type) || e.text.length < 4) continue;
    if (seen ? seen.has(e.text) : values.some((v) => v.text === e.text)) continue;
    values.push(e);
    if (seen) seen.add(e.text);
    else if (values.length > FEW_VALUES) seen = new Set(values.map((v) => v.text));
  }
  if (values.length === 0) return entities;
  const added: PiiEntity[] = [];
  if (values.length <= FEW_VALUES) {
    // a few values (the usual prompt): indexOf per value, each a fast scan of the text
    for (const e of values) {
      for (let at = text.indexOf(e.text); at >= 0; at = text.indexOf(e.text, at + 1)) {
        tickCpuBudget();
        if (!startsAt(entities, at)) added.push({ ...e, start: at, end: at + e.text.length });
      }
    }
    // in text order, as the scan below finds them
    if (values.length > 1) added.sort((a, b) => a.start - b.start);
  } else {
    // many values: by their first two characters, one pass over the text finds every occurrence
    // of all of them (an indexOf per value would cost the text's length once per value)
    // (FIRST_CHARS marks the values' first characters: most positions are passed over without a lookup)
    const byPrefix = new Map<number, PiiEntity[]>();
    for (const e of values) {
      const key = e.text.charCodeAt(0) * 65536 + e.text.charCodeAt(1);
      FIRST_CHARS[e.text.charCodeAt(0)] = 1;
      const list = byPrefix.get(key);
      if (list) list.push(e);
      else byPrefix.set(key, [e]);
    }
    try {
      for (let at = 0; at + 4 <= text.length; at++) {
        const first = text.charCodeAt(at);
        if (FIRST_CHARS[first] === 0) continue;
        const candidates = byPrefix.get(first * 65536 + text.charCodeAt(at + 1));
        if (!candidates) continue;
        tickCpuBudget();
        if (startsAt(entities, at)) continue;
        for (const e of candidates) if (text.startsWith(e.text, at)) added.push({ ...e, start: at, end: at + e.text.length });
      }
    } finally {
      for (const e of values) FIRST_CHARS[e.text.charCodeAt(0)] = 0;
    }
  }
  if (added.length === 0) return entities;
  // the repeats compete like any candidate: one that overlaps an entity already kept loses to it
  return resolveOverlaps([...entities.map((e) => ({ ...e, score: e.score + 1 })), ...added]).map((e) =>
    e.score > 1 ? { ...e, score: Math.round((e.score - 1) * 1000) / 1000 } : e,
  );
}

/** Whether an entity of `entities` (in text order, as resolveOverlaps keeps them) starts at `at`: binary search. */
function startsAt(entities: PiiEntity[], at: number): boolean {
  let lo = 0;
  let hi = entities.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (entities[mid].start < at) lo = mid + 1;
    else hi = mid;
  }
  return lo < entities.length && entities[lo].start === at;
}

export function redactPii(
  text: string,
  opts: { types?: PiiType[]; style?: RedactionStyle; hashKey?: string } = {},
): { redacted_text: string; entities: PiiEntity[] } {
  const entities = detectPii(text, { types: opts.types });
  return { redacted_text: applyRedactions(text, entities, opts.style ?? "placeholder", opts.hashKey), entities };
}
