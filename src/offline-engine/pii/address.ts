/**
 * Street addresses: "<number> <Name> <Street|Ave|...> [unit][, City][, ST][ ZIP]" (US, UK, CA,
 * AU), "<Name>straße 5, 10115 Berlin" (German and Nordic/Dutch compounds; Swedish "111 51"), "12 rue de la Paix,
 * 75002 Paris" / "Calle Mayor 5" (Romance street words), and post-office boxes.
 */
import {
  gateEndings,
  gateWords,
  keywordFlags,
  POSTBOX_WORD,
  STREET_ENDING,
  STREET_SUFFIX_EN,
  STREET_WORD_ROMANCE,
} from "./keywords";
import { entity, type PiiEntity } from "./types";

const CAP = "\\p{Lu}[\\p{L}\\p{M}'’-]*";
// USPS street suffixes (Publication 28, appendix C1) that name streets in running text, plus UK ones
const SUFFIX =
  "(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|Terrace|Ter|Parkway|Pkwy|Circle|Cir|Highway|Hwy|Square|Sq|Squares|Trail|Trl|Close|Crescent|Cres|Row|Mews|Grove|Gardens?|Walk|Plaza|Alley|Loop|Pike|Broadway|Brooks?|Branch|Bypass|Camp|Canyon|Causeway|Cliffs?|Common|Corners?|Course|Cove|Creek|Crest|Crossing|Dale|Dam|Divide|Estates?|Expressway|Extensions?|Falls?|Ferry|Fields?|Flats?|Fords?|Forest|Forge|Fork|Freeway|Glens?|Greens?|Harbou?r|Haven|Heights|Hills?|Hollow|Inlet|Island|Junction|Keys?|Knolls?|Lakes?|Landing|Lights?|Lodge|Mall|Manor|Meadows?|Mills?|Mission|Motorway|Mount|Mountain|Orchard|Oval|Overpass|Parade|Park|Pass|Path|Pines?|Plains?|Points?|Port|Prairie|Ridge|Rise|Run|Shoals?|Shores?|Springs?|Spurs?|Station|Stravenue|Summit|Track|Trace|Turnpike|Underpass|Valley|Via|Views?|Village|Ville|Vista|Wall|Wells?|Brow|Drove|Brae|End)";
const UNIT =
  "(?:,?\\s+(?:Apt|Apto|Apartment|Appartamento|Suite|Ste|Unit|Floor|Fl|Room|Rm|Zimmer|Piano|#)\\.?\\s*#?[\\p{L}\\p{N}-]{1,6})?";
// (Ireland's Eircode: a routing key, a letter and two digits or D6W, then four of its letters and digits: "D06 X2Y3")
const POSTCODE =
  "(?:\\d{6}|\\d{5}(?:-\\d{4})?|[A-Z]{1,2}\\d[A-Z\\d]?\\s?\\d[A-Z]{2}|[A-Z]\\d[A-Z]\\s?\\d[A-Z]\\d|(?:[AC-FHKNPRTV-Y]\\d{2}|D6W)\\s?[0-9AC-FHKNPRTV-Y]{4}|\\d{4})";
// ", Springfield, IL 62704" / ", London NW1 6XE" / ", Toronto, ON M5V 2T6"; every part optional
// (a town with its postal district: "Dublin 6", "Manchester 14")
const LOCALITY = `(?:,\\s*${CAP}(?:\\s+${CAP}){0,2}(?:[ \\t]\\d{1,2}(?![\\d\\p{L}]))?(?:,?\\s+(?:[A-Z]{2}(?![\\p{L}])|${CAP}))?(?:,?\\s+${POSTCODE})?(?![\\p{L}\\p{N}]))?`;

