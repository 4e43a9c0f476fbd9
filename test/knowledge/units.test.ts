import { describe, expect, test } from "bun:test";
import { chunkText } from "../../src/knowledge/chunking";
import { editDistance } from "../../src/knowledge/faq-match";
import { ftsQuery } from "../../src/knowledge/search-sqlite";
import { stem, termKeys } from "../../src/knowledge/text";

describe("chunkText", () => {
  const sentences = Array.from({ length: 60 }, (_, i) => `Sentence number ${i} talks about topic ${i}.`).join(" ");

  test("short text is one chunk; empty text none", () => {
    expect(chunkText("  Just this.  ")).toEqual(["Just this."]);
    expect(chunkText("   ")).toEqual([]);
  });

  test("long text: chunks within the size, cut after a sentence, overlapping their neighbours, covering everything", () => {
    const chunks = chunkText(sentences, { size: 300, overlap: 60 });
    expect(chunks.length).toBeGreaterThan(5);
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(300);
    for (const c of chunks.slice(0, -1)) expect(c).toMatch(/\.$/);
    for (let i = 1; i < chunks.length; i++) {
      const tail = (chunks[i - 1] as string).slice(-20);
      expect(chunks[i]).toContain(tail.slice(tail.indexOf(" ") + 1));
    }
    for (let i = 0; i < 60; i++) expect(chunks.some((c) => c.includes(`Sentence number ${i} `))).toBe(true);
  });

  test("text without spaces still terminates and keeps every character", () => {
    const blob = "x".repeat(2500);
    const chunks = chunkText(blob, { size: 1000, overlap: 150 });
    expect(chunks.join("").length).toBeGreaterThanOrEqual(2500);
    expect(chunks.length).toBeLessThan(10);
  });
});

describe("ftsQuery", () => {
  test("quotes every term so FTS syntax in a query is inert, and restricts to the bases", () => {
    const q = ftsQuery('refund" OR NEAR(x y) * ^col:', ["kb_A"]) as string;
    expect(q.startsWith('kb_id : ("kb_A") AND {title content} : (')).toBe(true);
    const terms = q.slice(q.indexOf("content} : (") + 12, -1).split(" OR ");
    for (const t of terms) expect(t).toMatch(/^"[^"]+"$/);
    expect(terms).toContain('"refund"');
  });

  test("no searchable word: null", () => {
    expect(ftsQuery("the of and", ["kb_A"])).toBeNull();
    expect(ftsQuery("refund", [])).toBeNull();
  });
});

describe("text keys", () => {
  test("inflections meet, synonyms fold to one key", () => {
    expect(new Set(["refunds", "refunded", "refunding"].map(stem)).size).toBe(1);
    expect(stem("internationally")).toBe(stem("international"));
    expect(termKeys("parcel")).toEqual(termKeys("package"));
    expect(termKeys("Can I get my money back?")).toEqual(termKeys("refund"));
  });

  test("edit distance with transpositions and an early exit", () => {
    expect(editDistance("recieve", "receive", 2)).toBe(1);
    expect(editDistance("shiping", "shipping", 2)).toBe(1);
    expect(editDistance("password", "passport", 1)).toBe(2);
    expect(editDistance("abc", "xyzabc", 2)).toBe(3);
  });
});
