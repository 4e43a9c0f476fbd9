import { describe, expect, test } from "bun:test";
import { detectLanguage } from "../../src/offline-engine/language";
import { evaluateLanguage, loadLanguageFixture } from "../eval/evaluators/language";
import { medianMs, ONE_KB_TEXT } from "./speed";

describe("detectLanguage", () => {
  test("names the language of everyday sentences with an ISO 639-1 code and English name", () => {
    const cases: [string, string, string][] = [
      ["Where is the nearest train station, please?", "en", "English"],
      ["¿Dónde está la estación de tren más cercana?", "es", "Spanish"],
      ["Wo ist der nächste Bahnhof, bitte?", "de", "German"],
      ["Où se trouve la gare la plus proche ?", "fr", "French"],
      ["Где находится ближайший вокзал?", "ru", "Russian"],
      ["最寄りの駅はどこですか？", "ja", "Japanese"],
      ["가장 가까운 기차역이 어디에 있나요?", "ko", "Korean"],
      ["最近的火车站在哪里？", "zh", "Chinese"],
    ];
    for (const [text, code, name] of cases) {
      const r = detectLanguage(text);
      expect({ text, code: r.code, name: r.name }).toEqual({ text, code, name });
      expect(r.confidence).toBeGreaterThan(0);
      expect(r.confidence).toBeLessThanOrEqual(1);
    }
  });

  test("says und when the text gives no evidence", () => {
    for (const text of ["", "   ", "12345 67", "ok", "👍👍"])
      expect(detectLanguage(text)).toEqual({ code: "und", name: "Undetermined", confidence: 0 });
  });
});

test("accuracy on single sentences in 20 of the most spoken languages is at least 0.95", () => {
  const items = loadLanguageFixture();
  expect(items.length).toBeGreaterThanOrEqual(100);
  expect(new Set(items.map((i) => i.lang)).size).toBeGreaterThanOrEqual(20);
  const report = evaluateLanguage(items);
  const accuracy = report.metrics[0].value;
  if (accuracy < 0.95) throw new Error(`accuracy ${accuracy}\n${report.errors?.join("\n")}`);
});

// Timing is measured by `bun run bench` (bench/offline.ts); set TEXTAI_TIMED_TESTS=1 to assert it here too.
test.skipIf(!process.env.TEXTAI_TIMED_TESTS)("a 1 KB text is identified in well under 1 ms at the median", () => {
  expect(medianMs(() => detectLanguage(ONE_KB_TEXT))).toBeLessThan(1);
});

// The language model and the stop words are read from their packages' files in slices (engines.ts), not
// required: the table read must be the one the package's module holds. A process of its own, so
// the packages are required before anything imports their files as files.
test("the sliced reads of the eld n-gram table and the stopword lists equal what the packages' modules hold", () => {
  const r = Bun.spawnSync([process.execPath, new URL("../fixtures/engines/read-as-packages.ts", import.meta.url).pathname]);
  expect(r.exitCode).toBe(0);
  const out = JSON.parse(r.stdout.toString()) as { ngrams: number; lists: number; differ: string[] };
  expect(out.ngrams).toBeGreaterThan(100_000);
  expect(out.lists).toBeGreaterThan(50);
  expect(out.differ).toEqual([]);
}, 60_000);