const STREET_EN = new RegExp(
  `(?<![\\p{L}\\p{N}])(?:No\\.?[ \\t]?\\d{1,6}[A-Za-z]?(?:-\\d{1,5})?,?|\\d{1,6}[A-Za-z]?(?:-\\d{1,5})?)[ \\t]+(?:(?:[NSEW]|North|South|East|West|NE|NW|SE|SW)\\.?\\s+)?(?:(?:\\d{1,3}(?:st|nd|rd|th)|${CAP})\\s+){1,4}${SUFFIX}\\.?(?![\\p{L}])(?:\\s+(?:North|South|East|West|NE|NW|SE|SW|Lower|Upper|[NSEW])\\b\\.?)?${UNIT}${LOCALITY}`,
  "gu",
);
const GERMANIC_ENDINGS =
  "[Ss]traße|[Ss]trasse|[Ss]tr\\.|weg|allee|platz|gasse|ring|damm|gracht|laan|straat|plein|dijk|kade|singel|plantsoen|steeg|vej|gade|gatan|gata|veien|vägen";
const STREET_GERMANIC = new RegExp(
  `(?<![\\p{L}-])\\p{Lu}[\\p{L}-]*(?:${GERMANIC_ENDINGS})\\s+\\d{1,4}[a-z]?${UNIT}(?:,\\s*(?:\\d{4,5}|\\d{3}\\s\\d{2})\\s+${CAP}(?:\\s+${CAP})?)?`,
  "gu",
);
// street words in either case ("rue", "Rue"); the rest of the pattern stays case-sensitive
const ROMANCE_LIST =
  "rue avenue boulevard bd place chemin allée impasse quai passage voie calle avenida plaza paseo camino carretera ronda travesía carrer via viale piazza piazzale corso vicolo largo strada contrada borgo rua praça travessa".split(
    " ",
  );
const ROMANCE_WORDS = ROMANCE_LIST.map((w) => `[${w[0].toUpperCase()}${w[0]}]${w.slice(1)}`).join("|");
const STREET_ROMANCE = new RegExp(
  `(?<![\\p{L}])(?:\\d{1,4}(?:\\s?(?:bis|ter))?,?\\s+)?(?:${ROMANCE_WORDS})\\s+(?:(?:de|del|des|du|di|da|do|dos|das|della|la|le|les)\\s+|[ld]['’]\\s*)*${CAP}(?:\\s+(?:(?:de|del|la|di|da)\\s+)?${CAP}){0,3}(?:,?\\s+\\d{1,4}[a-z]?(?![\\p{N}]))?(?:,\\s*\\d{4,5}\\s+${CAP}(?:\\s+${CAP})?)?`,
  "gu",
);
// "Am Borsberg 89c, 42075 Miraydorf", "Parque Eduardo 39, 22535 Cáceres", "Ryanpark 146a, 1302 DP
// Utrecht": in Europe a street of any name is an address when a house number and then a postcode
// and town follow it; the postcode and town are what make the capitalised words a street
const EU_UNIT =
  "(?:,?\\s+(?:Zimmer|Piano|Apt\\.?|Apto\\.?|\\d{1,2}º|\\d{1,2}\\s(?:OG|hoog|étage)|[IVX]{1,3})(?:\\s[\\p{L}\\p{N}]{1,4})?)?";
const STREET_POSTAL = new RegExp(
  `(?<![\\p{L}\\p{N}\\p{M}'’-])(?:(?:Am|An|Im|Auf|Zum|Zur|van|de|la|le)\\s+)?${CAP}(?:\\s+(?:(?:de|del|la|di|da|van|der)\\s+)?${CAP}){0,3},?\\s+\\d{1,4}[a-z]?${EU_UNIT},\\s*(?:\\d{5}|\\d{4}\\s?[A-Z]{2}|\\d{4})\\s+${CAP}(?:\\s+(?:(?:de|del|la|a|di|les|sur|am|an)\\s+)?${CAP}){0,3}(?:\\s+(?:a|al)\\s+\\p{Ll}+)?`,
  "gu",
);
const POSTCODE_AFTER_COMMA = /,\s*\d{4}/;
// PO_BOX's words, each a whole word of the text where it matches; "B.P." is looked for as it is
// written (gated on "b", it let the pattern run on every "221B" and "Plan B")
gateWords(
  POSTBOX_WORD,
  "box postfach postbus postboks postbox apartado caixa casella boîte skrytka postilokero pf bp".split(" "),
);
/** a month and a day, a comma and a year ("June 18, 1965 Phone"): a date, its year no postcode */
export const DATE_LIKE =
  /(?:^|[ \t])(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|January|February|March|April|June|July|August|September|October|November|December)\.?[ \t]\d{1,2},[ \t]*(?:1[89]|20)\d{2}(?!\d)/;
