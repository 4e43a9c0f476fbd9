/**
 * Regenerates test/fixtures/eval/pii-world.jsonl (tuning) and pii-world-blind.jsonl (blind):
 * realistic multi-locale PII sets for issue 23, written by a different route than the template
 * sets the engine was first tuned on (build-pii-fixture.ts, build-pii-faker-fixture.ts).
 *
 * - Carrier texts are hand-written free text (support emails, chat lines in lower case, forms,
 *   signatures, multi-line addresses, log lines), one list for the tuning set and a separate list,
 *   written at the same time and never used for tuning, for the blind set.
 * - Values come from the locale modules of @faker-js/faker (MIT): names of 30 locales (Nordic,
 *   Slavic, Hungarian, Baltic, Turkic, Portuguese, Romance, Germanic, English-speaking, Indian,
 *   Nigerian), street addresses in each locale's own format (number after the street, local
 *   street words), postcodes, towns and countries, phone numbers, card numbers, IPs; Chechen and
 *   other Caucasian names from a short hand list (faker has no such locale), half in each set.
 *   The blind set adds five locales the tuning set never draws from.
 * - Names come in the forms the issue lists: as written, in lower case, a surname alone in
 *   running text, with a title, with a middle initial. Addresses: one line, with postcode and
 *   town, multi-line with country, with apartment or suite parts, a postcode or unit standing on
 *   its own after a label, US military (PSC/Unit, Box, APO/FPO/DPO). Structured values (emails,
 *   SSNs, cards, IPs, phones) inside punctuation and split across lines.
 *
 * Run: bun test/eval/build-pii-world-fixture.ts
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  type Faker,
  fakerAZ,
  fakerCS_CZ,
  fakerDA,
  fakerDE,
  fakerDE_AT,
  fakerDE_CH,
  fakerEN_GB,
  fakerEN_IE,
  fakerEN_IN,
  fakerEN_NG,
  fakerEN_US,
  fakerES,
  fakerES_MX,
  fakerFI,
  fakerFR,
  fakerFR_BE,
  fakerHR,
  fakerHU,
  fakerIT,
  fakerLV,
  fakerNB_NO,
  fakerNL,
  fakerPL,
  fakerPT_BR,
  fakerPT_PT,
  fakerRO,
  fakerRO_MD,
  fakerSK,
  fakerSL_SI,
  fakerSR_RS_latin,
  fakerSV,
  fakerTR,
  fakerUZ_UZ_latin,
} from "@faker-js/faker";

type Kind = "name" | "address" | "email" | "phone_number" | "ssn" | "credit_card" | "ip_address";
interface Gold {
  text: string;
  entities: { type: Kind; start: number; end: number; text: string }[];
}

const TUNING_LOCALES: Faker[] = [
  fakerHU,
  fakerDA,
  fakerNB_NO,
  fakerSV,
  fakerFI,
  fakerPL,
  fakerCS_CZ,
  fakerSK,
  fakerHR,
  fakerTR,
  fakerAZ,
  fakerPT_BR,
  fakerPT_PT,
  fakerDE,
  fakerDE_AT,
  fakerFR,
  fakerES,
  fakerES_MX,
  fakerIT,
  fakerRO,
  fakerLV,
  fakerNL,
  fakerEN_US,
  fakerEN_GB,
  fakerEN_IN,
  fakerEN_NG,
];
/** Locales only the blind set draws from, besides all of the above. */
const BLIND_ONLY_LOCALES: Faker[] = [
  fakerSL_SI,
  fakerSR_RS_latin,
  fakerRO_MD,
  fakerFR_BE,
  fakerDE_CH,
  fakerEN_IE,
  fakerUZ_UZ_latin,
];

/** Chechen and other North Caucasian names (no faker locale has them): [given names, surnames] per set. */
const CAUCASIAN = {
  tuning: [
    "Ramzan Magomed Aslan Zelimkhan Ruslan Khava Zarema Aminat Malika Isa".split(" "),
    "Dudayev Maskhadov Umarov Gakayev Tsechoev Dzhabrailov Saidov Aliev Bisultanov Yandarbiyev".split(" "),
  ],
  blind: [
    "Akhmed Adlan Shamil Movsar Turpal Zulikhan Kheda Luiza Petimat Aishat".split(" "),
    "Basayev Khasbulatov Zakayev Mezhidov Elmurzaev Bakhaev Vitsiev Idigov Esambaev Dasaev".split(" "),
  ],
};

