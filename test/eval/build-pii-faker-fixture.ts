/**
 * Regenerates test/fixtures/eval/pii-faker.jsonl (tuning) and pii-faker-holdout.jsonl (held-out):
 * public synthetic data for person names and street addresses, built from the locale data that
 * ships in the @faker-js/faker package (MIT; names and streets of nine locales), not from any
 * list of ours. Each set has its own fixed seed; both draw from the same templates, so the
 * held-out set measures names and addresses the rules never saw in contexts of the same kinds.
 * Names come as written, in ALL CAPS or all lower case (as people type them); addresses in the
 * formats faker writes for each locale, with or without the locality.
 * Run: bun test/eval/build-pii-faker-fixture.ts
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  type Faker,
  fakerDE,
  fakerEN_AU,
  fakerEN_CA,
  fakerEN_GB,
  fakerEN_IN,
  fakerEN_US,
  fakerES,
  fakerFR,
  fakerIT,
  fakerNL,
  fakerPT_BR,
} from "@faker-js/faker";

type Slot = "name" | "address";
interface Gold {
  text: string;
  entities: { type: Slot; start: number; end: number; text: string }[];
}

/** Name locales: who writes to an English-speaking support desk. */
const NAME_LOCALES: Faker[] = [fakerEN_US, fakerEN_GB, fakerEN_IN, fakerDE, fakerFR, fakerES, fakerIT, fakerNL, fakerPT_BR];
/** Address locales, English-speaking ones weighted up. */
const ADDRESS_LOCALES: Faker[] = [
  fakerEN_US,
  fakerEN_US,
  fakerEN_US,
  fakerEN_GB,
  fakerEN_GB,
  fakerEN_CA,
  fakerEN_AU,
  fakerDE,
  fakerFR,
  fakerES,
  fakerIT,
  fakerNL,
];

const TEMPLATES: string[] = [
  "Hi, my name is {name} and I moved to {address} last month.",
  "Please ship the replacement to {address}. Thanks, {name}",
  "Customer: {name}\nShipping address: {address}\nOrder: #{n}",
  "{name} called about invoice {n}; she asked us to update the billing address to {address}.",
  "Dear {name},\nyour parcel could not be delivered to {address}. Please contact us.",
  "From: {name}\nSubject: wrong address\nThe courier left my order at {address} instead of my flat.",
  "Spoke to {name} today, new address is {address}.",
  "Ticket opened by {name}: the app keeps crashing when I open settings.",
  "hey its {name}, can you send the invoice again? my address changed to {address}",
  "Deliver to: {name}, {address}",
  "I am writing on behalf of {name}, who lives at {address}.",
  "Best regards,\n{name}\n{address}",
  "Refund approved for {name} (order {n}). Cheque mailed to {address}.",
  "Can someone call {name} back? She left a voicemail about the warranty.",
  "Our technician {name} will visit {address} on Tuesday morning.",
  "Please update my profile. Name: {name}. Address: {address}.",
  "Thanks {name}, the package arrived at {address} in perfect condition.",
  "Assigned to {name}. Customer reports a damaged screen.",
  "My neighbour {name} signed for the parcel at {address}.",
  "The account belongs to {name}; statements go to {address}.",
  "Please cancel the order for {name}, it was sent to the old address ({address}).",
  "{name} wrote: the heater stopped working after two weeks.",
  "Return label requested by {name}. Pickup from {address} between 9 and 12.",
  "Hello, this is {name}. I never received the order I placed on the 4th.",
  "Billing contact: {name}\nBilling address: {address}",
  "I live at {address} and the driver keeps going to the wrong house.",
];

function caseVariant(f: Faker, name: string): string {
  const r = f.number.float({ min: 0, max: 1 });
  if (r < 0.12) return name.toUpperCase();
  if (r < 0.24) return name.toLowerCase();
  return name;
}

function personName(f: Faker): string {
  const locale = f.helpers.arrayElement(NAME_LOCALES);
  locale.seed(f.number.int({ min: 1, max: 2 ** 31 }));
  // first and last only: faker's prefixes ("Mr.") and suffixes ("Jr.") would blur the span
  const name = `${locale.person.firstName()} ${locale.person.lastName()}`;
  return caseVariant(f, name);
}

function streetAddress(f: Faker): string {
  const locale = f.helpers.arrayElement(ADDRESS_LOCALES);
  locale.seed(f.number.int({ min: 1, max: 2 ** 31 }));
  const street = locale.location.streetAddress(f.datatype.boolean(0.25));
  const r = f.number.float({ min: 0, max: 1 });
  if (r < 0.35) return street;
  if (locale === fakerEN_US)
    return `${street}, ${locale.location.city()}, ${locale.location.state({ abbreviated: true })} ${locale.location.zipCode("#####")}`;
  if (locale === fakerEN_GB || locale === fakerEN_CA || locale === fakerEN_AU)
    return `${street}, ${locale.location.city()} ${locale.location.zipCode()}`;
  return `${street}, ${locale.location.zipCode()} ${locale.location.city()}`;
}

function build(seed: number, count: number): Gold[] {
  const f = fakerEN_US;
  f.seed(seed);
  const out: Gold[] = [];
  for (let i = 0; i < count; i++) {
    const template = f.helpers.arrayElement(TEMPLATES);
    const entities: Gold["entities"] = [];
    let text = "";
    let at = 0;
    for (const m of template.matchAll(/\{(name|address|n)\}/g)) {
      text += template.slice(at, m.index);
      at = m.index + m[0].length;
      if (m[1] === "n") {
        text += String(f.number.int({ min: 10000, max: 999999 }));
        continue;
      }
      const value = m[1] === "name" ? personName(f) : streetAddress(f);
      entities.push({ type: m[1] as Slot, start: text.length, end: text.length + value.length, text: value });
      text += value;
    }
    out.push({ text: text + template.slice(at), entities });
  }
  return out;
}

const dir = join(import.meta.dir, "../fixtures/eval");
const write = (file: string, items: Gold[]) =>
  writeFileSync(join(dir, file), `${items.map((x) => JSON.stringify(x)).join("\n")}\n`);
write("pii-faker.jsonl", build(20261123, 200));
write("pii-faker-holdout.jsonl", build(77123, 200));
console.log("wrote pii-faker.jsonl and pii-faker-holdout.jsonl (200 texts each)");
