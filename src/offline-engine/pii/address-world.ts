/**
 * Street addresses as written outside the English-speaking world (issue 23): the house number
 * after the street, the street word of the local language before the name ("Rua", "ul.",
 * "Intrarea", "Calle") or after it ("utca", "tér", "iela", "Sokak", "küçəsi", "gade"), or at the
 * end of a compound ("Fuglsangsvej", "Jukkakuja", "Kennedybrücke"); a bare name and number after
 * a phrase that announces an address ("Street:", "I live at", "moving into"); US military
 * addresses (PSC / CMR / Unit, Box, APO / FPO / DPO). Each street found is then extended over
 * what follows it: apartment and floor parts, a postcode and town (or town and postcode) on the
 * same line or the next, and a country on the line after. Postcodes and apartment parts that
 * stand on their own count after a label ("Postcode: 1052", "apt/suite: lgh 1212").
 *
 * Every pattern starts at a word start or a fixed word and has bounded repetition; the words
 * between a street word and the number are at most four.
 */
import { isEnglishWord, isStopword } from "./gazetteer";
import {
  ADDRESS_CUE_PREFIX,
  gateEndings,
  gatePrefixes,
  gateWords,
  keywordFlags,
  onGatedLines,
  POSTCODE_LABEL,
  prefixStarts,
  STREET_ENDING,
  STREET_PREPOSITION,
  STREET_WORD_AFTER,
  STREET_WORD_BEFORE,
  UNIT_LABEL,
} from "./keywords";
import { entity, type PiiEntity } from "./types";

// words are at most 40 characters: an attempt never scans a long run ("a.a.a.…") to its end
const WORD = "\\p{L}[\\p{L}\\p{M}'’.-]{0,39}(?![\\p{L}\\p{M}'’.-])";
const CAP = "\\p{Lu}[\\p{L}\\p{M}'’.-]{0,39}(?![\\p{L}\\p{M}'’.-])";
/** house number: "5", "41b", "4/4", "12 A", "53c", "6-8" */
const NUM = "\\d{1,4}(?:[ ]?[A-Za-z](?![\\p{L}\\p{N}:]))?(?:[ ]?[/-][ ]?\\d{1,3}[A-Za-z]?)?(?![\\p{L}\\p{N}])";

/** street words that follow the street's name (Hungarian, Baltic, Turkish, Azerbaijani, Nordic, Slavic, Germanic) */
const AFTER = [
  "utca u. út útja tér tere körút krt. sugárút sétány köz fasor liget határút főút rakpart dűlő lejtő sor udvar lakótelep",
  "iela bulvāris gatve dambis prospekts laukums šoseja ceļš gatvė g. prospektas alėja",
  // Estonian: "Tammsaare tee 104", "Pärnu mnt 22"
  "tee mnt maantee puiestee põik väljak tänav",
  "sokak sokağı sk. caddesi cad. cd. bulvarı blv. mahallesi mah. mh. yolu meydanı",
  "küçəsi küç. prospekti pr. sahəsi şossesi döngəsi meydanı dalanı sh. pr-ti",
  "vej gade allé plads stræde vænge torv gate vei veien vegen plass gata gatan väg vägen gränd gränden torg torget",
  "katu tie kuja polku ulica ul. cesta trg put obala ulice náměstí nábřeží třída námestie nábrežie trieda",
  "straße strasse str. gasse weg allee platz ring damm straat laan plein dijk kade gracht singel steeg",
]
  .join(" ")
  .split(" ");

/** street words that come before the street's name (Polish, Romanian, Portuguese, Spanish, Italian, French, Czech) */
const BEFORE = [
  "ul. ulica al. aleja os. osiedle pl. plac rynek droga wyb. wybrzeże ogród skwer rondo bulwar",
  "strada str. bulevardul bd. bdul. calea intrarea aleea piața piata șoseaua soseaua splaiul drumul fundătura",
  "rua r. avenida av. avda. travessa tv. praça largo estrada rodovia alameda quinta bairro caminho beco viela ladeira vila azinhaga calçada rotunda praceta",
  "carrer passeig avinguda plaça travessera rúa",
  "jl. jalan lorong",
  "calle c/ plaza pza. paseo camino carretera ctra. ronda travesía glorieta prolongación calzada privada priv. callejón cerrada extrarradio urbanización polígono pasaje vía circuito andador periférico rambla",
  "via viale piazza piazzale corso vicolo strada contrada borgo rotonda incrocio lungomare salita traversa vico piazzetta località",
  "rue avenue boulevard bd place chemin allée impasse quai passage voie route cours square parvis sentier cité faubourg",
]
  .join(" ")
  .split(" ");