const TITLES = ["Mr.", "Mrs.", "Ms.", "Dr.", "Mr", "Mrs", "Ms", "Dr", "Prof.", "Herr", "Frau", "Pan", "Pani", "Sr.", "Sra."];

/** Hand-written carriers for the tuning set. Slots: {name[:form]}, {addr[:form]}, {email}, {phone}, {card}, {ssn}, {ip}, {n}. */
const TUNING_CARRIERS: string[] = [
  "Hello,\n\nI ordered a lamp two weeks ago and it still has not arrived. Could you check where it is? It should go to {addr:full}.\n\nKind regards,\n{name}",
  "hi its {name:lower} again, the parcel went to {addr:line} but i moved, can u fix",
  "Name: {name}\nStreet: {addr:line}\nPostcode: {addr:zip}\nPhone: {phone}\nEmail: {email}",
  "{name:title} called at 10:40 about the broken kettle. Call back on {phone} after 2pm.",
  "Please send the contract to\n{addr:multi}\nAttention: {name}",
  "I spoke to {name:surname} from accounting; according to {name:surname2} the refund is already approved.",
  "Our driver could not find {addr:line}. The customer ({name}) says the entrance is around the back.",
  "Card on file: {card} (exp 09/27). Please charge it for order {n}.",
  "Login from a new device, ip={ip}; user {email} confirmed it was them.",
  "Hi team, {name:initial} will take over the Copenhagen account from Monday. Welcome aboard!",
  "Billing address: {addr:unit}\nVAT ID: DK{n}",
  "can you call me back {phone} thx",
  "Thanks {name:given}! Shipping to {addr:full} works for me.",
  "The Product Manager and the Sales Team met in Berlin on Friday. Minutes by {name}.",
  "SSN: {ssn}. Please update the tax form for {name}.",
  "[2026-10-03 14:22:01] WARN auth failed for {email} from [{ip}]",
  "Forwarded message\nFrom: {name} <{email}>\nSubject: Re: Invoice {n}\n\nPlease use my new address: {addr:full}.",
  "ship to {addr:lower}, {name:lower}",
  "My card number is {card:split} and the CVV is on the back.",
  "Military address for the replacement: {addr:military}",
  "Best wishes from Lisbon,\n{name}\n{addr:multi}",
  "Our Customer Success Lead, {name:title}, will reach out. New Year Sale ends Sunday.",
  "Driver notes: leave it with {name:surname} at reception, {addr:line}.",
  "Could you please update my phone number to ({phone})? The old one no longer works.",
  "apt/suite: {addr:unitonly}\nbuilding: {addr:line}",
  "Reported by {name} on the Community Forum: Dark Mode breaks the Settings Page.",
  "Guest list: {name}, {name}, {name:initial}.",
  "Please wire the deposit and send the receipt to {email}; questions go to {name:given} on {phone}.",
  "Ticket #{n}: Visa {card} declined twice at checkout. Customer IP {ip}.",
  "the new tenant is {name:lower}, moving into {addr:line} in March",
  "Dear {name:title},\nWe have received your application. Your case number is {n}.",
  "Delivery failed: address {addr:full} not found. Zip code given: {addr:zip}.",
  "{name:surname} said the Quarterly Report is late because the Finance Department changed the template.",
  "phone:{phone};email:{email};ip:{ip}",
  "CEO {name} and CTO {name} will present at the Annual General Meeting in Oslo.",
  "Hi! I'm {name:given}, I live at {addr:line} (2nd floor). Please ring twice.",
  "my ssn is {ssn} and my card is {card}",
  "Return address:\n{name}\n{addr:multi}",
]; // 38 carriers

