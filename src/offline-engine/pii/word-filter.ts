/**
 * A quick "may this word be in the list?" for word lists looked up many times per text: a word's
 * length (up to 15) and its first two letters (ASCII, lower case) say whether any word of the list
 * has them, so most words of a text pass without the slice and lower-casing a lookup costs. A word
 * whose first two letters are not ASCII is always looked up.
 */
export class WordFilter {
  /** one bit for each (length up to 15, first letter, second letter): 32 KB */
  private readonly bits = new Uint32Array((16 * 16384) >>> 5);
  private readonly words: ReadonlySet<string>;
  /** the words of printable ASCII (lower case), looked up by a range without a copy */
  private readonly ascii: TextSet;

  constructor(words: Iterable<string>) {
    const all = new Set<string>();
    for (const w of words) {
      const l = w.toLowerCase();
      all.add(l);
      const a = l.charCodeAt(0);
      const b = l.length > 1 ? l.charCodeAt(1) : 0;
      if (a < 128 && b < 128) {
        const key = (Math.min(l.length, 15) << 14) | (a << 7) | b;
        this.bits[key >>> 5] |= 1 << (key & 31);
      }
    }
    this.words = all;
    this.ascii = new TextSet([...all].filter((l) => /^[ -~]*$/.test(l)));
  }

  /** Whether text[from, to) (any case) is a word of the list. */
  hasAt(text: string, from: number, to: number): boolean {
    const n = to - from;
    if (n <= 0) return false;
    const a = text.charCodeAt(from);
    const b = n > 1 ? text.charCodeAt(from + 1) : 0;
    if (a < 128 && b < 128) {
      const key = (Math.min(n, 15) << 14) | ((a | (a >= 65 && a <= 90 ? 32 : 0)) << 7) | (b | (b >= 65 && b <= 90 ? 32 : 0));
      if ((this.bits[key >>> 5] & (1 << (key & 31))) === 0) return false;
    }
    // a range of printable ASCII is in lower case by its codes: no copy
    const ascii = this.ascii.lowerAt(text, from, to);
    if (ascii !== undefined) return ascii;
    return this.words.has(text.slice(from, to).toLowerCase());
  }
}

/**
 * A set of words looked up by a range of a text, as written (no case folding), without making a
 * string of it: the range is hashed (FNV-1a over its UTF-16 code units) into an open-addressed
 * table, then compared. `hasAt(text, from, to)` is `set.has(text.slice(from, to))`, where the
 * slice would be a new string each time.
 */
export class TextSet {
  private readonly words: string[];
  private readonly hashes: Int32Array;
  /** index + 1 into words of each slot, 0 when empty */
  private readonly slots: Int32Array;
  private readonly mask: number;

  constructor(words: Iterable<string>) {
    this.words = [...new Set(words)];
    let size = 8;
    while (size < this.words.length * 4) size *= 2;
    this.mask = size - 1;
    this.slots = new Int32Array(size);
    this.hashes = new Int32Array(size);
    for (let w = 0; w < this.words.length; w++) {
      const word = this.words[w] as string;
      const h = TextSet.hash(word, 0, word.length);
      let s = h & this.mask;
      while (this.slots[s] !== 0) s = (s + 1) & this.mask;
      this.slots[s] = w + 1;
      this.hashes[s] = h;
    }
  }

  private static hash(text: string, from: number, to: number): number {
    let h = 0x811c9dc5;
    for (let i = from; i < to; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
    return h | 0;
  }

  /**
   * Whether text[from, to) in lower case is one of the words (of a set of lower-case words), when the
   * range is printable ASCII (A-Z read as a-z); undefined when a character of it is not.
   */
  lowerAt(text: string, from: number, to: number): boolean | undefined {
    let h = 0x811c9dc5;
    for (let i = from; i < to; i++) {
      const c = text.charCodeAt(i);
      if (c < 0x20 || c > 0x7e) return undefined;
      h = Math.imul(h ^ (c >= 65 && c <= 90 ? c + 32 : c), 0x01000193);
    }
    h |= 0;
    const n = to - from;
    for (let s = h & this.mask; ; s = (s + 1) & this.mask) {
      const w = this.slots[s] as number;
      if (w === 0) return false;
      if (this.hashes[s] !== h) continue;
      const word = this.words[w - 1] as string;
      if (word.length !== n) continue;
      let i = 0;
      while (i < n) {
        const c = text.charCodeAt(from + i);
        if ((c >= 65 && c <= 90 ? c + 32 : c) !== word.charCodeAt(i)) break;
        i++;
      }
      if (i === n) return true;
    }
  }

  /** Whether text[from, to) is one of the words. */
  hasAt(text: string, from: number, to: number): boolean {
    const h = TextSet.hash(text, from, to);
    const n = to - from;
    for (let s = h & this.mask; ; s = (s + 1) & this.mask) {
      const w = this.slots[s] as number;
      if (w === 0) return false;
      if (this.hashes[s] !== h) continue;
      const word = this.words[w - 1] as string;
      if (word.length !== n) continue;
      let i = 0;
      while (i < n && text.charCodeAt(from + i) === word.charCodeAt(i)) i++;
      if (i === n) return true;
    }
  }
}
