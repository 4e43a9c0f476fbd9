/**
 * A name right after a form's name label and its colon ("Saaja: Rein Kask", "Nadawca: Jan Pawlak,",
 * "Patient: Liam Ó Briain"): two or three capitalised words up to the field's end (a comma, a
 * semicolon, a bracket, a line break, a digit or the text's end) are a name when one of them is a
 * name of the lists that is no everyday English word; the others may be anything the lists read
 * otherwise ("Rein", "Jan" are English words or a month's abbreviation, and names here). Issue 41:
 * the lists miss one part of many names, and a labelled slot needs no more evidence than that.
 */

import { keyedFields } from "./fields";
import { isEnglishWord, isGazetteerName } from "./gazetteer";
import { isFamilyName, isGivenName } from "./given-names";
import { GIVEN_NAMES, SURNAME_PARTICLE_LIST, SURNAME_PARTICLES } from "./name-lists";
import { FIELD_LABELS } from "./names-extra";
import { entity, type PiiEntity } from "./types";

/** at most this many finds of each kind per text (each is compared with the entities found) */
const MAX_SLOTS = 256;

// (the surname particles, and Irish and Scottish ones written with a capital)
const PARTICLE = `(?:${[...SURNAME_PARTICLE_LIST, "Ó", "Ní", "Mac", "Mc"].join("|")})`;
/** the run after the label's colon, up to the field's end */
const RUN_AT = new RegExp(
  String.raw`[ \t]{0,4}(\p{Lu}[\p{Ll}\p{M}'’-]{0,30}(?:[ \t]{1,4}(?:${PARTICLE}[ \t]{1,4}){0,3}\p{Lu}[\p{Ll}\p{M}'’-]{0,30}){1,2})(?=[ \t]{0,4}(?:[,;(<\r\n]|$|\d|[+]))`,
  "uy",
);
/** a label word and its colon */
const LABEL = /([\p{L}]{2,20})[ \t]{0,2}:/gu;

function known(word: string): boolean {
  return (isGazetteerName(word) || isFamilyName(word)) && !isEnglishWord(word);
}

/** a mention in a chat ("@Mateusz pls send", "cc @Ana Lima"): the name without its "@" (an email's "@" has its local part before it) */
const MENTION = /(?<![\p{L}\p{N}._%+-])@(\p{Lu}[\p{Ll}\p{M}]{1,20}(?:[ \t]\p{Lu}[\p{Ll}\p{M}]{1,20})?)(?![\p{L}\p{N}@.])/gu;

/** Mentions whose first word is a given name of the lists and no everyday English word. */
function mentions(f: SlotFinds): void {
  let seen = 0;
  for (const m of f.text.matchAll(MENTION)) {
    // (each find is checked against the others: a text of thousands of them is no record, and stops there)
    if (++seen > MAX_SLOTS) break;
    const run = m[1] as string;
    const first = run.split(/[ \t]/)[0] as string;
    if (!(GIVEN_NAMES.has(first) || isGivenName(first)) || isEnglishWord(first)) continue;
    const from = (m.index as number) + 1;
    f.addIfFree(from, from + run.length, 0.75);
  }
}

/**
 * A name field of a record as machines write it: a query string ("first_name=Chloé&last_name=Dubois"),
 * JSON ("first":"Yusuf"), or a key and a colon ("customer_name: Ana Lima"): the key says what the
 * value is.
 */
const NAME_KEY = `(?:(?:first|last|given|family|full|middle|customer|contact|client|recipient|sender|holder|owner|display|user)[_-]?name|(?:first|last|given|family)(?:_?name)?|[fl]name|surname|name)`;
const KEY_VALUE = new RegExp(
  String.raw`(?:(?<=[?&;{,\s"'])|^)(?:"(${NAME_KEY})"[ 	]{0,2}:[ 	]{0,2}"([^"
]{1,60})"|(${NAME_KEY})=([^&\s#"]{1,60})|(${NAME_KEY})[ 	]{0,2}:[ 	]{1,2}(\p{L}[\p{L}\p{M}'’. -]{0,58}\p{L}))`,
  "iuy",
);
/** the stems of NAME_KEY: a field is tried only where one stands */
const KEY_STEMS = /name|first|last|surname|given|family/giu;

