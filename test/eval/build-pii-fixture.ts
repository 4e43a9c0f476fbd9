/**
 * Regenerates test/fixtures/eval/pii.jsonl: realistic messages (support tickets, forms, emails,
 * chat) with every PII span labeled, built from templates and value generators with a fixed seed.
 * The name pool is written here independently of the detector's lists and includes names no list
 * of ours contains; templates also plant look-alikes (order numbers, versions, clock times,
 * invalid SSNs, Luhn-invalid numbers, non-birth dates) that must not be reported.
 * Run: bun test/eval/build-pii-fixture.ts
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { PiiType } from "../../src/offline-engine/pii";

let seed = 20261121;
function rand(): number {
  // mulberry32: small, deterministic
  seed = (seed + 0x6d2b79f5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
const int = (lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1));
const digits = (n: number): string => Array.from({ length: n }, () => String(int(0, 9))).join("");
const pad = (n: number, w: number): string => String(n).padStart(w, "0");

const FIRST = [
  "James",
  "Emily",
  "Michael",
  "Sarah",
  "David",
  "Jessica",
  "Robert",
  "Laura",
  "Daniel",
  "Olivia",
  "Thomas",
  "Hannah",
  "Carlos",
  "Lucia",
  "Miguel",
  "Sofia",
  "Priya",
  "Arjun",
  "Siddharth",
  "Kavya",
  "Wei",
  "Mei",
  "Hiroshi",
  "Yuki",
  "Fatima",
  "Omar",
  "Youssef",
  "Layla",
  "Chinedu",
  "Nkechi",
  "Tendai",
  "Bongani",
  "Kwame",
  "Amina",
  "Olga",
  "Dmitri",
  "Katarzyna",
  "Radek",
  "Ingrid",
  "Lars",
  "Jürgen",
  "Anneliese",
  "Pierre",
  "Chloé",
  "Giulia",
  "Marco",
  "Xiomara",
  "Kaveh",
  "Anh",
  "Mirela",
  "Yara",
  "Seamus",
  "Aoife",
  "Rebecca",
  "Nathan",
  "Grace",
  "Victoria",
  "Samuel",
];
const LAST = [
  "Smith",
  "Johnson",
  "Garcia",
  "Martinez",
  "Okafor",
  "Nakamura",
  "Kowalski",
  "Haddad",
  "Patel",
  "O'Connor",
  "Müller",
  "Nguyen",
  "Rossi",
  "Fernández",
  "Johansson",
  "Dubois",
  "Ivanova",
  "Mensah",
  "MacLeod",
  "Silva",
  "Kim",
  "Chen",
  "Sharma",
  "Moyo",
  "Novak",
  "Andersen",
  "Bianchi",
  "Schmidt",
  "Taylor",
  "Brooks",
  "Hughes",
  "Alvarez",
  "Reyes",
  "Takahashi",
  "Adeyemi",
  "Petrov",
  "Lindqvist",
  "Rahman",
  "Costa",
  "Wright",
];
const DOMAINS = [
  "gmail.com",
  "example.com",
  "outlook.com",
  "acme.io",
  "mail.company.co.uk",
  "uni-bonn.de",
  "yahoo.fr",
  "proton.me",
];
const TITLES = ["Mr.", "Ms.", "Mrs.", "Dr.", "Prof."];
const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];
const US_STREETS = [
  "Maple Avenue",
  "Oak Street",
  "Elm St",
  "Sunset Blvd",
  "Park Lane",
  "Cedar Drive",
  "Lakeview Road",
  "Washington Ave",
  "Pine Court",
  "River Road",
  "W 44th St",
  "Highland Way",
];
const US_CITIES = [
  ["Springfield", "IL"],
  ["Austin", "TX"],
  ["Denver", "CO"],
  ["Portland", "OR"],
  ["New York", "NY"],
  ["San Jose", "CA"],
  ["Madison", "WI"],
];
const UK = [
  ["Baker Street", "London", "NW1 6XE"],
  ["High Street", "Oxford", "OX1 4AH"],
  ["Church Road", "Manchester", "M20 2EX"],
  ["Queen Street", "Edinburgh", "EH2 1JX"],
];
const DE = [
  ["Hauptstraße", "10115", "Berlin"],
  ["Lindenweg", "80331", "München"],
  ["Bahnhofstraße", "50667", "Köln"],
  ["Schillerstraße", "60313", "Frankfurt"],
];
const FR = [
  ["rue de la République", "69002", "Lyon"],
  ["avenue Victor Hugo", "75016", "Paris"],
  ["rue Nationale", "59000", "Lille"],
];
const ES = [
  ["Calle de Alcalá", "28014", "Madrid"],
  ["Calle Mayor", "28013", "Madrid"],
  ["Avenida Diagonal", "08019", "Barcelona"],
];

type Value = { text: string; type: PiiType | null };
type Gen = () => Value;

function personName(): string {
  const r = rand();
  if (r < 0.75) return `${pick(FIRST)} ${pick(LAST)}`;
  if (r < 0.9) return pick(FIRST);
  return `${pick(FIRST)} ${String.fromCharCode(65 + int(0, 25))}. ${pick(LAST)}`;
}
const name: Gen = () => ({ text: personName(), type: "name" });
const fullName: Gen = () => ({ text: `${pick(FIRST)} ${pick(LAST)}`, type: "name" });
const email: Gen = () => {
  const f = pick(FIRST)
    .toLowerCase()
    .normalize("NFD")
    .replace(/[^a-z]/g, "");
  const l = pick(LAST)
    .toLowerCase()
    .normalize("NFD")
    .replace(/[^a-z]/g, "");
  const local = pick([`${f}.${l}`, `${f[0]}${l}${int(1, 99)}`, `${f}_${l}`, `${f}+orders`, `${l}.${f}${int(70, 99)}`]);
  return { text: `${local}@${pick(DOMAINS)}`, type: "email" };
};
const phone: Gen = () => {
  const formats: (() => string)[] = [
    () => `+1 ${int(201, 989)}-${int(200, 999)}-${digits(4)}`,
    () => `(${int(201, 989)}) ${int(200, 999)}-${digits(4)}`,
    () => `${int(201, 989)}.${int(200, 999)}.${digits(4)}`,
    () => `${int(201, 989)}-${int(200, 999)}-${digits(4)}`,
    () => `1-800-${int(200, 999)}-${digits(4)}`,
    () => `+44 20 ${digits(4)} ${digits(4)}`,
    () => `+44 7${digits(3)} ${digits(6)}`,
    () => `07${digits(3)} ${digits(6)}`,
    () => `+33 ${int(1, 9)} ${digits(2)} ${digits(2)} ${digits(2)} ${digits(2)}`,
    () => `+49 30 ${digits(8)}`,
    () => `+49 (0)89 ${digits(4)} ${digits(4)}`,
    () => `+91 ${int(70000, 99999)} ${digits(5)}`,
    () => `+81 3-${digits(4)}-${digits(4)}`,
    () => `+61 2 ${digits(4)} ${digits(4)}`,
    () => `+55 11 9${digits(4)}-${digits(4)}`,
    () => `0049 30 ${digits(7)}`,
    () => `+34 6${digits(2)} ${digits(3)} ${digits(3)}`,
    () => `+1${int(201, 989)}${int(200, 999)}${digits(4)}`,
  ];
  return { text: pick(formats)(), type: "phone_number" };
};
const ssn: Gen = () => {
  let area = int(1, 899);
  if (area === 666) area = 667;
  const parts = [pad(area, 3), pad(int(1, 99), 2), pad(int(1, 9999), 4)];
  return { text: parts.join(rand() < 0.85 ? "-" : " "), type: "ssn" };
};
function luhnComplete(body: string): string {
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let d = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return body + String((10 - (sum % 10)) % 10);
}
const card: Gen = () => {
  const kind = int(0, 3);
  if (kind === 3) {
    const n = luhnComplete(`37${digits(12)}`);
    return { text: `${n.slice(0, 4)} ${n.slice(4, 10)} ${n.slice(10)}`, type: "credit_card" };
  }
  const prefix = ["4", `5${int(1, 5)}`, "6011"][kind];
  const n = luhnComplete(prefix + digits(15 - prefix.length));
  const sep = pick([" ", "-", ""]);
  return { text: sep ? (n.match(/\d{4}/g)?.join(sep) ?? n) : n, type: "credit_card" };
};
const ipv4: Gen = () => ({ text: `${int(1, 223)}.${int(0, 255)}.${int(0, 255)}.${int(1, 254)}`, type: "ip_address" });
const ipv6: Gen = () => {
  const g = () => int(0, 0xffff).toString(16);
  const forms = [
    () => Array.from({ length: 8 }, g).join(":"),
    () => `2001:db8::${g()}:${g()}`,
    () => `fe80::${g()}:${g()}:${g()}:${g()}`,
    () => `2001:0db8:85a3:0000:0000:8a2e:0370:${pad(int(0, 9999), 4)}`,
    () => "::1",
  ];
  return { text: pick(forms)(), type: "ip_address" };
};
const ip: Gen = () => (rand() < 0.65 ? ipv4() : ipv6());
const dobDate = (): string => {
  const y = int(1940, 2006);
  const m = int(1, 12);
  const d = int(1, 28);
  return pick([
    `${pad(m, 2)}/${pad(d, 2)}/${y}`,
    `${d}.${m}.${y}`,
    `${y}-${pad(m, 2)}-${pad(d, 2)}`,
    `${MONTHS[m - 1]} ${d}, ${y}`,
    `${d} ${MONTHS[m - 1]} ${y}`,
  ]);
};
const dob: Gen = () => ({ text: dobDate(), type: "date_of_birth" });
const address: Gen = () => {
  const r = int(0, 5);
  if (r <= 1) {
    const [city, st] = pick(US_CITIES);
    const unit = rand() < 0.3 ? `, Apt ${int(1, 20)}${pick(["A", "B", ""])}` : "";
    return { text: `${int(1, 9999)} ${pick(US_STREETS)}${unit}, ${city}, ${st} ${digits(5)}`, type: "address" };
  }
  if (r === 2) {
    const [street, city, pc] = pick(UK);
    return { text: `${int(1, 250)} ${street}, ${city} ${pc}`, type: "address" };
  }
  if (r === 3) {
    const [street, pc, city] = pick(DE);
    return { text: `${street} ${int(1, 120)}, ${pc} ${city}`, type: "address" };
  }
  if (r === 4) {
    const [street, pc, city] = pick(FR);
    return { text: `${int(1, 120)} ${street}, ${pc} ${city}`, type: "address" };
  }
  const [street, pc, city] = pick(ES);
  return { text: `${street} ${int(1, 120)}, ${pc} ${city}`, type: "address" };
};
const title: Gen = () => ({ text: pick(TITLES), type: null });
const lit = (text: string): Value => ({ text, type: null });
// look-alikes that are not PII
const orderNo: Gen = () => lit(`${int(100000, 999999)}`);
const version: Gen = () => lit(`${int(1, 12)}.${int(0, 9)}.${int(0, 30)}`);
const clock: Gen = () => lit(`${int(1, 12)}:${pad(int(0, 59), 2)}`);
const badSsn: Gen = () =>
  lit(
    pick([
      `000-${pad(int(1, 99), 2)}-${digits(4)}`,
      `666-${pad(int(1, 99), 2)}-${digits(4)}`,
      `${int(900, 999)}-${pad(int(1, 99), 2)}-${digits(4)}`,
    ]),
  );
const badCard: Gen = () => {
  const n = luhnComplete(`4${digits(14)}`);
  const wrong = n.slice(0, 15) + String((Number(n[15]) + 1) % 10);
  return lit(wrong.match(/\d{4}/g)?.join(" ") ?? wrong);
};
const meetingDate: Gen = () => lit(`${MONTHS[int(0, 11)]} ${int(1, 28)}, 2026`);

const GENS: Record<string, Gen> = {
  name,
  fullName,
  email,
  phone,
  ssn,
  card,
  ip,
  ipv4,
  ipv6,
  dob,
  address,
  title,
  orderNo,
  version,
  clock,
  badSsn,
  badCard,
  meetingDate,
};

const TEMPLATES = [
  "Hi, my name is {fullName} and my email is {email}.",
  "Please call me at {phone} after {clock} pm.",
  "Customer {fullName} (SSN {ssn}) requested a credit limit review.",
  "Card on file: {card}, expires 09/28.",
  "Login from {ipv4} failed three times; the account was locked.",
  "{title} {fullName} was born on {dob} in a small village.",
  "Ship it to {address}, please.",
  "Thanks {name}! I'll send the contract to {email} tomorrow.",
  "Contact: {fullName}, phone {phone}, email {email}",
  "My SSN is {ssn} and my date of birth is {dob}.",
  "Our server at {ipv6} stopped answering after the {version} upgrade.",
  "Order {orderNo} was charged to {card} but never shipped.",
  "Dear {fullName},\nyour appointment is confirmed for {meetingDate} at {clock}.\nRegards,\n{fullName}",
  "Patient: {fullName}\nDOB: {dob}\nPhone: {phone}\nAddress: {address}",
  "I moved from {address} to {address} last spring.",
  "Reach {name} on {phone} or write to {email}.",
  "The firewall blocked {ip} and {ip} overnight.",
  "Please update my billing address to {address}. My card is {card}.",
  "Employee {fullName}, SSN {ssn}, started on {meetingDate}.",
  "{fullName} from accounting said the invoice {orderNo} is paid.",
  "Hey it's {name} 🙂 my new number is {phone}",
  "Date of birth: {dob}\nSocial Security Number: {ssn}",
  "This ID 000-00-0000 is a placeholder, and {badSsn} is not a valid SSN either.",
  "Test card {badCard} should fail the checksum; version {version} fixes the form.",
  "The meeting on {meetingDate} at {clock} is in room {orderNo}.",
  "Forwarded by {fullName} <{email}>",
  "I spoke with {title} {fullName} about the refund; her direct line is {phone}.",
  "Visitor log: {ipv4} at {clock}, {ipv6} at {clock}.",
  "{fullName} lives at {address} and can be reached at {phone}.",
  "Wire the deposit and email the receipt to {email} — {fullName}",
  "Bonjour, je suis {fullName}, mon numéro est le {phone}.",
  "Hallo, ich heiße {fullName} und wohne in der {address}.",
  "Mi correo es {email} y vivo en {address}.",
  "We met {name} at the conference; she works with {fullName} now.",
  "Card number {card}, CVV on the back. Billing zip matches.",
  "Born {dob}, {fullName} joined the team in 2019.",
  "Your package for {fullName} at {address} is out for delivery.",
  "Escalated by {fullName}: customer IP {ipv4}, card ending {orderNo}.",
  "No personal data here, just release {version} notes and build {orderNo}.",
  "The price went up by 12.5% on {meetingDate} according to the newsletter.",
];

const lines: string[] = [];
const COUNT = 240;
for (let k = 0; k < COUNT; k++) {
  const template = TEMPLATES[k % TEMPLATES.length];
  let text = "";
  const entities: { type: PiiType; start: number; end: number; text: string }[] = [];
  let at = 0;
  for (const m of template.matchAll(/\{(\w+)\}/g)) {
    text += template.slice(at, m.index);
    const value = GENS[m[1]]();
    if (value.type)
      entities.push({ type: value.type, start: text.length, end: text.length + value.text.length, text: value.text });
    text += value.text;
    at = m.index + m[0].length;
  }
  text += template.slice(at);
  lines.push(JSON.stringify({ text, entities }));
}
writeFileSync(join(import.meta.dir, "../fixtures/eval/pii.jsonl"), `${lines.join("\n")}\n`);
console.log(`wrote ${lines.length} labeled texts`);
