/**
 * Language identification for the offline engine: ELD (Nito-ELD, n-gram profiles shipped in the
 * `eld` npm package, 60 languages) behind a small policy that says "und" rather than guess on
 * text too short or too ambiguous to call.
 */
import type { eld as Eld } from "eld/medium";
import { lazyEngine } from "./engines";
import { round3 } from "./text";

// About 55 MB and 0.15 to 0.3 s to load: on the first detection, not at start-up. `eld/medium` only
// declares an `import` condition, so the synchronous require names the file itself.
const detector = lazyEngine(
  "language",
  () => (require("../../node_modules/eld/src/entries/static.medium.js") as { eld: typeof Eld }).eld,
);

export interface DetectedLanguage {
  /** ISO 639-1 code, or "und" when the text gives no reliable answer */
  code: string;
  /** English name of the language ("Undetermined" for "und") */
  name: string;
  /** 0..1 */
  confidence: number;
}

const UNDETERMINED: DetectedLanguage = { code: "und", name: "Undetermined", confidence: 0 };
const DISPLAY_NAMES = new Intl.DisplayNames(["en"], { type: "language" });
const LETTER = /\p{L}/gu;
// Detection cost grows with length and the first few KB decide the language anyway.
const MAX_CHARS = 2000;

export function languageName(code: string): string {
  if (code === "und") return UNDETERMINED.name;
  return DISPLAY_NAMES.of(code) ?? code;
}

export function detectLanguage(text: string): DetectedLanguage {
  const sample = text.length > MAX_CHARS ? text.slice(0, MAX_CHARS) : text;
  const letters = sample.match(LETTER)?.length ?? 0;
  if (letters === 0) return UNDETERMINED;
  const result = detector().detect(sample);
  if (!result.language) return UNDETERMINED;
  const ranked = Object.values(result.getScores()).sort((a, b) => b - a);
  const top = ranked[0] ?? 0;
  const margin = top - (ranked[1] ?? 0);
  const reliable = result.isReliable();
  // ELD calls many one-word inputs unreliable; accept those only with a clear lead.
  if (!reliable && (letters < 12 || margin < 0.15)) return UNDETERMINED;
  const confidence = clamp01(top * (0.6 + Math.min(margin, 0.4))) * (reliable ? 1 : 0.7);
  return { code: result.language, name: languageName(result.language), confidence: round3(confidence) };
}

function clamp01(x: number): number {
  return Math.min(1, Math.max(0, x));
}