/** Whether the value of a name field reads as a name: letters (a "+" or "%20" for blanks), no everyday English word but a given name. */
function nameValue(value: string): boolean {
  const words = value
    .replace(/\+|%20/g, " ")
    .split(/[ \t]+/)
    .filter(Boolean);
  if (words.length === 0 || words.length > 4) return false;
  return words.every((w) => /^\p{L}[\p{L}\p{M}'’.-]*$/u.test(w) && (!isEnglishWord(w) || GIVEN_NAMES.has(w) || isGivenName(w)));
}

function keyedNames(f: SlotFinds): void {
  // every form of KEY_VALUE has a ":" or a "=" after its key: a text with neither has no such field
  if (!f.text.includes(":") && !f.text.includes("=")) return;
  let seen = 0;
  for (const { at, m } of keyedFields(f.text, KEY_STEMS, KEY_VALUE, 24, '"')) {
    // (each find is checked against the others: a text of thousands of them is no record, and stops there)
    if (++seen > MAX_SLOTS) break;
    const value = (m[2] ?? m[4] ?? m[6]) as string | undefined;
    if (!value || !nameValue(value)) continue;
    const from = at + m[0].lastIndexOf(value);
    f.addIfFree(from, from + value.length, 0.8);
  }
}

/**
 * The display name of an email address, as mail headers write it in any language and script
 * ("From: Mei Ling Tan <meiling.tan@…>", "מאת: יונתן אברמוביץ' <…>", "Chen, Wei-Ling [mailto:…]",
 * "On Thu, Rukhsana Begum <…> wrote:"): the words right before "<address>" or "[mailto:", after a
 * label, a quote, a comma or a line's start; not a team, a role or a firm ("Support <help@…>").
 */
const DISPLAY_NAME =
  /(?:^|[\n:,;>"(]|\s-\s)[ \t]{0,4}"?([\p{L}\p{M}][\p{L}\p{M}'’. -]{0,48}?(?:,[ \t]{1,2}[\p{L}\p{M}][\p{L}\p{M}'’. -]{0,30}?)?)"?[ \t]{0,2}(?:<[^<>\s@]{1,64}@[^<>\s]{1,255}>|\[mailto:)/gmu;
const NOT_PERSON =
  /\b(?:team|support|service|services|info|noreply|no-reply|sales|billing|admin|newsletter|notifications?|helpdesk|office|hr|group|inc|ltd|llc|gmbh|ag|bv|ab|as|oy|sa|srl|bank|shop|store|customer|care|accounts?|payroll|reception|contact|mailer|daemon|system|google|via)\b/i;
/** the surname particles, and those a display name or a header writes too ("binti", "d'", "y") */
const NAME_PARTICLES = new Set([...SURNAME_PARTICLES, "binti", "bte", "y", "e", "d'", "d’", "mac"]);
const DISPLAY_QUICK = /<[^<>\s@]{1,64}@|\[mailto:/;

function displayNames(f: SlotFinds): void {
  if (!DISPLAY_QUICK.test(f.text)) return;
  let seen = 0;
  for (const m of f.text.matchAll(DISPLAY_NAME)) {
    // (each find is checked against the others: a text of thousands of them is no record, and stops there)
    if (++seen > MAX_SLOTS) break;
    // words of a sentence before the name are no part of it ("Forwarded by Olga Wright <…>")
    const raw = (m[1] as string).trim();
    const lead = raw.split(" ").findLastIndex((w) => /^\p{Ll}/u.test(w) && !NAME_PARTICLES.has(w));
    const name =
      lead < 0
        ? raw
        : raw
            .split(" ")
            .slice(lead + 1)
            .join(" ");
    if (!name) continue;
    const words = name.split(/[ \t,]+/).filter(Boolean);
    if (words.length === 0 || words.length > 5 || NOT_PERSON.test(name)) continue;
    // a capital first where the script has capitals; lower-case words only as the particles of a name ("van der", "binti", "d'")
    const first = name.charAt(0);
    if (first !== first.toUpperCase() || words.some((w) => /^\p{Ll}/u.test(w) && w.length > 5)) continue;
    const from = (m.index as number) + m[0].indexOf(name);
    f.addOverNames(from, from + name.length, 0.85);
  }
}

/**
 * A mail header's sender or recipient without an address, in the languages the engine reads
 * ("Van: Jan-Willem van der Heijden Aan: Sanne de Vries", "Od: … Do: Paweł Nowak", "מאת: נועה
 * ברקוביץ אל: אבי כהן", "差出人：佐藤 美咲"): the words after the label up to the next label, a line
 * break, "<" or punctuation, at most five; and the label itself is no name ("Von", "De", "De la").
 */
const HEADER_LABELS =
  "From|To|Cc|Van|Aan|De la|De|Para|Od|Do|Către|Von|An|Från|Till|Fra|Til|Lähettäjä|Vastaanottaja|Feladó|Címzett|Kimden|Kime|От|Кому|Від|Από|Προς|מאת|אל|من|إلى|发件人|收件人|寄件人|差出人|宛先|보낸 사람|받는 사람|จาก|ถึง|Từ|Gửi|Đến";
const HEADER_NAME = new RegExp(
  `(?:^|(?<=[\\s>]))(${HEADER_LABELS})[ \\t]{0,2}[:：][ \\t]{0,3}([\\p{L}\\p{M}][\\p{L}\\p{M}'’.-]{0,30}(?:[ \\t]{1,2}(?!(?:${HEADER_LABELS})[ \\t]{0,2}[:：])[\\p{L}\\p{M}][\\p{L}\\p{M}'’.-]{0,30}){0,4})`,
  "gu",
);
const HEADER_QUICK = /[:：]/;
const HEADER_WORDS = new Set(HEADER_LABELS.split("|"));

function headerNames(f: SlotFinds): void {
  const { text } = f;
  if (!HEADER_QUICK.test(text)) return;
  let seen = 0;
  for (const m of text.matchAll(HEADER_NAME)) {
    // (each find is checked against the others: a text of thousands of them is no record, and stops there)
    if (++seen > MAX_SLOTS) break;
    let name = m[2] as string;
    // a cased script's name: capitalised words, up to the first that is not ("Sanne, de sleutel …" ends at the comma)
    const words = name.split(/[ \t]+/);
    const cased = /[A-Za-zÀ-ɏͰ-ӿ]/.test(name);
    if (cased) {
      // capitalised words, particles between them ("van der", "de"), up to the next header label
      let n = 0;
      for (;;) {
        let k = n;
        while (k < words.length && NAME_PARTICLES.has(words[k] as string)) k++;
        const w = words[k];
        if (w === undefined || !/^\p{Lu}/u.test(w) || HEADER_WORDS.has(w) || (k > n && n === 0)) break;
        n = k + 1;
      }
      if (n === 0) continue;
      name = words.slice(0, n).join(" ");
    } else if (words.length > 3) continue;
    if (NOT_PERSON.test(name) || (cased && !name.split(" ").some((w) => isGivenName(w) || isGazetteerName(w) || isFamilyName(w))))
      continue;
    const from = (m.index as number) + m[0].length - (m[2] as string).length;
    f.addOverNames(from, from + name.length, 0.85);
  }
  // the labels themselves found as names ("Von: …", "De: …")
  for (const e of f.entities)
    if (e.type === "name" && HEADER_WORDS.has(e.text) && /^[ \t]{0,2}[:：]/.test(text.slice(e.end, e.end + 3))) f.dropped.add(e);
}

/** What the slot passes find in one text: names to add, and names found before that give way to them. */
class SlotFinds {
  readonly added: PiiEntity[] = [];
  readonly dropped = new Set<PiiEntity>();

  constructor(
    readonly text: string,
    readonly entities: PiiEntity[],
  ) {}

  /** Adds a name over [from, to) unless an entity found before or a name added overlaps it. */
  addIfFree(from: number, to: number, score: number): void {
    const overlaps = (e: PiiEntity) => e.start < to && e.end > from;
    if (!this.entities.some(overlaps) && !this.added.some(overlaps)) this.added.push(entity("name", this.text, from, to, score));
  }

  /** The same, but the names found before inside it give way to it ("Chen" of "Chen, Wei-Ling"); anything else keeps its place. */
  addOverNames(from: number, to: number, score: number): void {
    const inside = (e: PiiEntity) => e.type === "name" && e.start >= from && e.end <= to;
    const overlaps = (e: PiiEntity) => e.start < to && e.end > from;
    if (this.entities.some((e) => overlaps(e) && !inside(e)) || this.added.some(overlaps)) return;
    for (const e of this.entities) if (inside(e)) this.dropped.add(e);
    this.added.push(entity("name", this.text, from, to, score));
  }

  /** The entities with the names added, less those that gave way, in text order. */
  result(): PiiEntity[] {
    if (this.added.length === 0 && this.dropped.size === 0) return this.entities;
    const kept = this.dropped.size > 0 ? this.entities.filter((e) => !this.dropped.has(e)) : this.entities;
    return [...kept, ...this.added].sort((a, b) => a.start - b.start);
  }
}

/** The entities (in text order, not overlapping) with the names of labelled fields and mentions added. */
export function slotNames(text: string, entities: PiiEntity[]): PiiEntity[] {
  const f = new SlotFinds(text, entities);
  keyedNames(f);
  displayNames(f);
  headerNames(f);
  if (text.includes("@")) mentions(f);
  if (text.includes(":")) labelled(f);
  return f.result();
}

/** Names after a form's name label (RUN_AT), one word of them a listed non-English name. */
function labelled(f: SlotFinds): void {
  const { text } = f;
  for (const l of text.matchAll(LABEL)) {
    if (!FIELD_LABELS.has((l[1] as string).toLowerCase())) continue;
    const at = (l.index as number) + l[0].length;
    RUN_AT.lastIndex = at;
    const m = RUN_AT.exec(text);
    if (!m) continue;
    const run = m[1] as string;
    if (!run.split(/[ \t]+/).some(known)) continue;
    const from = at + m[0].indexOf(run);
    f.addIfFree(from, from + run.length, 0.8);
  }
}
