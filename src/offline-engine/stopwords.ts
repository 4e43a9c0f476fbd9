/**
 * The `stopword` package's lists (MIT), read from its file one list a step. `require("stopword")`
 * evaluates its 237 KB module, every list of 60 languages, in one piece (40 to 190 ms, a held
 * event loop); a list here is cut out of the file's text (`const deu = [ 'aber', … ];`, quoted in
 * single quotes, `\'` the only escape) when a sliced load (engines.ts) asks for it. Embedded as a
 * file, it is a path until then, inside the compiled binary too.
 */
import { readFileSync } from "node:fs";
import STOPWORD_FILE from "../../node_modules/stopword/dist/stopword.cjs.js" with { type: "file" };

/** The words of each list named (the package's names: "deu", "porBr"), one list a step; a name it lacks is an error. */
export function* readStopwordLists(names: readonly string[]): Generator<void, Record<string, string[]>, void> {
  const text = readFileSync(STOPWORD_FILE, "utf8");
  const out: Record<string, string[]> = {};
  for (const name of names) {
    yield;
    const head = `\nconst ${name} = [`;
    const at = text.indexOf(head);
    if (at < 0) throw new Error(`stopword: no list "${name}"`);
    const words: string[] = [];
    let i = at + head.length;
    for (;;) {
      while (i < text.length && text.charCodeAt(i) !== 0x27 && text.charCodeAt(i) !== 0x5d) i++; // ' ]
      if (i >= text.length) throw new Error(`stopword: list "${name}" does not end`);
      if (text.charCodeAt(i) === 0x5d) break;
      let word = "";
      let from = ++i;
      while (text.charCodeAt(i) !== 0x27) {
        if (text.charCodeAt(i) === 0x5c) {
          word += text.slice(from, i);
          from = ++i;
        }
        i++;
      }
      words.push(word + text.slice(from, i));
      i++;
    }
    out[name] = words;
  }
  return out;
}
