/**
 * Street addresses: "<number> <Name> <Street|Ave|...> [unit][, City][, ST][ ZIP]" (US, UK, CA,
 * AU), "<Name>straße 5, 10115 Berlin" (German and Nordic/Dutch compounds; Swedish "111 51"), "12 rue de la Paix,
 * 75002 Paris" / "Calle Mayor 5" (Romance street words), and post-office boxes.
 */
import { entity, type PiiEntity } from "./types";

const CAP = "\\p{Lu}[\\p{L}\\p{M}'’-]*";
const SUFFIX =
  "(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|Terrace|Ter|Parkway|Pkwy|Circle|Cir|Highway|Hwy|Square|Sq|Trail|Trl|Close|Crescent|Cres|Row|Mews|Grove|Gardens|Walk|Plaza|Alley|Loop|Pike|Broadway)";
const UNIT = "(?:,?\\s+(?:Apt|Apartment|Suite|Ste|Unit|Floor|Fl|Room|Rm|#)\\.?\\s*#?[\\p{L}\\p{N}-]{1,6})?";
const POSTCODE = "(?:\\d{5}(?:-\\d{4})?|[A-Z]{1,2}\\d[A-Z\\d]?\\s?\\d[A-Z]{2}|[A-Z]\\d[A-Z]\\s?\\d[A-Z]\\d|\\d{4})";
// ", Springfield, IL 62704" / ", London NW1 6XE" / ", Toronto, ON M5V 2T6"; every part optional
const LOCALITY = `(?:,\\s*${CAP}(?:\\s+${CAP}){0,2}(?:,?\\s+(?:[A-Z]{2}(?![\\p{L}])|${CAP}))?(?:,?\\s+${POSTCODE})?(?![\\p{L}\\p{N}]))?`;

const STREET_EN = new RegExp(
  `(?<![\\p{L}\\p{N}])\\d{1,6}[A-Za-z]?(?:-\\d{1,5})?\\s+(?:(?:[NSEW]|North|South|East|West|NE|NW|SE|SW)\\.?\\s+)?(?:(?:\\d{1,3}(?:st|nd|rd|th)|${CAP})\\s+){1,4}${SUFFIX}\\.?(?![\\p{L}])(?:\\s+(?:North|South|East|West|NE|NW|SE|SW|[NSEW])\\b\\.?)?${UNIT}${LOCALITY}`,
  "gu",
);
const STREET_GERMANIC = new RegExp(
  `(?<![\\p{L}])\\p{Lu}[\\p{L}-]*(?:straße|strasse|str\\.|weg|allee|platz|gasse|ring|damm|gracht|laan|straat|plein|vej|gade|gatan|gata|veien|vägen)\\s+\\d{1,4}[a-z]?(?:,\\s*(?:\\d{4,5}|\\d{3}\\s\\d{2})\\s+${CAP}(?:\\s+${CAP})?)?`,
  "gu",
);
// street words in either case ("rue", "Rue"); the rest of the pattern stays case-sensitive
const ROMANCE_WORDS =
  "rue avenue boulevard bd place chemin allée impasse quai calle avenida plaza paseo carrer via viale piazza corso rua praça travessa"
    .split(" ")
    .map((w) => `[${w[0].toUpperCase()}${w[0]}]${w.slice(1)}`)
    .join("|");
const STREET_ROMANCE = new RegExp(
  `(?<![\\p{L}])(?:\\d{1,4}(?:\\s?(?:bis|ter))?,?\\s+)?(?:${ROMANCE_WORDS})\\s+(?:(?:de|del|des|du|di|da|do|dos|das|della|la|le|les)\\s+|[ld]['’]\\s*)*${CAP}(?:\\s+(?:(?:de|del|la|di|da)\\s+)?${CAP}){0,3}(?:,?\\s+\\d{1,4}[a-z]?(?![\\p{N}]))?(?:,\\s*\\d{4,5}\\s+${CAP}(?:\\s+${CAP})?)?`,
  "gu",
);
const PO_BOX = new RegExp(`\\b[Pp]\\.?\\s?[Oo]\\.?\\s+[Bb]ox\\s+\\d{1,6}${LOCALITY}`, "gu");

export function findAddresses(text: string): PiiEntity[] {
  const out: PiiEntity[] = [];
  for (const re of [STREET_EN, STREET_GERMANIC, PO_BOX]) {
    for (const m of text.matchAll(re)) out.push(trimmed(text, m.index, m[0], 0.88));
  }
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
