import { createHash } from "node:crypto";
import { tickCpuBudget } from "../budget";
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

/** What replaces one entity: its category label, one asterisk per character, or its SHA-256 hex. */
export function replacement(e: PiiEntity, style: RedactionStyle): string {
  if (style === "placeholder") return LABELS[e.type];
  if (style === "mask") return "*".repeat([...e.text].length);
  return createHash("sha256").update(e.text).digest("hex");
}

/** Applies replacements to non-overlapping entities sorted by start. */
export function applyRedactions(text: string, entities: PiiEntity[], style: RedactionStyle): string {
  let out = "";
  let at = 0;
  for (const e of entities) {
    tickCpuBudget();
    out += text.slice(at, e.start) + replacement(e, style);
    at = e.end;
  }
  return out + text.slice(at);
}