/** Czech and Slovak street names that are a preposition and a noun: "Na Kampě 3", "U Václava 2" (capitalised only) */
const PREPOSITIONS = "Na|Pod|Nad|U|V|Za|Pri|Při|Před";

/** endings of compound street names: Danish, Norwegian, Swedish, Finnish, German, Dutch */
const COMPOUND =
  "vej|gade|vænget|stræde|gata|gatan|gränd|gränden|vägen|väg|stigen|backen|allén|torget|veien|vegen|gate|stien|svinget|bakken|haugen|åsen|kroken|tunet|jordet|løkka|katu|tie|kuja|polku|raitti|kaari|väylä|rinne|ranta|torv|vegur|braut|stræti|stígur|tún|straße|strasse|str\\.|weg|allee|platz|gasse|damm|steig|ufer|pfad|brücke|chaussee|graben|zeile|gracht|laan|straat|plein|dijk|kade|singel|plantsoen|steeg|dreef";

gateWords(STREET_WORD_AFTER, AFTER);
gateWords(STREET_WORD_BEFORE, BEFORE);
gateEndings(STREET_ENDING, COMPOUND.split("|"));
gateWords(STREET_PREPOSITION, PREPOSITIONS.split("|"));

const escapeRegex = (w: string) => w.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
const alternation = (words: string[]) =>
  [...new Set(words)]
    .sort((a, b) => b.length - a.length)
    .map((w) => {
      // either case for the first letter: "Rua" and "rua", "Utca" and "utca"
      const first = w[0];
      const upper = first.toUpperCase();
      return upper === first ? escapeRegex(w) : `[${upper}${first}]${escapeRegex(w.slice(1))}`;
    })
    .join("|");

const STREET_AFTER = new RegExp(
  `(?<![\\p{L}\\p{N}\\p{M}'’.-])(?:${WORD}[ \\t]+){1,3}(?:${alternation(AFTER)})(?![\\p{L}\\p{M}]),?[ \\t]+(?:[Nn][or][.:]{0,2}[ \\t]?)?${NUM}`,
  "gu",
);
const STREET_BEFORE = new RegExp(
  `(?<![\\p{L}\\p{N}\\p{M}'’.-])(?:\\d{1,5}[A-Za-z]?,?[ \\t]+)?(?:${alternation(BEFORE)})(?![\\p{L}\\p{M}])[ \\t]+(?:${WORD}[ \\t]+){0,3}${WORD}(?:,?[ \\t]+(?:[Nn][or]\\.?[ \\t]?|n\\.?º[ \\t]?)?${NUM})?`,
  "gu",
);
const STREET_PREPOSITION_RE = new RegExp(
  `(?<![\\p{L}\\p{N}\\p{M}'’.-])(?:${PREPOSITIONS})[ \\t]+${CAP}(?:[ \\t]+${CAP})?[ \\t]+${NUM}`,
  "gu",
);
// the lookahead settles most words in one pass: only a word followed by a number is tried against the endings
const STREET_COMPOUND = new RegExp(
  `(?<![\\p{L}\\p{N}\\p{M}-])\\p{L}(?=[\\p{L}\\p{M}-]{2,50}[ \\t]+\\d)[\\p{L}\\p{M}-]{2,40}(?:${COMPOUND})[ \\t]+${NUM}`,
  "giu",
);
/** a name and a house number, an address only right after a phrase that announces one */
const NAME_NUMBER_AT = new RegExp(`${WORD}(?:[ \\t]+${WORD}){0,3}[ \\t]+${NUM}`, "uy");
const ADDRESS_CUE =
  /\b(?:address|addr|street|str|building|live at|lives at|living at|moving into|moved to|move to|ship(?:ped|ping)? to|deliver(?:ed|y)? to|send (?:it |this |them )?to|sent to|went to|go to|find|located at|line 1|reception|(?:adresse|adres|adresa|adress|aadress|adresas|adrese|anschrift|osoite|lakcím|cím|címe|morada|endereço|dirección|direccion|indirizzo|naslov|domicilio)[ \t]*:)(?:[ \t]*[:,])?[ \t]*(?:\r?\n[ \t]*)?(?=\p{L})/giu;
