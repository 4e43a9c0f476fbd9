import { expect, test } from "bun:test";
import { splitSentences, tokenize } from "../../src/offline-engine/text";

test("sentences split on terminators, keep abbreviations, decimals and initials, and carry offsets", () => {
  const text = "Mr. Smith paid $3.50 at 5 p.m. today. J. K. Rowling wrote it! Really?  Yes.\nNew line 東京です。次です";
  const sentences = splitSentences(text);
  expect(sentences.map((s) => s.text)).toEqual([
    "Mr. Smith paid $3.50 at 5 p.m. today.",
    "J. K. Rowling wrote it!",
    "Really?",
    "Yes.",
    "New line 東京です。",
    "次です",
  ]);
  for (const s of sentences) expect(text.slice(s.start, s.end)).toBe(s.text);
});

test("empty text has no sentences", () => {
  expect(splitSentences(" \n ")).toEqual([]);
});

test("tokens keep inner apostrophes and hyphens and non-ASCII letters", () => {
  expect(tokenize("Don't e-mail José, ok? 東京")).toEqual(["Don't", "e-mail", "José", "ok", "東京"]);
});
