import { tickCpuBudget } from "../budget";
import { keyedHash } from "./keyed-hash";
import type { PiiEntity, PiiType } from "./types";

export type RedactionStyle = "placeholder" | "mask" | "hash";

const LABELS: Record<PiiType, string> = {
  name: "[NAME]",
  email: "[EMAIL]",
  phone_number: "[PHONE_NUMBER]",
  ssn: "[SSN]",
  credit_card: "[CREDIT_CARD]",
  ip_address: "[IP_ADDRESS]",
  date_of_birth: "[DATE_OF_BIRTH]",
  address: "[ADDRESS]",
};

/**
 * What replaces one entity: its category label, one asterisk per character, or (style hash) the
 * HMAC-SHA-256 hex of its text under `hashKey`, the account's key (keyed-hash.ts).
 */
export function replacement(e: PiiEntity, style: RedactionStyle, hashKey?: string): string {
  if (style === "placeholder") return LABELS[e.type];
  if (style === "mask") return "*".repeat([...e.text].length);
  // never fall back to a plain hash: that is what made the tokens reversible
  if (!hashKey) throw new Error("hash redaction needs the account's key");
  return keyedHash(hashKey, e.text);
}

/** Applies replacements to non-overlapping entities sorted by start. */
export function applyRedactions(text: string, entities: PiiEntity[], style: RedactionStyle, hashKey?: string): string {
  let out = "";
  let at = 0;
  for (const e of entities) {
    tickCpuBudget();
    out += text.slice(at, e.start) + replacement(e, style, hashKey);
    at = e.end;
  }
  return out + text.slice(at);
}