/** ADDRESS_CUE tried at one place: where a word starts with the beginning of one of its phrases (keywords.ts) */
const ADDRESS_CUE_AT = new RegExp(ADDRESS_CUE.source, "iuy");
// the first three characters of each phrase ("str" stands for "street" too; "go to" is "go ")
gatePrefixes(ADDRESS_CUE_PREFIX, [
  ..."add str bui liv mov shi del sen wen fin loc lin rec adr aad ans oso lak mor end dir ind nas dom".split(" "),
  "go ",
]);
/** a line with a name and a number, and under it a line with a postcode and a town: "Kaštielska 5\n34 030 Martin" (tried at each line start) */
const LINE_POSTAL_AT = new RegExp(
  `(?<=^|\\n)[ \\t]*${CAP}(?:[ \\t]+${WORD}){0,3}[ \\t]+${NUM}(?=[ \\t]*\\r?\\n[ \\t]*(?:[A-Z]{2}-?)?\\d{2,6}(?:[- ]\\d{2,4})?(?:[ ]?[A-Z]{2})?[ \\t]+\\p{Lu})`,
  "uy",
);
const MILITARY =
  /(?<![\p{L}\p{N}])(?:(?:PSC|CMR|Unit)[ \t]+\d{3,5}(?:,?[ \t]*(?:\r?\n[ \t]*)?Box[ \t]+\d{1,5})?|(?:USNS|USS)[ \t]+\p{Lu}[\p{L}-]*(?:[ \t]+\p{Lu}[\p{L}-]*)?(?:[ \t]+\([A-Z]{2,4}[ -]?\d{1,3}\))?),?[ \t]*(?:\r?\n[ \t]*)?(?:APO|FPO|DPO)[ \t]+A[AEP][ \t]+\d{5}(?:-\d{4})?(?!\d)/gu;

const UNIT_WORD =
  "Apt|Apto|Apartment|Appartement|Appartamento|Suite|Ste|Unit|Flat|Floor|Fl|Room|Rm|Top|Tür|Stiege|Stg|Whg|Wohnung|lgh|Lgh|Bloc|Bl|Sc|Ap|Et|Piso|piso|Dpto|Depto|Puerta|Pta|Andar|andar|Sala|sala|Casa|apto|apt|suite|flat|unit|m|lok|mieszk|as|bte|boîte|kv|кв|Kat|Daire|Sector|sector|Sektor|bl|sc|ap|et|#";
/**
 * Floors, doors and districts as other conventions write them: "3.º Dto", "2.º Esq." (Portuguese),
 * "3r 2a" (Catalan), "II. em. 5." (Hungarian), "D: 5" (Turkish), "Col. Juárez" (a Mexican colonia),
 * "Quận 1" (a Vietnamese district)
 */