/** Hand-written carriers for the blind set: other wording, other situations, same kinds of case. */
const BLIND_CARRIERS: string[] = [
  "Good morning,\nthe invoice for {name} still shows the old address. The correct one is {addr:full}. Thank you!",
  "yo this is {name:lower}, pls deliver to {addr:line} not the office",
  "Full name: {name}\nAddress line 1: {addr:line}\nZIP/Postal code: {addr:zip}\nMobile: {phone}",
  "As discussed with {name:title}, the technician will come on Thursday.",
  "Recipient:\n{name}\n{addr:multi}",
  "Escalating this to {name:surname}, who handles the Nordic region. {name:surname2} is on leave until June.",
  "The courier says {addr:line} does not exist. Could {name} confirm the house number?",
  "Payment failed for card {card}, please retry.",
  "Blocked request from {ip} (too many attempts) for account {email}.",
  "Please add {name:initial} to the distribution list for the Product Launch.",
  "Invoice to: {addr:unit}",
  "text me at {phone} when ur outside",
  "Cheers {name:given}, the spare parts can go to {addr:full}.",
  "The Marketing Director approved the Spring Campaign. Notes taken by {name}.",
  "Social Security Number {ssn} belongs to the applicant, {name}.",
  "2026-11-02T08:15:44Z client={ip} user=<{email}> status=401",
  "-----Original Message-----\nFrom: {name} [{email}]\nSent: Tuesday\n\nWe relocated to {addr:full}, please update your records.",
  "send it to {addr:lower} pls, thanks {name:lower}",
  "Card: {card:split}\nName on card: {name}",
  "Ship the boots to my unit: {addr:military}",
  "Warm regards,\n{name}\n{addr:multi}\nTel. {phone}",
  "The Head of Operations, {name:title}, signed off the Budget Review yesterday.",
  "Leave the package with {name:surname} next door at {addr:line}.",
  'New number is "{phone}", please save it.',
  "flat: {addr:unitonly}, street: {addr:line}",
  "{name} posted in the Help Center: the Export Button greys out on Safari.",
  "Attendees: {name:initial}, {name}, {name}.",
  "Please refund to the card ending in the number {card} and email the confirmation to {email}.",
  "Fraud alert: Mastercard {card} used from IP {ip} in another country.",
  "new flatmate {name:lower} moves into {addr:line} next week",
  "Dear {name:title}, thank you for your patience while we review claim {n}.",
  "We could not deliver to {addr:full}; postcode on the label: {addr:zip}.",
  "{name:surname} thinks the Annual Survey should move to October.",
  "contact={email}|tel={phone}|addr_ip={ip}",
  "The Board appointed {name} as Chair and {name} as Treasurer at the Spring Meeting in Vienna.",
  "Hey, {name:given} here. My address is {addr:line}, the blue door.",
  "ssn {ssn}, card {card}, thanks",
  "Sender:\n{name}\n{addr:multi}",
]; // 38 carriers

const COUNTRY: Map<Faker, string> = new Map<Faker, string>([
  [fakerHU, "Hungary"],
  [fakerDA, "Denmark"],
  [fakerNB_NO, "Norway"],
  [fakerSV, "Sweden"],
  [fakerFI, "Finland"],
  [fakerPL, "Poland"],
  [fakerCS_CZ, "Czech Republic"],
  [fakerSK, "Slovakia"],
  [fakerHR, "Croatia"],
  [fakerTR, "Türkiye"],
  [fakerAZ, "Azerbaijan"],
  [fakerPT_BR, "Brasil"],
  [fakerPT_PT, "Portugal"],
  [fakerDE, "Deutschland"],
  [fakerDE_AT, "Österreich"],
  [fakerFR, "France"],
  [fakerES, "España"],
  [fakerES_MX, "México"],
  [fakerIT, "Italia"],
  [fakerRO, "România"],
  [fakerLV, "Latvia"],
  [fakerNL, "Nederland"],
  [fakerEN_US, "USA"],
  [fakerEN_GB, "United Kingdom"],
  [fakerEN_IN, "India"],
  [fakerEN_NG, "Nigeria"],
  [fakerSL_SI, "Slovenija"],
  [fakerSR_RS_latin, "Srbija"],
  [fakerRO_MD, "Moldova"],
  [fakerFR_BE, "Belgique"],
  [fakerDE_CH, "Schweiz"],
  [fakerEN_IE, "Ireland"],
  [fakerUZ_UZ_latin, "Oʻzbekiston"],
]);

interface Ctx {
  f: Faker;
  locales: Faker[];
  caucasian: string[][];
  /** the person of the current text, so "{name:surname2}" can refer back to another one */
  lastSurname?: string;
}

function pickLocale(c: Ctx): Faker {
  const l = c.f.helpers.arrayElement(c.locales);
  l.seed(c.f.number.int({ min: 1, max: 2 ** 31 }));
  return l;
}