const PO_BOX = new RegExp(
  `(?<![\\p{L}\\p{N}])(?:[Pp]\\.?\\s?[Oo]\\.?\\s+[Bb]ox\\s+\\d{1,6}${LOCALITY}|(?:Postfach|Postbus|Postboks|Postbox|Apartado(?:\\s+de\\s+[Cc]orreos)?|Caixa\\s+[Pp]ostal|Casella\\s+[Pp]ostale|Boîte\\s+[Pp]ostale|Skrytka\\s+[Pp]ocztowa|Postilokero|Pf\\.|B\\.P\\.|BP)[ \\t]+\\d{1,6}(?:[ ]\\d{2}){0,2}(?=,?[ \\t]*(?:\\r?\\n[ \\t]*)?(?:[A-Z]{2}-?)?\\d{2,6}(?:[ -]\\d{2,3})?[ \\t]+\\p{Lu}))`,
  "gu",
);

gateWords(STREET_WORD_ROMANCE, ROMANCE_LIST);
// "Gardens?" and "Harbou?r" stand for both spellings
gateWords(
  STREET_SUFFIX_EN,
  SUFFIX.slice(3, -1)
    .split("|")
    .flatMap((w) => (w.includes("?") ? [w.replace("?", ""), w.replace(/.\?/, "")] : [w])),
);
gateEndings(STREET_ENDING, GERMANIC_ENDINGS.replace(/\[S(s)\]/g, "$1").split("|"));

export function findAddresses(text: string): PiiEntity[] {
  const out: PiiEntity[] = [];
  // the Germanic and Romance patterns run only when a street word of theirs occurs in the text (keywords.ts)
  const gates = keywordFlags(text);
  for (const re of [STREET_EN, STREET_GERMANIC, PO_BOX]) {
    if (re === STREET_EN && (gates & STREET_SUFFIX_EN) === 0) continue;
    if (re === STREET_GERMANIC && (gates & STREET_ENDING) === 0) continue;
    if (re === PO_BOX && (gates & POSTBOX_WORD) === 0 && !text.includes("B.P.")) continue;
    for (const m of text.matchAll(re)) out.push(trimmed(text, m.index, m[0], 0.88));
  }
  // the postal pattern may start at any capitalised word: run it only where a postcode follows a comma
  if (POSTCODE_AFTER_COMMA.test(text))
    for (const m of text.matchAll(STREET_POSTAL)) if (!DATE_LIKE.test(m[0])) out.push(trimmed(text, m.index, m[0], 0.9));
  if (gates & STREET_WORD_ROMANCE)
    for (const m of text.matchAll(STREET_ROMANCE)) {
      // the Romance pattern needs a house number somewhere, else "via Email" would be an address
      if (!/\d/.test(m[0])) continue;
      out.push(trimmed(text, m.index, m[0], 0.85));
    }
  return out;
}

function trimmed(text: string, start: number, raw: string, score: number): PiiEntity {
  // a trailing period or comma belongs to the sentence ("... Main St." keeps "Main St")
  const cut = raw.replace(/(?<![\s,.])[\s,.]+$/, "");
  return entity("address", text, start, start + cut.length, score);
}