const UNIT_LOCAL = `\\d{1,2}\\.?[ºª°](?:[ \\t]?(?:Dto|dto|Dta|Esq|esq|Dir|dir|Drt|Fte|Frt|Trás|Izq|izq|Izda|izda|Dcha|dcha|Dra|dra|Der|der|Ctro|ctro|[A-F])(?![\\p{L}])\\.?)?|\\d{1,2}(?:r|n|t|er|o)[ \\t]\\d{1,2}[aª](?![\\p{L}\\p{N}])|(?:[IVX]{1,4}|\\d{1,2})\\.[ \\t]?em(?:elet)?\\.?(?:[ \\t]?\\d{1,3}\\.?(?:[ \\t]?ajtó)?)?|(?:D|K)[.:][ \\t]?\\d{1,3}(?![\\p{L}\\p{N}])|(?:st|kl)\\.?[ \\t]?(?:tv|th|mf)\\.?|(?:Col\\.|Colonia|Bairro|Barrio|Quận|Phường|Huyện|Q\\.|P\\.)[ \\t]?(?:\\d{1,2}(?![\\p{L}\\p{N}])|\\p{Lu}[\\p{L}\\p{M}]{1,20}(?:[ \\t]\\p{Lu}[\\p{L}\\p{M}]{1,20}){0,2})`;
const UNIT_PART = `(?:${UNIT_LOCAL}|(?:${UNIT_WORD})(?![\\p{L}])\\.?[ \\t]?#?(?=[\\p{L}-]{0,5}\\d|[A-Z](?![\\p{L}]))[\\p{L}\\p{N}-]{1,6}|\\d{1,2}\\.?[ \\t]?(?:emelet|em\\.|tv\\.?|th\\.?|mf\\.?|st\\.?|sal|etg\\.?|étage|hoog|OG|Stock|piso|andar|floor)(?:[ \\t]+\\d{1,3}\\.?[ \\t]?(?:ajtó|a\\.)?)?|[IVX]{1,4}(?![\\p{L}\\p{N}])|(?:étage|hoog|OG|Stock|Bajo|Bajos|Entlo\\.?|Ático|Principal)(?![\\p{L}])(?:[ \\t][A-Z\\d](?![\\p{L}\\p{N}]))?)`;
const UNIT_AT = new RegExp(
  `(?:,[ \\t]{0,4}|[ \\t]{1,4}|\\.[ \\t]{1,4}(?=[IVX]{1,4}\\.|\\d)|-(?=[IVX]{1,4}(?![\\p{L}\\p{N}])))${UNIT_PART}`,
  "uy",
);

const TOWN_WORD = "\\p{Lu}[\\p{L}\\p{M}'’]*(?:[-/]\\p{L}[\\p{L}\\p{M}'’]*){0,3}";
const TOWN = `${TOWN_WORD}(?:[ \\t]+(?:(?:de|do|da|das|dos|del|della|di|am|an|im|nad|pod|la|le|les|sur|sous|en|y|i|e|upon|on)[ \\t]+)?${TOWN_WORD}){0,3}`;
// a second lower-case word only when the line or clause ends after it ("6481 faxe ladeplads,"; not "lisboa desde março")
const LOWER_TOWN = "\\p{Ll}[\\p{L}\\p{M}'’-]*(?:[ \\t]\\p{Ll}[\\p{L}\\p{M}'’-]*(?=[ \\t]{0,4}(?:[,.;!?\\r\\n]|$)))?";
/** postcodes in the formats of most countries: "1052", "10115", "62-650", "8002-892", "323 99", "1302 DP", "LV-4660", "AZ0137" */
const POSTCODE = "(?:[A-Za-z]{2}-?)?\\d{2,6}(?:[- ]\\d{2,4})?(?:[ ]?[A-Z]{2}(?![\\p{L}]))?";
const UK_CA = "[A-Z]{1,2}\\d[A-Z\\d]?[ ]?\\d[A-Z]{2}|[A-Z]\\d[A-Z][ ]?\\d[A-Z]\\d";
const SEP = "(?:,[ \\t]{0,8}|[ \\t]{0,4}[·•|][ \\t]{0,8}|[ \\t]{0,8}\\r?\\n[ \\t]{0,8})";
const POSTCODE_TOWN = new RegExp(`(?:${SEP}|[ \\t]{1,4}(?=\\d{4,5}[ \\t]+\\p{Lu}))(?:${POSTCODE})[ \\t]+(?:${TOWN})`, "uy");
const POSTCODE_TOWN_LOWER = new RegExp(`${SEP}(?:${POSTCODE})[ \\t]+(?:${LOWER_TOWN})`, "uy");
const TOWN_POSTCODE = new RegExp(
  `${SEP}${TOWN}(?:,?[ \\t]+[A-Z]{2}(?![\\p{L}]))?,?[ \\t]+(?:\\d{3}[ ]?\\d{3}|(?:[A-Z]{2}-)?\\d{4,5}(?:-\\d{4})?|${UK_CA})(?![\\p{L}\\p{N}])`,
  "uy",
);
/**
 * town lines (a district, a town, a state: "Bela Vista, São Paulo - SP", "Ballincollig\nCo. Cork")
 * and a postcode alone on the line under them: "01310-200", "EH9 1HG", "P31 X2T6"
 */
