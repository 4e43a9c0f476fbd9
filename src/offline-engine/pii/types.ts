export type PiiType = "name" | "email" | "phone_number" | "ssn" | "credit_card" | "ip_address" | "date_of_birth" | "address";

export const PII_TYPES: readonly PiiType[] = [
  "name",
  "email",
  "phone_number",
  "ssn",
  "credit_card",
  "ip_address",
  "date_of_birth",
  "address",
];

/**
 * One detected span. `start`/`end` are JavaScript string indices (UTF-16 code units, end
 * exclusive), so `text.slice(start, end) === entity.text` holds for any input, emoji included.
 */
export interface PiiEntity {
  type: PiiType;
  start: number;
  end: number;
  text: string;
  /** 0..1: how sure the recognizer is */
  score: number;
}

/** A recognizer finds candidate spans of one or more types; overlaps are resolved afterwards. */
export type Recognizer = (text: string) => PiiEntity[];

export function entity(type: PiiType, text: string, start: number, end: number, score: number): PiiEntity {
  return { type, start, end, text: text.slice(start, end), score: Math.round(score * 1000) / 1000 };
}
