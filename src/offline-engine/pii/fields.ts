/**
 * Fields of a record found by their key (names-slot.ts for names, address-field.ts for addresses):
 * at each place a key's stem stands, the key's start (back over its letters, at most `back`), and
 * the field's pattern (sticky) tried at the quote or "<" that opens the key, then at the key itself
 * (a `key: value` pair written inside a quoted string). A stem inside a field found is passed over.
 */
const isKeyChar = (c: string | undefined): boolean => c !== undefined && /[\p{L}_-]/u.test(c);

export function* keyedFields(
  text: string,
  stems: RegExp,
  field: RegExp,
  back: number,
  opens: string,
): Generator<{ at: number; m: RegExpExecArray }> {
  let done = 0;
  for (const stem of text.matchAll(stems)) {
    const s = stem.index as number;
    if (s < done) continue;
    let k = s;
    while (k > 0 && s - k < back && isKeyChar(text[k - 1])) k--;
    const starts = k > 0 && opens.includes(text[k - 1] as string) ? [k - 1, k] : [k];
    for (const at of starts) {
      field.lastIndex = at;
      const m = field.exec(text);
      if (m) {
        done = at + m[0].length;
        yield { at, m };
        break;
      }
    }
  }
}