const TOWN_LINE_PART = `(?:(?:Co\\.|TP\\.|Tp\\.)[ \\t]{1,4})?${TOWN}(?:,[ \\t]{0,4}${TOWN})?(?:[ \\t]{0,4}[-–/][ \\t]{0,4}[A-Z]{2}(?![\\p{L}]))?`;
const TOWNS_POSTCODE_LINE = new RegExp(
  `(?:[ \\t]{0,8}\\r?\\n[ \\t]{0,8}${TOWN_LINE_PART}){1,2}[ \\t]{0,8}\\r?\\n[ \\t]{0,8}(?:\\d{5}-\\d{3}|${UK_CA}|[A-Z]\\d{2}[ ]?[A-Z\\d]{4}|\\d{4,6})(?![\\p{L}\\p{N}])`,
  "uy",
);
/** a house number and a blank before the postcode line: the flat of "Kalevankatu 31 A 4\n00100 Helsinki" */
const BARE_FLAT = /[ \t]\d{1,3}(?=[ \t]*\r?\n)/y;

/** Countries in English and in their own languages, for the line under a postcode and town. */
export const COUNTRIES =
  "USA|United States|U\\.S\\.A\\.|United Kingdom|UK|England|Scotland|Wales|Ireland|Éire|Canada|Australia|New Zealand|India|Nigeria|Ghana|Kenya|South Africa|Germany|Deutschland|Austria|Österreich|Switzerland|Schweiz|Suisse|Svizzera|France|Belgium|Belgique|België|Netherlands|Nederland|Luxembourg|Spain|España|Portugal|Italy|Italia|Brazil|Brasil|Mexico|México|Argentina|Chile|Colombia|Peru|Perú|Denmark|Danmark|Norway|Norge|Sweden|Sverige|Finland|Suomi|Iceland|Ísland|Poland|Polska|Czech Republic|Czechia|Česko|Česká republika|Slovakia|Slovensko|Hungary|Magyarország|Romania|România|Moldova|Bulgaria|Croatia|Hrvatska|Serbia|Srbija|Slovenia|Slovenija|Bosnia and Herzegovina|Greece|Turkey|Türkiye|Azerbaijan|Azərbaycan|Georgia|Armenia|Ukraine|Russia|Estonia|Eesti|Latvia|Latvija|Lithuania|Lietuva|Belarus|Kazakhstan|Uzbekistan|Oʻzbekiston|Israel|Egypt|Morocco|Japan|China|Korea|Vietnam|Indonesia|Philippines|Singapore|Malaysia|Thailand";
const COUNTRY_AT = new RegExp(`${SEP}(?:${COUNTRIES})(?![\\p{L}\\p{N}])`, "uy");
/** a country between the street and the postcode: "Tammsaare tee 104, Estonia 12918 Tallinn", "…\nFinland FI-00180 Helsinki" */
const COUNTRY_POSTCODE_TOWN = new RegExp(`${SEP}(?:${COUNTRIES}),?[ \\t]+(?:${POSTCODE})[ \\t]+(?:${TOWN})`, "uy");
/** what may stand before a street: a flat ("Flat 4, 27 Marchmont Crescent"), a postcode and town ("1052 Budapest\nVáci u. 19.") */
const UNIT_BEFORE = /(?:Flat|Apt\.?|Apartment|Unit|Suite|Room)[ \t]?#?[\p{L}\p{N}-]{1,6},[ \t]{0,4}$/u;
const LOCALITY_BEFORE = new RegExp(
  `(?:[A-Z]{2}-?)?\\d{4,5}[ \\t]{1,4}${TOWN}(?:,[ \\t]{0,4}|[ \\t]{0,4}\\r?\\n[ \\t]{0,4})$`,
  "u",
);

