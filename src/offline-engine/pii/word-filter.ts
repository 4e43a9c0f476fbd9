/**
 * A quick "may this word be in the list?" for word lists looked up many times per text: a word's
 * length (up to 15) and its first two letters (ASCII, lower case) say whether any word of the list
 * has them, so most words of a text pass without the slice and lower-casing a lookup costs. A word
 * whose first two letters are not ASCII is always looked up.
 */
export class WordFilter {
  private readonly bits = new Uint8Array(16 * 16384);
  private readonly words: ReadonlySet<string>;

  constructor(words: Iterable<string>) {
    const all = new Set<string>();
    for (const w of words) {
      const l = w.toLowerCase();
      all.add(l);
      const a = l.charCodeAt(0);
      const b = l.length > 1 ? l.charCodeAt(1) : 0;
      if (a < 128 && b < 128) this.bits[(Math.min(l.length, 15) << 14) | (a << 7) | b] = 1;
    }
    this.words = all;
  }

  /** Whether text[from, to) (any case) is a word of the list. */
  hasAt(text: string, from: number, to: number): boolean {
    const n = to - from;
    if (n <= 0) return false;
    const a = text.charCodeAt(from);
    const b = n > 1 ? text.charCodeAt(from + 1) : 0;
    if (a < 128 && b < 128) {
      const key = (Math.min(n, 15) << 14) | ((a | (a >= 65 && a <= 90 ? 32 : 0)) << 7) | (b | (b >= 65 && b <= 90 ? 32 : 0));
      if (this.bits[key] === 0) return false;
    }
    return this.words.has(text.slice(from, to).toLowerCase());
  }
}
