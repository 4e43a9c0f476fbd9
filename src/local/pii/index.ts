/**
 * PII detection and redaction of the offline engine. Offsets are JavaScript string indices
 * (UTF-16 code units, end exclusive): `text.slice(e.start, e.end) === e.text` always holds.
 */

import { checkCpuBudget } from "../budget";
import { findAddresses } from "./address";
import { extended, findWorldAddresses } from "./address-world";
import { findDatesOfBirth } from "./dates";
import { findNames } from "./names";
import { findCasedNames } from "./names-cased";
import { findPhoneNumbers } from "./phone";
import { applyRedactions, type RedactionStyle } from "./redact";
import { resolveOverlaps } from "./resolve";
import { findCreditCards, findEmails, findIpAddresses, findSsns } from "./structured";
import type { PiiEntity, PiiType, Recognizer } from "./types";

export { accountHashKey, PII_HASH_SECRET } from "./keyed-hash";
export { applyRedactions, type RedactionStyle } from "./redact";
export { PII_TYPES, type PiiEntity, type PiiType } from "./types";

/** Which entity types each recognizer can produce, so a `types` filter skips the others. */
const RECOGNIZERS: { types: PiiType[]; find: Recognizer }[] = [
  { types: ["email"], find: findEmails },
  { types: ["credit_card"], find: findCreditCards },
  { types: ["ssn"], find: findSsns },
  { types: ["ip_address"], find: findIpAddresses },
  { types: ["phone_number"], find: findPhoneNumbers },
  { types: ["date_of_birth"], find: findDatesOfBirth },
  // the English and Romance patterns' streets take in the unit, postcode, town and country lines that follow
  { types: ["address"], find: (text) => findAddresses(text).map((e) => extended(text, e.start, e.end, e.score)) },
  { types: ["address"], find: findWorldAddresses },
  { types: ["name"], find: findNames },
  { types: ["name"], find: findCasedNames },
];

/**
 * Every PII entity in `text`, non-overlapping, sorted by start. With `types`, only those kinds
 * are reported, but all kinds still compete for a span: a card number is never reported as a
 * phone number because phone numbers alone were asked for.
 */
export function detectPii(text: string, opts: { types?: PiiType[] } = {}): PiiEntity[] {
  const candidates: PiiEntity[] = [];
  for (const r of RECOGNIZERS) {
    checkCpuBudget();
    candidates.push(...r.find(text));
  }
  checkCpuBudget();
  const resolved = resolveOverlaps(candidates);
  const wanted = opts.types;
  return wanted && wanted.length > 0 ? resolved.filter((e) => wanted.includes(e.type)) : resolved;
}

export function redactPii(
  text: string,
  opts: { types?: PiiType[]; style?: RedactionStyle; hashKey?: string } = {},
): { redacted_text: string; entities: PiiEntity[] } {
  const entities = detectPii(text, { types: opts.types });
  return { redacted_text: applyRedactions(text, entities, opts.style ?? "placeholder", opts.hashKey), entities };
}