/** A Latin-script given name and surname: faker's, or the Caucasian list one time in twelve. */
function person(c: Ctx): { given: string; surname: string; middle: string } {
  if (c.f.number.int({ min: 0, max: 11 }) === 0) {
    const [g, s] = c.caucasian;
    return { given: c.f.helpers.arrayElement(g), surname: c.f.helpers.arrayElement(s), middle: "A" };
  }
  const l = pickLocale(c);
  const sex = c.f.helpers.arrayElement(["female", "male"] as const);
  const given = l.person.firstName(sex);
  const surname = l.person.lastName(sex);
  return { given, surname, middle: l.person.firstName().charAt(0).toUpperCase() };
}

function nameValue(c: Ctx, form: string): string {
  const p = person(c);
  switch (form) {
    case "lower":
      return `${p.given} ${p.surname}`.toLowerCase();
    case "surname":
    case "surname2":
      return p.surname;
    case "given":
      return p.given;
    case "title":
      return `${c.f.helpers.arrayElement(TITLES)} ${c.f.datatype.boolean(0.5) ? `${p.given} ` : ""}${p.surname}`;
    case "initial":
      return `${p.given} ${p.middle}. ${p.surname}`;
    default:
      return `${p.given} ${p.surname}`;
  }
}

/** "{postcode} {town}" or the US / UK order. */
function locality(l: Faker): string {
  if (l === fakerEN_US) return `${l.location.city()}, ${l.location.state({ abbreviated: true })} ${l.location.zipCode("#####")}`;
  if (l === fakerEN_GB || l === fakerEN_IE || l === fakerEN_IN || l === fakerEN_NG)
    return `${l.location.city()} ${l.location.zipCode()}`;
  return `${l.location.zipCode()} ${l.location.city()}`;
}

function unitPart(c: Ctx): string {
  return c.f.helpers.arrayElement([
    `Apt ${c.f.number.int({ min: 1, max: 99 })}`,
    `Apt. ${c.f.number.int({ min: 1, max: 30 })}B`,
    `Suite ${c.f.number.int({ min: 100, max: 999 })}`,
    `Flat ${c.f.number.int({ min: 1, max: 40 })}`,
    `Unit ${c.f.number.int({ min: 1, max: 60 })}`,
    `${c.f.number.int({ min: 1, max: 9 })}. emelet ${c.f.number.int({ min: 1, max: 20 })}. ajtó`,
    `${c.f.number.int({ min: 1, max: 5 })}. tv.`,
    `lgh ${c.f.number.int({ min: 1001, max: 1304 })}`,
    `m. ${c.f.number.int({ min: 1, max: 80 })}`,
    `apto ${c.f.number.int({ min: 11, max: 902 })}`,
    `Top ${c.f.number.int({ min: 1, max: 24 })}`,
  ]);
}

function military(c: Ctx): string {
  const n = (min: number, max: number) => c.f.number.int({ min, max });
  const ae = c.f.helpers.arrayElement(["AE", "AP", "AA"]);
  const zip = ae === "AA" ? `340${n(10, 99)}` : ae === "AE" ? `09${n(100, 999)}` : `96${n(200, 699)}`;
  return c.f.helpers.arrayElement([
    `PSC ${n(1000, 9999)}, Box ${n(100, 9999)}, APO ${ae} ${zip}`,
    `Unit ${n(2000, 9999)} Box ${n(100, 9999)}\nDPO ${ae} ${zip}`,
    `CMR ${n(400, 499)} Box ${n(100, 9999)}, APO ${ae} ${zip}`,
    `USNS ${c.f.helpers.arrayElement(["Comfort", "Mercy", "Supply", "Yukon"])}\nFPO ${ae} ${zip}`,
    `PSC ${n(1000, 9999)} Box ${n(100, 9999)}\nAPO ${ae} ${zip}`,
  ]);
}

function addressValue(c: Ctx, form: string): string {
  if (form === "military") return military(c);
  if (form === "unitonly") return unitPart(c);
  const l = pickLocale(c);
  if (form === "zip") return l.location.zipCode();
  const street = l.location.streetAddress(false);
  switch (form) {
    case "line":
      return street;
    case "lower":
      return `${street}, ${locality(l)}`.toLowerCase();
    case "unit":
      return `${street}, ${unitPart(c)}, ${locality(l)}`;
    case "multi":
      return `${street}\n${locality(l)}\n${COUNTRY.get(l) ?? ""}`.trimEnd();
    default:
      return `${street}, ${locality(l)}`;
  }
}