const POSTCODE_LABELLED =
  /\b(?:post\s?code|postal\s+code|zip(?:\s?code)?(?:\/postal\s+code)?|plz|cep|postnummer|postnr|kod\s+pocztowy|irányítószám|psč|código\s+postal|code\s+postal)\b[^\n\d]{0,15}?((?:[A-Za-z]{2}-?)?\d{3,6}(?:[- ]\d{2,4})?(?:[ ]?[A-Z]{2}(?![\p{L}]))?|[A-Z]{1,2}\d[A-Z\d]?[ ]?\d[A-Z]{2}|[A-Z]\d[A-Z][ ]?\d[A-Z]\d)(?![\p{L}\p{N}])/giu;
const UNIT_LABELLED = new RegExp(
  `\\b(?:apt\\/suite|apartment|apt|suite|unit|flat|lgh|lägenhet|apto|piso|wohnung)\\b[ \\t]*[:#]?[ \\t]*(${UNIT_PART})`,
  "giu",
);
/** "Apt 4B", "Suite 210" standing alone (at a line start or after punctuation), capitalised */
gateWords(
  POSTCODE_LABEL,
  "post postcode postal zip zipcode plz cep postnummer postnr kod code irányítószám psč código".split(" "),
);
gateWords(UNIT_LABEL, "apt apartment suite unit flat lgh lägenhet apto piso wohnung ste".split(" "));
const UNIT_ALONE = /(?<=(?:^|[\n:;(,])[ \t]{0,4})(?:Apt\.?|Apartment|Suite|Ste\.)[ \t]?#?\d{1,5}[A-Z]?(?![\p{L}\p{N}])/gu;

export function findWorldAddresses(text: string): PiiEntity[] {
  const out: PiiEntity[] = [];
  const add = (start: number, end: number, score: number) => out.push(extended(text, start, end, score));
  // the street patterns run only when a word of theirs occurs in the text (keywords.ts)
  const gates = keywordFlags(text);
  if (gates & STREET_WORD_AFTER)
    for (const m of onGatedLines(text, STREET_AFTER, STREET_WORD_AFTER)) {
      const start = trimLeadingWords(m.index, m[0]);
      // the street word needs a name before it: "utca 5" alone is no address
      if (start < 0) continue;
      add(start, m.index + m[0].length, 0.87);
    }
  if (gates & STREET_WORD_BEFORE)
    for (const m of onGatedLines(text, STREET_BEFORE, STREET_WORD_BEFORE)) {
      if (!/\d/.test(m[0]) && !UNIT_AT.test(text.slice(m.index + m[0].length, m.index + m[0].length + 12))) {
        UNIT_AT.lastIndex = 0;
        continue;
      }
      UNIT_AT.lastIndex = 0;
      if (!streetBeforeValid(m[0])) continue;
      add(m.index, m.index + m[0].length, 0.87);
    }
  if (gates & STREET_PREPOSITION)
    for (const m of onGatedLines(text, STREET_PREPOSITION_RE, STREET_PREPOSITION)) add(m.index, m.index + m[0].length, 0.87);
  if (gates & STREET_ENDING)
    for (const m of onGatedLines(text, STREET_COMPOUND, STREET_ENDING)) {
      // "aggregate 10", "delegate 5": an everyday word that ends like a street is not one
      if (isEnglishWord(m[0].slice(0, m[0].search(/[ \t]/)))) continue;
      add(m.index, m.index + m[0].length, 0.87);
    }
  for (const at of addressCues(text, gates)) {
    const end = stickyAt(NAME_NUMBER_AT, text, at);
    if (end < 0) continue;
    const start = trimLeadingWords(at, text.slice(at, end), false);
    // "go to Felipe on 307 138 853": a lower-case word inside, or more digit groups after, make it no address
    if (
      start < 0 ||
      /[ \t]\p{Ll}/u.test(text.slice(start, end).replace(PARTICLES, " ")) ||
      /^[ .-]\d/.test(text.slice(end, end + 2))
    )
      continue;
    add(start, end, 0.86);
  }
  // a line with a name and number above a line with a postcode: tried at each line start (a line below needed)
  for (let line = text.includes("\n") ? 0 : -1; line >= 0; line = text.indexOf("\n", line) + 1 || -1) {
    LINE_POSTAL_AT.lastIndex = line;
    const m = LINE_POSTAL_AT.exec(text);
    if (!m) continue;
    const start = line + m[0].length - m[0].trimStart().length;
    if (trimLeadingWords(start, m[0].trimStart(), false) !== start) continue;
    add(start, line + m[0].length, 0.87);
  }
  if (text.includes("APO") || text.includes("FPO") || text.includes("DPO"))
    for (const m of text.matchAll(MILITARY)) out.push(entity("address", text, m.index, m.index + m[0].length, 0.9));
  for (const re of [POSTCODE_LABELLED, UNIT_LABELLED]) {
    if ((gates & (re === POSTCODE_LABELLED ? POSTCODE_LABEL : UNIT_LABEL)) === 0) continue;
    for (const m of text.matchAll(re)) {
      const value = m[1];
      const start = m.index + m[0].length - value.length;
      out.push(entity("address", text, start, start + value.length, 0.8));
    }
  }
  if (gates & UNIT_LABEL)
    for (const m of text.matchAll(UNIT_ALONE)) out.push(entity("address", text, m.index, m.index + m[0].length, 0.75));
  return out;
}

/**
 * Where each match of ADDRESS_CUE ends, in text order, as a scan of the text finds them: tried only
 * where a word starts with the beginning of one of its phrases, when keywords.ts knows those places.
 */
function addressCues(text: string, gates: number): number[] {
  const ends: number[] = [];
  const starts = prefixStarts(text);
  if (starts === null) {
    for (const m of text.matchAll(ADDRESS_CUE)) ends.push(m.index + m[0].length);
    return ends;
  }
  if ((gates & ADDRESS_CUE_PREFIX) === 0) return ends;
  let end = 0;
  for (const at of starts) {
    if (at < end) continue;
    const next = stickyAt(ADDRESS_CUE_AT, text, at);
    if (next < 0) continue;
    ends.push(next);
    end = next;
  }
  return ends;
}

const PARTICLES = /[ \t](?:de|do|da|das|dos|del|della|di|van|von|der|den|la|le|bəy|bey)(?=[ \t])/gu;

/**
 * The address at `start`..`end` with what follows it taken in (extend), scored higher when a
 * postcode and town or a unit confirm it.
 */
export function extended(text: string, start: number, end: number, score: number): PiiEntity {
  const first = text.charAt(start);
  const lower = first !== first.toUpperCase();
  const to = extend(text, end, lower);
  const from = extendBack(text, start);
  return entity("address", text, from, to, to > end || from < start ? Math.max(score, 0.92) : score);
}

/** Start of the address once a flat or a postcode and town written before the street are taken in. */
function extendBack(text: string, start: number): number {
  const c = text.charCodeAt(start - 1);
  // only after a blank, a line break or a comma's blank
  if (!(c === 32 || c === 9 || c === 10)) return start;
  const lo = Math.max(0, start - 60);
  const before = text.slice(lo, start);
  for (const re of [UNIT_BEFORE, LOCALITY_BEFORE]) {
    const m = re.exec(before);
    if (!m) continue;
    const at = lo + m.index;
    // the match starts at a word's start
    if (at > 0 && /[\p{L}\p{N}]/u.test(text.charAt(at - 1))) continue;
    return at;
  }
  return start;
}

/**
 * Start of the street once the words before its name that are everyday English or function
 * words are dropped ("could not find Sīpeles dambis 847" starts at "Sīpeles"); -1 when no word
 * of the name is left before the street word or the number.
 */
function trimLeadingWords(start: number, match: string, streetWordLast = true): number {
  // the words are the runs of characters other than blanks and commas
  const n = match.length;
  let count = 0;
  for (let i = 0; i < n; ) {
    while (i < n && isWordGap(match.charCodeAt(i))) i++;
    if (i === n) break;
    count++;
    while (i < n && !isWordGap(match.charCodeAt(i))) i++;
  }
  // the last word is the number; with a street word after the name, the one before it too
  const named = count - (streetWordLast ? 2 : 1);
  let k = 0;
  for (let i = 0; k < named; k++) {
    while (isWordGap(match.charCodeAt(i))) i++;
    const from = i;
    while (i < n && !isWordGap(match.charCodeAt(i))) i++;
    if (!isFunctionWord(match.slice(from, i))) return start + from;
  }
  return -1;
}

/** a blank or a comma: what separates the words of trimLeadingWords */
const isWordGap = (c: number) => c === 32 || c === 9 || c === 44;

function isFunctionWord(w: string): boolean {
  let end = w.length;
  while (end > 0 && (w.charCodeAt(end - 1) === 46 || w.charCodeAt(end - 1) === 58)) end--;
  const bare = w.slice(0, end);
  return bare.length > 0 && (isStopword(bare) || isEnglishWord(bare));
}

/** A lower-case street word ("place", "route", "via") needs a capitalised name: "place an order for 5" is no address. */
function streetBeforeValid(match: string): boolean {
  const words = match.split(/[ \t]+/);
  // "12 via email": the street word is the first word after a leading house number
  if (/^\d/.test(words[0])) words.shift();
  const first = words[0];
  if (first.charCodeAt(0) >= 65 && first.charCodeAt(0) <= 90) return true;
  if (!isEnglishWord(first.replace(/\.$/, ""))) return true;
  // skip particles ("de", "da", "l'") to the first word of the name
  for (let k = 1; k < words.length; k++) {
    const w = words[k];
    if (/^(?:de|del|des|du|di|da|do|dos|das|della|la|le|les|l'|d')$/.test(w)) continue;
    return w.charAt(0) !== w.charAt(0).toLowerCase();
  }
  return false;
}

/** End of the address once unit parts, a postcode and town and a country line that follow `end` are taken in. */
function extend(text: string, end: number, lower: boolean): number {
  let at = end;
  for (let k = 0; k < 4; k++) {
    const next = stickyAt(UNIT_AT, text, at);
    if (next < 0) break;
    at = next;
  }
  let locality = stickyAt(POSTCODE_TOWN, text, at);
  if (locality < 0 && lower) locality = stickyAt(POSTCODE_TOWN_LOWER, text, at);
  if (locality < 0) {
    // a country before the postcode, or town lines above a postcode alone
    const other = Math.max(stickyAt(COUNTRY_POSTCODE_TOWN, text, at), stickyAt(TOWNS_POSTCODE_LINE, text, at));
    if (other >= 0) return other;
  }
  // (never a contact label taken for a town: "…, 50674 Köln, Tel 0221/941 2273")
  if (locality < 0 && !contactLabelAt(text, at)) locality = stickyAt(TOWN_POSTCODE, text, at);
  if (locality < 0) {
    // a flat number alone after the house number, then the postcode line
    const flat = stickyAt(BARE_FLAT, text, at);
    if (flat >= 0) locality = stickyAt(POSTCODE_TOWN, text, flat);
  }
  if (locality < 0) return at;
  at = locality;
  const country = stickyAt(COUNTRY_AT, text, at);
  return country < 0 ? at : country;
}

/** Labels of a phone or an email, lower case: a word after an address that is no town. */
const CONTACT_LABELS = new Set(
  "tel tél tlf fax phone ph mob mobile cell handy gsm puh tfn telefon telefone teléfono telefono téléphone whatsapp email e-mail mail".split(
    " ",
  ),
);

/** Whether the first word after the separators at `at` is a contact label. */
function contactLabelAt(text: string, at: number): boolean {
  let k = at;
  while (k < text.length && k < at + 12 && /[\s,·•|]/.test(text[k] as string)) k++;
  let e = k;
  while (e < text.length && e < k + 12 && /[\p{L}-]/u.test(text[e] as string)) e++;
  return e > k && CONTACT_LABELS.has(text.slice(k, e).toLowerCase());
}

function stickyAt(re: RegExp, text: string, at: number): number {
  re.lastIndex = at;
  const m = re.exec(text);
  return m ? at + m[0].length : -1;
}
