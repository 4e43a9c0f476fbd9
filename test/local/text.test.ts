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

test("a hard-wrapped paragraph's line breaks are spaces; short lines, lists and blank lines still end sentences", () => {
  const text =
    "Equipment returned late is charged at the daily rate for every day it is\nlate. Cancellations are free of charge up to 48 hours before the\r\nstart date. Later ones cost 50 %.\n\nContact:\nAcme Outdoor\nMain Street 1\n- the first item of a list that is long enough to wrap\n- the second";
  expect(splitSentences(text).map((s) => s.text)).toEqual([
    "Equipment returned late is charged at the daily rate for every day it is\nlate.",
    "Cancellations are free of charge up to 48 hours before the\r\nstart date.",
    "Later ones cost 50 %.",
    "Contact:",
    "Acme Outdoor",
    "Main Street 1",
    "- the first item of a list that is long enough to wrap",
    "- the second",
  ]);
});

test("tokens keep inner apostrophes and hyphens and non-ASCII letters", () => {
  expect(tokenize("Don't e-mail José, ok? 東京")).toEqual(["Don't", "e-mail", "José", "ok", "東京"]);
});
