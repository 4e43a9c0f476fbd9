/**
 * Language identification for the offline engine: ELD (Nito-ELD, n-gram profiles shipped in the
 * `eld` npm package, 60 languages) behind a small policy that says "und" rather than guess on
 * text too short or too ambiguous to call.
 */
import { readFileSync } from "node:fs";
import type { eld as Eld } from "eld/medium";
import NGRAMS_FILE from "../../node_modules/eld/src/ngrams/medium.js" with { type: "file" };
import { slicedEngine } from "./engines";
import { round3 } from "./text";

type Detector = typeof Eld;

/**
 * About 55 MB and 0.15 to 1 s to load: warmed in slices after the listener is up (engines.ts).
 * `require` of the package's `eld/medium` entry parses its 2 MB table of n-grams as one JavaScript
 * module, in one piece that no slice can split, so the table is read here from the package's own
 * file instead, a few thousand entries per step, and handed to the package's detector as its
 * entry would. The file is an object literal of n-gram keys in single quotes (`\'` the only
 * escape) to `{language index: score, ...}`; test/local/language.test.ts checks that this reads
 * the same table as the package's module.
 */
export function* readNgrams(
  text: string,
): Generator<void, { type: string; languages: Record<number, string>; ngrams: Record<string, Record<number, number>> }, void> {
  const at = text.indexOf("ngrams:{");
  if (at < 0) throw new Error("eld: no n-gram table in its data file");
  const head = text.slice(0, at);
  const type = /type:'([^']*)'/.exec(head)?.[1] ?? "";
  const languages: Record<number, string> = {};
  const list = head.slice(head.indexOf("languages:{") + "languages:{".length);
  for (const entry of list.slice(0, list.indexOf("}")).split(",")) {
    const [index, code] = entry.split(":");
    if (index && code) languages[Number(index)] = code.replaceAll("'", "");
  }
  const ngrams: Record<string, Record<number, number>> = {};
  let i = at + "ngrams:{".length;
  for (let n = 0; text.charCodeAt(i) !== 0x7d; n++) {
    if ((n & 255) === 255) yield;
    let key = "";
    if (text.charCodeAt(i) !== 0x27) {
      // a key that is an identifier is written without quotes: L_QL:{0:148}
      const colon = text.indexOf(":", i);
      if (colon < 0) throw new Error("eld: an n-gram key without a value");
      key = text.slice(i, colon);
      i = colon - 1;
    } else {
      // 'key'
      let from = ++i;
      for (;;) {
        const c = text.charCodeAt(i);
        if (c === 0x5c) {
          key += text.slice(from, i);
          from = i + 1;
          i += 2;
        } else if (c === 0x27) break;
        else if (Number.isNaN(c)) throw new Error("eld: unterminated n-gram key");
        else i++;
      }
      key += text.slice(from, i);
    }
    // :{a:b,c:d}
    i += 3;
    const scores: Record<number, number> = {};
    while (text.charCodeAt(i) !== 0x7d) {
      const colon = text.indexOf(":", i);
      let end = colon + 1;
      while (text.charCodeAt(end) >= 0x30 && text.charCodeAt(end) <= 0x39) end++;
      scores[Number(text.slice(i, colon))] = Number(text.slice(colon + 1, end));
      i = text.charCodeAt(end) === 0x2c ? end + 1 : end;
    }
    ngrams[key] = scores;
    // },
    i++;
    if (text.charCodeAt(i) === 0x2c) i++;
  }
  return { type, languages, ngrams };
}

const detector = slicedEngine("language", function* (): Generator<void, Detector, void> {
  const data = yield* readNgrams(readFileSync(NGRAMS_FILE, "utf8"));
  const { createEld } = require("../../node_modules/eld/src/languageDetector.js") as {
    createEld(): { instance: Detector; loadData(d: unknown): string };
  };
  const { instance, loadData } = createEld();
  loadData(data);
  return instance;
});

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