function ssn(c: Ctx): string {
  const area = c.f.helpers.arrayElement([c.f.number.int({ min: 1, max: 665 }), c.f.number.int({ min: 667, max: 899 })]);
  const group = c.f.number.int({ min: 1, max: 99 });
  const serial = c.f.number.int({ min: 1, max: 9999 });
  return `${String(area).padStart(3, "0")}-${String(group).padStart(2, "0")}-${String(serial).padStart(4, "0")}`;
}

function card(c: Ctx, split: boolean): string {
  const issuer = c.f.helpers.arrayElement(["visa", "mastercard", "amex", "discover"]);
  const raw = c.f.finance.creditCardNumber(issuer);
  const digits = raw.replace(/\D/g, "");
  // Amex 4-6-5, 13-digit Visa 4-3-3-3, the rest in fours
  const groups =
    digits.length === 15
      ? [digits.slice(0, 4), digits.slice(4, 10), digits.slice(10)]
      : digits.length === 13
        ? [digits.slice(0, 4), digits.slice(4, 7), digits.slice(7, 10), digits.slice(10)]
        : (digits.match(/.{1,4}/g) ?? []);
  const style = c.f.number.int({ min: 0, max: 2 });
  if (split) {
    const cut = c.f.number.int({ min: 1, max: groups.length - 1 });
    return `${groups.slice(0, cut).join(" ")}\n${groups.slice(cut).join(" ")}`;
  }
  return style === 0 ? digits : groups.join(style === 1 ? " " : "-");
}

function phone(c: Ctx): string {
  const l = pickLocale(c);
  const r = c.f.number.int({ min: 0, max: 2 });
  if (r === 0) return l.phone.number({ style: "international" }).replace(/^\+(\d{1,2})(\d{2,3})(\d{3})(\d+)$/, "+$1 $2 $3 $4");
  if (r === 1) return l.phone.number({ style: "national" });
  return l.phone.number({ style: "human" }).replace(/\s*x\d+$/, "");
}

function ip(c: Ctx): string {
  return c.f.datatype.boolean(0.8) ? c.f.internet.ipv4() : c.f.internet.ipv6();
}

function email(c: Ctx): string {
  const l = pickLocale(c);
  return l.internet.email().toLowerCase();
}

function build(seed: number, count: number, carriers: string[], locales: Faker[], caucasian: string[][]): Gold[] {
  const f = fakerEN_US;
  f.seed(seed);
  const c: Ctx = { f, locales, caucasian };
  const out: Gold[] = [];
  for (let i = 0; i < count; i++) {
    const carrier = carriers[i % carriers.length];
    const entities: Gold["entities"] = [];
    let text = "";
    let at = 0;
    for (const m of carrier.matchAll(/\{(name|addr|email|phone|card|ssn|ip|n)(?::(\w+))?\}/g)) {
      text += carrier.slice(at, m.index);
      at = m.index + m[0].length;
      const slot = m[1];
      const form = m[2] ?? "";
      if (slot === "n") {
        text += String(f.number.int({ min: 10000, max: 999999 }));
        continue;
      }
      let type: Kind;
      let value: string;
      if (slot === "name") [type, value] = ["name", nameValue(c, form)];
      else if (slot === "addr") [type, value] = ["address", addressValue(c, form)];
      else if (slot === "email") [type, value] = ["email", email(c)];
      else if (slot === "phone") [type, value] = ["phone_number", phone(c)];
      else if (slot === "card") [type, value] = ["credit_card", card(c, form === "split")];
      else if (slot === "ssn") [type, value] = ["ssn", ssn(c)];
      else [type, value] = ["ip_address", ip(c)];
      entities.push({ type, start: text.length, end: text.length + value.length, text: value });
      text += value;
    }
    out.push({ text: text + carrier.slice(at), entities });
  }
  return out;
}

const dir = join(import.meta.dir, "../fixtures/eval");
const write = (file: string, items: Gold[]) =>
  writeFileSync(join(dir, file), `${items.map((x) => JSON.stringify(x)).join("\n")}\n`);
write("pii-world.jsonl", build(20261126, 228, TUNING_CARRIERS, TUNING_LOCALES, CAUCASIAN.tuning));
write("pii-world-blind.jsonl", build(55023, 228, BLIND_CARRIERS, [...TUNING_LOCALES, ...BLIND_ONLY_LOCALES], CAUCASIAN.blind));
console.log("wrote pii-world.jsonl and pii-world-blind.jsonl (228 texts each)");
